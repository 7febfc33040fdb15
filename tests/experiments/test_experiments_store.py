"""The results store and run reuse: hostile metadata is skipped with a warning (issue 14.4), runs made by
other code are recomputed and --force recomputes (issue 13, stale results), a NumericalError is a failed run
and the sweep goes on, every run of a directory loads as one tidy DataFrame."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nolo.exceptions import NumericalError, PersistenceError
from nolo.experiments import load_results
from nolo.experiments import sweep as sweep_mod
from nolo.experiments.demo import demo_spec
from nolo.experiments.store import META_KEY, read_run_meta, read_run_meta_or_none, write_index
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
