"""What the flip-corrected baselines (:class:`BPAh`, :class:`SOBAh`) share: the known rates and their check."""

from __future__ import annotations

from nolo._validation import check_flip_rates


class FlipCorrectedMixin:
    """Known flip rates (rho0, rho1), checked with the base learner's parameters; ``_kappa`` = 1 - rho0 - rho1.

    The learners run in the bandit core like their base (``run_stream``, ``ClassificationBandit.run``,
    ``act``/``learn``): only their state record differs (:mod:`._corrected`).
    """

    def _validate_params(self) -> None:
        super()._validate_params()
        check_flip_rates(self.rho0, self.rho1)

    def _target(self) -> tuple[float, float]:
        """(rho0, kappa) of AM's h(f) = (f - rho0) / kappa."""
        r0 = float(self.rho0)
        return r0, 1.0 - r0 - float(self.rho1)
