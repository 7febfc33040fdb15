"""The results store: one Parquet file per run, an index, and loading / aggregation with pandas.

Each run is ``<dir>/<run_id>.parquet``: the recorded rows, and in the Parquet
key-value metadata under ``b"nolo"`` a JSON object with ``run_id``, ``kind``
(``"run"`` for a learner run, ``"map"`` for a :meth:`Context.map` task),
``spec`` (the concrete spec, or the task), ``spec_name``, ``setting``,
``learner``, ``seed``, ``nolo_version``, ``code_version`` (version + source
hash, see :func:`nolo.experiments.sweep.code_version`), ``status`` (``"ok"`` or
``"failed"``, with ``error``), ``timing`` (``started``/``finished`` UTC ISO
times and ``seconds``) and ``complete: true``.  Files are written to a
temporary name in the same directory and renamed into place, so a file with
the final name is always complete; an interrupted sweep leaves at most
``*.parquet.tmp-*`` files, which are ignored and cleaned up.

``_index.json`` in the same directory lists every run (id, file, kind,
spec_name, setting, learner, seed, seconds); it is rebuilt from the files'
metadata after each sweep (:func:`write_index`).  Its leading underscore makes
Parquet readers (``pd.read_parquet(DIR)``) ignore it.

A file whose ``nolo`` metadata is not a JSON object is not a run: readers skip
it with a warning naming it (:func:`read_run_meta_or_none`).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from nolo.exceptions import ParameterError, PersistenceError

__all__ = [
    "META_KEY",
    "CHECKSUM_KEY",
    "CorruptRunError",
    "UncheckedRunError",
    "write_run",
    "read_run",
    "verify_run",
    "read_run_meta",
    "read_run_meta_or_none",
    "is_complete",
    "run_files",
    "write_index",
    "read_index",
    "load_results",
    "aggregate",
    "utc_now",
]

META_KEY = b"nolo"
INDEX_NAME = "_index.json"
OLD_INDEX_NAME = "index.json"
ID_COLUMNS = ("kind", "spec_name", "setting", "learner", "seed", "run_id")
#: file-level key-value metadata holding the hex SHA-256 of the file (see the module docstring)
CHECKSUM_KEY = b"nolo_sha256"
#: ``meta["checksum"]`` of a run written with a content checksum
CHECKSUM_SCHEME = "sha256-file"
_PLACEHOLDER = b"0" * 64


class CorruptRunError(PersistenceError):
    """A stored run whose bytes do not match its content checksum (changed after it was written)."""


class UncheckedRunError(PersistenceError):
    """A stored run written without a content checksum (by an earlier nolo): it cannot be verified."""


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _atomic_write_bytes(path: Path, writer) -> None:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        writer(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


#: bytes between the checksum's key and its value in the footer (Thrift compact protocol: the value's field
#: header 0x18 and its length 64 as a one-byte varint 0x40)
_VALUE_GAP = b"\x18\x40"


def _checksum_offset(data: bytes) -> int:
    """Where the 64 bytes of the checksum value start (after the last ``nolo_sha256`` key), -1 if no key."""
    key = data.rfind(CHECKSUM_KEY)
    return -1 if key < 0 else key + len(CHECKSUM_KEY) + len(_VALUE_GAP)


def _file_digest(data: bytes, at: int) -> bytes:
    """The hex SHA-256 of ``data`` with the 64 checksum bytes at ``at`` read as the placeholder."""
    h = hashlib.sha256(data[:at])
    h.update(_PLACEHOLDER)
    h.update(data[at + len(_PLACEHOLDER):])
    return h.hexdigest().encode()


def _write_sealed(path: Path, table: pa.Table) -> None:
    """Write ``table`` to ``path`` with a placeholder checksum, then put the file's SHA-256 in its place."""
    with pq.ParquetWriter(path, table.schema) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({CHECKSUM_KEY: _PLACEHOLDER})
    data = path.read_bytes()
    at = _checksum_offset(data)
    if at < 0 or data[at - len(_VALUE_GAP):at + len(_PLACEHOLDER)] != _VALUE_GAP + _PLACEHOLDER:
        raise PersistenceError(f"{path}: cannot place the content checksum in the Parquet footer "  # pragma: no cover
                               f"(pyarrow {pa.__version__} lays it out differently)")
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(_file_digest(data, at))


