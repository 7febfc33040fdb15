"""Kernel learners for noisy inputs (CSS10): Algorithm 1, its baselines and the linear special cases.

* :class:`NoisyKernelLearner` -- CSS10 Algorithm 1 (errata E1, E2 corrected), O(T^2 d) per run;
* :class:`PooledNoisyKernelLearner` -- Algorithm 1 on every reading of an item (U-statistic estimates);
* :class:`NaiveKernelOGD` -- kernel OGD on one noisy copy per round (the biased baseline);
* :class:`CleanKernelOGD` -- kernel OGD on clean data (full information, the reference);

The linear special cases (CSS10 footnote 2: two copies per round; the naive
one-copy learner) are CSS11's Setting-1 learner and its baseline:
:class:`nolo.learners.linear.TwoCopyLinearRegression` and
:class:`nolo.learners.linear.NaiveOGDRegression`.
"""

from nolo.learners.kernel.algorithm1 import NoisyKernelLearner, theory_step_size
from nolo.learners.kernel.ogd import CleanKernelOGD, NaiveKernelOGD
from nolo.learners.kernel.pooled import PooledNoisyKernelLearner

__all__ = [
    "NoisyKernelLearner",
    "PooledNoisyKernelLearner",
    "theory_step_size",
    "NaiveKernelOGD",
    "CleanKernelOGD",
]
