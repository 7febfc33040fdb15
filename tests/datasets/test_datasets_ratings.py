"""Ratings loader (MovieLens u.data, user,item,rating CSV) and the synthetic low-rank stream."""

from pathlib import Path

import numpy as np
import pytest

from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.datasets.ratings import load_ratings, make_low_rank_ratings

DATA = Path(__file__).resolve().parents[1] / "data"


def test_udata_fixture():
    r = load_ratings(DATA / "ratings_u.data")
    assert len(r) == 12 and r.shape == (10, 10)
    assert r.user_ids[:3].tolist() == ["196", "186", "22"]
    assert r.users.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 2]
    assert r.items.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0]
    assert r.ratings.tolist() == [3, 3, 1, 2, 1, 4, 2, 5, 3, 3, 4, 5]
    assert r.timestamps[0] == 881250949 and r.timestamps.dtype == np.int64
    assert load_ratings(DATA / "ratings_u.data", fmt="udata").ratings.tolist() == r.ratings.tolist()


def test_csv_fixture_with_header():
    r = load_ratings(DATA / "ratings.csv")
    assert r.shape == (3, 3) and r.timestamps is None
    assert r.user_ids.tolist() == ["alice", "bob", "carol"]
    assert r.item_ids.tolist() == ["matrix", "inception", "up"]
    assert r.users.tolist() == [0, 1, 0, 2, 1] and r.items.tolist() == [0, 0, 1, 2, 2]
    assert r.ratings.tolist() == [5.0, 3.0, 4.5, 2.0, 1.0]
    train, test = r.split(3)
    assert len(train) == 3 and len(test) == 2 and test.shape == r.shape


def test_bad_files(tmp_path):
    with pytest.raises(DatasetNotFoundError):
        load_ratings(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3\n1,2\n")
    with pytest.raises(DataFormatError, match="line 2"):
        load_ratings(bad)
    bad.write_text("1,2,3\n1,2,x\n")
    with pytest.raises(DataFormatError, match="line 2.*not a number"):
        load_ratings(bad)
    bad.write_text("1\t2\t3\tnot-a-time\n")
    with pytest.raises(DataFormatError, match="timestamp"):
        load_ratings(bad)
    bad.write_text("")
    with pytest.raises(DataFormatError, match="empty"):
        load_ratings(bad)
    with pytest.raises(ValueError, match="fmt"):
        load_ratings(DATA / "ratings.csv", fmt="json")


def test_low_rank_stream_is_seeded_and_low_rank():
    a = make_low_rank_ratings(15, 20, rank=3, n_ratings=500, noise=0.2, seed=4)
    b = make_low_rank_ratings(15, 20, rank=3, n_ratings=500, noise=0.2, seed=4)
    np.testing.assert_array_equal(a.ratings, b.ratings)
    assert np.linalg.matrix_rank(a.truth) == 3
    resid = a.ratings - a.truth[a.users, a.items]
    assert abs(resid.std() - 0.2) < 0.03
    assert 0.7 < a.truth.std() < 1.3
    with pytest.raises(ValueError, match="rank"):
        make_low_rank_ratings(3, 4, rank=5)