def write_run(path: str | os.PathLike, frame: pd.DataFrame, meta: dict[str, Any]) -> Path:
    """Write ``frame`` with ``meta`` (JSON-able; ``complete: true`` and ``checksum`` are added) atomically to
    ``path``, with the SHA-256 of the file in its metadata (:func:`verify_run`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(meta, complete=True, checksum=CHECKSUM_SCHEME)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), META_KEY: json.dumps(meta).encode()})
    _atomic_write_bytes(path, lambda p: _write_sealed(p, table))
    return path


def _read_bytes(path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise PersistenceError(f"{path} cannot be read: {exc.strerror or exc}") from None


def verify_run(path: str | os.PathLike, data: bytes | None = None) -> dict:
    """The ``nolo`` metadata of run file ``path`` after checking its bytes against its content checksum.

    Raises :class:`CorruptRunError` when they do not match (or the checksum is missing from a file whose metadata
    says it has one), :class:`UncheckedRunError` for a run written without a checksum, and
    :class:`~nolo.exceptions.PersistenceError` for a file that is not a readable run.  ``data``: the file's bytes,
    if already read."""
    data = _read_bytes(path) if data is None else data
    at = _checksum_offset(data)
    if at >= 0:
        if _file_digest(data, at) != data[at:at + len(_PLACEHOLDER)]:
            raise CorruptRunError(f"{path}: its content does not match its checksum (the file was changed after it "
                                  "was written)")
        return read_run_meta(pa.BufferReader(data), name=path)
    meta = read_run_meta(pa.BufferReader(data), name=path)
    if meta.get("checksum") is not None:
        raise CorruptRunError(f"{path}: its content checksum is missing (the file was changed after it was written)")
    raise UncheckedRunError(f"{path} was stored without a content checksum (by an earlier nolo), so it cannot be "
                            "verified")


def read_run(path: str | os.PathLike) -> tuple[pd.DataFrame, dict]:
    """The rows and the ``nolo`` metadata of run file ``path``, verified against its content checksum
    (:func:`verify_run`, whose errors it raises)."""
    data = _read_bytes(path)
    meta = verify_run(path, data)
    try:
        frame = pq.read_table(pa.BufferReader(data)).to_pandas()
    except (OSError, pa.ArrowException) as exc:
        raise PersistenceError(f"{path} is not a readable Parquet file: {exc}") from None
    return frame, meta


def read_run_meta(path, name=None) -> dict:
    """The ``nolo`` metadata of a run file (PersistenceError if it has none, or if it is not a JSON object); not
    checked against the content checksum (:func:`verify_run` does).  ``path``: a path or a pyarrow file;
    ``name``: the file's name in messages (default ``path``)."""
    name = path if name is None else name
    try:
        md = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise PersistenceError(f"{name} is not a readable Parquet file: {exc}") from None
    if META_KEY not in md:
        raise PersistenceError(f"{name} has no nolo run metadata")
    try:
        meta = json.loads(md[META_KEY])
    except (ValueError, UnicodeDecodeError) as exc:
        raise PersistenceError(f"{name}: its nolo run metadata is not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise PersistenceError(f"{name}: its nolo run metadata is a JSON {type(meta).__name__}, not an object")
    return meta


def read_run_meta_or_none(path: str | os.PathLike, warn: bool = True) -> dict | None:
    """:func:`read_run_meta`, or None (with a warning naming the file) for a file that is not a run."""
    try:
        return read_run_meta(path)
    except PersistenceError as exc:
        if warn:
            warnings.warn(f"skipping {exc}", RuntimeWarning, stacklevel=2)
        return None


def is_complete(path: str | os.PathLike) -> bool:
    """True if ``path`` is a run file whose metadata says it is complete and whose bytes match its content
    checksum (:func:`verify_run`)."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        meta = verify_run(p)
    except PersistenceError:
        return False
    return bool(meta.get("complete"))


def run_files(directory: str | os.PathLike, recursive: bool = True) -> list[Path]:
    d = Path(directory)
    if not d.is_dir():
        raise ParameterError(f"directory must be an existing directory of nolo results, got {str(d)!r}")
    files = d.rglob("*.parquet") if recursive else d.glob("*.parquet")
    return sorted(p for p in files if p.is_file())


def cleanup_tmp(directory: Path) -> None:
    """Remove temporary files left by interrupted writes."""
    if directory.is_dir():
        for p in directory.glob("*.parquet.tmp-*"):
            try:
                p.unlink()
            except OSError:
                pass


def write_index(directory: str | os.PathLike) -> Path:
    """Rebuild ``directory/index.json`` from the run files' metadata."""
    directory = Path(directory)
    entries = []
    for p in run_files(directory, recursive=False):
        m = read_run_meta_or_none(p)
        if m is None:
            continue
        entries.append({
            "run_id": m.get("run_id"),
            "file": p.name,
            "kind": m.get("kind"),
            "spec_name": m.get("spec_name"),
            "setting": m.get("setting"),
            "learner": m.get("learner"),
            "seed": m.get("seed"),
            "seconds": (m.get("timing") or {}).get("seconds") if isinstance(m.get("timing"), dict) else None,
            "nolo_version": m.get("nolo_version"),
            "status": m.get("status", "ok"),
        })
    path = directory / INDEX_NAME
    text = json.dumps({"runs": entries}, indent=1)
    _atomic_write_bytes(path, lambda p: p.write_text(text))
    old = directory / OLD_INDEX_NAME  # the name before 0.1.1; it made pd.read_parquet(DIR) fail
    if old.is_file():
        try:
            old.unlink()
        except OSError:
            pass
    return path


def read_index(directory: str | os.PathLike) -> list[dict]:
    for name in (INDEX_NAME, OLD_INDEX_NAME):
        path = Path(directory) / name
        if path.is_file():
            return json.loads(path.read_text())["runs"]
    return []


def load_results(directory: str | os.PathLike, kind: str = "all", *, failed: bool = False) -> pd.DataFrame:
    """Every run file under ``directory`` (searched recursively) as one tidy pandas DataFrame.

    One row per recorded row of every run.  Columns: ``experiment`` (the run's directory relative to
    ``directory``, e.g. ``am/error-curves``), ``kind`` ("run": a learner run of a spec, "map": a task of
    an experiment), ``spec_name``, ``setting``, ``learner``, ``seed``, ``run_id``, then the recorded
    columns (the union over runs; absent ones are NaN).  A column a run records itself (a map task's
    ``seed``) is kept as recorded.  ``kind`` filters ("run", "map" or "all", the default); failed runs
    (NumericalError) have no rows, ``failed=True`` lists them instead (with their ``error``).  Files
    that are not nolo runs, and runs whose bytes do not match their content checksum (corrupted after they
    were written; rerunning the sweep or ``nolo reproduce`` recomputes them), are skipped with a warning naming
    them; runs stored without a checksum (by an earlier nolo) are loaded unverified, with one warning.
    """
    if kind not in ("run", "map", "all"):
        raise ParameterError(f"kind must be 'run', 'map' or 'all', got {kind!r}")
    root = Path(directory)
    frames, failures, unchecked = [], [], 0
    for p in run_files(directory):
        try:
            data = _read_bytes(p)
            try:
                meta = verify_run(p, data)
            except UncheckedRunError:
                meta, unchecked = read_run_meta(pa.BufferReader(data), name=p), unchecked + 1
        except CorruptRunError as exc:
            warnings.warn(f"skipping {exc}; rerunning its sweep (nolo reproduce, nolo run) recomputes it",
                          RuntimeWarning, stacklevel=2)
            continue
        except PersistenceError as exc:
            warnings.warn(f"skipping {exc}", RuntimeWarning, stacklevel=2)
            continue
        if kind != "all" and meta.get("kind") != kind:
            continue
        rel = p.parent.relative_to(root) if p.parent != root else Path(".")
        exp = rel.parent.as_posix() if rel.name == "runs" else rel.as_posix()
        if meta.get("status") == "failed":
            failures.append({"experiment": exp, **{c: meta.get(c) for c in ID_COLUMNS}, "error": meta.get("error")})
            continue
        if failed:  # only the failed runs' metadata is wanted: the tables are not read
            continue
        try:
            df = pq.read_table(pa.BufferReader(data)).to_pandas()
        except (OSError, pa.ArrowException) as exc:
            warnings.warn(f"skipping {p}: not a readable Parquet file ({exc})", RuntimeWarning, stacklevel=2)
            continue
        for col in reversed(ID_COLUMNS):
            if col in df and meta.get(col) is not None and col != "seed":  # a task's own column of that
                df = df.rename(columns={col: f"{col}_recorded"})                # name is kept, renamed
            if col not in df:
                df.insert(0, col, meta.get(col))
        df.insert(0, "experiment", exp)
        frames.append(df)
    if unchecked:
        warnings.warn(f"{unchecked} run(s) under {directory} were stored without a content checksum (by an earlier "
                      "nolo) and are loaded unverified; rerunning their sweep (nolo reproduce, nolo run) recomputes "
                      "them", RuntimeWarning, stacklevel=2)
    if failed:
        return pd.DataFrame(failures, columns=["experiment", *ID_COLUMNS, "error"])
    if not frames:
        return pd.DataFrame(columns=["experiment", *ID_COLUMNS])
    out = pd.concat(frames, ignore_index=True)
    order = [c for c in ("experiment", "spec_name", "setting", "learner", "seed", "run_id", "t") if c in out]
    try:
        return out.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)
    except TypeError:  # a column mixing types across runs (e.g. str and int settings): file order
        return out


