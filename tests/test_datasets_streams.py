"""stream_indices: the visiting order of bandit experiments (AM: uniform with replacement)."""

from __future__ import annotations

import numpy as np
import pytest

from nolo.datasets import iter_stream_indices, stream_indices
from nolo.exceptions import ParameterError


def test_with_replacement_is_uniform():
    idx = stream_indices(10, 100_000, rng=1)
    assert idx.dtype == np.int64 and idx.shape == (100_000,)
    assert idx.min() >= 0 and idx.max() <= 9
    counts = np.bincount(idx, minlength=10)
    z = (counts - 10_000) / np.sqrt(100_000 * 0.1 * 0.9)
    assert np.abs(z).max() <= 4
    # consecutive draws are independent: P(same index twice in a row) = 1/10
    same = np.mean(idx[1:] == idx[:-1])
    assert abs(same - 0.1) <= 4 * np.sqrt(0.09 / idx.size)


def test_permuted_passes_visit_each_item_once_per_epoch():
    idx = stream_indices(7, 30, "permuted_passes", rng=2, chunk_size=4)
    assert idx.shape == (30,)
    for e in range(4):
        assert sorted(idx[7 * e : 7 * e + 7]) == list(range(7))
    assert len(set(idx[28:].tolist())) == 2
    assert not np.array_equal(idx[:7], idx[7:14])  # fresh permutation each epoch (fixed seed)


@pytest.mark.parametrize("order", ["with_replacement", "permuted_passes"])
def test_chunks_concatenate_to_the_stream_and_are_deterministic(order):
    chunks = list(iter_stream_indices(5, 23, order, rng=3, chunk_size=4))
    assert [c.size for c in chunks] == [4, 4, 4, 4, 4, 3]
    whole = stream_indices(5, 23, order, rng=3, chunk_size=4)
    np.testing.assert_array_equal(np.concatenate(chunks), whole)
    np.testing.assert_array_equal(whole, stream_indices(5, 23, order, rng=np.random.default_rng(3), chunk_size=4))
    assert stream_indices(5, 0, order, rng=3).size == 0


def test_validation_happens_at_creation():
    with pytest.raises(ParameterError, match="order must be one of 'with_replacement', 'permuted_passes'"):
        iter_stream_indices(5, 10, "sequential")
    with pytest.raises(ParameterError, match="n_items must be an integer >= 1"):
        stream_indices(0, 10)
    with pytest.raises(ParameterError, match="T must be an integer >= 0"):
        stream_indices(5, -1)
    with pytest.raises(ParameterError, match="chunk_size"):
        stream_indices(5, 10, chunk_size=0)
