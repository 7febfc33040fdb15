"""The results store and run reuse: hostile metadata is skipped with a warning (issue 14.4), runs made by
other code are recomputed and --force recomputes (issue 13, stale results), a NumericalError is a failed run
and the sweep goes on, every run of a directory loads as one tidy DataFrame; a stored run carries a checksum
of its bytes, so a corrupted run is refused on read and recomputed by a rerun, never reused."""

from __future__ import annotations

import json
import logging
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nolo.exceptions import NumericalError, PersistenceError
from nolo.experiments import load_results
from nolo.experiments import sweep as sweep_mod
from nolo.papers.demo import demo_spec
from nolo.experiments.store import (META_KEY, CorruptRunError, UncheckedRunError, is_complete, read_run,
                                    read_run_meta, read_run_meta_or_none, verify_run, write_index, write_run)
from nolo.experiments.sweep import code_version, run_map, run_sweep, sweep_session


def _spec(rounds=200, seeds=(0, 1)):
    return demo_spec(rounds=rounds, record_every=50).model_copy(update={"seeds": list(seeds)})


def _write_with_meta(path, meta_bytes: bytes) -> None:
    table = pa.table({"t": [1, 2], "value": [0.5, 0.25]})
    pq.write_table(table.replace_schema_metadata({META_KEY: meta_bytes}), path)


@pytest.mark.parametrize("meta", [b"{not json", b"[1, 2, 3]", b'"a string"', b"null", b"\xff\xfe"],
                         ids=["broken", "list", "string", "null", "not-utf8"])
