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

Loading uses ``numpy.load(..., allow_pickle=False)`` and only rebuilds classes
registered as :class:`nolo._config.Configurable`; no code from the file runs.
Files are written atomically (a temporary file renamed over the target).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from nolo.exceptions import PersistenceError

FORMAT = "nolo-learner"
FORMAT_VERSION = 1

__all__ = ["FORMAT", "FORMAT_VERSION", "encode_state", "decode_state", "write_npz_atomic", "read_npz"]


def _generator_state(g: np.random.Generator) -> dict:
    return g.bit_generator.state


def _generator_from_state(state: dict) -> np.random.Generator:
    name = state.get("bit_generator")
    bitgen_cls = getattr(np.random, str(name), None)
    if bitgen_cls is None or not isinstance(bitgen_cls, type) or not issubclass(bitgen_cls, np.random.BitGenerator):
        raise PersistenceError(f"unknown bit generator {name!r} in saved state")
    bg = bitgen_cls()
    bg.state = state
    return np.random.Generator(bg)


def encode_state(state: dict[str, Any]) -> tuple[dict, dict[str, np.ndarray]]:
    """Split a state dict into JSON metadata and named arrays."""
    meta: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for key, value in state.items():
        if isinstance(value, np.random.Generator):
            meta[key] = {"generator": _generator_state(value)}
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
            from nolo._config import Configurable

            if isinstance(value, Configurable):
                meta[key] = {"config": value.to_config()}
            else:
                raise PersistenceError(
                    f"state attribute {key!r} of type {type(value).__name__} cannot be saved; "
                    "override _get_state/_set_state to convert it to arrays"
                )
    return meta, arrays


def decode_state(meta: dict, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """Inverse of :func:`encode_state`."""
    from nolo._config import Configurable

    out: dict[str, Any] = {}
    for key, item in meta.items():
        if "generator" in item:
            out[key] = _generator_from_state(item["generator"])
        elif "array" in item:
            out[key] = arrays[item["array"]]
        elif "arrays" in item:
            out[key] = [arrays[n] for n in item["arrays"]]
        elif "config" in item:
            out[key] = Configurable.from_config(item["config"])
        elif "value" in item:
            out[key] = item["value"]
        else:
            raise PersistenceError(f"malformed state entry {key!r}: {item!r}")
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


def read_npz(path: str | os.PathLike) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a file written by :func:`write_npz_atomic`; no pickle, ever."""
    path = Path(path)
    if not path.exists():
        raise PersistenceError(f"no saved learner at {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__nolo__" not in data.files:
                raise PersistenceError(f"{path} is not a nolo file (no __nolo__ header)")
            header = json.loads(bytes(data["__nolo__"]).decode("utf-8"))
            arrays = {k: data[k] for k in data.files if k != "__nolo__"}
    except (zipfile.BadZipFile, ValueError, OSError, json.JSONDecodeError) as exc:
        if isinstance(exc, PersistenceError):
            raise
        raise PersistenceError(f"{path} is not a readable nolo file: {exc}") from None
    if header.get("format") != FORMAT:
        raise PersistenceError(f"{path}: format {header.get('format')!r} is not {FORMAT!r}")
    if header.get("format_version") != FORMAT_VERSION:
        raise PersistenceError(
            f"{path}: format_version {header.get('format_version')!r} is not supported (this nolo reads {FORMAT_VERSION})"
        )
    return header, arrays


