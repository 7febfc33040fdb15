"""What the flip-corrected baselines (:class:`BPAh`, :class:`SOBAh`) share: the rates, the stream hook, learn."""

from __future__ import annotations

import numpy as np

from nolo._validation import check_flip_rates
from nolo.exceptions import NumericalError, ParameterError


class FlipCorrectedMixin:
    """Rates (rho0, rho1), float64 weights, ``learn`` through a compiled update, and the stream hook.

    Runs whole streams in SquareCB's loop (:func:`nolo.learners.bandit.squarecb.run_stream`, same draws as
    every nolo learner); the AM runner (``nolo.learners.bandit.run_stream``) would apply the uncorrected
    BPA/SOBA kernel, so it is refused.
    """

    def _validate_params(self) -> None:
        super()._validate_params()
        check_flip_rates(self.rho0, self.rho1)
        if self.dtype != "float64":
            raise ParameterError(f"dtype must be 'float64' for {type(self).__name__}, got {self.dtype!r}")

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        self.hist_ = np.zeros(1)
        self.est_ = np.zeros(5)

    def _cfg(self) -> np.ndarray:
        cfg = np.zeros(10)
        cfg[0], cfg[3], cfg[4], cfg[9] = self.gamma_, self.rho0, self.rho1, getattr(self, "C", np.inf)
        return cfg

    def _kernel_state(self):
        raise ParameterError(f"{type(self).__name__} runs in nolo.learners.bandit.squarecb.run_stream "
                             "(the AM runner would apply the uncorrected update)")

    def _run_env(self, env, n_rounds: int, checkpoints=None, log: bool = False):
        from nolo.learners.bandit.squarecb import run_env

        return run_env(env, self, n_rounds, checkpoints, log)

    def learn(self, x, played, feedback):
        """Update on the (possibly flipped) bit with AM's h(f_rho) in its place (see the class docstring)."""
        x = self._check_round(x, played, feedback)
        self._validate_params()
        self._ensure_initialized(x.shape[0])
        idx, val, nnz = self._rows(x)
        if not self._learn_compiled(idx, val, nnz, int(played), int(feedback)):
            raise NumericalError(f"{type(self).__name__}: the update coefficient is not finite; state unchanged")
        self.t_ += 1
        return self
