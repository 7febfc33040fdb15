"""Shared machinery of the linear multiclass learners: the weight matrix, prediction, the compiled kernels.

``W_`` has shape (K, d) (AM's W, rows w_r) and is stored in Fortran order so
that its transpose, the ``(d, K)`` array the compiled kernels work on, is
C-contiguous: the Python objects and the whole-stream loops share the very
same array.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from nolo._validation import check_choice, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit.environment import canonical_csr
from nolo.learners.bandit.exploration import COROLLARIES, corollary_gamma
from nolo.learners.base import BanditLearner

DTYPES = ("float64", "float32")
_DUMMY = {np.dtype(t): np.zeros((1, 1), dtype=t) for t in DTYPES}


class LinearMulticlassMixin:
    """W_ (K x d, Fortran order), predict, and the state handed to the compiled kernels."""

    _algo: ClassVar[int]
    _fortran_state: ClassVar[tuple[str, ...]] = ("W_",)

    def _check_common(self) -> None:
        check_int(self.n_classes, "n_classes", low=2)
        check_choice(self.dtype, "dtype", DTYPES)

    def _init_weights(self, n_features: int) -> None:
        self.W_ = np.zeros((int(self.n_classes), n_features), dtype=self.dtype, order="F")

    def _set_state(self, state: dict[str, Any]) -> None:
        super()._set_state(state)
        for key in self._fortran_state:
            if hasattr(self, key):
                setattr(self, key, np.asfortranarray(getattr(self, key)))

    # -- kernel interface ------------------------------------------------------------------
    def _kernel_state(self) -> tuple:
        """(algo, Wt, At, budget, gamma, rho0_assumed, beta_assumed) for the compiled loops."""
        dummy = _DUMMY[self.W_.dtype]
        return (self._algo, self.W_.T, dummy, np.zeros(1), 0.0, 0.0, 1.0)

    def _rows(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        x = np.ascontiguousarray(x, dtype=self.W_.dtype)
        idx = np.empty(x.shape[0], dtype=np.int64)
        val = np.empty(x.shape[0], dtype=x.dtype)
        nnz = kern.gather_dense(x.reshape(1, -1), 0, idx, val)
        return idx, val, nnz

    def _greedy(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, int]:
        idx, val, nnz = self._rows(x)
        s = np.empty(self.W_.shape[0], dtype=self.W_.dtype)
        kern.scores(self.W_.T, idx, val, 0, nnz, s)
        return idx, val, nnz, s, int(kern.argmax_first(s))

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """Scores W x of each row of X, shape (n, K)."""
        self._require_initialized("decision_function")
        if sp.issparse(X):
            return np.asarray(sp.csr_matrix(X) @ self.W_.T)
        return self._check_X(X) @ self.W_.T

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_r w_r . x (ties to the smallest label); never changes state."""
        self._require_initialized()
        if sp.issparse(X):
            X = canonical_csr(X, self.W_.dtype)
            if X.shape[1] != self.n_features_in_:
                raise ParameterError(f"X must have {self.n_features_in_} features per row, got {X.shape[1]}")
            out = np.empty(X.shape[0], dtype=np.int64)
            kern.predict_csr(self.W_.T, X.indptr, X.indices, X.data, out)
            return out
        X = np.ascontiguousarray(self._check_X(X), dtype=self.W_.dtype)
        out = np.empty(X.shape[0], dtype=np.int64)
        kern.predict_dense(self.W_.T, X, out)
        return out


