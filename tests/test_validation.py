"""nolo._validation: complex input refused in every form numpy would silently truncate (issue 14 item 11), and the
row/target length check names both arrays."""

import warnings

import numpy as np
import pytest

from nolo._validation import check_array, check_targets_for_rows
from nolo.exceptions import ParameterError


@pytest.mark.parametrize("value", [
    np.array([1.0, 2.0]) + 1j,
    np.array([1.0, 2.0], dtype=np.complex64),  # zero imaginary part: still not a real array
    [np.complex128(1 + 1j), 2.0],  # a list of numpy complex scalars (numpy warns and drops the imaginary part)
    [np.complex128(1.0), np.complex128(2.0)],
    np.array([1.0, 1j], dtype=object),
    [1 + 1j, 2.0],
    1 + 0j,
])
def test_complex_refused_naming_the_parameter(value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning escapes either
        with pytest.raises(ParameterError, match="^x must"):
            check_array(value, "x")


@pytest.mark.parametrize("value", [[1.0, 2.0], np.array([1, 2]), np.array([True, False]), np.array([1.0, 2.0], np.float32)])
def test_real_input_still_converts(value):
    out = check_array(value, "x")
    assert out.dtype == np.float64 and out.tolist() == [float(v) for v in np.asarray(value)]


def test_check_targets_for_rows_names_rows_and_targets():
    with pytest.raises(ParameterError, match=r"X and y must have the same number of rows: y must have shape \(0,\) for the 0 rows of X, got shape \(6,\)"):
        check_targets_for_rows(np.zeros(6), 0, "X")
    with pytest.raises(ParameterError, match="^y must"):
        check_targets_for_rows(np.zeros((6, 1)), 6, "X")
    assert check_targets_for_rows([1, 2], 2, "X").tolist() == [1.0, 2.0]
