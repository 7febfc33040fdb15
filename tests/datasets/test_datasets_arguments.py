"""Dataset loaders and generators: bad arguments raise ParameterError naming the parameter (issues 13/14 items 9, 11)."""

import numpy as np
import pytest

from nolo import ParameterError
from nolo.datasets import (
    load_csv,
    load_dataset,
    load_idx_pair,
    load_svmlight,
    load_usps_h5,
    make_synnonsep,
    make_synsep,
    normalize_rows,
    pca_features,
    read_idx,
    resolve_data_dir,
    write_idx,
)


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "x.csv").write_text("1,2,0\n3,4,1\n")
    (tmp_path / "x.svm").write_text("0 1:1\n1 2:1\n")
    return tmp_path


CASES = [
    ("data_dir", lambda p: load_dataset("mnist", data_dir=3)),  # was a raw TypeError
    ("data_dir", lambda p: resolve_data_dir(b"/tmp")),
    ("data_dir", lambda p: load_dataset("usps", data_dir="  ")),
    ("verify", lambda p: load_dataset("iris", verify="yes")),
    ("features", lambda p: load_dataset("fashion-mnist", data_dir=p, features="cnn")),  # before any file is looked for
    ("n_components", lambda p: load_dataset("fashion-mnist", data_dir=p, features="raw", n_components=0)),
    ("prototype_size", lambda p: make_synsep(10, 0, prototype_size=(5,))),  # was an unpack ValueError
    ("prototype_size", lambda p: make_synsep(10, 0, prototype_size=5)),
    ("prototype_size", lambda p: make_synsep(10, 0, prototype_size="ab")),
    (r"prototype_size\[1\]", lambda p: make_synsep(10, 0, prototype_size=(5, 2.5))),
    ("unknown SynSep option", lambda p: make_synsep(10, 0, prototype_sizes=(5, 9))),
    ("return_prototypes", lambda p: make_synsep(10, 0, return_prototypes="no")),
    ("return_clean_labels", lambda p: make_synnonsep(10, 0, return_clean_labels=1)),
    ("X", lambda p: normalize_rows(np.ones((2, 2)) + 1j)),  # was silently cast to the real part
    ("copy", lambda p: normalize_rows(np.ones((2, 2)), copy="no")),
    ("X_fit", lambda p: pca_features(np.ones((5, 3)) + 0j, n_components=2)),
    ("X_apply", lambda p: pca_features(np.eye(5, 3), np.ones((2, 3)) * 1j, n_components=2)),
    ("path", lambda p: load_csv(3)),
    ("header", lambda p: load_csv(p / "x.csv", header="yes")),
    ("relabel_classes", lambda p: load_csv(p / "x.csv", relabel_classes=None)),
    ("delimiter", lambda p: load_csv(p / "x.csv", delimiter="")),
    ("dense", lambda p: load_svmlight(p / "x.svm", dense="no")),
    ("zero_based", lambda p: load_svmlight(p / "x.svm", zero_based="yes")),
    ("path", lambda p: load_svmlight(None)),
    ("path", lambda p: read_idx(3)),
    ("images_path", lambda p: load_idx_pair(1, p / "labels")),
    ("compress", lambda p: write_idx(p / "a.idx", np.zeros(3, np.uint8), compress="gz")),
    ("path", lambda p: load_usps_h5(None)),
]


@pytest.mark.parametrize("name,call", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_bad_argument_names_the_parameter(files, name, call):
    with pytest.raises(ParameterError, match=name):
        call(files)


def test_good_arguments_still_work(files):
    X, y = load_csv(files / "x.csv", header=False, relabel_classes=True)
    assert X.shape == (2, 2) and y.tolist() == [0, 1]
    X, y = load_svmlight(files / "x.svm", dense=False, zero_based=np.bool_(False))
    assert X.shape[0] == 2
    X, y, protos = make_synsep(20, 0, prototype_size=[20, 40], return_prototypes=np.True_)
    assert X.shape == (20, 400) and protos.n_classes == 9
    assert normalize_rows(np.ones((2, 2)), copy=False).shape == (2, 2)
    assert resolve_data_dir(files).path == files.resolve()
