"""Hostile experiment spec files: YAML alias bombs (plain and through merge keys), recursive aliases, nesting deeper
than any spec, random bytes, an oversized file, values the parsers cannot convert.  Each must be refused by
``ExperimentSpec.from_file`` with one ``<file>`` SpecError naming the file, quickly and in little memory; before
the limits an alias bomb inside a learner's parameters passed validation (and ``nolo run`` then expanded it), deep
nesting raised a raw RecursionError and random bytes a raw UnicodeDecodeError."""

from __future__ import annotations

import os
import tracemalloc

import pytest
import yaml

import fuzz_harness as H
from nolo.papers.demo import demo_spec
from nolo.experiments.spec import ExperimentSpec, SpecError


@pytest.fixture
def valid_yaml() -> str:
    return yaml.safe_dump(demo_spec(rounds=100, record_every=10).to_dict(), sort_keys=False)


HOSTILE = {
    "alias bomb in a learner's parameters": (
        lambda t: t.replace("noise_cov: 0.25", "noise_cov: " + H.yaml_alias_bomb()), ".yaml", "more than 100000 values"),
    "merge-key bomb in a learner's parameters": (
        lambda t: t.replace("noise_cov: 0.25", "noise_cov: " + H.yaml_merge_bomb()), ".yaml", "more than 100000 values"),
    "recursive alias": (lambda t: t.replace("noise_cov: 0.25", "noise_cov: &r [1, *r]"), ".yaml", "levels deep"),
    "YAML nested 5000 deep": (lambda t: "a: " + "[" * 5000 + "]" * 5000 + "\n", ".yaml", "levels deep"),
    "YAML block mappings nested 100 deep": (
        lambda t: "".join(" " * i + f"k{i}:\n" for i in range(100)) + " " * 100 + "v\n", ".yaml", "levels deep"),
    "TOML nested 5000 deep": (lambda t: "a = " + "[" * 5000 + "]" * 5000 + "\n", ".toml", "levels deep"),
    "TOML nested 100 deep": (lambda t: "a = " + "[" * 100 + "]" * 100 + "\n", ".toml", "levels deep"),
    "random bytes (YAML)": (lambda t: os.urandom(4096), ".yaml", "not a text file: byte"),
    "random bytes (TOML)": (lambda t: b"\xff" + os.urandom(4096), ".toml", "not a text file: byte 0"),
    "a valid spec padded past 1 MiB": (lambda t: t + "#" * 2**20 + "\n", ".yaml", "larger than 1048576 bytes"),
    "a 5000-digit integer": (lambda t: t.replace("rounds: 100", "rounds: " + "9" * 5000), ".yaml", "not valid YAML"),
    "a 30 February timestamp": (lambda t: t.replace("rounds: 100", "rounds: 2001-02-30"), ".yaml", "not valid YAML"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_spec_is_one_file_error_naming_the_file(tmp_path, valid_yaml, case):
    make, suffix, words = HOSTILE[case]
    content = make(valid_yaml)
    path = tmp_path / f"spec{suffix}"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            ExperimentSpec.from_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    exc = info.value
    assert exc.source == str(path) and str(path) in str(exc)
    assert len(exc.errors) == 1 and exc.errors[0][0] == "<file>", exc.errors
    assert words in exc.errors[0][1] and "\n" not in exc.errors[0][1], exc.errors[0][1]
    assert peak < 64 * 2**20, f"refusing the spec took {peak / 2**20:.0f} MiB"


def test_aliases_within_the_limits_still_work(tmp_path, valid_yaml):
    """The limits count what aliases stand for; a spec sharing a step through an alias loads as the spelled-out one."""
    spec = yaml.safe_load(valid_yaml)
    text = valid_yaml.replace("    step:\n      class: nolo.oco.InverseSqrtStep\n      params:\n        eta0: 0.5\n",
                              "    step: &step\n      class: nolo.oco.InverseSqrtStep\n      params:\n        eta0: 0.5\n",
                              1).replace("    step:\n      class: nolo.oco.InverseSqrtStep\n      params:\n"
                                         "        eta0: 0.5\n", "    step: *step\n")
    assert "*step" in text and "&step" in text
    path = tmp_path / "aliased.yaml"
    path.write_text(text)
    assert ExperimentSpec.from_file(path) == ExperimentSpec.from_dict(spec)


def test_the_cli_refuses_an_alias_bomb_before_running(tmp_path, valid_yaml):
    from click.testing import CliRunner

    from nolo.cli.experiments import run

    path = tmp_path / "bomb.yaml"
    path.write_text(HOSTILE["alias bomb in a learner's parameters"][0](valid_yaml))
    out = tmp_path / "runs"
    res = CliRunner().invoke(run, [str(path), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "<file>: more than 100000 values (YAML aliases count at their expanded size)" in res.output
    assert "Traceback" not in res.output and not out.exists()
