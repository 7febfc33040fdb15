"""Baseline: online gradient descent on one noisy copy, ignoring the noise."""

from __future__ import annotations

from nolo._validation import check_scalar
from nolo.learners.linear._loops import two_copy_loop
from nolo.learners.linear.base import NoisyLinearOGD

__all__ = ["NaiveOGDRegression"]


class NaiveOGDRegression(NoisyLinearOGD):
    """Projected OGD for the squared loss that treats one noisy copy as if it were clean (baseline).

    Steps along ``2(<w_t, x~> - y~) x~``, whose mean is the clean gradient plus
    ``2 Sigma w_t``: the minimiser it tracks is the ridge-like
    ``(E x x^T + Sigma)^{-1} E x y``, shrunk towards 0 -- the classical
    attenuation bias of errors-in-variables regression, which CSS11 Settings
    1-2 remove.  The clean-data counterpart is :class:`nolo.learners.ProjectedOGD`
    with the squared loss and an :class:`nolo.oco.L2Ball`.

    With ``step=None`` the step is ``B_w / sqrt(G T)`` with the deterministic
    bound ``G = 4 (B_w B_x + B_y)^2 B_x^2`` (``x_bound``/``y_bound`` bound the
    noisy copy and target almost surely).

    Parameters
    ----------
    radius, step, x_bound, y_bound, horizon, seed
        As for :class:`nolo.learners.linear.TwoCopyLinearRegression`.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.linear import NaiveOGDRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3))
    >>> y = X @ np.array([0.5, -0.3, 0.2])
    >>> copies = X[:, None, :] + 0.7 * rng.normal(size=(5000, 2, 3))  # two noisy copies per round, variance 0.49
    >>> m = NaiveOGDRegression(radius=1.0, step=0.01)
    >>> m.learn_stream(copies[:, :1], y)
    >>> m.average_.round(2)  # the online-to-batch average: shrunk by 1/(1 + 0.49), the attenuation bias
    array([ 0.34, -0.2 ,  0.14])
    """

    copies_per_round = 1

    def __init__(self, radius=1.0, step=None, x_bound=None, y_bound=None, horizon=None, seed=None):
        self.radius = radius
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def variance_constant(self) -> float:
        Bw = check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)
        Bx = check_scalar(self.x_bound, "x_bound", low=0.0, low_inclusive=False)
        By = check_scalar(self.y_bound, "y_bound", low=0.0)
        return 4.0 * (Bw * Bx + By) ** 2 * Bx**2

    def _run_loop(self, copies, y, etas, w, avg, Xeval, pred):
        return two_copy_loop(copies, 0, 0, y, etas, float(self.radius), w, avg, int(self.t_), Xeval, pred)
