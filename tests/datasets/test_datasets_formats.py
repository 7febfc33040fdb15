"""File-format readers: IDX (plain and gzip), USPS HDF5, LIBSVM/SVMlight, CSV -- on fixtures written here."""

from __future__ import annotations

import gzip

import h5py
import numpy as np
import pytest

from nolo.datasets import (
    DataFormatError,
    DatasetNotFoundError,
    load_csv,
    load_idx_pair,
    load_svmlight,
    load_usps_h5,
    normalize_rows,
    read_idx,
    relabel,
    write_idx,
)
from nolo.exceptions import ParameterError

RNG = np.random.default_rng(0)
IMAGES = RNG.integers(0, 256, size=(7, 4, 3), dtype=np.uint8)
LABELS = RNG.integers(0, 10, size=7, dtype=np.uint8)


# ---------------------------------------------------------------- IDX


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_idx_roundtrip_plain_and_gzip(tmp_path, suffix):
    img = write_idx(tmp_path / f"img-idx3-ubyte{suffix}", IMAGES)
    lab = write_idx(tmp_path / f"lab-idx1-ubyte{suffix}", LABELS)
    assert (img.read_bytes()[:2] == b"\x1f\x8b") == (suffix == ".gz")
    np.testing.assert_array_equal(read_idx(img), IMAGES)
    X, y = load_idx_pair(img, lab)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(X, IMAGES.reshape(7, 12).astype(float))
    np.testing.assert_array_equal(y, LABELS)


def test_idx_header_bytes_match_the_standard(tmp_path):
    # MNIST images magic 0x00000803, then big-endian sizes
    p = write_idx(tmp_path / "a", IMAGES)
    raw = p.read_bytes()
    assert raw[:4] == bytes([0, 0, 8, 3])
    assert [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(3)] == [7, 4, 3]
    assert raw[16:] == IMAGES.tobytes()


def test_idx_gzip_detected_by_content_not_name(tmp_path):
    p = tmp_path / "no-gz-suffix"
    write_idx(p, LABELS, compress=True)
    np.testing.assert_array_equal(read_idx(p), LABELS)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.float32, np.float64, np.int8])
def test_idx_other_types_big_endian(tmp_path, dtype):
    a = np.arange(-3, 3).astype(dtype).reshape(2, 3)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "a", a)), a)


@pytest.mark.parametrize(
    "header",
    [bytes([1, 0, 8, 1]), bytes([0, 0, 7, 1]), bytes([0, 0, 8, 0])],
    ids=["nonzero-first-byte", "unknown-type", "zero-dims"],
)
def test_idx_bad_magic_is_a_clear_error(tmp_path, header):
    p = tmp_path / "bad"
    p.write_bytes(header + (3).to_bytes(4, "big") + b"abc")
    with pytest.raises(DataFormatError, match="bad IDX magic number"):
        read_idx(p)


def test_idx_truncated_and_trailing_data(tmp_path):
    raw = write_idx(tmp_path / "ok", IMAGES).read_bytes()
    (tmp_path / "short").write_bytes(raw[:-1])
    with pytest.raises(DataFormatError, match="truncated"):
        read_idx(tmp_path / "short")
    (tmp_path / "long").write_bytes(raw + b"\0")
    with pytest.raises(DataFormatError, match="trailing"):
        read_idx(tmp_path / "long")
    (tmp_path / "tiny").write_bytes(raw[:2])
    with pytest.raises(DataFormatError, match="too short"):
        read_idx(tmp_path / "tiny")
    (tmp_path / "header").write_bytes(raw[:10])
    with pytest.raises(DataFormatError, match="truncated IDX header"):
        read_idx(tmp_path / "header")


