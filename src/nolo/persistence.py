"""Saving and loading learners: a documented, versioned, pickle-free format.

A saved learner is one ``.npz`` (zip) file holding

* ``__nolo__``: UTF-8 JSON (stored as a uint8 array) with
  ``{"format": "nolo-learner", "format_version": 1, "nolo_version": ...,
  "config": <learner.to_config()>, "state": {...}}``;
* one array entry per NumPy array of the learner's state.

``state`` maps each state attribute (the scikit-learn convention: names that
end in ``_``) to a JSON value, to ``{"array": "<entry name>"}`` for arrays, to
``{"arrays": [...]}`` for lists of arrays, or to ``{"generator": <bit
generator state>}`` for a ``numpy.random.Generator`` -- so that a learner saved
mid-stream continues with exactly the random draws it would have made.

Loading reads arrays without pickle and only rebuilds classes registered as
:class:`nolo._config.Configurable`; no code from the file runs.  It is bounded by
the file: the header is read first, then only the entries its state names (an
entry it does not name is refused), each after its declared dtype and shape have
been checked against the bytes the entry holds -- so a load allocates no more
than the file's size, plus at most :data:`MAX_INFLATED_BYTES` for compressed
entries (nolo writes none; a few compressed bytes may declare gigabytes).
The fresh instance a loaded state is compared with (:func:`compare_state`) is sized before it is built: its
``n_features_in_`` against the saved arrays (:func:`check_feature_count`), its parameters' state size against the
bytes those arrays hold (:func:`fresh_state_bound`), so parameters asking for gigabytes are refused before anything
is allocated.
Files are written atomically (a temporary file renamed over the target).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from nolo._config import Configurable
from nolo._validation import state_bytes_bound
from nolo.exceptions import PersistenceError

FORMAT = "nolo-learner"
FORMAT_VERSION = 1
#: bytes the compressed entries of one file may inflate to, in all.  nolo writes entries uncompressed
#: (``np.savez``), so every byte a load allocates is a byte of the file; a compressed entry is the exception
#: (1 MB of deflated zeros declares 1 GiB), read only within this budget.
MAX_INFLATED_BYTES = 16 * 2**20

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "encode_state",
    "decode_state",
    "write_npz_atomic",
    "read_npz",
    "generator_state",
    "generator_from_state",
    "MAX_COUNT",
    "check_state_names",
    "check_feature_count",
    "fresh_state_bound",
    "compare_state",
]


#: the bit generators a file may name (numpy's own; looked up by name, never imported from the file)
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays turned into JSON types (bit-generator states hold numpy ints/arrays)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return {"uint_array": value.tolist(), "dtype": value.dtype.str}
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _from_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"uint_array", "dtype"}:
            dtype = np.dtype(str(value["dtype"]))
            if dtype.kind not in "ui":
                raise PersistenceError(f"bad array dtype {dtype} in a saved generator state")
            return np.asarray(value["uint_array"], dtype=dtype)
        return {k: _from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_jsonable(v) for v in value]
    return value


def generator_state(g: np.random.Generator) -> dict:
    """The JSON-compatible state of ``g``'s bit generator."""
    return _jsonable(g.bit_generator.state)


def generator_from_state(state: Any) -> np.random.Generator:
    """A Generator whose bit generator has the saved ``state``; PersistenceError if the state is malformed."""
    if not isinstance(state, dict):
        raise PersistenceError(f"a saved generator state must be a dict, got {type(state).__name__}")
    name = state.get("bit_generator")
    if name not in _BIT_GENERATORS:
        raise PersistenceError(f"unknown bit generator {name!r} in saved state (known: {', '.join(_BIT_GENERATORS)})")
    bg = getattr(np.random, name)(0)
    try:
        bg.state = _from_jsonable(state)
    except PersistenceError:
        raise
    except Exception as exc:  # numpy raises ValueError/TypeError/KeyError/OverflowError on a malformed state
        raise PersistenceError(f"malformed {name} generator state in saved file: {type(exc).__name__}: {exc}") from None
    return np.random.Generator(bg)


# backwards-compatible private names
_generator_state = generator_state
_generator_from_state = generator_from_state


