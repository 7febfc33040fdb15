"""nolo.datasets.svmlight: files scikit-learn's parser reads as nothing, or as non-finite values, are refused."""

import pytest

from nolo.datasets import load_svmlight
from nolo.datasets.errors import DataFormatError


@pytest.mark.parametrize("text", [b"", b"# only a comment\n", b"\n\n"], ids=["empty", "comment", "blank lines"])
def test_file_without_data_lines_refused(tmp_path, text):
    p = tmp_path / "data.svm"
    p.write_bytes(text)
    with pytest.raises(DataFormatError, match="no data line"):
        load_svmlight(p)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_feature_refused(tmp_path, value):
    p = tmp_path / "data.svm"
    p.write_text(f"1 1:{value} 2:3\n0 1:1\n")
    with pytest.raises(DataFormatError, match="NaN or inf"):
        load_svmlight(p)
