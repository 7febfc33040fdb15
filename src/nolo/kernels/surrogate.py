"""Surrogate kernels for Gaussian input noise (CSS11 section 6, eq. (5)).

A *surrogate pair* is an original kernel ``k`` (the one predictions use) and a
surrogate ``k_hat`` with ``E_n k_hat(a, x + n) = k(a, x)`` for the known noise
law of ``n`` (CSS11 eq. (4), Lemma 4).  Algorithm 2
(:mod:`nolo.learners.kernel.gaussian_noise`) trains with ``k_hat`` on noisy points and
predicts with ``k`` on the same stored noisy points.

:class:`GaussianSurrogateKernel` is the Gaussian pair of eq. (5): for noise
``N(0, diag(sigma_i^2))`` with ``2 max_i sigma_i^2 < s^2`` (strictly,
erratum E13),

    k(x, x')     = exp(-||x - x'||^2 / s^2),
    k_hat(x, x') = R^2 exp(-sum_i (x_i - x'_i)^2 / (s^2 - 2 sigma_i^2)),
    R^2          = prod_i (s^2 / (s^2 - 2 sigma_i^2))^(1/2)

(the per-coordinate factors are the corrected ones of docs/math.md, item 8 /
erratum E11).  A full covariance ``Sigma = Q Lambda Q^T`` is handled by the
rotation the paper describes: every point is mapped to the noise's eigenframe
``z -> Q^T z`` (rows: ``Z @ Q``), where the noise is ``N(0, Lambda)``; the
original kernel is rotation invariant, so predictions are unchanged.

:class:`nolo.kernels.radial.RadialKernelApproximation` (appendix E) is the
other pair.  Both expose ``spec(d)`` / ``original_spec(d)`` for compiled
loops: a kernel record of :mod:`nolo.kernels.compiled` (the weights of the
squared distances and the kernel's scalars), whose class carries its compiled
formula.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_int, check_scalar, check_state_bytes
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.compiled import GaussianSpec

__all__ = [
    "SurrogateKernelPair",
    "GaussianSurrogateKernel",
    "check_noise_covariance",
    "compact_noise_covariance",
    "noise_variances",
    "pairwise_sq_dists",
]


def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``||A_i - B_j||^2`` for all pairs, shape ``(len(A), len(B))``, clipped at 0."""
    sq = np.sum(A * A, axis=1)[:, None] + np.sum(B * B, axis=1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(sq, 0.0)


def noise_variances(cov, d: int | None = None, name: str = "noise_cov") -> np.ndarray:
    """The variances of a noise covariance given as a scalar ``v >= 0`` (``v I``, needs ``d``) or a vector of
    variances ``>= 0`` (a diagonal matrix), validated as :func:`check_noise_covariance` validates them, as a
    ``(d,)`` float64 vector: the ``(d, d)`` matrix is not built.  Raises :class:`ParameterError` naming ``name``
    (also for a matrix: use :func:`check_noise_covariance`)."""
    arr = check_array(cov, name, ndim=(0, 1, 2))
    if arr.ndim == 0:
        if d is None:
            raise ParameterError(f"{name} is a scalar variance; the dimension d must be known to build v*I")
        if arr < 0:
            raise ParameterError(f"{name} must be a variance >= 0, got {float(arr)}")
        return np.full(check_int(d, "d", low=1), float(arr))
    if arr.ndim == 1:
        if np.any(arr < 0):
            raise ParameterError(f"{name} given as a vector holds variances, which must all be >= 0")
        if d is not None and arr.shape[0] != d:
            raise ParameterError(f"{name} has {arr.shape[0]} variances but the inputs have d={d} features")
        return np.array(arr, dtype=np.float64)
    raise ParameterError(f"{name} is a (d, d) matrix, not a scalar variance or a vector of variances")


def check_noise_covariance(cov, d: int | None = None, name: str = "noise_cov", *, tol: float = 1e-10) -> np.ndarray:
    """Validate a noise covariance and return it as a ``(d, d)`` symmetric PSD float64 matrix.

    Accepts a scalar ``v >= 0`` (``v I``, needs ``d``), a vector of variances
    ``>= 0`` (a diagonal matrix) or a ``(d, d)`` matrix, which must be
    symmetric (up to ``tol`` relative) and positive semidefinite (smallest
    eigenvalue ``>= -tol * ||Sigma||``).  Raises :class:`ParameterError`
    naming ``name``; also, before a scalar or a vector is expanded, when the
    ``(d, d)`` matrix would not fit the state size bound
    (:func:`nolo._validation.check_state_bytes`: this machine's memory, or
    inside ``Learner.load`` what the file's arrays allow).
    """
    arr = check_array(cov, name, ndim=(0, 1, 2))
    if arr.ndim < 2:
        v = noise_variances(arr, d, name)
        n = v.shape[0]
        kind = "scalar variance" if arr.ndim == 0 else f"vector of {n} variances"
        check_state_bytes(8 * n * n, f"{name} (a {kind}) expanded to a d x d float64 matrix (d = {n})")
        return np.diag(v)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ParameterError(f"{name} must be a square (d, d) matrix, got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ParameterError(f"{name} has shape {arr.shape} but the inputs have d={d} features")
    scale = max(float(np.max(np.abs(arr))), 1e-300)
    asym = float(np.max(np.abs(arr - arr.T)))
    if asym > tol * scale:
        raise ParameterError(f"{name} must be symmetric, got max |Sigma - Sigma^T| = {asym:.3g}")
    sym = 0.5 * (arr + arr.T)
    lam_min = float(np.linalg.eigvalsh(sym)[0])
    if lam_min < -tol * scale:
        raise ParameterError(f"{name} must be positive semidefinite, got smallest eigenvalue {lam_min:.6g}")
    return sym


def compact_noise_covariance(cov, d: int | None = None, name: str = "noise_cov") -> np.ndarray:
    """A noise covariance validated as :func:`check_noise_covariance` validates it, in its compact form: a scalar
    variance or a vector of variances (a diagonal covariance) as its ``(d,)`` float64 variances
    (:func:`noise_variances`: the ``(d, d)`` matrix is neither built nor size-checked), a ``(d, d)`` matrix as the
    validated symmetric PSD matrix.  The caller tells the two forms apart by ``ndim``.  Without ``d`` the
    covariance is checked on its own: a scalar comes back as one variance, a vector at any length.  Raises
    :class:`ParameterError` naming ``name``."""
    arr = check_array(cov, name, ndim=(0, 1, 2))
    if arr.ndim < 2:
        return noise_variances(arr, 1 if d is None and arr.ndim == 0 else d, name)
    return check_noise_covariance(arr, d, name)


class SurrogateKernelPair(Configurable):
    """An original kernel ``k`` and its noise surrogate ``k_hat`` with ``E k_hat(a, x + n) = k(a, x)``.

    Subclasses give ``_validate_params(d=None)``, ``frame(X)`` (the coordinates in which
    ``k_hat`` is evaluated: the noise eigenframe for a full covariance),
    ``spec(d)`` / ``original_spec(d)`` for the compiled loops
    (a kernel record of :mod:`nolo.kernels.compiled`), and the four evaluations
    ``original``/``surrogate`` (all pairs of rows, inputs in the *user's*
    frame) and ``original_pairs``/``surrogate_pairs`` (row ``i`` with row
    ``i``).
    """

    def _validate_params(self, d: int | None = None) -> None:  # pragma: no cover - overridden
        """Check the parameters (and, given ``d``, their compatibility with dimension ``d``)."""
        raise NotImplementedError

    def validate(self, d: int | None = None) -> None:
        """Run :meth:`_validate_params` (with the dimension ``d`` when given)."""
        self._validate_params(d)

    def _pair_args(self, A, B):
        A = check_array(A, "A", ndim=2)
        B = check_array(B, "B", ndim=2)
        if A.shape[1] != B.shape[1]:
            raise ParameterError(f"A and B must have the same number of features, got {A.shape[1]} and {B.shape[1]}")
        self.validate(A.shape[1])
        return A, B

    def _rows_args(self, A, B):
        A = check_array(A, "A", ndim=2)
        B = check_array(B, "B", ndim=2)
        if A.shape != B.shape:
            raise ParameterError(f"A and B must have the same shape for pairwise rows, got {A.shape} and {B.shape}")
        self.validate(A.shape[1])
        return A, B


class GaussianSurrogateKernel(SurrogateKernelPair):
    """Gaussian kernel of width ``s^2`` and its surrogate for ``N(0, Sigma)`` input noise (CSS11 eq. (5)).

    Parameters
    ----------
    width : float
        ``s^2 > 0``: ``k(x, x') = exp(-||x - x'||^2 / s^2)``.
    noise_cov : float, array of shape (d,) or (d, d)
        The known noise covariance: a scalar variance (isotropic), a vector of
        per-coordinate variances (diagonal) or a full symmetric PSD matrix
        (handled by rotating every point to its eigenframe, CSS11 section 6).
        Must satisfy ``2 max eigenvalue < s^2`` strictly (erratum E13).

    Notes
    -----
    ``k_hat`` uses the per-coordinate normalisation ``(s^2/(s^2 - 2 sigma_i^2))^(1/2)``
    of docs/math.md, item 8 (erratum E11 corrects the proof's eq. (7)).
    ``R^2 = prod_i (...)^(1/2)`` is computed in log space and must fit in float64.
    """

    def __init__(self, width=1.0, noise_cov=0.0):
        self.width = width
        self.noise_cov = noise_cov

    # -- noise frame -----------------------------------------------------------------
    def _frame_data(self, d: int):
        """(Q or None, eigenvalues lambda (d,), cache key) for dimension d, validated and cached."""
        d = check_int(d, "d", low=1)
        s2 = check_scalar(self.width, "width", low=0.0, low_inclusive=False)
        key = (d, s2, np.asarray(self.noise_cov, dtype=np.float64).tobytes() if not isinstance(self.noise_cov, str) else None)
        cache = getattr(self, "_frame_cache", None)
        if cache is not None and cache[0] == key:
            return cache[1]
        arr = check_array(self.noise_cov, "noise_cov", ndim=(0, 1, 2))
        if arr.ndim == 2:
            sym = check_noise_covariance(arr, d)
            off = sym - np.diag(np.diag(sym))
            if np.any(off != 0.0):
                lam, Q = np.linalg.eigh(sym)
                lam = np.maximum(lam, 0.0)
            else:
                lam, Q = np.diag(sym).copy(), None
        else:
            check_state_bytes(16 * d, f"the Gaussian surrogate kernel keeps d per-coordinate noise variances and "
                              f"normalisers (d = {d}, from noise_cov)")
            lam = noise_variances(arr, d)  # a diagonal covariance: its variances, no d x d matrix
            Q = None
        lmax = float(np.max(lam))
        if not 2.0 * lmax < s2:
            raise ParameterError(
                f"noise_cov and width: the Gaussian surrogate kernel needs 2 * max noise variance < width (s^2) strictly "
                f"(CSS11 eq. (5), Theorem 3): got 2 * {lmax:.6g} = {2 * lmax:.6g} >= width = {s2:.6g}; "
                "use a wider kernel or less noise"
            )
        denom = s2 - 2.0 * lam
        log_r2 = -0.5 * float(np.sum(np.log1p(-2.0 * lam / s2)))
        if log_r2 > 709.0:
            raise NumericalError(
                f"R^2 = prod_i (s^2/(s^2 - 2 sigma_i^2))^(1/2) = exp({log_r2:.1f}) overflows float64; "
                "widen the kernel (s^2 of order d is the paper's regime)"
            )
        data = (Q, lam, 1.0 / denom, log_r2, s2)
        self._frame_cache = (key, data)
        return data

    def _validate_params(self, d: int | None = None) -> None:
        if d is None:
            # without a dimension: the dimension the covariance implies (1 for a scalar variance)
            check_scalar(self.width, "width", low=0.0, low_inclusive=False)
            arr = check_array(self.noise_cov, "noise_cov", ndim=(0, 1, 2))
            d = 1 if arr.ndim == 0 else arr.shape[0]
            if d == 0:
                raise ParameterError("noise_cov must not be empty")
        self._frame_data(d)

    def frame(self, X: np.ndarray) -> np.ndarray:
        """Map rows to the noise eigenframe (``X @ Q``; identity for diagonal noise)."""
        X = np.asarray(X, dtype=np.float64)
        Q = self._frame_data(X.shape[-1])[0]
        return X if Q is None else X @ Q

    def rotation(self, d: int):
        """The rotation ``Q`` (columns: eigenvectors of Sigma), or ``None`` for diagonal noise."""
        return self._frame_data(d)[0]

    def noise_variances(self, d: int) -> np.ndarray:
        """The noise variances in the eigenframe (``sigma_i^2``, eigenvalues of Sigma)."""
        return self._frame_data(d)[1].copy()

    def r_squared(self, d: int) -> float:
        """``R_{Sigma,s,d}^2 = prod_i (s^2 / (s^2 - 2 sigma_i^2))^(1/2)``, the bound on ``k_hat(x, x)``."""
        return math.exp(self._frame_data(d)[3])

    surrogate_norm_bound = r_squared

    def spec(self, d: int) -> GaussianSpec:
        """The compiled record (:class:`nolo.kernels.compiled.GaussianSpec`) of the surrogate: weights
        ``1/(s^2 - 2 sigma_i^2)``, log scale ``log R^2``."""
        _, _, inv_denom, log_r2, _ = self._frame_data(d)
        return GaussianSpec(inv_denom.copy(), float(log_r2))

    def original_spec(self, d: int) -> GaussianSpec:
        """The compiled record of the original kernel (rotation invariant, any frame)."""
        _, _, _, _, s2 = self._frame_data(d)
        return GaussianSpec(np.full(d, 1.0 / s2), 0.0)

    # -- evaluations -------------------------------------------------------------------
    def original(self, A, B) -> np.ndarray:
        """Gram matrix of ``k(a, b) = exp(-||a - b||^2 / s^2)``."""
        A, B = self._pair_args(A, B)
        return np.exp(-pairwise_sq_dists(A, B) / float(self.width))

    def surrogate(self, A, B) -> np.ndarray:
        """Gram matrix of ``k_hat`` (eq. (5)); inputs in the user's frame (rotated internally)."""
        A, B = self._pair_args(A, B)
        _, _, inv_denom, log_r2, _ = self._frame_data(A.shape[1])
        sw = np.sqrt(inv_denom)
        Az, Bz = self.frame(A) * sw, self.frame(B) * sw
        return np.exp(log_r2 - pairwise_sq_dists(Az, Bz))

    def original_pairs(self, A, B) -> np.ndarray:
        """``k(A_i, B_i)`` for each row ``i``."""
        A, B = self._rows_args(A, B)
        return np.exp(-np.sum((A - B) ** 2, axis=1) / float(self.width))

    def surrogate_pairs(self, A, B) -> np.ndarray:
        """``k_hat(A_i, B_i)`` for each row ``i`` (vectorised over pairs)."""
        A, B = self._rows_args(A, B)
        _, _, inv_denom, log_r2, _ = self._frame_data(A.shape[1])
        D = self.frame(A - B)
        return np.exp(log_r2 - (D * D) @ inv_denom)
