"""Boundary checks shared by every public entry point.

Each check raises :class:`nolo.ParameterError` (a ``ValueError``) whose
message names the parameter and the allowed domain, e.g.::

    ParameterError: p must be a real number > 1, got 0.5
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from nolo.exceptions import NumericalError, ParameterError

__all__ = [
    "check_bool",
    "check_seed",
    "check_scalar",
    "check_int",
    "check_choice",
    "check_array",
    "check_sparse",
    "check_targets_for_rows",
    "check_finite",
    "check_probability",
    "check_flip_rates",
    "check_writable_dir",
    "check_writable_file",
    "writeable",
    "check_state_bytes",
    "state_bytes_bound",
]


def _fmt_interval(low, high, low_inclusive, high_inclusive) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>=' if low_inclusive else '>'} {low}")
    if high is not None:
        parts.append(f"{'<=' if high_inclusive else '<'} {high}")
    return " and ".join(parts) if parts else "finite"


def check_scalar(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a float after checking it is a real number in the interval.

    Raises :class:`ParameterError` naming ``name`` and the allowed interval.
    """
    allowed = f"a real number {_fmt_interval(low, high, low_inclusive, high_inclusive)}"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ParameterError(f"{name} must be {allowed}, got {value!r} of type {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ParameterError(f"{name} must be {allowed}, got {v}")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise ParameterError(f"{name} must be {allowed}, got {v}")
    if high is not None and (v > high or (v == high and not high_inclusive)):
        raise ParameterError(f"{name} must be {allowed}, got {v}")
    return v


def check_int(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer in ``[low, high]``."""
    allowed = f"an integer {_fmt_interval(low, high, True, True)}"
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise ParameterError(f"{name} must be {allowed}, got {value!r} of type {type(value).__name__}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ParameterError(f"{name} must be {allowed}, got {v}")
    return v


def check_bool(value: Any, name: str) -> bool:
    """A flag: exactly ``True`` or ``False`` (numpy bools too), not any truthy value."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_seed(value: Any, name: str = "seed") -> Any:
    """A seed: None, a non-negative int, a numpy SeedSequence or Generator (``nan``, floats, strings are refused)."""
    if value is None or isinstance(value, (np.random.SeedSequence, np.random.Generator)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return value
    raise ParameterError(
        f"{name} must be None, a non-negative int, a numpy SeedSequence or a numpy Generator, got {value!r}"
    )


def check_choice(value: Any, name: str, choices) -> Any:
    """Check ``value`` is one of ``choices``."""
    try:
        ok = value in choices
    except (TypeError, ValueError):  # pandas.NA, arrays: their comparison has no truth value
        ok = False
    if not ok:
        allowed = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_probability(value: Any, name: str, *, open_high: bool = False) -> float:
    """A probability in [0, 1] (or [0, 1) with ``open_high``)."""
    return check_scalar(value, name, low=0.0, high=1.0, high_inclusive=not open_high)


def check_flip_rates(rho0: Any, rho1: Any) -> tuple[float, float]:
    """Check feedback flip rates: rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1).

    Both in [0, 1) and rho0 + rho1 < 1 (otherwise the flipped bit carries no
    information, AM section 3).
    """
    r0 = check_scalar(rho0, "rho0", low=0.0, high=1.0, high_inclusive=False)
    r1 = check_scalar(rho1, "rho1", low=0.0, high=1.0, high_inclusive=False)
    if r0 + r1 >= 1.0:
        raise ParameterError(
            f"rho0 + rho1 must be < 1 (rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1)), "
            f"got rho0={r0}, rho1={r1}, sum={r0 + r1}"
        )
    return r0, r1


def check_array(
    value: Any,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    shape: tuple[int | None, ...] | None = None,
    dtype=np.float64,
    finite: bool = True,
    copy: bool = False,
) -> np.ndarray:
    """Convert ``value`` to an array and check its dimension, shape and finiteness.

    ``shape`` entries set to ``None`` are free.  Complex input is refused for a
    real ``dtype`` (numpy would silently drop the imaginary part).  Raises
    :class:`ParameterError`.
    """
    real_target = np.dtype(dtype).kind in "fiub"
    if real_target and getattr(getattr(value, "dtype", None), "kind", None) == "c":
        raise ParameterError(f"{name} must be real: got a complex {type(value).__name__} (dtype {value.dtype})")
    arr = _as_array(value, name, dtype, copy)
    if dtype is None and arr.dtype.kind not in "biuf":  # objects (a pandas.NA), strings, complex: float64 or refused
        arr = _as_array(arr, name, np.float64, False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ParameterError(
                f"{name} must have {' or '.join(str(a) for a in allowed)} dimension(s), got shape {arr.shape}"
            )
    if shape is not None:
        ok = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
        if not ok:
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ParameterError(f"{name} must have shape {want}, got {arr.shape}")
    if finite and arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
    return writeable(arr)


def writeable(arr: np.ndarray) -> np.ndarray:
    """``arr``, or a copy of it if it is read-only (``flags.writeable`` False: a memory map opened ``"r"``, a
    zero-copy view of Arrow data, a frozen array).  numba compiles a separate version of each loop for read-only
    arrays (a minute or more on first use), so inputs reach the compiled code writeable; nolo never writes to them.
    The copy keeps the memory layout (a Fortran-ordered array stays Fortran-ordered), so that the arithmetic -- and
    its rounding -- is that of the same array when writeable."""
    return arr if arr.flags.writeable else arr.copy(order="K")


def _as_array(value: Any, name: str, dtype, copy: bool) -> np.ndarray:
    """``value`` as an array of ``dtype``; ParameterError naming ``name`` for what does not convert (a complex
    value into a real dtype, a missing value, a string)."""
    try:
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":  # fast path: no complex value possible
            return np.array(value, dtype=dtype, copy=copy) if copy else np.asarray(value, dtype=dtype)
        with warnings.catch_warnings():  # lists of numpy complex scalars, object arrays: numpy would drop the
            warnings.simplefilter("error", np.exceptions.ComplexWarning)  # imaginary part with a warning
            return np.array(value, dtype=dtype, copy=copy) if copy else np.asarray(value, dtype=dtype)
    except np.exceptions.ComplexWarning:
        raise ParameterError(f"{name} must be real: got complex values") from None
    except (TypeError, ValueError) as exc:
        if "NAType" in str(exc):
            raise ParameterError(f"{name} must hold numbers, got a missing value (pandas.NA): drop or impute the "
                                 "missing entries first") from None
        kind = "an array" if dtype is None else f"a {np.dtype(dtype).name} array"
        raise ParameterError(f"{name} must be convertible to {kind}: {exc}") from None


def _check_indices(idx: Any, size: int, what: str, axis: str, n: int) -> np.ndarray:
    """One raw index array of a sparse matrix: ``n`` integers in [0, ``size``)."""
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu" or idx.ndim != 1 or idx.shape[0] != n:
        raise ParameterError(f"{what} must hold {n} integer {axis} indices (one per stored value), got "
                             f"{idx.shape[0] if idx.ndim == 1 else idx.shape} of dtype {idx.dtype}")
    if n and (idx.min() < 0 or idx.max() >= size):
        raise ParameterError(f"{what} must hold {axis} indices in [0, {size}), got indices from {idx.min()} to "
                             f"{idx.max()}")
    return idx


def _check_sparse_arrays(X: Any, name: str) -> None:
    """The raw arrays of a CSR, CSC, BSR or COO matrix, as compiled code will index with them (see check_sparse)."""
    n_rows, n_cols = (int(s) for s in X.shape)
    fmt = X.format
    what = f"{name} (a {fmt.upper()} matrix of shape ({n_rows}, {n_cols}))"
    data = np.asarray(X.data)
    if data.dtype.kind not in "biuf":
        raise ParameterError(f"{what} must hold real numbers, got values of dtype {data.dtype}")
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
    if fmt == "coo":
        coords = X.coords if hasattr(X, "coords") else (X.row, X.col)
        n = data.shape[0] if data.ndim == 1 else -1
        if data.ndim != 1 or len(coords) != 2:
            raise ParameterError(f"{what} must hold a 1-d array of values and two index arrays")
        for idx, size, axis in zip(coords, (n_rows, n_cols), ("row", "column")):
            _check_indices(idx, size, what, axis, n)
        return
    rows, cols = X.blocksize if fmt == "bsr" else (1, 1)
    if n_rows % rows or n_cols % cols:
        raise ParameterError(f"{what} must have a shape divisible by its block size {rows} x {cols}")
    major, minor = (n_cols, n_rows) if fmt == "csc" else (n_rows // rows, n_cols // cols)
    lines, axis = ("columns", "row") if fmt == "csc" else ("rows", "column")
    indptr = np.asarray(X.indptr)
    if indptr.dtype.kind not in "iu" or indptr.ndim != 1 or indptr.shape[0] != major + 1:
        raise ParameterError(f"{what} must have an integer indptr of {major + 1} entries (one more than its number "
                             f"of {'block ' if fmt == 'bsr' else ''}{lines}), got shape {indptr.shape}, dtype "
                             f"{indptr.dtype}")
    if indptr[0] != 0 or np.any(indptr[1:] < indptr[:-1]):
        raise ParameterError(f"{what} must have a non-decreasing indptr starting at 0")
    nnz = np.asarray(X.indices).shape[0] if np.ndim(X.indices) == 1 else -1
    if indptr[-1] != nnz or data.shape[:1] != (nnz,) or data.shape[1:] != ((rows, cols) if fmt == "bsr" else ()):
        raise ParameterError(f"{what} must have an indptr ending at its number of stored entries, and as many "
                             f"indices and values: indptr[-1] = {indptr[-1]}, indices of shape "
                             f"{np.shape(X.indices)}, values of shape {data.shape}")
    _check_indices(X.indices, minor, what, axis, nnz)


def check_sparse(X: Any, name: str = "X", dtype=None):
    """``X`` (a scipy sparse matrix or array of any format) as a CSR matrix whose arrays are safe to index with.

    scipy checks index bounds only in ``check_format(full_check=True)``: a matrix assembled from raw arrays (or whose
    arrays were replaced) may hold a column index past the last column, a negative one, an ``indptr`` that decreases
    or does not end at the number of stored entries.  The compiled loops -- nolo's, and scipy's own conversions --
    index with these arrays unchecked, so such a matrix reads or writes outside them (wrong values, or a segfault).
    Checked here, vectorised in O(nnz + rows): 2-d, real finite values, every index in range, ``indptr``
    non-decreasing from 0 to nnz -- before any conversion, and again on the CSR matrix a format without raw index
    arrays (LIL, DOK, DIA) converts to.  Raises :class:`ParameterError` naming ``name``; ``X`` is never modified.
    """
    import scipy.sparse as sp

    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        raise ParameterError(f"{name} must be a 2-d sparse matrix, got shape {shape}")
    raw = X.format in ("csr", "csc", "bsr", "coo")
    if raw:
        _check_sparse_arrays(X, name)
    try:
        out = sp.csr_matrix(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be convertible to a CSR matrix of real numbers: {exc}") from None
    if not raw:
        _check_sparse_arrays(out, name)
    if not all(a.flags.writeable for a in (out.data, out.indices, out.indptr)):
        out = out.copy()  # read-only arrays would compile other versions of the loops (see writeable)
    return out


def check_targets_for_rows(y: Any, n: int, rows_name: str, name: str = "y") -> np.ndarray:
    """One finite target per row of ``rows_name``: ``y`` as a float64 array of shape ``(n,)``; a length mismatch
    names both arrays (an empty ``X`` with a full ``y`` is the rows' fault as much as the targets')."""
    arr = check_array(y, name, ndim=1)
    if arr.shape[0] != n:
        raise ParameterError(f"{rows_name} and {name} must have the same number of rows: {name} must have shape "
                             f"({n},) for the {n} rows of {rows_name}, got shape {arr.shape}")
    return arr


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


#: the bound :func:`state_bytes_bound` sets for the checks inside it: (bytes, what the bound is), or None
_STATE_BYTES_BOUND: contextvars.ContextVar[tuple[int, str] | None] = contextvars.ContextVar("state_bytes_bound",
                                                                                           default=None)


@contextlib.contextmanager
def state_bytes_bound(limit: int, label: str) -> Iterator[None]:
    """Inside the block, :func:`check_state_bytes` also refuses a state of more than ``limit`` bytes, naming
    ``label`` (what the bound is: e.g. the bytes a model file being loaded holds)."""
    token = _STATE_BYTES_BOUND.set((int(limit), label))
    try:
        yield
    finally:
        _STATE_BYTES_BOUND.reset(token)


def check_state_bytes(need: int, what: str, *, max_bytes: int | None = None, hint: str = "") -> None:
    """The size check of a learner's state, before anything is allocated: :class:`ParameterError` when ``need``
    bytes exceed ``max_bytes`` (a class's own limit, e.g. SquareCB's ridge oracle) or, without one, this machine's
    physical memory -- numpy would raise a bare ``MemoryError`` part-way through ``initialize``, or allocate lazily
    and let the process be killed later -- or, inside :func:`state_bytes_bound`, that bound.  The message is
    ``"<what> needs N GiB, more than <the limit>; <hint>"``: ``what`` names the parameters the size comes from
    (``n_classes``, ``n_features``, ...)."""
    if max_bytes is not None:
        limit, label = int(max_bytes), f"max_bytes={int(max_bytes) / 2**30:.2f} GiB"
    else:
        limit = physical_memory()
        label = f"this machine's memory ({(limit or 0) / 2**30:.2f} GiB)"
    bound = _STATE_BYTES_BOUND.get()
    if bound is not None and (limit is None or bound[0] < limit):
        limit, label = bound[0], f"{bound[0] / 2**20:.2f} MiB, {bound[1]}"
    if limit is not None and need > limit:
        raise ParameterError(f"{what} needs {need / 2**30:.2f} GiB, more than {label}" + (f"; {hint}" if hint else ""))


def check_finite(value: float | np.ndarray, what: str) -> float | np.ndarray:
    """Raise :class:`NumericalError` if a computed quantity is not finite.

    Used on results (not inputs): an estimator overflowing, a step diverging.
    """
    if not np.all(np.isfinite(value)):
        raise NumericalError(
            f"{what} is not finite ({value!r}); the computation overflowed or diverged. "
            "Rescale the inputs, lower the step size, or lower p / the loss's sharpness."
        )
    return value


def check_writable_dir(path: Any, name: str) -> Path:
    """``path`` as a directory files can be written to, checked before any work: created (with its parents) if
    missing, then probed by creating and removing a small file in it -- permission bits alone do not tell (root,
    ACLs, read-only mounts).  Raises :class:`ParameterError` naming ``name`` (an option such as ``--out``)."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".nolo-write-check-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ParameterError(f"{name}: cannot write to the directory {str(p)!r} ({exc.strerror or exc}); give a "
                             f"writable directory") from None
    return p


def check_writable_file(path: Any, name: str) -> Path:
    """``path`` as a file that can be written (or replaced), checked before any work: not a directory, in a
    writable directory (:func:`check_writable_dir`, which creates it), and writable itself if it exists.  Raises
    :class:`ParameterError` naming ``name``."""
    p = Path(path)
    if p.is_dir():
        raise ParameterError(f"{name} must be a file path, got the directory {str(p)!r}")
    check_writable_dir(p.parent, name)
    if p.exists():
        try:
            with open(p, "ab"):  # opens for writing without changing a byte
                pass
        except OSError as exc:
            raise ParameterError(f"{name}: cannot write to the file {str(p)!r} ({exc.strerror or exc}); give a "
                                 "writable path") from None
    return p