def encode_state(state: dict[str, Any]) -> tuple[dict, dict[str, np.ndarray]]:
    """Split a state dict into JSON metadata and named arrays."""
    meta: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for key, value in state.items():
        if isinstance(value, np.random.Generator):
            meta[key] = {"generator": generator_state(value)}
        elif isinstance(value, np.ndarray):
            name = f"state.{key}"
            arrays[name] = value
            meta[key] = {"array": name}
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
            names = []
            for i, v in enumerate(value):
                name = f"state.{key}.{i}"
                arrays[name] = v
                names.append(name)
            meta[key] = {"arrays": names}
        elif isinstance(value, (np.integer,)):
            meta[key] = {"value": int(value)}
        elif isinstance(value, (np.floating,)):
            meta[key] = {"value": float(value)}
        elif value is None or isinstance(value, (bool, int, float, str, list, dict)):
            try:
                json.dumps(value)
            except TypeError as exc:
                raise PersistenceError(f"state attribute {key!r} is not serialisable: {exc}") from None
            meta[key] = {"value": value}
        else:
            if isinstance(value, Configurable):
                meta[key] = {"config": value.to_config()}
            else:
                raise PersistenceError(
                    f"state attribute {key!r} of type {type(value).__name__} cannot be saved; "
                    "override _get_state/_set_state to convert it to arrays"
                )
    return meta, arrays


def _array_entry(arrays: dict[str, np.ndarray], name: Any, key: str) -> np.ndarray:
    if not isinstance(name, str) or name not in arrays:
        raise PersistenceError(f"state entry {key!r} names the array {name!r}, which the file does not hold")
    return arrays[name]