def test_idx_corrupt_gzip(tmp_path):
    full = gzip.compress(write_idx(tmp_path / "ok", IMAGES).read_bytes())
    (tmp_path / "bad.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(DataFormatError, match="gzip"):
        read_idx(tmp_path / "bad.gz")


def test_idx_pair_count_mismatch_and_wrong_roles(tmp_path):
    img = write_idx(tmp_path / "img", IMAGES)
    lab = write_idx(tmp_path / "lab", LABELS[:5])
    with pytest.raises(DataFormatError, match="7 images but .* 5 labels"):
        load_idx_pair(img, lab)
    with pytest.raises(DataFormatError, match="labels file must have 1 dimension"):
        load_idx_pair(img, img)
    with pytest.raises(DataFormatError, match="images file must have >= 2"):
        load_idx_pair(lab, lab)


def test_idx_missing_file_names_it(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="t10k-images-idx3-ubyte"):
        read_idx(tmp_path / "t10k-images-idx3-ubyte")


# ---------------------------------------------------------------- USPS HDF5


def write_usps(path, n_train=6, n_test=4, d=256, seed=1):
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as fh:
        for split, n in (("train", n_train), ("test", n_test)):
            g = fh.create_group(split)
            g.create_dataset("data", data=rng.random((n, d)).astype(np.float32))
            g.create_dataset("target", data=rng.integers(0, 10, n).astype(np.int32))
    return path


def test_usps_h5_reads_both_splits(tmp_path):
    p = write_usps(tmp_path / "usps.h5")
    X, y = load_usps_h5(p, "train")
    assert X.shape == (6, 256) and X.dtype == np.float64 and y.dtype == np.int64
    with h5py.File(p) as fh:
        np.testing.assert_array_equal(X, fh["train/data"][()].astype(np.float64))
        np.testing.assert_array_equal(y, fh["train/target"][()])
    assert load_usps_h5(p, "test")[0].shape == (4, 256)


def test_usps_h5_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="usps.h5"):
        load_usps_h5(tmp_path / "usps.h5")
    with pytest.raises(ParameterError, match="split must be one of 'train', 'test'"):
        load_usps_h5(write_usps(tmp_path / "u.h5"), "valid")
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(DataFormatError, match="not a readable HDF5"):
        load_usps_h5(tmp_path / "text.h5")
    with h5py.File(tmp_path / "nogroup.h5", "w") as fh:
        fh.create_group("train").create_dataset("data", data=np.zeros((2, 3)))
    with pytest.raises(DataFormatError, match="no group 'test'"):
        load_usps_h5(tmp_path / "nogroup.h5", "test")
    with pytest.raises(DataFormatError, match="lacks dataset 'target'"):
        load_usps_h5(tmp_path / "nogroup.h5", "train")


# ---------------------------------------------------------------- LIBSVM


def test_svmlight_dense_and_sparse(tmp_path):
    p = tmp_path / "a.svm"
    p.write_text("3 1:0.5 4:2\n1 2:1.5\n3 1:1 3:-1\n")
    X, y = load_svmlight(p, n_features=5)
    np.testing.assert_array_equal(y, [3, 1, 3])
    np.testing.assert_allclose(X, [[0.5, 0, 0, 2, 0], [0, 1.5, 0, 0, 0], [1, 0, -1, 0, 0]])
    S, _ = load_svmlight(p, n_features=5, dense=False)
    np.testing.assert_allclose(S.toarray(), X)
    _, codes = load_svmlight(p, relabel_classes=True)
    np.testing.assert_array_equal(codes, [1, 0, 1])


def test_svmlight_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="train.svm"):
        load_svmlight(tmp_path / "train.svm")
    (tmp_path / "bad.svm").write_text("1 a:b\n")
    with pytest.raises(DataFormatError, match="bad.svm"):
        load_svmlight(tmp_path / "bad.svm")
    (tmp_path / "real.svm").write_text("0.5 1:1\n")
    with pytest.raises(DataFormatError, match="labels must be integers"):
        load_svmlight(tmp_path / "real.svm")


# ---------------------------------------------------------------- CSV