class ExploringBanditLearner(LinearMulticlassMixin, BanditLearner):
    """Base of Banditron, RCNBF, RCINE, BPA and SOBA: play from AM eq. (3), then update on one bit.

    Subclasses define ``__init__`` (storing their parameters), ``_algo`` and,
    when the update needs more than W, ``_init_state``/``_kernel_state``.
    ``gamma`` is a float in [0, 1) or one of ``"cor4.1"``, ``"cor4.2"``,
    ``"cor4.3"`` (AM Corollaries 4.1-4.3; then ``horizon`` T and ``complexity``
    D are needed and the resolved value is the state ``gamma_``).
    """

    def _beta_for_schedule(self) -> float:
        return 1.0

    def _check_gamma(self) -> None:
        g = self.gamma
        if isinstance(g, str):
            check_choice(g, "gamma", COROLLARIES)
            if getattr(self, "horizon", None) is None:
                raise ParameterError(f"gamma={g!r} needs horizon (the number of rounds T), got None")
            check_int(self.horizon, "horizon", low=1)
            check_scalar(getattr(self, "complexity", 1.0), "complexity", low=0.0, low_inclusive=False)
        elif isinstance(g, numbers.Real) and not isinstance(g, bool):
            check_scalar(g, "gamma", low=0.0, high=1.0, high_inclusive=False)
        else:
            raise ParameterError(f"gamma must be a real number in [0, 1) or one of {COROLLARIES}, got {g!r}")

    def _validate_params(self) -> None:
        self._check_common()
        self._check_gamma()

    def _resolve_gamma(self) -> float:
        if isinstance(self.gamma, str):
            return corollary_gamma(self.gamma, self.horizon, complexity=getattr(self, "complexity", 1.0),
                                   beta=self._beta_for_schedule())
        return float(self.gamma)

    def _init_state(self, n_features: int) -> None:
        self._init_weights(n_features)
        self.gamma_ = self._resolve_gamma()

    def _rates_assumed(self) -> tuple[float, float]:
        """(rho0, beta) used by the feedback estimate h; Banditron/BPA/SOBA use the bit as is."""
        return 0.0, 1.0

    def _kernel_state(self) -> tuple:
        dummy = _DUMMY[self.W_.dtype]
        r0, beta = self._rates_assumed()
        return (self._algo, self.W_.T, dummy, np.zeros(1), self.gamma_, r0, beta)

    # -- the protocol ------------------------------------------------------------------------
    def act(self, x) -> int:
        """Draw the label to play for ``x`` from AM eq. (3) (one uniform from the learner's generator)."""
        x = self._check_x(x)
        self._ensure_initialized(x.shape[0])
        idx, val, nnz, s, yhat = self._greedy(x)
        return int(kern.draw_label(self.rng_.random(), yhat, self.gamma_, self.W_.shape[0]))

    def _check_round(self, x, played, feedback) -> np.ndarray:
        x = self._check_x(x)
        K = int(self.n_classes)
        if isinstance(played, bool) or not isinstance(played, (numbers.Integral, np.integer)) or not 0 <= played < K:
            raise ParameterError(f"played must be an integer label in [0, {K - 1}], got {played!r}")
        if isinstance(feedback, (bool, np.bool_)):
            feedback = int(feedback)
        if not isinstance(feedback, (numbers.Integral, np.integer)) or feedback not in (0, 1):
            raise ParameterError(f"feedback must be 0 or 1, got {feedback!r}")
        return x

    def learn(self, x, played, feedback) -> "ExploringBanditLearner":
        """Update on the (possibly flipped) bit ``feedback`` = 1[played == y] after ``act(x)`` played ``played``."""
        x = self._check_round(x, played, feedback)
        self._ensure_initialized(x.shape[0])
        idx, val, nnz, s, yhat = self._greedy(x)
        algo, Wt, At, budget, gamma, r0, beta = self._kernel_state()
        ok = kern.update(algo, Wt, At, budget, idx, val, 0, nnz, s, -1, yhat, int(played), int(feedback),
                         gamma, r0, beta)
        if not ok:
            raise NumericalError(f"{type(self).__name__}: the update coefficient is not finite; state unchanged")
        self.t_ += 1
        self._after_round(x, int(played), int(feedback))
        return self

    def _after_round(self, x: np.ndarray, played: int, feedback: int) -> None:
        """Hook for RCINE's log of rounds."""
