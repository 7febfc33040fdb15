"""The noisy bandit-feedback channel of AM section 3.

After the learner plays a label, the environment emits the true bit
``f = 1[played == y]`` and an adversary flips it before the learner sees it:

* ``rho0 = P(feedback 1 | truth 0)`` (a wrong label reported as right),
* ``rho1 = P(feedback 0 | truth 1)`` (a right label reported as wrong),

with ``rho0 + rho1 < 1`` (otherwise the received bit carries no information,
or inverted information, about the truth).  ``kappa = 1 - rho0 - rho1`` (the AM paper's
``beta``; nolo calls it kappa everywhere).

AM Lemma 1 (docs/math.md, item 11): ``h(f_rho) = (f_rho - rho0) / kappa`` --
``h(1) = (1 - rho0)/kappa``, ``h(0) = -rho0/kappa`` -- is unbiased for the true
bit, ``E[h(f_rho) | f] = f``.  It equals the paper's printed
``((1 - rho_{f'}) f_rho - rho_{f_rho} f') / kappa`` with ``f' = 1 - f_rho``.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_flip_rates
from nolo.exceptions import ParameterError
from nolo.noise.feedback_laws import ClassFlips, FeedbackLaw, class_flips, flip_many
from nolo.random import as_generator

__all__ = ["FlipChannel", "check_bits"]


def check_bits(bits, name: str) -> np.ndarray:
    """Return ``bits`` as an int64 array after checking every entry is 0 or 1 (bools accepted)."""
    try:
        arr = np.asarray(bits)
    except (TypeError, ValueError) as exc:  # pragma: no cover - ragged input
        raise ParameterError(f"{name} must be 0/1 bits: {exc}") from None
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise ParameterError(f"{name} must contain only 0 and 1, got dtype {arr.dtype}")
    if not np.all((arr == 0) | (arr == 1)):
        raise ParameterError(f"{name} must contain only 0 and 1 (bandit feedback bits), got {bits!r}")
    return arr.astype(np.int64)


class FlipChannel(FeedbackLaw):
    """Binary channel that flips bandit feedback (AM section 3): the class-conditional feedback law.

    ``rho0 = P(feedback 1 | truth 0)`` and ``rho1 = P(feedback 0 | truth 1)``,
    both in ``[0, 1)`` with ``rho0 + rho1 < 1``.  Its compiled record is
    :class:`nolo.noise.feedback_laws.ClassFlips`; the learners' flip corrections
    (AM Lemma 1 and those built on it) are unbiased under this law, with the
    learner's rates equal to the channel's.

    Parameters
    ----------
    rho0 : float
        P(feedback 1 | truth 0): probability that a wrong prediction is reported as right.
    rho1 : float
        P(feedback 0 | truth 1): probability that a right prediction is reported as wrong.
    """

    constant_rates = True

    def __init__(self, rho0=0.0, rho1=0.0):
        self.rho0 = rho0
        self.rho1 = rho1

    def record(self) -> ClassFlips:
        """The compiled record ``ClassFlips(rho0, rho1)`` of the validated rates."""
        return class_flips(self.rho0, self.rho1)

    @property
    def kappa_range(self) -> tuple[float, float]:
        """``(kappa, kappa)``: the rates are the same in every cell."""
        k = self.kappa
        return k, k

    def rates(self) -> tuple[float, float]:
        """Validated ``(rho0, rho1)``; rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1)."""
        return check_flip_rates(self.rho0, self.rho1)

    def _validate_params(self) -> None:
        """Check the rates (rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1), rho0 + rho1 < 1)."""
        self.rates()

    @property
    def kappa(self) -> float:
        """``1 - rho0 - rho1`` (> 0), with rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1)."""
        r0, r1 = self.rates()
        return 1.0 - r0 - r1

    def transmit(self, bits, rng):
        """Pass true bits through the channel: a 0 becomes 1 w.p. rho0 = P(feedback 1 | truth 0), a 1 becomes 0 w.p. rho1 = P(feedback 0 | truth 1).

        ``bits`` is a 0/1 scalar (returns an ``int``) or array (returns an
        int64 array of the same shape); each bit is flipped independently.
        """
        record = self.record()
        arr = check_bits(bits, "bits")
        rng = as_generator(rng, "rng")
        u = rng.random(arr.shape)
        zeros = np.zeros(arr.size, dtype=np.int64)  # the class-conditional rule reads no label or row
        out = flip_many(record, arr.ravel(), u.ravel(), zeros, zeros, zeros).reshape(arr.shape)
        if out.ndim == 0:
            return int(out)
        return out

    def unbias(self, feedback):
        """AM Lemma 1: ``h(f_rho) = (f_rho - rho0) / kappa``, unbiased for the true bit (``E[h | f] = f``).

        Here rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1),
        ``kappa = 1 - rho0 - rho1``.  ``feedback`` is a 0/1 scalar (returns a
        float) or array (returns a float64 array).
        """
        r0, r1 = self.rates()
        arr = check_bits(feedback, "feedback")
        out = (arr - r0) / (1.0 - r0 - r1)
        if np.ndim(out) == 0:
            return float(out)
        return out

    def transition_matrix(self) -> np.ndarray:
        """``M[f, g] = P(feedback g | truth f)``: ``[[1 - rho0, rho0], [rho1, 1 - rho1]]``."""
        r0, r1 = self.rates()
        return np.array([[1.0 - r0, r0], [r1, 1.0 - r1]])