def decode_state(meta: Any, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """Inverse of :func:`encode_state`; raises PersistenceError (only) on a malformed entry."""
    if not isinstance(meta, dict):
        raise PersistenceError(f"the saved state must be a JSON object, got {type(meta).__name__}")
    out: dict[str, Any] = {}
    for key, item in meta.items():
        if not isinstance(item, dict) or len(item) != 1:
            raise PersistenceError(f"malformed state entry {key!r}: {item!r:.200}")
        kind, value = next(iter(item.items()))
        if kind == "generator":
            out[key] = generator_from_state(value)
        elif kind == "array":
            out[key] = _array_entry(arrays, value, key)
        elif kind == "arrays":
            if not isinstance(value, list):
                raise PersistenceError(f"state entry {key!r}: 'arrays' must be a list of array names")
            out[key] = [_array_entry(arrays, n, key) for n in value]
        elif kind == "config":
            try:
                out[key] = Configurable.from_config(value)
            except PersistenceError:
                raise
            except Exception as exc:
                raise PersistenceError(f"state entry {key!r}: bad configuration: {exc}") from None
        elif kind == "value":
            out[key] = value
        else:
            raise PersistenceError(f"malformed state entry {key!r}: unknown kind {kind!r}")
    return out


def write_npz_atomic(path: str | os.PathLike, header: dict, arrays: dict[str, np.ndarray]) -> Path:
    """Write ``header`` (JSON) and ``arrays`` to ``path`` atomically."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(arrays)
    payload["__nolo__"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **payload)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _state_entries(state: dict) -> dict[str, str]:
    """The array entries a header's state names, each with the state key naming it (malformed state entries are
    left to :func:`decode_state`)."""
    names: dict[str, str] = {}
    for key, item in state.items():
        if isinstance(item, dict) and len(item) == 1:
            kind, value = next(iter(item.items()))
            for v in [value] if kind == "array" else value if kind == "arrays" and isinstance(value, list) else []:
                if isinstance(v, str):
                    names.setdefault(v, key)
    return names


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> np.ndarray:
    """One ``.npy`` entry, after checking that its declared dtype and shape fill exactly the bytes it holds
    (numpy would allocate the declared size before reading a byte) and that a compressed entry fits ``budget``."""
    name = info.filename[:-4]
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size != info.compress_size:
            raise PersistenceError(f"entry {name!r} is stored uncompressed but declares {info.file_size} bytes for "
                                   f"the {info.compress_size} it holds")
    elif info.file_size > budget[0]:
        raise PersistenceError(
            f"entry {name!r} is compressed and inflates to {info.file_size} bytes from {info.compress_size}: more "
            f"than the {MAX_INFLATED_BYTES} bytes a file's compressed entries may take in all (nolo writes "
            "entries uncompressed)")
    else:
        budget[0] -= info.file_size
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version not in ((1, 0), (2, 0)):
            raise PersistenceError(f"entry {name!r} is a .npy array of format version {version}, not 1.0 or 2.0")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(fh)
        if dtype.hasobject:
            raise PersistenceError(f"entry {name!r} holds Python objects (dtype {dtype}), which nolo never saves")
        declared = math.prod(shape) * dtype.itemsize
        if declared != info.file_size - fh.tell():
            raise PersistenceError(f"entry {name!r} declares a {dtype} array of shape {shape} ({declared} bytes) "
                                   f"but holds {info.file_size - fh.tell()} bytes of data")
    with zf.open(info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def read_npz(path: str | os.PathLike) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a file written by :func:`write_npz_atomic`; no pickle, ever.

    The header first, then only the array entries its state names, each checked before it is read (see the
    module docstring); an entry the state names but the file lacks, or one it does not name, is refused.
    """
    try:
        path = Path(path)
    except TypeError:
        raise PersistenceError(f"path must be a str or os.PathLike, got {type(path).__name__}") from None
    if not path.is_file():
        raise PersistenceError(f"no saved learner at {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            entries: dict[str, zipfile.ZipInfo] = {}
            for info in zf.infolist():
                if not info.filename.endswith(".npy") or info.filename[:-4] in entries:
                    raise PersistenceError(f"the entry {info.filename!r} is not one .npy array of a nolo file "
                                           "(a duplicate, or not an array)")
                entries[info.filename[:-4]] = info
            if "__nolo__" not in entries:
                raise PersistenceError("not a nolo file (no __nolo__ header)")
            budget = [MAX_INFLATED_BYTES]
            raw = _read_entry(zf, entries["__nolo__"], budget)
            if raw.dtype != np.uint8 or raw.ndim != 1:
                raise PersistenceError(f"the __nolo__ header must be a 1-d uint8 array, got {raw.dtype} {raw.shape}")
            header = json.loads(raw.tobytes().decode("utf-8"))
            _check_header(header)
            named = _state_entries(header["state"])
            for name, key in named.items():
                if name not in entries:
                    raise PersistenceError(f"state entry {key!r} names the array {name!r}, which the file does not hold")
            unknown = sorted(set(entries) - set(named) - {"__nolo__"})
            if unknown:
                raise PersistenceError(f"the file holds entries its state does not name: "
                                       f"{', '.join(repr(u) for u in unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
            arrays = {k: _read_entry(zf, entries[k], budget) for k in sorted(named)}
    except PersistenceError as exc:
        raise PersistenceError(f"{path}: {exc}") from None
    except (Exception, MemoryError) as exc:  # zip/npy/JSON/unicode errors, EOFError on an empty file, ...
        raise PersistenceError(f"{path} is not a readable nolo file: {type(exc).__name__}: {exc}") from None
    return header, arrays


def _check_header(header: Any) -> None:
    """The header's structure, before any array entry is read."""
    if not isinstance(header, dict):
        raise PersistenceError(f"the header must be a JSON object, got {type(header).__name__}")
    for key in ("config", "state"):
        if not isinstance(header.get(key), dict):
            raise PersistenceError(f"the header's {key!r} entry is missing or not a JSON object")
    if header.get("format") != FORMAT:
        raise PersistenceError(f"format {header.get('format')!r} is not {FORMAT!r}")
    if header.get("format_version") != FORMAT_VERSION:
        raise PersistenceError(
            f"format_version {header.get('format_version')!r} is not supported (this nolo reads {FORMAT_VERSION})"
        )


# -- the load-time comparison of a decoded state with a fresh instance's -------------------------------------------
#: bound of a loaded count (rounds, queries, fill counts): far beyond any run, and small enough that ``t_ + 1`` and
#: friends stay exact in float64 and never overflow the int64 arithmetic of the compiled loops
MAX_COUNT = 2**53

_STATE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*_")


def check_state_names(state: dict[str, Any]) -> None:
    """Every key of a decoded state is a state attribute name (lower-case letters, digits, ``_``; ending with ``_``)."""
    for key in state:
        if not (isinstance(key, str) and _STATE_NAME.fullmatch(key)):
            raise PersistenceError(f"{key!r} is not a state attribute name (lower-case, ending with '_')")


def _state_arrays(state: dict[str, Any]) -> list[np.ndarray]:
    """The arrays of a decoded state, those in lists included."""
    return [a for v in state.values() for a in (v if isinstance(v, list) else [v]) if isinstance(a, np.ndarray)]


def check_feature_count(cls: type, state: dict[str, Any]) -> int | None:
    """The decoded state's ``n_features_in_`` (None when it holds none: an unfitted learner), checked against its
    arrays before anything is built from it: a positive integer, at most the number of entries the saved arrays
    hold (unless ``cls._state_per_feature`` is False: a state whose per-feature arrays are buffers filled while
    learning), and the length of an axis of a saved array -- or, when ``cls._bias_column`` (weights on
    ``z = [x, 1]``), that length plus one (unless ``cls._features_are_cells``: then it counts the cells of a
    matrix)."""
    if "n_features_in_" not in state:
        return None
    n = state["n_features_in_"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise PersistenceError(f"n_features_in_ must be a positive integer, got {n!r}")
    arrays = _state_arrays(state)
    entries = sum(a.size for a in arrays)
    if n > entries and getattr(cls, "_state_per_feature", True):
        raise PersistenceError(f"n_features_in_={n} is more than the {entries} entries the saved arrays hold: the "
                               "state keeps at least one number per feature")
    feature_axes = {ax for a in arrays for ax in a.shape}
    with_bias = getattr(cls, "_bias_column", False) and n + 1 in feature_axes
    if n not in feature_axes and not with_bias and not getattr(cls, "_features_are_cells", False):
        shapes = {k: v.shape for k, v in state.items() if isinstance(v, np.ndarray) and v.ndim}
        listed = ", ".join(f"{k} {s}" for k, s in list(shapes.items())[:8]) + (", ..." if len(shapes) > 8 else "")
        raise PersistenceError(f"n_features_in_={n} is the length of no axis of the saved arrays ({listed}): an "
                               "array of the state has the wrong number of features")
    return n


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _check_finite_array(key: str, a: np.ndarray) -> None:
    if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
        raise PersistenceError(f"state array {key!r} holds NaN or inf")


def _compare_array(key: str, a: Any, ref: np.ndarray, growing: tuple[int, ...], empty_grows: bool) -> None:
    """``a`` is ``ref`` up to the ``growing`` axes (and, when ``empty_grows``, the axes of length 0 in ``ref``)."""
    if not isinstance(a, np.ndarray):
        raise PersistenceError(f"state attribute {key!r} must be an array, got {type(a).__name__}")
    if a.dtype != ref.dtype:
        raise PersistenceError(f"state array {key!r} must have dtype {ref.dtype}, got {a.dtype}")
    if a.ndim != ref.ndim:
        raise PersistenceError(f"state array {key!r} must have {ref.ndim} dimensions, got shape {a.shape}")
    for ax, (m, r) in enumerate(zip(a.shape, ref.shape)):
        if m != r and ax not in growing and not (r == 0 and empty_grows):
            raise PersistenceError(f"state array {key!r} must have shape {ref.shape} for this configuration, got {a.shape}")
    c, f = ref.flags.c_contiguous, ref.flags.f_contiguous
    if (c and not f and not a.flags.c_contiguous) or (f and not c and not a.flags.f_contiguous):
        raise PersistenceError(f"state array {key!r} must be {'C' if c else 'Fortran'}-ordered (memory layout)")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise PersistenceError(f"state array {key!r} must be contiguous")
    _check_finite_array(key, a)


def _check_growth_groups(reference: dict[str, Any], loaded: dict[str, Any], declared: dict,
                         empty_grows: bool) -> None:
    """Arrays that grow together keep equal lengths: those declared growing on an axis (per axis), and, when
    ``empty_grows`` (a class that declares nothing), those whose first axis is empty in a fresh instance (a support
    and its coefficients)."""
    groups: dict[tuple[str, int], list[str]] = {}
    for key, ref in reference.items():
        if not isinstance(ref, np.ndarray):
            continue
        for ax in declared.get(key, ()):
            groups.setdefault(("declared", ax), []).append(key)
        if ref.ndim and ref.shape[0] == 0 and empty_grows:
            groups.setdefault(("empty", 0), []).append(key)
    for (_, ax), keys in groups.items():
        arrs = [loaded.get(k) for k in keys]
        if not all(isinstance(a, np.ndarray) and a.ndim > ax for a in arrs):
            continue  # reported by the per-array checks
        lengths = {k: a.shape[ax] for k, a in zip(keys, arrs)}
        if len(set(lengths.values())) > 1:
            raise PersistenceError(f"state arrays {sorted(lengths)} grow together but have lengths {lengths} on axis {ax}")


#: bytes a fresh instance's state may take beyond twice the bytes of the saved state it is compared with (see
#: :func:`fresh_state_bound`): room for buffers a fresh instance allocates ahead and for size estimates that round up
FRESH_STATE_SLACK_BYTES = 4 * 2**20


@contextlib.contextmanager
def fresh_state_bound(state: dict[str, Any]) -> Iterator[None]:
    """Inside the block, a learner's state size check (:func:`nolo._validation.check_state_bytes`, which the
    learners sized by their parameters call before allocating) refuses more than twice the bytes of the decoded
    ``state``'s arrays plus :data:`FRESH_STATE_SLACK_BYTES`.

    A loaded state must match a fresh instance's on every axis that does not grow, so a fresh state much larger
    than the file's arrays can only be refused once it is built: a file of a few bytes whose parameters ask for
    ``n_classes=10**9`` is refused here, before the fresh instance allocates anything.
    """
    held = sum(a.nbytes for a in _state_arrays(state))
    with state_bytes_bound(2 * held + FRESH_STATE_SLACK_BYTES,
                           f"what the saved arrays ({held} bytes) allow for this configuration"):
        yield


def compare_state(cls: type, loaded: dict[str, Any], reference: dict[str, Any]) -> None:
    """Raise PersistenceError unless ``loaded`` has the keys, types, dtypes, shapes and layout of ``reference``."""
    optional = getattr(cls, "_optional_state", {})  # state kept only in some phases: checked like its twin
    reference = dict(reference)
    for key, twin in optional.items():
        if key in loaded and key not in reference and twin in reference:
            reference[key] = reference[twin]
    extra = sorted(set(loaded) - set(reference))
    missing = sorted(set(reference) - set(loaded))
    if extra or missing:
        raise PersistenceError(
            f"the saved state of a {cls.__name__} must hold exactly {sorted(reference)}"
            + (f"; unexpected {extra}" if extra else "") + (f"; missing {missing}" if missing else "")
        )
    declared = getattr(cls, "_growing_state", None)  # None: not declared, any empty axis of a fresh state may grow
    empty_grows, declared = declared is None, declared or {}
    _check_growth_groups(reference, loaded, declared, empty_grows)
    for key, ref in reference.items():
        v = loaded[key]
        if isinstance(ref, np.ndarray):
            _compare_array(key, v, ref, tuple(declared.get(key, ())), empty_grows)
        elif isinstance(ref, np.random.Generator):
            if not isinstance(v, np.random.Generator) or type(v.bit_generator) is not type(ref.bit_generator):
                raise PersistenceError(f"state attribute {key!r} must be a {type(ref.bit_generator).__name__} generator")
        elif isinstance(ref, (bool, np.bool_)):
            if not isinstance(v, (bool, np.bool_)):
                raise PersistenceError(f"state attribute {key!r} must be a bool, got {v!r:.80}")
        elif _is_int(ref):
            low = -1 if key in getattr(cls, "_sentinel_state", ()) else 0  # -1 = "not computed yet"
            if not _is_int(v) or not low <= v < MAX_COUNT:
                raise PersistenceError(f"state attribute {key!r} must be an integer in [{low}, 2**53), got {v!r:.80}")
        elif isinstance(ref, (float, np.floating)):
            if not _is_real(v) or not np.isfinite(v):
                raise PersistenceError(f"state attribute {key!r} must be a finite real number, got {v!r:.80}")
        elif isinstance(ref, list):
            if not isinstance(v, list) or not all(isinstance(a, np.ndarray) for a in v):
                raise PersistenceError(f"state attribute {key!r} must be a list of arrays")
            kinds = {(a.dtype, a.ndim) for a in ref}
            for i, a in enumerate(v):
                if kinds and (a.dtype, a.ndim) not in kinds:
                    raise PersistenceError(f"state array {key}[{i}] has dtype {a.dtype} and {a.ndim} dimensions, "
                                           f"expected one of {sorted((str(d), n) for d, n in kinds)}")
                _check_finite_array(f"{key}[{i}]", a)
        elif ref is None:  # filled later (e.g. warm-start weights): None, an array or a list of arrays
            items = v if isinstance(v, list) else [v]
            if v is not None and not all(isinstance(a, np.ndarray) and a.dtype.kind in "fiu" for a in items):
                raise PersistenceError(f"state attribute {key!r} must be None or numeric arrays")
            for a in items if v is not None else []:
                _check_finite_array(key, a)
        elif isinstance(ref, Configurable):
            if type(v) is not type(ref):
                raise PersistenceError(f"state attribute {key!r} must be a {type(ref).__name__}")
        elif isinstance(ref, str):
            if not isinstance(v, str):
                raise PersistenceError(f"state attribute {key!r} must be a string")
        elif type(v) is not type(ref):
            raise PersistenceError(f"state attribute {key!r} must be a {type(ref).__name__}, got {type(v).__name__}")