def test_a_file_with_hostile_metadata_is_skipped_with_a_warning_naming_it(tmp_path, meta):
    run_sweep(_spec(seeds=(0,)), tmp_path / "runs")
    bad = tmp_path / "runs" / "0000bad.parquet"
    _write_with_meta(bad, meta)
    with pytest.raises(PersistenceError, match="0000bad.parquet"):
        read_run_meta(bad)
    with pytest.warns(RuntimeWarning, match="0000bad.parquet"):
        assert read_run_meta_or_none(bad) is None
    with pytest.warns(RuntimeWarning, match="0000bad.parquet"):
        df = load_results(tmp_path)
    assert df["run_id"].nunique() == 3  # the three demo learners, seed 0; the hostile file is not a run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_index(tmp_path / "runs")
        again = run_sweep(_spec(seeds=(0,)), tmp_path / "runs")  # resume over the directory still works
    assert again["run_id"].nunique() == 3

    from click.testing import CliRunner

    from nolo.cli.experiments import results

    res = CliRunner().invoke(results, [str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "3 runs" in res.output and "0000bad.parquet" in res.output


def test_a_run_of_other_code_is_recomputed_and_force_recomputes_once(tmp_path, monkeypatch):
    spec = _spec()
    with sweep_session() as first:
        run_sweep(spec, tmp_path)
    assert (first.reused, first.computed) == (0, 6)
    meta = read_run_meta(next(tmp_path.glob("*.parquet")))
    assert meta["code_version"] == code_version() and code_version().startswith(meta["nolo_version"] + "+")
    with sweep_session() as same:
        run_sweep(spec, tmp_path)
    assert (same.reused, same.computed) == (6, 0)
    # an edit of the code (a learner's gradient, say) changes the hash: every run is made again
    monkeypatch.setattr(sweep_mod, "code_version", lambda scope=None: "0.1.0+edited")
    with sweep_session() as edited:
        run_sweep(spec, tmp_path)
    assert (edited.reused, edited.computed) == (0, 6)
    assert read_run_meta(next(tmp_path.glob("*.parquet")))["code_version"] == "0.1.0+edited"
    # --force: recompute every run once per session, even when two sweeps of the session share runs
    with sweep_session(force=True) as forced:
        run_sweep(spec, tmp_path)
        run_sweep(spec, tmp_path)
    assert (forced.reused, forced.computed) == (6, 6)


def test_code_version_hashes_the_sources(tmp_path):
    v = code_version()
    assert v == code_version() and len(v.split("+")[1]) == 16


def test_source_digest_ignores_comments_docstrings_and_layout_but_not_code():
    from nolo.experiments.sweep import source_digest

    base = b'"""Module."""\n\nclass A:\n    """A class."""\n\n    def f(self, x):\n        """Doc."""\n        return x + 1\n'
    same = [b"class A:\n    def f(self, x):  # a comment\n        return (x + 1)\n",
            base.replace(b"Doc.", b"Another docstring, longer."),
            b"# header\nclass A:\n\n\n    def f(self, x): return x + 1\n"]
    changed = [base.replace(b"x + 1", b"x + 2"), base.replace(b"x + 1", b"1 + x"),
               base.replace(b'"""Doc."""', b'"""Doc."""\n        x = "not a docstring"'),
               base.replace(b"def f", b"def g")]
    assert all(source_digest(s) == source_digest(base) for s in same)
    assert len({source_digest(s) for s in changed} | {source_digest(base)}) == len(changed) + 1
    # a file that does not parse is hashed as its bytes: still deterministic, and still sensitive to any edit
    bad = b"def f(:\n"
    assert source_digest(bad) == source_digest(bad) != source_digest(bad + b"# edit")


def diverge_or_square(x):
    """A map task that raises NumericalError for x < 0 (as a learner does on inf/NaN)."""
    if x < 0:
        raise NumericalError(f"the iterate became non-finite at x = {x}")
    return {"x": x, "y": x * x, "seed": 7}


def test_a_numerical_error_is_a_failed_run_and_the_sweep_goes_on(tmp_path):
    tasks = [{"x": 1.0}, {"x": -1.0}, {"x": 2.0}]
    with sweep_session() as stats:
        frames = run_map(diverge_or_square, tasks, tmp_path / "m", name="mixed")
    assert [len(f) for f in frames] == [1, 0, 1]
    assert stats.computed == 3 and len(stats.failed) == 1 and "NumericalError" in stats.failed[0][1]
    failed = load_results(tmp_path, failed=True)
    assert len(failed) == 1 and "non-finite at x = -1.0" in failed["error"].iloc[0]
    with sweep_session() as again:  # the failure is stored: the same code is not run again
        run_map(diverge_or_square, tasks, tmp_path / "m", name="mixed")
    assert (again.reused, again.computed, len(again.failed)) == (3, 0, 1)


def test_load_results_returns_every_run_of_a_directory_as_one_tidy_frame(tmp_path):
    run_sweep(_spec(seeds=(0,)), tmp_path / "demo" / "x" / "runs")
    run_map(diverge_or_square, [{"x": 1.0}, {"x": 3.0}], tmp_path / "am" / "_curves", name="squares")
    df = load_results(tmp_path)  # kind="all" by default; map tasks' own 'seed' column no longer collides
    assert set(df["experiment"]) == {"demo/x", "am/_curves"}
    assert df[df.kind == "map"]["seed"].tolist() == [7, 7]
    assert df[df.kind == "run"]["run_id"].nunique() == 3
    assert len(load_results(tmp_path, kind="map")) == 2
    assert len(load_results(tmp_path / "am" / "_curves")) == 2
    # the index no longer trips a plain Parquet reader over the runs directory
    assert not (tmp_path / "demo" / "x" / "runs" / "index.json").exists()
    assert len(pd.read_parquet(tmp_path / "am" / "_curves")) == 2
    assert json.loads((tmp_path / "am" / "_curves" / "_index.json").read_text())["runs"]
    assert np.isfinite(df["avg_clean_loss"].dropna()).all()


def test_the_parent_stamps_the_code_version_its_workers_write():
    """A pool worker started after an edit of the sources would hash other code; the run it writes carries
    the version the parent checks reuse against (else the parent recomputes it at once)."""
    frame, meta = sweep_mod._compute({"kind": "map", "run_id": "x", "func": f"{__name__}:diverge_or_square",
                                      "task": {"x": 2.0}, "spec_name": "s", "setting": "{}", "learner": None,
                                      "seed": None, "code_version": "0.1.0+parent"})
    assert meta["code_version"] == "0.1.0+parent" and frame["y"].tolist() == [4.0]


def _flipped(data: bytes, offset: int) -> bytes:
    b = bytearray(data)
    b[offset] ^= 0xFF
    return bytes(b)


def _silently_changed(data: bytes, original: pd.DataFrame) -> bool:
    """What a plain Parquet read makes of ``data``: True if it reads without error but other rows."""
    try:
        return not pq.read_table(pa.BufferReader(data)).to_pandas().equals(original)
    except Exception:
        return False


def test_every_byte_flip_of_a_stored_run_is_refused_on_read(tmp_path):
    """Byte flips all over a stored run (column pages, statistics, schema, the nolo metadata, the checksum itself):
    each one is a CorruptRunError on read -- 0 silent changes -- where a plain Parquet read returns other numbers
    for some of them without any error."""
    frame = pd.DataFrame({"t": np.arange(1, 41), "loss": np.linspace(0.0, 1.0, 40) ** 2, "algo": ["a", "b"] * 20})
    path = write_run(tmp_path / "r.parquet", frame, {"run_id": "r", "kind": "map", "seed": 0})
    data = path.read_bytes()
    back, meta = read_run(path)
    assert back.equals(frame) and meta["checksum"] == "sha256-file" and is_complete(path)
    offsets = sorted(set(range(0, len(data), 5)) | set(range(len(data) - 400, len(data))))
    refused, plain_silent = 0, 0
    for off in offsets:
        path.write_bytes(_flipped(data, off))
        with pytest.raises(CorruptRunError, match="r.parquet"):
            read_run(path)
        assert not is_complete(path)
        refused += 1
        plain_silent += _silently_changed(_flipped(data, off), frame)
    assert refused == len(offsets) > 600
    assert plain_silent > 10  # without the checksum these flips would have changed the results silently
    path.write_bytes(data)
    assert read_run(path)[0].equals(frame)


def _corrupt_a_value(path, frame: pd.DataFrame) -> None:
    """Overwrite one byte of ``path`` so that a plain Parquet read returns other numbers without an error."""
    data = path.read_bytes()
    off = next(o for o in range(len(data)) if _silently_changed(_flipped(data, o), frame))
    path.write_bytes(_flipped(data, off))


def test_a_corrupted_run_is_reported_and_recomputed_never_reused(tmp_path, caplog):
    tasks = [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}]
    frames = run_map(diverge_or_square, tasks, tmp_path / "m", name="squares")
    victim = next(p for p in sorted((tmp_path / "m").glob("*.parquet")) if read_run(p)[0]["x"].iloc[0] == 2.0)
    _corrupt_a_value(victim, frames[1])
    assert not pq.read_table(victim).to_pandas().equals(frames[1])  # the damage a plain read does not notice
    with pytest.raises(CorruptRunError, match=victim.name):
        verify_run(victim)
    with pytest.warns(RuntimeWarning, match=f"skipping {victim}.*does not match its checksum.*recomputes it"):
        loaded = load_results(tmp_path)
    assert sorted(loaded["x"]) == [1.0, 3.0]  # the corrupted run is not loaded
    with caplog.at_level(logging.WARNING, logger="nolo.sweep"), sweep_session() as stats:
        again = run_map(diverge_or_square, tasks, tmp_path / "m", name="squares")
    assert (stats.reused, stats.computed) == (2, 1)
    said = [r.getMessage() for r in caplog.records if victim.name in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("recomputing a corrupted stored run") and "checksum" in said[0]
    assert all(a.equals(b) for a, b in zip(again, frames))
    assert verify_run(victim)["run_id"] == victim.stem
    with sweep_session() as third:  # the recomputed run is sound: reused from now on
        run_map(diverge_or_square, tasks, tmp_path / "m", name="squares")
    assert (third.reused, third.computed) == (3, 0)


def test_a_corrupted_learner_run_is_recomputed_by_the_sweep(tmp_path, caplog):
    spec = _spec(seeds=(0,))
    first = run_sweep(spec, tmp_path)
    victim = sorted(tmp_path.glob("*.parquet"))[0]
    _corrupt_a_value(victim, read_run(victim)[0])
    with caplog.at_level(logging.WARNING, logger="nolo.sweep"), sweep_session() as stats:
        again = run_sweep(spec, tmp_path)
    assert (stats.reused, stats.computed) == (2, 1)
    assert any(victim.name in r.getMessage() and "recomputing a corrupted" in r.getMessage() for r in caplog.records)
    from nolo.experiments.runner import TIMING_COLUMNS

    numbers = [c for c in first.columns if c not in TIMING_COLUMNS]
    key = ["run_id", "t"]
    assert first[numbers].sort_values(key).reset_index(drop=True).equals(
        again[numbers].sort_values(key).reset_index(drop=True))


def _strip_checksum(path) -> None:
    """Rewrite a run file as nolo wrote it before runs carried a content checksum."""
    table = pq.read_table(path)
    meta = read_run_meta(path)
    meta.pop("checksum")
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, META_KEY: json.dumps(meta).encode()}),
                   path)


def test_runs_stored_without_a_checksum_are_recomputed_and_said_once(tmp_path, caplog):
    tasks = [{"x": 1.0}, {"x": 2.0}]
    for d in ("a", "b"):
        run_map(diverge_or_square, tasks, tmp_path / d, name="squares")
        for p in (tmp_path / d).glob("*.parquet"):
            _strip_checksum(p)
    with pytest.raises(UncheckedRunError, match="without a content checksum"):
        verify_run(next((tmp_path / "a").glob("*.parquet")))
    with pytest.warns(RuntimeWarning, match="4 run.*without a content checksum.*loaded unverified"):
        assert len(load_results(tmp_path)) == 4  # loaded, with one warning
    with caplog.at_level(logging.WARNING, logger="nolo.sweep"), sweep_session() as stats:
        for d in ("a", "b"):
            run_map(diverge_or_square, tasks, tmp_path / d, name="squares")
    assert (stats.reused, stats.computed) == (0, 4)
    said = [r.getMessage() for r in caplog.records if "no content checksum" in r.getMessage()]
    assert len(said) == 1 and "recomputed" in said[0]
    assert all(verify_run(p) for p in tmp_path.rglob("*.parquet"))
