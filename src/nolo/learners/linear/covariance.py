"""The known noise covariance ``Sigma_t`` of CSS11 Setting 2: constant, per-round sequence, callable or noise model.

:class:`CovarianceSchedule` resolves a user's specification into the
covariance in force at round ``t`` (1-based), validating every matrix
(shape, symmetric, positive semidefinite) before it is used, and into blocks
for the compiled whole-stream loops: ``("diag", (n, d))`` when every
``Sigma_t`` is diagonal (given as a scalar or variances, it stays variances:
no ``d x d`` matrix is built), ``("full", (n, d, d))`` otherwise (a constant
gives a single row, broadcast by the loop).
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError
from nolo.kernels.surrogate import check_noise_covariance, compact_noise_covariance, noise_variances

__all__ = ["CovarianceSchedule"]


def _is_noise_model(spec) -> bool:
    return hasattr(spec, "covariance") and hasattr(spec, "sample")


class CovarianceSchedule:
    """Resolve ``noise_cov`` into ``Sigma_t``.

    ``noise_cov`` may be

    * a scalar variance (``v I``), a vector of variances (diagonal) or a ``(d, d)`` matrix (constant);
    * an array of shape ``(T, d)`` (per-round variances) or ``(T, d, d)`` (per-round matrices),
      indexed by round ``t = 1..T`` -- asking for a round beyond ``T`` is an error;
    * a callable ``t -> Sigma_t`` (any of the constant forms), validated at every call;
    * a :class:`nolo.noise.NoiseModel` (its exact ``covariance(d, round=t-1)``).
    """

    def __init__(self, spec, d: int, name: str = "noise_cov"):
        self.spec = spec
        self.d = check_int(d, "d", low=1)
        self.name = name
        self.kind = "constant"
        if _is_noise_model(spec):
            self.kind = "model"
        elif callable(spec):
            self.kind = "callable"
        else:
            arr = check_array(spec, name, ndim=(0, 1, 2, 3))
            if arr.ndim == 3 or (arr.ndim == 2 and arr.shape != (d, d)):
                self.kind = "sequence"
                if arr.ndim == 2 and arr.shape[1] != d:
                    raise ParameterError(f"{name} given per round as variances must have shape (T, {d}), got {arr.shape}")
                if arr.ndim == 3 and arr.shape[1:] != (d, d):
                    raise ParameterError(f"{name} given per round as matrices must have shape (T, {d}, {d}), got {arr.shape}")
                if arr.shape[0] == 0:
                    raise ParameterError(f"{name} sequence is empty")
                check = noise_variances if arr.ndim == 2 else check_noise_covariance  # variances: no d x d matrix
                for t in range(arr.shape[0]):
                    check(arr[t], d, f"{name}[{t}]")
                self._seq = arr
            elif arr.ndim < 2:  # a diagonal: its variances; the d x d matrix is built only when asked for (at)
                self._var = noise_variances(arr, d, name)
                self._const, self._const_diag = None, True
            else:
                self._var = None
                self._const = check_noise_covariance(arr, d, name)
                self._const_diag = bool(np.all(self._const == np.diag(np.diag(self._const))))

    @property
    def length(self) -> int | None:
        return self._seq.shape[0] if self.kind == "sequence" else None

    def at(self, t: int) -> np.ndarray:
        """``Sigma_t`` (``t`` 1-based) as a validated ``(d, d)`` matrix."""
        t = check_int(t, "t", low=1)
        if self.kind == "constant":
            if self._const is None:  # size-checked before it is built (check_noise_covariance)
                self._const = check_noise_covariance(self._var, self.d, self.name)
            return self._const
        if self.kind == "sequence":
            if t > self._seq.shape[0]:
                raise ParameterError(
                    f"{self.name} holds covariances for {self._seq.shape[0]} rounds; round {t} has none"
                )
            return check_noise_covariance(self._seq[t - 1], self.d, f"{self.name}[{t - 1}]")
        S = self._given(t)
        return check_noise_covariance(S, self.d, self._label(t)) if S.ndim == 1 else S

    def _label(self, t: int) -> str:
        return self.name if self.kind == "model" else f"{self.name}({t})"

    def _given(self, t: int) -> np.ndarray:
        """Round ``t``'s covariance from the callable or the noise model, validated in the form given: its ``(d,)``
        variances for a scalar or a vector (no ``d x d`` matrix), else the ``(d, d)`` matrix."""
        raw = self.spec.covariance(self.d, round=t - 1) if self.kind == "model" else self.spec(t)
        return compact_noise_covariance(raw, self.d, self._label(t))

    def block(self, t0: int, n: int) -> tuple[str, np.ndarray]:
        """Covariances of rounds ``t0+1 .. t0+n`` for the compiled loops: ("diag"|"full", array with 1 or n rows)."""
        if self.kind == "constant":
            if self._const_diag:
                return "diag", (self._var if self._var is not None else np.diag(self._const))[None, :].copy()
            return "full", self._const[None, :, :].copy()
        if self.kind == "sequence":
            if t0 + n > self._seq.shape[0]:
                raise ParameterError(
                    f"{self.name} holds covariances for {self._seq.shape[0]} rounds; round {self._seq.shape[0] + 1} "
                    f"has none (rounds up to {t0 + n} were asked for)"
                )
            part = self._seq[t0 : t0 + n]
            if part.ndim == 2:
                return "diag", np.ascontiguousarray(part)
            mats = np.ascontiguousarray(part)
        else:
            given = [self._given(t0 + i + 1) for i in range(n)]
            if all(S.ndim == 1 for S in given):  # variances (or nothing asked): kept as variances
                return "diag", np.stack(given) if n else np.zeros((0, self.d))
            mats = np.stack([check_noise_covariance(S, self.d, self._label(t0 + i + 1)) if S.ndim == 1 else S
                             for i, S in enumerate(given)])
        offdiag = mats.copy()
        idx = np.arange(self.d)
        offdiag[:, idx, idx] = 0.0
        if not np.any(offdiag):
            return "diag", np.ascontiguousarray(mats[:, idx, idx])
        return "full", 0.5 * (mats + np.transpose(mats, (0, 2, 1)))

    def spectral_bound(self) -> float | None:
        """``max_t ||Sigma_t||`` when it can be computed in advance (constant or sequence), else None."""
        if self.kind == "constant":
            if self._var is not None:
                return float(np.max(self._var))
            return float(np.linalg.eigvalsh(self._const)[-1])
        if self.kind == "sequence":
            if self._seq.ndim == 2:
                return float(np.max(self._seq))
            return float(max(np.linalg.eigvalsh(0.5 * (m + m.T))[-1] for m in self._seq))
        return None
