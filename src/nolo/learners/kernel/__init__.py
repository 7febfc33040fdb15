"""Kernel learners for noisy inputs (CSS10): Algorithm 1, its baselines and the linear special cases."""

from nolo.learners.kernel.algorithm1 import NoisyKernelLearner, theory_step_size

__all__ = ["NoisyKernelLearner", "theory_step_size"]
