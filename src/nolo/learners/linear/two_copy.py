"""CSS11 Setting 1: linear regression from two noisy copies of x and one of y (Algorithm 1, left)."""

from __future__ import annotations

from nolo.learners.linear._loops import two_copy_loop
from nolo.learners.linear.base import NoisyLinearOGD
from nolo.learners.linear.gradients import setting1_G

__all__ = ["TwoCopyLinearRegression"]


class TwoCopyLinearRegression(NoisyLinearOGD):
    """Algorithm 1 (left) of CSS11, "upper bound on the variance": two copies of x per round.

    Each round queries two independent copies ``x~, x~'`` and steps along
    ``grad~ = 2(<w_t, x~> - y~) x~'`` (Lemma 1), unbiased for the clean
    gradient under any zero-mean noise, then projects on ``||w|| <= B_w``.
    With ``step=None`` the step is Theorem 1's ``eta = B_w / sqrt(G T)`` with
    the corrected ``G = 8 (B_w^2 B_x^2 + B_y^2) B_x^2`` (math-notes item 7,
    erratum E10: the printed ``4(...)`` is not a bound), and the expected
    regret on the clean data is at most ``B_w sqrt(G T)`` (:meth:`regret_bound`).

    Parameters: see :class:`nolo.learners.linear.base.NoisyLinearOGD`.
    """

    copies_per_round = 2

    def __init__(self, radius=1.0, step=None, x_bound=None, y_bound=None, horizon=None, seed=None):
        self.radius = radius
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def variance_constant(self) -> float:
        return setting1_G(self.radius, self.x_bound, self.y_bound)

    def _run_loop(self, copies, y, etas, w, avg, Xeval, pred):
        return two_copy_loop(copies, 0, 1, y, etas, float(self.radius), w, avg, int(self.t_), Xeval, pred)
