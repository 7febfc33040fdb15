"""The order in which an online/bandit experiment visits a dataset's examples.

AM's code draws, at every round, an example uniformly **with replacement**
from the whole dataset (``baselines.md`` section 0), so ``T`` may exceed
``n_items`` by far (USPS: T = 10^7).  ``"permuted_passes"`` instead
concatenates independent random permutations (epochs) and truncates at ``T``.

The stream is produced in chunks of ``chunk_size`` indices;
``stream_indices`` is exactly the concatenation of ``iter_stream_indices``
with the same generator state and chunk size.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from nolo._validation import check_choice, check_int
from nolo.random import SeedLike, as_generator

__all__ = ["STREAM_ORDERS", "DEFAULT_CHUNK", "iter_stream_indices", "stream_indices"]

STREAM_ORDERS = ("with_replacement", "permuted_passes")
DEFAULT_CHUNK = 1 << 20


def iter_stream_indices(
    n_items: int,
    T: int,
    order: str = "with_replacement",
    rng: SeedLike = None,
    *,
    chunk_size: int = DEFAULT_CHUNK,
) -> Iterator[np.ndarray]:
    """Yield int64 index arrays (each at most ``chunk_size`` long) that together make a stream of length ``T``.

    Arguments are validated when the iterator is created, not at the first ``next``.
    """
    n_items = check_int(n_items, "n_items", low=1)
    T = check_int(T, "T", low=0)
    check_choice(order, "order", STREAM_ORDERS)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    gen = as_generator(rng, "rng")
    return _chunks(n_items, T, order, gen, chunk_size)


def _chunks(n_items, T, order, gen, chunk_size):
    if order == "with_replacement":
        for start in range(0, T, chunk_size):
            yield gen.integers(0, n_items, size=min(chunk_size, T - start), dtype=np.int64)
        return
    buffer = np.empty(0, dtype=np.int64)
    produced = 0
    while produced < T:
        want = min(chunk_size, T - produced)
        while buffer.size < want:
            buffer = np.concatenate([buffer, gen.permutation(n_items).astype(np.int64)])
        out, buffer = buffer[:want], buffer[want:]
        produced += want
        yield out


def stream_indices(
    n_items: int,
    T: int,
    order: str = "with_replacement",
    rng: SeedLike = None,
    *,
    chunk_size: int = DEFAULT_CHUNK,
) -> np.ndarray:
    """The whole stream as one int64 array of length ``T`` with values in ``0..n_items-1``.

    ``order="with_replacement"`` (AM): i.i.d. uniform indices.
    ``order="permuted_passes"``: epoch after epoch of a fresh random
    permutation, so every window ``[k n, (k+1) n)`` holds each index once.
    """
    chunks = list(iter_stream_indices(n_items, T, order, rng, chunk_size=chunk_size))
    return np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int64)
