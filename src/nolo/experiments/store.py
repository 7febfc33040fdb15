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
    "write_run",
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


def write_run(path: str | os.PathLike, frame: pd.DataFrame, meta: dict[str, Any]) -> Path:
    """Write ``frame`` with ``meta`` (JSON-able; ``complete: true`` is added) atomically to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(meta, complete=True)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), META_KEY: json.dumps(meta).encode()})
    _atomic_write_bytes(path, lambda p: pq.write_table(table, p))
    return path


def read_run_meta(path: str | os.PathLike) -> dict:
    """The ``nolo`` metadata of a run file (PersistenceError if it has none, or if it is not a JSON object)."""
    try:
        md = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise PersistenceError(f"{path} is not a readable Parquet file: {exc}") from None
    if META_KEY not in md:
        raise PersistenceError(f"{path} has no nolo run metadata")
    try:
        meta = json.loads(md[META_KEY])
    except (ValueError, UnicodeDecodeError) as exc:
        raise PersistenceError(f"{path}: its nolo run metadata is not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise PersistenceError(f"{path}: its nolo run metadata is a JSON {type(meta).__name__}, not an object")
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
    """True if ``path`` is a readable run file whose metadata says it is complete."""
    p = Path(path)
    if not p.is_file():
        return False
    meta = read_run_meta_or_none(p)
    return bool(meta and meta.get("complete"))


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
    that are not nolo runs are skipped with a warning naming them.
    """
    if kind not in ("run", "map", "all"):
        raise ParameterError(f"kind must be 'run', 'map' or 'all', got {kind!r}")
    root = Path(directory)
    frames, failures = [], []
    for p in run_files(directory):
        meta = read_run_meta_or_none(p)
        if meta is None:
            continue
        if kind != "all" and meta.get("kind") != kind:
            continue
        rel = p.parent.relative_to(root) if p.parent != root else Path(".")
        exp = rel.parent.as_posix() if rel.name == "runs" else rel.as_posix()
        if meta.get("status") == "failed":
            failures.append({"experiment": exp, **{c: meta.get(c) for c in ID_COLUMNS}, "error": meta.get("error")})
            continue
        if failed:  # only the failed runs' metadata is wanted: the tables are not read (nor warned about twice)
            continue
        try:
            df = pq.read_table(p).to_pandas()
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
