"""The noise-model contract: zero-mean random vectors with an exact covariance.

CSS10 section 2: the oracle ``A_t`` returns independent copies of
``x_t + Z_t`` where ``Z_t`` is zero-mean with a bounded second moment; its law
is unknown to the learner and may change from round to round and from call
to call.  CSS11 section 2 adds side information (a known covariance
``Sigma_t``) and the same kind of noise on the target, ``y_t + n^y_t``.

A :class:`NoiseModel` is one such law.  ``sample(rng, size, d, round=, call=)``
draws ``size`` independent vectors in ``R^d``; stationary models ignore
``round`` and ``call``, the adversarial schedules of
:mod:`nolo.noise.schedules` use them to pick the law in force.
``covariance(d)`` is the exact covariance (the ``Sigma_t`` of CSS11 Setting 2),
``variance(d)`` its diagonal and ``mean_sq_norm(d)`` its trace
``E||Z||^2`` (the constant ``a`` of CSS10 section 2).

Parameters follow the Configurable contract: the constructor only stores
them; they are validated by :meth:`NoiseModel.validate` and by every public
method, so a bad value is reported (a :class:`nolo.ParameterError` naming
the parameter) the first time the model is used.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError
from nolo.random import as_generator

__all__ = ["NoiseModel", "Sampler", "per_coordinate"]

#: A prepared draw function ``f(rng, size, round, call) -> (size, d) float64 array``.
Sampler = Callable[[np.random.Generator, int, int, int], np.ndarray]


def per_coordinate(value: Any, name: str, d: int | None, *, allow_zero: bool = True) -> float | np.ndarray:
    """Validate a scale parameter given either as a scalar or as one value per coordinate.

    Returns a float for a scalar and a float64 array of shape ``(d,)`` for a
    vector; ``d=None`` skips the length check.  Every value must be finite and
    ``>= 0`` (``> 0`` when ``allow_zero`` is false).
    """
    arr = check_array(value, name, ndim=(0, 1))
    bound = ">= 0" if allow_zero else "> 0"
    bad = arr < 0 if allow_zero else arr <= 0
    if np.any(bad):
        raise ParameterError(f"{name} must be {bound} (a scalar or one value per coordinate), got {value!r}")
    if arr.ndim == 0:
        return float(arr)
    if arr.shape[0] == 0:
        raise ParameterError(f"{name} must be a scalar or a non-empty vector, got an empty array")
    if d is not None and arr.shape[0] != d:
        raise ParameterError(
            f"{name} has {arr.shape[0]} per-coordinate values but the instances have d={d} coordinates"
        )
    return arr


def _check_d(d: Any) -> int:
    return check_int(d, "d", low=1)


class NoiseModel(Configurable):
    """A zero-mean noise law on ``R^d`` with a known, exact covariance.

    Subclasses implement ``_validate_params(d)`` (raise ParameterError on a bad
    parameter; ``d=None`` checks what can be checked without a dimension),
    ``_make_sampler(d)`` (return a draw function with the validated parameters
    bound, see :meth:`sampler`) and ``_covariance(d, round, call)``.
    """

    # -- validation -------------------------------------------------------------
    def _validate_params(self, d: int | None = None) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def validate(self, d: int | None = None) -> "NoiseModel":
        """Check every parameter (and, given ``d``, its compatibility with dimension ``d``); return self."""
        if d is not None:
            d = _check_d(d)
        self._validate_params(d)
        return self

    # -- sampling -----------------------------------------------------------------
    def _make_sampler(self, d: int) -> Sampler:  # pragma: no cover - overridden
        raise NotImplementedError

    def sampler(self, d: int) -> Sampler:
        """Validate once for dimension ``d`` and return a fast draw function ``f(rng, size, round, call)``.

        ``f`` returns a ``(size, d)`` float64 array (``size >= 1``) and does no
        argument checking: it is the hot path of :class:`nolo.noise.Oracle`.
        The parameters are frozen at the time of the call (a later
        ``set_params`` does not affect an existing sampler).
        """
        d = _check_d(d)
        self._validate_params(d)
        return self._make_sampler(d)

    def sample(self, rng, size: int, d: int, *, round: int = 0, call: int = 0) -> np.ndarray:
        """Draw ``size`` independent zero-mean noise vectors in ``R^d``.

        ``rng`` is a numpy Generator (or a seed, see :func:`nolo.random.as_generator`);
        ``round`` and ``call`` index the oracle round and the query call within
        it (used only by the adversarial schedules).  Returns a float64 array
        of shape ``(size, d)``; ``size=0`` gives an empty ``(0, d)`` array.
        """
        size = check_int(size, "size", low=0)
        d = _check_d(d)
        round = check_int(round, "round", low=0)
        call = check_int(call, "call", low=0)
        rng = as_generator(rng, "rng")
        draw = self.sampler(d)
        if size == 0:
            return np.empty((0, d), dtype=np.float64)
        return draw(rng, size, round, call)

    # -- moments --------------------------------------------------------------------
    def _covariance(self, d: int, round: int | None, call: int | None) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - overridden

    def covariance(self, d: int, *, round: int | None = None, call: int | None = None) -> np.ndarray:
        """Exact covariance ``E[Z Z^T]``, a ``(d, d)`` float64 array (a fresh copy).

        Stationary models ignore ``round``/``call``.  A schedule returns the
        covariance of the law in force at ``(round, call)`` when they are given,
        and otherwise the common covariance of its components (an error if the
        components disagree).
        """
        d = _check_d(d)
        if round is not None:
            round = check_int(round, "round", low=0)
        if call is not None:
            call = check_int(call, "call", low=0)
        self._validate_params(d)
        return np.array(self._covariance(d, round, call), dtype=np.float64)

    def variance(self, d: int, *, round: int | None = None, call: int | None = None) -> np.ndarray:
        """Per-coordinate variances, the diagonal of :meth:`covariance`, shape ``(d,)``."""
        return np.diag(self.covariance(d, round=round, call=call)).copy()

    def mean_sq_norm(self, d: int, *, round: int | None = None, call: int | None = None) -> float:
        """``E||Z||^2`` = trace of the covariance (CSS10's bound ``a`` on the noise's second moment)."""
        return float(np.trace(self.covariance(d, round=round, call=call)))
