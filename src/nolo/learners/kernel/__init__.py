"""Kernel learners for noisy inputs: CSS10's Algorithm 1 (unknown noise), CSS11's Algorithm 2 (Gaussian noise
of known covariance), their baselines and the linear special cases.

* :class:`NoisyKernelLearner` -- CSS10 Algorithm 1 (errata E1, E2 corrected), O(T^2 d) per run
  (:mod:`nolo.learners.kernel.noisy_kernel`);
* :class:`PooledNoisyKernelLearner` -- Algorithm 1 on every reading of an item (U-statistic estimates);
* :class:`NaiveKernelOGD` -- kernel OGD on one noisy copy per round (the biased baseline);
* :class:`CleanKernelOGD` -- kernel OGD on clean data (full information, the reference);
* :class:`GaussianNoiseKernelRegression` -- CSS11 Algorithm 2, kernel OGD with a surrogate kernel under
  Gaussian input noise, and :class:`KernelOGDRegression`, its one-point-per-round baseline
  (:mod:`nolo.learners.kernel.gaussian_noise`);

The linear special cases (CSS10 footnote 2: two copies per round; the naive
one-copy learner) are CSS11's Setting-1 learner and its baseline:
:class:`nolo.learners.linear.TwoCopyLinearRegression` and
:class:`nolo.learners.linear.NaiveOGDRegression`.
"""

from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression, KernelOGDRegression
from nolo.learners.kernel.noisy_kernel import NoisyKernelLearner, theory_step_size
from nolo.learners.kernel.ogd import CleanKernelOGD, NaiveKernelOGD
from nolo.learners.kernel.pooled import PooledNoisyKernelLearner

__all__ = [
    "NoisyKernelLearner",
    "PooledNoisyKernelLearner",
    "theory_step_size",
    "NaiveKernelOGD",
    "CleanKernelOGD",
    "GaussianNoiseKernelRegression",
    "KernelOGDRegression",
]