def test_csv_label_column_by_position_and_name(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("1.0,2.0,7\n3.0,4.0,5\n")
    X, y = load_csv(p)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [7, 5])
    X0, y0 = load_csv(p, label_column=0)
    np.testing.assert_array_equal(X0, [[2, 7], [4, 5]])
    np.testing.assert_array_equal(y0, [1, 3])
    h = tmp_path / "h.tsv"
    h.write_text("label\tf1\tf2\n2\t0.5\t1\n9\t1.5\t2\n")
    X, y = load_csv(h, label_column="label", header=True, delimiter="\t", relabel_classes=True)
    np.testing.assert_array_equal(X, [[0.5, 1], [1.5, 2]])
    np.testing.assert_array_equal(y, [0, 1])


def test_csv_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="usps.csv"):
        load_csv(tmp_path / "usps.csv")
    p = tmp_path / "a.csv"
    p.write_text("1,2,3\n4,5,6\n")
    with pytest.raises(ParameterError, match="label_column must be an integer in \\[-3, 2\\]"):
        load_csv(p, label_column=3)
    with pytest.raises(ParameterError, match="only with header=True"):
        load_csv(p, label_column="y")
    (tmp_path / "h.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ParameterError, match="header names"):
        load_csv(tmp_path / "h.csv", header=True, label_column="y")
    (tmp_path / "txt.csv").write_text("x,1,2\ny,3,4\n")
    with pytest.raises(DataFormatError, match=r"feature column 0 must hold finite numbers; row 1 \(line 1 of the file\) holds 'x'"):
        load_csv(tmp_path / "txt.csv")
    (tmp_path / "nan.csv").write_text("1,,2\n3,4,5\n")
    with pytest.raises(DataFormatError, match="column 1 must hold finite numbers; row 1 .* an empty cell"):
        load_csv(tmp_path / "nan.csv")
    (tmp_path / "hdr.csv").write_text("a,b,y\n1,2,0\n3,abc,1\n")
    with pytest.raises(DataFormatError, match=r"column 'b' .* row 2 \(line 3 of the file\) holds 'abc'"):
        load_csv(tmp_path / "hdr.csv", header=True)
    (tmp_path / "lab.csv").write_text("1,2,0.5\n3,4,1\n")
    with pytest.raises(DataFormatError, match="labels must be integers"):
        load_csv(tmp_path / "lab.csv")
    (tmp_path / "one.csv").write_text("1\n2\n")
    with pytest.raises(DataFormatError, match="at least one feature column"):
        load_csv(tmp_path / "one.csv")


# ---------------------------------------------------------------- normalisation, labels


def test_normalize_rows_unit_and_none():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]])
    U = normalize_rows(X)
    np.testing.assert_allclose(U, [[0.6, 0.8], [0, 0], [-1, 0]])
    assert X[0, 0] == 3.0  # input untouched
    np.testing.assert_array_equal(normalize_rows(X, None), X)
    Y = X.copy()
    assert normalize_rows(Y, copy=False) is Y and Y[0, 1] == 0.8  # in place on request
    with pytest.raises(ParameterError, match="normalize must be one of 'unit', None"):
        normalize_rows(X, "l1")


def test_relabel_sorted_codes():
    codes, classes = relabel([10, -1, 10, 3])
    np.testing.assert_array_equal(codes, [2, 0, 2, 1])
    np.testing.assert_array_equal(classes[codes], [10, -1, 10, 3])


def test_idx_roundtrip_property(tmp_path_factory):
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import array_shapes, arrays

    dtypes = st.sampled_from([np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
    folder = tmp_path_factory.mktemp("idx")

    @settings(max_examples=40, deadline=None)
    @given(dtypes.flatmap(lambda dt: arrays(dt, array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))), st.booleans())
    def roundtrip(a, gz):
        back = read_idx(write_idx(folder / "a", a, compress=gz))
        assert back.shape == a.shape and back.dtype == a.dtype
        np.testing.assert_array_equal(back, a)

    roundtrip()
