"""Data-directory resolution, the registry, and load_dataset on fixture directories written here."""

from __future__ import annotations

import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from nolo.datasets import (
    ENV_VAR,
    REGISTRY,
    DataFormatError,
    DatasetNotFoundError,
    PartialDatasetWarning,
    file_status,
    load_dataset,
    resolve_data_dir,
    write_idx,
)
from nolo.exceptions import ParameterError


def write_idx_split(root: Path, folder: str, prefix: str, n: int, seed: int, gz: bool = True) -> None:
    rng = np.random.default_rng(seed)
    (root / folder).mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz else ""
    write_idx(root / folder / f"{prefix}-images-idx3-ubyte{suffix}", rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
    write_idx(root / folder / f"{prefix}-labels-idx1-ubyte{suffix}", rng.integers(0, 10, n, dtype=np.uint8))


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


# ---------------------------------------------------------------- data directory


def test_resolution_order(tmp_path, monkeypatch, no_env):
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # 4. nothing else: the cache directory
    d = resolve_data_dir()
    assert d.path == (tmp_path / "home" / ".cache" / "nolo" / "data").resolve()
    assert "default" in d.source
    # a ../shared/datasets beside the working directory is never searched by the library itself
    shared = tmp_path / "shared" / "datasets"
    shared.mkdir(parents=True)
    assert resolve_data_dir().path == (tmp_path / "home" / ".cache" / "nolo" / "data").resolve()
    # 2. the environment variable beats it
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    d = resolve_data_dir()
    assert d.path == (tmp_path / "env").resolve() and ENV_VAR in d.source
    # 1. the explicit argument beats everything
    d = resolve_data_dir(tmp_path / "arg")
    assert d.path == (tmp_path / "arg").resolve() and "argument" in d.source
    # an empty variable counts as unset
    monkeypatch.setenv(ENV_VAR, "  ")
    assert "default" in resolve_data_dir().source


def test_load_dataset_uses_env_var(tmp_path, monkeypatch):
    write_idx_split(tmp_path, "mnist", "t10k", 5, seed=3)
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    X, y = load_dataset("mnist", "test", normalize=None)
    assert X.shape == (5, 784)


# ---------------------------------------------------------------- file datasets


def test_mnist_splits_and_all(tmp_path):
    write_idx_split(tmp_path, "mnist", "train", 6, seed=1)
    write_idx_split(tmp_path, "mnist", "t10k", 4, seed=2, gz=False)  # uncompressed also accepted
    Xtr, ytr = load_dataset("mnist", "train", data_dir=tmp_path, normalize=None)
    Xte, yte = load_dataset("mnist", "test", data_dir=tmp_path, normalize=None)
    assert Xtr.shape == (6, 784) and Xte.shape == (4, 784)
    assert Xtr.max() > 1  # raw pixels
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # both splits present: no warning
        Xa, ya = load_dataset("mnist", "all", data_dir=tmp_path, normalize=None)
    np.testing.assert_array_equal(Xa, np.vstack([Xtr, Xte]))
    np.testing.assert_array_equal(ya, np.concatenate([ytr, yte]))
    Xn, _ = load_dataset("mnist", "all", data_dir=tmp_path)
    np.testing.assert_allclose(np.linalg.norm(Xn, axis=1), 1.0)
    np.testing.assert_allclose(Xn, Xa / np.linalg.norm(Xa, axis=1, keepdims=True))


def test_only_test_split_present(tmp_path):
    write_idx_split(tmp_path, "mnist", "t10k", 4, seed=2)
    with pytest.raises(DatasetNotFoundError) as exc:
        load_dataset("mnist", "train", data_dir=tmp_path)
    msg = str(exc.value)
    root = tmp_path.resolve()
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):  # full paths, every accepted variant
        assert f"{root / 'mnist' / stem}.gz or {root / 'mnist' / stem}" in msg, msg
    assert "t10k" not in msg.split("Only")[0]  # present files are not listed as missing
    assert f"Searched the data directory {root} (chosen from the data_dir argument)" in msg
    assert "--data-dir DIR" in msg and "NOLO_DATA_DIR=DIR" in msg and "nolo data list mnist" in msg
    assert "Only the split(s) ['test'] are present" in msg
    with pytest.warns(PartialDatasetWarning, match="uses only the present split"):
        X, _ = load_dataset("mnist", data_dir=tmp_path)
    assert X.shape == (4, 784)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # issue 13: once per process and data directory, not on every call
        for _ in range(3):
            load_dataset("mnist", data_dir=tmp_path)
    other = tmp_path / "other"
    write_idx_split(other, "mnist", "t10k", 4, seed=3)
    with pytest.warns(PartialDatasetWarning):  # another directory: its own warning
        load_dataset("mnist", data_dir=other)


def test_missing_dataset_names_every_expected_file(tmp_path):
    with pytest.raises(FileNotFoundError) as exc:  # DatasetNotFoundError is a FileNotFoundError
        load_dataset("fashion-mnist", data_dir=tmp_path)
    msg = str(exc.value)
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert f"{tmp_path.resolve() / 'fashion-mnist' / stem}.gz or " in msg
    with pytest.raises(DatasetNotFoundError, match="usps/usps.h5"):
        load_dataset("usps", "test", data_dir=tmp_path)


