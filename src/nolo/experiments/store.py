"""The results store: one Parquet file per run, an index, and loading / aggregation with pandas.

Each run is ``<dir>/<run_id>.parquet``: the recorded rows, and in the Parquet
key-value metadata under ``b"nolo"`` a JSON object with ``run_id``, ``kind``
(``"run"`` for a learner run, ``"map"`` for a :meth:`Context.map` task),
``spec`` (the concrete spec, or the task), ``spec_name``, ``setting``,
``learner``, ``seed``, ``nolo_version``, ``timing`` (``started``/``finished``
UTC ISO times and ``seconds``) and ``complete: true``.  Files are written to a
temporary name in the same directory and renamed into place, so a file with
the final name is always complete; an interrupted sweep leaves at most
``*.parquet.tmp-*`` files, which are ignored and cleaned up.

``index.json`` in the same directory lists every run (id, file, kind,
spec_name, setting, learner, seed, seconds); it is rebuilt from the files'
metadata after each sweep (:func:`write_index`).
"""

from __future__ import annotations

import json
import os
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
    "is_complete",
    "run_files",
    "write_index",
    "read_index",
    "load_results",
    "aggregate",
    "utc_now",
]

META_KEY = b"nolo"
INDEX_NAME = "index.json"
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
    """The ``nolo`` metadata of a run file (raises PersistenceError if it has none)."""
    try:
        md = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as exc:
        raise PersistenceError(f"{path} is not a readable Parquet file: {exc}") from None
    if META_KEY not in md:
        raise PersistenceError(f"{path} has no nolo run metadata")
    return json.loads(md[META_KEY])


def is_complete(path: str | os.PathLike) -> bool:
    """True if ``path`` is a readable run file whose metadata says it is complete."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        return bool(read_run_meta(p).get("complete"))
    except PersistenceError:
        return False


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
        try:
            m = read_run_meta(p)
        except PersistenceError:
            continue
        entries.append({
            "run_id": m.get("run_id"),
            "file": p.name,
            "kind": m.get("kind"),
            "spec_name": m.get("spec_name"),
            "setting": m.get("setting"),
            "learner": m.get("learner"),
            "seed": m.get("seed"),
            "seconds": m.get("timing", {}).get("seconds"),
            "nolo_version": m.get("nolo_version"),
        })
    path = directory / INDEX_NAME
    text = json.dumps({"runs": entries}, indent=1)
    _atomic_write_bytes(path, lambda p: p.write_text(text))
    return path


def read_index(directory: str | os.PathLike) -> list[dict]:
    path = Path(directory) / INDEX_NAME
    if not path.is_file():
        return []
    return json.loads(path.read_text())["runs"]


def load_results(directory: str | os.PathLike, kind: str = "run") -> pd.DataFrame:
    """Every run file under ``directory`` (recursively) of ``kind`` ("run", "map" or "all") as one DataFrame.

    Columns: ``kind``, ``spec_name``, ``setting``, ``learner``, ``seed``, ``run_id``, then the recorded ones.
    """
    if kind not in ("run", "map", "all"):
        raise ParameterError(f"kind must be 'run', 'map' or 'all', got {kind!r}")
    frames = []
    for p in run_files(directory):
        try:
            meta = read_run_meta(p)
        except PersistenceError:
            continue
        if kind != "all" and meta.get("kind") != kind:
            continue
        df = pq.read_table(p).to_pandas()
        for col in reversed(ID_COLUMNS):
            df.insert(0, col, meta.get(col))
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=list(ID_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["spec_name", "setting", "learner", "seed", "t"] if "t" in out else ["run_id"],
                           kind="stable").reset_index(drop=True)


def aggregate(df: pd.DataFrame, at: str = "final", metrics: list[str] | None = None) -> pd.DataFrame:
    """Mean and standard error over seeds of each metric, per (spec_name, setting, learner).

    ``at="final"`` uses each run's last recorded row; ``at="all"`` aggregates every recorded ``t``.
    Columns: the group keys, ``n_seeds``, and ``<metric>_mean`` / ``<metric>_se`` (se = sd / sqrt(n), 0 for one seed).
    """
    if df.empty:
        return pd.DataFrame()
    if at not in ("final", "all"):
        raise ParameterError(f"at must be 'final' or 'all', got {at!r}")
    if at == "final":
        df = df.sort_values("t").groupby("run_id", sort=False).tail(1)
        keys = ["spec_name", "setting", "learner"]
    else:
        keys = ["spec_name", "setting", "learner", "t"]
    skip = set(ID_COLUMNS) | {"t"}
    if metrics is None:
        metrics = [c for c in df.columns if c not in skip and pd.api.types.is_numeric_dtype(df[c])]
    g = df.groupby(keys, sort=True, dropna=False)
    out = g.size().rename("n_seeds").to_frame()
    for m in metrics:
        mean = g[m].mean()
        sd = g[m].std(ddof=1).fillna(0.0)
        out[f"{m}_mean"] = mean
        out[f"{m}_se"] = sd / np.sqrt(out["n_seeds"])
    return out.reset_index()
