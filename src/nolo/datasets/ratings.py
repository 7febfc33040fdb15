"""Ratings streams for online matrix prediction (OCO notes, lecture 14, section 2, "collaborative filtering").

* :func:`load_ratings` -- a ratings file: comma-separated ``user,item,rating[,timestamp]`` (with or without a
  header line) or MovieLens 100K's ``u.data`` (tab-separated ``user item rating timestamp``); users and items
  are re-indexed ``0..M-1``, ``0..N-1`` in order of first appearance;
* :func:`make_low_rank_ratings` -- a seeded synthetic stream: a rank-``k`` matrix ``U V^T`` (scaled to unit
  entry variance), cells drawn uniformly at random, ratings ``(U V^T)_ij + noise``.

Both return a :class:`Ratings` of plain NumPy arrays.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nolo._validation import check_choice, check_int, check_scalar
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.random import as_generator

__all__ = ["Ratings", "load_ratings", "make_low_rank_ratings", "RATING_FORMATS"]

RATING_FORMATS = ("auto", "csv", "udata")


@dataclass(frozen=True)
class Ratings:
    """A ratings stream: round ``t`` reveals ``ratings[t]`` of cell ``(users[t], items[t])``.

    ``users`` / ``items`` are int64 indices in ``[0, n_users)`` / ``[0, n_items)``;
    ``ratings`` float64; ``user_ids`` / ``item_ids`` the original identifiers
    (index -> id; None for synthetic data); ``timestamps`` int64 or None;
    ``truth`` the noiseless ``M x N`` matrix of a synthetic stream (else None).
    """

    users: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    n_users: int
    n_items: int
    user_ids: np.ndarray | None = None
    item_ids: np.ndarray | None = None
    timestamps: np.ndarray | None = None
    truth: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.ratings.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_users, self.n_items)

    def split(self, n_train: int) -> tuple["Ratings", "Ratings"]:
        """The first ``n_train`` rounds and the rest (same shape and ids)."""
        n_train = check_int(n_train, "n_train", low=0, high=len(self))

        def part(sl):
            return Ratings(self.users[sl], self.items[sl], self.ratings[sl], self.n_users, self.n_items,
                           self.user_ids, self.item_ids, None if self.timestamps is None else self.timestamps[sl],
                           self.truth)

        return part(slice(0, n_train)), part(slice(n_train, None))


def _reindex(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Indices in order of first appearance and the index -> id table."""
    table: dict[str, int] = {}
    idx = np.empty(len(ids), dtype=np.int64)
    for k, v in enumerate(ids):
        idx[k] = table.setdefault(v, len(table))
    return idx, np.array(list(table), dtype=object)


def _sniff(first: str) -> str:
    return "udata" if "\t" in first else "csv"


def load_ratings(path: str | os.PathLike, fmt: str = "auto") -> Ratings:
    """Read a ratings file (see the module docstring for the formats).

    Parameters
    ----------
    path : path-like
        The file.
    fmt : {"auto", "csv", "udata"}
        ``"auto"`` picks ``"udata"`` when the first line contains a tab.

    Raises
    ------
    DatasetNotFoundError
        The file does not exist.
    DataFormatError
        A line has fewer than 3 fields, a rating is not a finite number, or a
        timestamp is not an integer (the message gives the line number).

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "u.data")
    >>> _ = open(p, "w").write("196\\t242\\t3\\t881250949\\n186\\t302\\t3\\t891717742\\n196\\t377\\t1\\t878887116\\n")
    >>> r = load_ratings(p)
    >>> r.users.tolist(), r.items.tolist(), r.ratings.tolist(), r.shape
    ([0, 1, 0], [0, 1, 2], [3.0, 3.0, 1.0], (2, 3))
    """
    fmt = check_choice(fmt, "fmt", RATING_FORMATS)
    p = Path(path)
    if not p.is_file():
        raise DatasetNotFoundError(f"ratings file {str(p)!r} does not exist")
    text = p.read_text(encoding="utf-8", errors="strict")
    lines = [ln for ln in text.splitlines()]
    nonblank = [(k + 1, ln) for k, ln in enumerate(lines) if ln.strip()]
    if not nonblank:
        raise DataFormatError(f"{p}: the ratings file is empty")
    if fmt == "auto":
        fmt = _sniff(nonblank[0][1])
    users, items, ratings, stamps = [], [], [], []
    for lineno, ln in nonblank:
        if fmt == "udata":
            fields = ln.split("\t")
        else:
            fields = next(csv.reader(io.StringIO(ln)))
        fields = [f.strip() for f in fields]
        if len(fields) < 3:
            raise DataFormatError(f"{p}, line {lineno}: expected user, item, rating[, timestamp], got {ln!r}")
        try:
            r = float(fields[2])
        except ValueError:
            if fmt == "csv" and lineno == nonblank[0][0]:
                continue  # a header line
            raise DataFormatError(f"{p}, line {lineno}: the rating {fields[2]!r} is not a number") from None
        if not np.isfinite(r):
            raise DataFormatError(f"{p}, line {lineno}: the rating {fields[2]!r} is not finite")
        users.append(fields[0])
        items.append(fields[1])
        ratings.append(r)
        if len(fields) >= 4 and fields[3] != "":
            try:
                stamps.append(int(fields[3]))
            except ValueError:
                raise DataFormatError(f"{p}, line {lineno}: the timestamp {fields[3]!r} is not an integer") from None
        else:
            stamps.append(None)
    if not ratings:
        raise DataFormatError(f"{p}: no ratings (only a header?)")
    u, uid = _reindex(users)
    i, iid = _reindex(items)
    ts = None if any(s is None for s in stamps) else np.array(stamps, dtype=np.int64)
    return Ratings(u, i, np.array(ratings, dtype=np.float64), int(uid.shape[0]), int(iid.shape[0]), uid, iid, ts)


def make_low_rank_ratings(n_users: int = 100, n_items: int = 100, rank: int = 3, n_ratings: int = 10_000, *,
                          noise: float = 0.1, seed=None) -> Ratings:
    """A seeded synthetic stream from a rank-``rank`` matrix.

    ``Y = U V^T / sqrt(rank)`` with ``U``, ``V`` standard normal (so each entry
    has variance 1); the cells of the ``n_ratings`` rounds are i.i.d. uniform
    over the ``n_users x n_items`` matrix; ``rating = Y_ij + noise * N(0, 1)``.
    ``truth`` holds ``Y``.

    Examples
    --------
    >>> r = make_low_rank_ratings(20, 30, rank=2, n_ratings=5, seed=0)
    >>> r.shape, len(r), int(np.linalg.matrix_rank(r.truth))
    ((20, 30), 5, 2)
    """
    M = check_int(n_users, "n_users", low=1)
    N = check_int(n_items, "n_items", low=1)
    k = check_int(rank, "rank", low=1, high=min(M, N))
    T = check_int(n_ratings, "n_ratings", low=0)
    noise = check_scalar(noise, "noise", low=0.0)
    rng = as_generator(seed)
    U = rng.standard_normal((M, k))
    V = rng.standard_normal((N, k))
    Y = U @ V.T / np.sqrt(k)
    users = rng.integers(0, M, size=T).astype(np.int64)
    items = rng.integers(0, N, size=T).astype(np.int64)
    ratings = Y[users, items] + noise * rng.standard_normal(T)
    return Ratings(users, items, ratings, M, N, truth=Y)
