"""nolo.sklearn_api._inputs: one converter for 3-D arrays, ragged lists and long tables with groups."""

import numpy as np
import pandas as pd
import pytest

from nolo import ParameterError
from nolo.sklearn_api import EIVRegressor, KnownCovarianceRegressor, NoisyKernelRegressor, TwoCopyRegressor
from nolo.sklearn_api._inputs import clean_inputs, item_targets, to_readings


def _long(M, y, rng, ids=None):
    """The (n, m, d) readings as a shuffled long table: rows, item ids, targets repeated per row."""
    n, m, d = M.shape
    ids = np.arange(n) if ids is None else np.asarray(ids)
    rows = M.reshape(n * m, d)
    item = np.repeat(ids, m)
    perm = rng.permutation(n * m)
    return rows[perm], item[perm], np.repeat(y, m)[perm]


def test_three_layouts_give_the_same_readings():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(5, 3, 2))
    R3 = to_readings(M)
    Rl = to_readings(list(M))
    assert R3.n_items == Rl.n_items == 5 and np.array_equal(R3.means(), Rl.means())
    rows, item, _ = _long(M, np.zeros(5), rng, ids=[f"s{i}" for i in [4, 0, 3, 1, 2]])
    R = to_readings(rows, groups=item)
    first = [list(item).index(g) for g in dict.fromkeys(item)]  # item order: first appearance
    assert R.n_items == 5 and R.dense is not None and R.dense.shape == (5, 3, 2)
    means = {g: rows[item == g].mean(axis=0) for g in set(item)}
    np.testing.assert_allclose(R.means(), np.stack([means[item[i]] for i in first]))


def test_ragged_and_long_with_unequal_counts():
    rng = np.random.default_rng(1)
    items = [rng.normal(size=(k, 3)) for k in (1, 4, 2)]
    R = to_readings(items)
    assert R.dense is None and R.counts.tolist() == [1, 4, 2]
    np.testing.assert_allclose(R.means(), np.stack([a.mean(axis=0) for a in items]))
    rows = np.concatenate(items)
    g = np.repeat([7, 3, 5], [1, 4, 2])
    Rg = to_readings(rows, groups=g)
    assert Rg.counts.tolist() == [1, 4, 2]
    np.testing.assert_allclose(Rg.means(), R.means())


def test_targets_per_item_or_per_row():
    rows = np.arange(12.0).reshape(6, 2)
    g = np.array([1, 1, 2, 2, 2, 3])
    R = to_readings(rows, groups=g)
    assert item_targets([10.0, 20.0, 30.0], R).tolist() == [10.0, 20.0, 30.0]
    assert item_targets([10, 10, 20, 20, 20, 30], R).tolist() == [10.0, 20.0, 30.0]
    with pytest.raises(ParameterError, match="constant within each item"):
        item_targets([10, 11, 20, 20, 20, 30], R)
    with pytest.raises(ParameterError, match="one target per item"):
        item_targets([1.0, 2.0], R)


@pytest.mark.parametrize("bad, match", [
    (np.ones((4, 3)) + 1j, "Complex data not supported"),
    (np.ones((4, 0)), "0 feature"),
    (np.ones(4), "Reshape your data"),
    ("abc", "X must be an array"),
    ([np.ones((2, 3)), np.ones((2, 4))], r"X\[1\] must have 3 features"),
])
def test_bad_inputs_are_named(bad, match):
    with pytest.raises(ParameterError, match=match):
        to_readings(bad)


def test_groups_must_match_rows():
    with pytest.raises(ParameterError, match="groups"):
        to_readings(np.ones((4, 2)), groups=[1, 2])


def test_clean_inputs_means_and_rows():
    M = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(clean_inputs(M), M.mean(axis=1))
    np.testing.assert_allclose(clean_inputs(M[:, 0]), M[:, 0])
    assert clean_inputs(np.zeros((0, 4))).shape == (0, 4)


@pytest.mark.parametrize("make", [lambda: EIVRegressor(shuffle=False, max_iter=1),
                                  lambda: KnownCovarianceRegressor(noise_cov=0.09, shuffle=False, max_iter=3),
                                  lambda: TwoCopyRegressor(shuffle=False, max_iter=3),
                                  lambda: NoisyKernelRegressor(kernel="linear", shuffle=False, max_iter=1, seed=0)])
def test_every_layout_fits_the_same_model(make):
    """3-D array, ragged list, long table (numpy and a pandas DataFrame, y per row) -> the same coefficients."""
    rng = np.random.default_rng(2)
    clean = rng.normal(size=(60, 3))
    y = clean @ np.array([1.0, -0.5, 0.2]) + 1.0
    M = clean[:, None, :] + 0.3 * rng.normal(size=(60, 4, 3))
    a = make().fit(M, y)
    b = make().fit(list(M), y)
    # a long table in reading-major order (items interleaved; each item's readings keep their order, which the
    # two-view split of TwoCopyRegressor depends on)
    rows = M.transpose(1, 0, 2).reshape(-1, 3)
    item = np.tile(np.arange(60), 4)
    y_rows = np.tile(y, 4)
    c = make().fit(rows, y_rows, groups=item)
    df = pd.DataFrame(rows, columns=["a", "b", "c"]).assign(item=item, y=y_rows)
    e = make().fit(df[["a", "b", "c"]], df["y"], groups=df["item"])
    for other in (b, c, e):
        np.testing.assert_allclose(other.predict(clean[:5]), a.predict(clean[:5]), rtol=1e-10, atol=1e-10)
    assert list(e.feature_names_in_) == ["a", "b", "c"]
