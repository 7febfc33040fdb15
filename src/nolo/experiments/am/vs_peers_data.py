"""What every task of ``vs-peers`` (:mod:`nolo.experiments.am.vs_peers`) reads besides the data set: its horizons,
and the random Fourier features the "-rff" candidates and VW on the same features see.  A module of its own so that
VW's tasks can name the code their numbers depend on (:data:`nolo.experiments.am.vs_peers_vw.VW_CODE`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from nolo.experiments.am import _common as C

#: random Fourier features (:class:`nolo.kernels.RandomFourierFeatures`): their number, the map's seed, and the data
#: sets they run on: the image data sets -- SynSep is linearly separable by construction, Iris has 4 features
#: (docs/squarecb.md#random-features; the candidates' rounds per scale: ``vs_peers.rff_rounds``)
RFF_COMPONENTS = 1000
RFF_SEED = 0
RFF_DATASETS = ("digits", "usps", "mnist", "fashion-mnist")


def horizons(quick: bool) -> tuple[int, ...]:
    return (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000)


def vw_rounds(quick: bool) -> int:
    return 10_000 if quick else 100_000


def runs_rff(dataset: str, quick: bool) -> bool:
    """Whether VW squarecb on the random features runs on ``dataset`` (paper scale, ``RFF_DATASETS``; the
    random-feature candidates themselves also run at quick scale, :func:`nolo.experiments.am.vs_peers.rff_rounds`)."""
    return not quick and dataset in RFF_DATASETS


@lru_cache(maxsize=2)
def rff_rows(dataset: str, quick: bool) -> np.ndarray:
    """The data set's rows mapped by its random Fourier features (RFF_COMPONENTS unit-norm columns, dense; the
    map drawn from RFF_SEED, bandwidth by the median heuristic on the rows), once per process."""
    from nolo.kernels import RandomFourierFeatures

    X = C.load(dataset, quick)[0]
    return RandomFourierFeatures(RFF_COMPONENTS, bandwidth="median", seed=RFF_SEED).fit_transform(X)
