"""Learners, one class per algorithm (see :mod:`nolo.learners.base` for the contract)."""

from nolo.learners.base import BanditLearner, FullInformationLearner, Learner, NoisyInputLearner
from nolo.learners.ogd import ProjectedOGD

__all__ = ["Learner", "NoisyInputLearner", "BanditLearner", "FullInformationLearner", "ProjectedOGD"]
