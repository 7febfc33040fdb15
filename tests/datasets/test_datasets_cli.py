"""`nolo data list` and `nolo data check` through click's CliRunner."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from click.testing import CliRunner

from nolo.cli import main
from nolo.datasets import ENV_VAR, write_idx

USPS_SHA = "734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36"


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    return CliRunner()


def fixture_dir(root):
    (root / "mnist").mkdir()
    write_idx(root / "mnist" / "t10k-images-idx3-ubyte", np.zeros((2, 28, 28), np.uint8))
    write_idx(root / "mnist" / "t10k-labels-idx1-ubyte", np.zeros(2, np.uint8))
    return root


def test_list_shows_present_and_missing(runner, tmp_path):
    fixture_dir(tmp_path)
    res = runner.invoke(main, ["data", "list", "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert f"data directory: {tmp_path.resolve()} (chosen from the data_dir argument)" == lines[0]
    row = next(line for line in lines if "mnist/t10k-images-idx3-ubyte(.gz)" in line)
    assert "present" in row and str(tmp_path / "mnist" / "t10k-images-idx3-ubyte") in row
    row = next(line for line in lines if "mnist/train-images-idx3-ubyte(.gz)" in line)
    assert "missing" in row
    assert any(line.startswith("usps") and "missing" in line for line in lines)
    assert any(line.startswith("iris") and "built-in" in line for line in lines)
    assert "--data-dir DIR or set NOLO_DATA_DIR=DIR" in res.output  # how to point nolo at files elsewhere


def test_list_follows_env_var_and_filters_names(runner, tmp_path, monkeypatch):
    fixture_dir(tmp_path)
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    res = runner.invoke(main, ["data", "list", "mnist"])
    assert res.exit_code == 0 and ENV_VAR in res.output.splitlines()[0]
    assert "usps" not in res.output
    res = runner.invoke(main, ["data", "list", "cifar"])
    assert res.exit_code == 2 and "unknown dataset(s) cifar" in res.output


def test_check_lists_missing_files_with_checksums(runner, tmp_path):
    fixture_dir(tmp_path)
    res = runner.invoke(main, ["data", "check", "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    # present uncompressed test files have no known checksum: reported, not failed
    assert "present (no checksum known)" in res.output
    assert any(line.split()[:3] == ["usps", "usps/usps.h5", USPS_SHA] for line in res.output.splitlines())
    assert any(line.split()[:3] == ["mnist", "mnist/train-images-idx3-ubyte(.gz)", "unknown"] for line in res.output.splitlines())
    assert "fashion-mnist/t10k-labels-idx1-ubyte(.gz)" in res.output


def test_check_fails_on_a_mismatch(runner, tmp_path):
    (tmp_path / "usps").mkdir()
    bogus = b"not the real usps file"
    (tmp_path / "usps" / "usps.h5").write_bytes(bogus)
    res = runner.invoke(main, ["data", "check", "--data-dir", str(tmp_path), "usps"])
    assert res.exit_code == 1
    assert "MISMATCH" in res.output and hashlib.sha256(bogus).hexdigest() in res.output
    assert "1 file(s) do not match their SHA-256" in res.output


def test_check_passes_on_matching_checksum(runner, tmp_path, monkeypatch):
    # make the registry expect our fixture's checksum (the real file is not needed for this test)
    from nolo.datasets import registry

    (tmp_path / "usps").mkdir()
    (tmp_path / "usps" / "usps.h5").write_bytes(b"abc")
    spec = registry.FileSpec("usps/usps.h5", ("",), {"": hashlib.sha256(b"abc").hexdigest()})
    patched = registry.FileDataset("usps", "test", {"train": (spec,), "test": (spec,)}, registry.REGISTRY["usps"].reader)
    original = registry.REGISTRY["usps"]
    registry.REGISTRY.register("usps", patched, replace=True)
    try:
        res = runner.invoke(main, ["data", "check", "--data-dir", str(tmp_path), "usps"])
    finally:
        registry.REGISTRY.register("usps", original, replace=True)
    assert res.exit_code == 0, res.output
    assert any(line.startswith("usps") and " ok " in line for line in res.output.splitlines())
