"""What every task of ``vs-peers`` (:mod:`nolo.papers.am.vs_peers`) reads: its data sets and their rows, its
horizons, and the random Fourier features the "-rff" candidates and VW on the same features see.  A module of its own
so that VW's tasks can name the code their numbers depend on (:data:`nolo.papers.am.vs_peers_vw.VW_CODE`).

Two kinds of data set: AM's (digits, Iris, SynSep, USPS, MNIST; unit-norm rows, the paper's construction) and the
bandit suite's (:mod:`nolo.datasets.bandit_suite`; raw columns, whose scales span up to seven orders of magnitude --
what a user's table looks like).  Every learner and VW see the same rows."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from nolo.papers.am import _common as C

#: random Fourier features (:class:`nolo.kernels.RandomFourierFeatures`): their number, the map's seed, and the data
#: sets they run on: the image data sets -- SynSep is linearly separable by construction, Iris has 4 features
#: (docs/squarecb.md#random-features; the candidates' rounds per scale: ``vs_peers.rff_rounds``)
RFF_COMPONENTS = 1000
RFF_SEED = 0
RFF_DATASETS = ("digits", "usps", "mnist", "fashion-mnist")
#: AM's data sets, by scale: the pool's first two tasks are on data sets of different row types (Iris is dense, the
#: others CSR), so on a cold numba cache its workers compile different stream loops
AM_QUICK = ("digits", "iris", "synsep")
AM_PAPER = ("digits", "iris", "synsep", "usps", "mnist")
#: the bandit suite's data sets, by scale (quick: the four that cost least, dense and small; paper: all nine)
SUITE_QUICK = ("wine", "breast-cancer", "moons", "mixed-scales")
SUITE_PAPER = ("wine", "breast-cancer", "mixed-scales", "many-classes", "rings", "moons", "imbalanced", "text",
               "categorical")
#: the suite's data seed (its generated sets; never used for tuning: docs/default-learner.md#tuning)
SUITE_DATA_SEED = 2026


def is_suite(dataset: str) -> bool:
    return dataset in SUITE_PAPER


@lru_cache(maxsize=4)
def load_rows(dataset: str, quick: bool):
    """(X, y) as every learner and VW see them: AM's unit-norm rows (dense), or the suite's raw rows (dense, or CSR
    for the sparse sets), once per process."""
    if not is_suite(dataset):
        return C.load(dataset, quick)
    from nolo.datasets import load_dataset

    opts = {} if dataset in ("wine", "breast-cancer") else {"seed": SUITE_DATA_SEED}
    return load_dataset(dataset, normalize=None, **opts)


@lru_cache(maxsize=4)
def load_stream_rows(dataset: str, quick: bool):
    """:func:`load_rows` for the compiled stream loops: CSR when at most AUTO_CSR_DENSITY of the entries are non-zero
    (the loops give identical results on either representation)."""
    if not is_suite(dataset):
        return C.load_stream(dataset, quick)
    import scipy.sparse as sp

    from nolo.learners.bandit.simulator import AUTO_CSR_DENSITY, canonical_csr

    X, y = load_rows(dataset, quick)
    if not sp.issparse(X) and np.count_nonzero(X) <= AUTO_CSR_DENSITY * X.size:
        X = canonical_csr(X)
    return X, y


def horizons(quick: bool) -> tuple[int, ...]:
    return (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000)


def horizons_for(dataset: str, quick: bool) -> tuple[int, ...]:
    """The horizons of a data set's cells: the suite's stop at 10^5 rounds at both scales (VW, whose claims they carry,
    plays at most that far; 10^6 rounds of nine more data sets would add hours for claims among nolo's learners only).

    >>> horizons_for("wine", False), horizons_for("digits", False)
    ((10000, 100000), (10000, 100000, 1000000))
    """
    return horizons(True) if is_suite(dataset) else horizons(quick)


def vw_rounds(quick: bool) -> int:
    return 10_000 if quick else 100_000


def runs_rff(dataset: str, quick: bool) -> bool:
    """Whether VW squarecb on the random features runs on ``dataset`` (paper scale, ``RFF_DATASETS``; the
    random-feature candidates themselves also run at quick scale, :func:`nolo.papers.am.vs_peers.rff_rounds`)."""
    return not quick and dataset in RFF_DATASETS


@lru_cache(maxsize=2)
def rff_rows(dataset: str, quick: bool) -> np.ndarray:
    """The data set's rows mapped by its random Fourier features (RFF_COMPONENTS unit-norm columns, dense; the
    map drawn from RFF_SEED, bandwidth by the median heuristic on the rows), once per process."""
    from nolo.kernels import RandomFourierFeatures

    X = load_rows(dataset, quick)[0]
    return RandomFourierFeatures(RFF_COMPONENTS, bandwidth="median", seed=RFF_SEED).fit_transform(X)