def test_usps_through_registry_and_checksum_verification(tmp_path):
    (tmp_path / "usps").mkdir()
    with h5py.File(tmp_path / "usps" / "usps.h5", "w") as fh:
        for split, n in (("train", 5), ("test", 3)):
            g = fh.create_group(split)
            g["data"] = np.random.default_rng(n).random((n, 256)).astype(np.float32)
            g["target"] = np.arange(n, dtype=np.int32)
    X, y = load_dataset("usps", data_dir=tmp_path)
    assert X.shape == (8, 256)
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4, 0, 1, 2])
    # our fixture is not the real usps.h5: verification must catch it
    with pytest.raises(DataFormatError, match="SHA-256 mismatch"):
        load_dataset("usps", data_dir=tmp_path, verify=True)
    (status,) = file_status(REGISTRY["usps"], tmp_path)
    assert status.status == "mismatch" and status.sha256_actual != status.sha256_expected


def test_fashion_mnist_pca_features(tmp_path):
    write_idx_split(tmp_path, "fashion-mnist", "train", 30, seed=4)
    write_idx_split(tmp_path, "fashion-mnist", "t10k", 10, seed=5)
    X, y = load_dataset("fashion-mnist", "test", data_dir=tmp_path, n_components=8)
    assert X.shape == (10, 8) and y.shape == (10,)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    # the PCA is fitted on the training split: projecting the training split gives centred scores
    Xtr, _ = load_dataset("fashion-mnist", "train", data_dir=tmp_path, n_components=8, normalize=None)
    np.testing.assert_allclose(Xtr.mean(axis=0), 0.0, atol=1e-9)
    Xall, _ = load_dataset("fashion-mnist", data_dir=tmp_path, n_components=8, normalize=None)
    Xte, _ = load_dataset("fashion-mnist", "test", data_dir=tmp_path, n_components=8, normalize=None)
    np.testing.assert_allclose(Xall, np.vstack([Xtr, Xte]))
    raw, _ = load_dataset("fashion-mnist", "test", data_dir=tmp_path, features="raw", normalize=None)
    assert raw.shape == (10, 784)
    with pytest.raises(ParameterError, match="n_components must be an integer >= 1 and <= 30"):
        load_dataset("fashion-mnist", data_dir=tmp_path, n_components=31)
    with pytest.raises(ParameterError, match="features must be one of 'pca', 'raw'"):
        load_dataset("fashion-mnist", data_dir=tmp_path, features="cnn")


def test_fashion_mnist_pca_needs_training_split(tmp_path):
    write_idx_split(tmp_path, "fashion-mnist", "t10k", 10, seed=5)
    with pytest.raises(DatasetNotFoundError, match="fitted on the training split.*fashion-mnist/train-images"):
        load_dataset("fashion-mnist", "test", data_dir=tmp_path, n_components=3)
    X, _ = load_dataset("fashion-mnist", "test", data_dir=tmp_path, features="raw")
    assert X.shape == (10, 784)


# ---------------------------------------------------------------- built-ins and argument checks


@pytest.mark.parametrize("name,shape,k", [("iris", (150, 4), 3), ("digits", (1797, 64), 10)])
def test_sklearn_builtins(name, shape, k):
    X, y = load_dataset(name)
    assert X.shape == shape and X.dtype == np.float64 and y.dtype == np.int64
    assert set(np.unique(y)) == set(range(k))
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    Xr, _ = load_dataset(name, normalize=None)
    np.testing.assert_allclose(X, Xr / np.linalg.norm(Xr, axis=1, keepdims=True))


def test_synsep_via_registry_matches_generator():
    from nolo.datasets import make_synnonsep, make_synsep

    X, y = load_dataset("synsep", n_samples=200, seed=7, normalize=None)
    X2, y2 = make_synsep(200, 7)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    Xn, yn = load_dataset("synnonsep", n_samples=200, seed=7, label_noise=0.1)
    np.testing.assert_array_equal(yn, make_synnonsep(200, 7, label_noise=0.1)[1])
    np.testing.assert_allclose(np.linalg.norm(Xn, axis=1), 1.0)


def test_argument_errors(tmp_path):
    with pytest.raises(ParameterError, match="name must be one of 'mnist'"):
        load_dataset("cifar")
    with pytest.raises(ParameterError, match="split must be one of 'all'"):
        load_dataset("iris", "train")
    with pytest.raises(ParameterError, match="split must be one of 'train', 'test', 'all'"):
        load_dataset("mnist", "valid", data_dir=tmp_path)
    with pytest.raises(ParameterError, match="normalize must be one of"):
        load_dataset("iris", normalize="l2")
    with pytest.raises(ParameterError, match="unknown option.*seed.*'iris'; its options are: none"):
        load_dataset("iris", seed=3)
    with pytest.raises(ParameterError, match="unknown option.*n_components.*synsep.*n_samples, seed"):
        load_dataset("synsep", n_components=3)
