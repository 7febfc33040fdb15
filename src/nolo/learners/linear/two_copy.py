"""CSS11 Setting 1: linear regression from two noisy copies of x and one of y (Algorithm 1, left)."""

from __future__ import annotations

from nolo.learners.linear._loops import two_copy_loop, ustat_loop
from nolo.learners.linear.base import NoisyLinearOGD
from nolo.learners.linear.gradients import setting1_G

__all__ = ["TwoCopyLinearRegression"]


class TwoCopyLinearRegression(NoisyLinearOGD):
    """Algorithm 1 (left) of CSS11, "upper bound on the variance": two copies of x per round.

    Each round queries two independent copies ``x~, x~'`` and steps along
    ``grad~ = 2(<w_t, x~> - y~) x~'`` (Lemma 1), unbiased for the clean
    gradient under any zero-mean noise, then projects on ``||w|| <= B_w``.
    With ``step=None`` the step is Theorem 1's ``eta = B_w / sqrt(G T)`` with
    the corrected ``G = 8 (B_w^2 B_x^2 + B_y^2) B_x^2`` (docs/math.md, item 7,
    erratum E10: the printed ``4(...)`` is not a bound), and the expected
    regret on the clean data is at most ``B_w sqrt(G T)`` (:meth:`regret_bound`).

    Parameters
    ----------
    radius : float
        ``B_w > 0``, the radius of the ball of predictors (a bound on ``||w||``).
    step : StepRule, float or None
        Step sizes; ``None`` uses the theory step ``B_w / sqrt(G T)`` (needs
        ``x_bound``, ``y_bound``, ``horizon``).
    x_bound, y_bound : float or None
        ``B_x``, ``B_y`` with ``E||x~||^2 <= B_x^2`` and ``E y~^2 <= B_y^2``.
    horizon : int or None
        ``T``, the number of rounds the theory step is tuned for.
    seed : None, int, SeedSequence or Generator
        Unused (deterministic given the copies); kept for the learner contract.
    copies : int >= 2 or "all"
        Copies per round.  ``2`` (default) is the paper: Lemma 1's ``2(<w, x~> - y~) x~'``, bit for bit.
        ``k >= 3`` queries ``k`` copies and ``"all"`` takes every remaining copy of a finite pool
        (:class:`nolo.noise.PoolOracle`; in :meth:`learn_stream` every copy given, so ``"all"`` on a stream
        with ``m = 2`` is the symmetrised two-copy estimate): both step along the U-statistic estimate
        ``2 (U w - xbar y~)``, ``U = mean_{a != b} x~_a x~_b^T`` (not in CSS11).  It is unbiased and,
        averaging Lemma 1's estimate over the ordered pairs, has a second moment at most Lemma 1's, so the
        theory step and ``G`` stay valid; its variance falls like ``1/k`` (figures in ``docs/eiv.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.linear import TwoCopyLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3))
    >>> y = X @ np.array([0.5, -0.3, 0.2])
    >>> copies = X[:, None, :] + 0.7 * rng.normal(size=(5000, 2, 3))  # two noisy copies per round, variance 0.49
    >>> m = TwoCopyLinearRegression(radius=1.0, step=0.01)
    >>> m.learn_stream(copies, y)
    >>> m.average_.round(2)  # the online-to-batch average
    array([ 0.51, -0.29,  0.2 ])
    """

    copies_per_round = 2

    def __init__(self, radius=1.0, step=None, x_bound=None, y_bound=None, horizon=None, seed=None, copies=2):
        self.radius = radius
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed
        self.copies = copies

    def variance_constant(self) -> float:
        return setting1_G(self.radius, self.x_bound, self.y_bound)

    def _run_loop(self, copies, y, etas, w, avg, Xeval, pred):
        if isinstance(self.copies, str) or int(self.copies) != 2:
            return ustat_loop(copies, y, etas, float(self.radius), w, avg, int(self.t_), Xeval, pred)
        return two_copy_loop(copies, 0, 1, y, etas, float(self.radius), w, avg, int(self.t_), Xeval, pred)