def aggregate(df: pd.DataFrame, at: str = "final", metrics: list[str] | None = None,
              by: list[str] | None = None) -> pd.DataFrame:
    """Mean and standard error over seeds of each metric, per (spec_name, setting, learner).

    ``at="final"`` uses each run's last recorded row; ``at="all"`` aggregates every recorded ``t``.
    Columns: the group keys, ``n_seeds``, and ``<metric>_mean`` / ``<metric>_se`` (se = sd / sqrt(n), 0 for one seed).
    ``by``: more group keys (recorded columns such as ``algo`` or ``dataset``).
    """
    if df.empty:
        return pd.DataFrame()
    if at not in ("final", "all"):
        raise ParameterError(f"at must be 'final' or 'all', got {at!r}")
    base = [k for k in ("experiment", "spec_name", "setting", "learner") if k in df]
    base += [k for k in dict.fromkeys(by or []) if k not in base]
    if at == "final":
        series = [c for c in ("run_id", "seed") if c in df] + [c for c in (by or []) if c in df]
        df = (df.sort_values("t", kind="stable") if "t" in df else df).groupby(series, sort=False,
                                                                               dropna=False).tail(1)
        keys = base
    else:
        if "t" not in df:
            raise ParameterError("at='all' needs runs that record a round column 't'")
        keys = base + ["t"]
    skip = set(ID_COLUMNS) | {"t", "experiment"} | set(by or [])
    if metrics is None:
        metrics = [c for c in df.columns if c not in skip and pd.api.types.is_numeric_dtype(df[c])]
    g = df.groupby(keys, sort=True, dropna=False)
    n = g.size().rename("n_seeds")
    cols = {"n_seeds": n}
    for m in metrics:  # built as one frame: inserting hundreds of columns one by one fragments it
        cols[f"{m}_mean"] = g[m].mean()
        cols[f"{m}_se"] = g[m].std(ddof=1).fillna(0.0) / np.sqrt(n)
    return pd.concat(cols, axis=1).copy().reset_index()  # copy: one block, so reset_index does not warn
