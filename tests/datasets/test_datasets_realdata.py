"""The real files in ../shared/datasets (MNIST test set, USPS); skipped with a reason where absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nolo.datasets import REGISTRY, file_status, load_dataset, read_idx

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

pytestmark = pytest.mark.realdata


def need(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (see ../shared/datasets/README.md)")
    return path


def test_mnist_test_set_shape_labels_and_checksums():
    need("mnist", "t10k-images-idx3-ubyte.gz")
    images = read_idx(SHARED / "mnist" / "t10k-images-idx3-ubyte.gz")
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    X, y = load_dataset("mnist", "test", data_dir=SHARED, verify=True)
    assert X.shape == (10000, 784) and X.dtype == np.float64
    np.testing.assert_array_equal(np.bincount(y), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    status = {s.expected: s.status for s in file_status(REGISTRY["mnist"], SHARED)}
    assert status["mnist/t10k-images-idx3-ubyte(.gz)"] == "ok"
    assert status["mnist/t10k-labels-idx1-ubyte(.gz)"] == "ok"


def test_usps_shapes_and_checksum():
    need("usps", "usps.h5")
    Xtr, ytr = load_dataset("usps", "train", data_dir=SHARED, normalize=None, verify=True)
    Xte, yte = load_dataset("usps", "test", data_dir=SHARED, normalize=None)
    assert Xtr.shape == (7291, 256) and Xte.shape == (2007, 256)
    assert 0.0 <= Xtr.min() and Xtr.max() <= 1.0
    assert set(np.unique(ytr)) == set(range(10)) == set(np.unique(yte))
    (status,) = file_status(REGISTRY["usps"], SHARED)
    assert status.status == "ok"
