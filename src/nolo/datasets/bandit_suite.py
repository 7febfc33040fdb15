"""The bandit suite: nine classification data sets for evaluating contextual-bandit learners on raw scales.

The suite is for comparing bandit learners on data of varied shape *without
any preprocessing by the experimenter*: the learners must be scale-free, so
every set keeps its raw feature scales.  Together the sets cover

- dimension d from 8 to 20,000 (two of them sparse, as CSR matrices),
- K from 2 to 50 classes, balanced and very unbalanced (smallest class shares
  of 1.5 to 3.5 % in ``imbalanced``, ``text`` and ``categorical``),
- linear-ish and nonlinear class boundaries, and two real data sets,
- column scales spanning more than six orders of magnitude (``mixed-scales``
  guarantees it; constant, duplicated and far off-centre columns occur too).

========================= ======== ====== ==== ======================================================
name                      n        d      K    what
========================= ======== ====== ==== ======================================================
``wine``                  178      13     3    UCI Wine, :func:`sklearn.datasets.load_wine`, raw
``breast-cancer``         569      30     2    UCI WDBC, :func:`sklearn.datasets.load_breast_cancer`
``mixed-scales``          5,000    23     5    make_classification, scales 10^U(-3,3), dup. + const. cols
``many-classes``          10,000   40     50   make_classification, offsets 10^U(0,4), scales 10^U(-2,2)
``rings``                 5,000    10     3    make_gaussian_quantiles + 5 noise columns, scales 10^U(-3,3)
``moons``                 4,000    8      2    make_moons + 6 noise columns, offsets and scales
``imbalanced``            8,000    30     6    make_classification, class weights 50 % ... 2 %
``text``                  10,000   20,000 20   synthetic bag of words (counts, CSR), Zipf class priors
``categorical``           20,000   1,488  4    8 one-hot categorical attributes (CSR), interaction rule
========================= ======== ====== ==== ======================================================

``X`` is float64 -- a dense ndarray, or for ``text`` and ``categorical`` a
:class:`scipy.sparse.csr_matrix` in canonical form (sorted indices, no
duplicate and no explicitly stored zero) -- and ``y`` is int64 in ``0..K-1``
with every class present.  Load them with
``nolo.datasets.load_dataset(name, normalize=None)`` to keep the raw values
(``load_dataset``'s default ``normalize="unit"`` scales every row, dense or
CSR, to unit l2 norm; the columns' scale disparities remain).

Sources.  ``wine`` and ``breast-cancer`` are the copies of the UCI data sets
shipped with scikit-learn (Pedregosa et al., "Scikit-learn: Machine Learning
in Python", JMLR 12, 2011); nothing is downloaded.  Five sets transform the
output of scikit-learn's generators: :func:`sklearn.datasets.make_classification`
(the hypercube-cluster design of Guyon, "Design of experiments for the NIPS
2003 variable selection benchmark", 2003), :func:`~sklearn.datasets.make_gaussian_quantiles`
and :func:`~sklearn.datasets.make_moons`.  ``text`` (a mixture of
class-specific Dirichlet word distributions with a shared Zipf background, as
in the multinomial naive-Bayes model of text) and ``categorical`` are drawn
here with NumPy.

Every generated set is seeded: ``seed`` (default :data:`DEFAULT_SEED` = 2026,
so the defaults are deterministic; ``None`` draws fresh OS entropy, an int, a
SeedSequence or a Generator are accepted as everywhere in nolo) is split
(:func:`nolo.random.spawn`) into independent streams for the base generator,
the column transforms and the label noise, and a scikit-learn generator
receives an int ``random_state`` drawn from its stream.  Same seed, same
arrays; no generated set reads a file or the network.  :func:`suite_info`
summarises the built data (shape, sparsity, class shares, column-scale spread).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from nolo._validation import check_int
from nolo.exceptions import ParameterError
from nolo.random import SeedLike, spawn

__all__ = [
    "DEFAULT_SEED",
    "SUITE",
    "SUITE_OPTIONS",
    "load_wine_raw",
    "load_breast_cancer_raw",
    "make_mixed_scales",
    "make_many_classes",
    "make_rings",
    "make_moons_offset",
    "make_imbalanced",
    "make_text",
    "make_categorical",
    "build",
    "column_scale_spread",
    "suite_info",
]

#: the default data seed of the generated sets
DEFAULT_SEED = 2026

#: ``text``: vocabulary size, topics, Dirichlet concentration, share of the topic's own distribution in the word
#: distribution, and document length = MIN + Poisson(MEAN)
TEXT_VOCABULARY = 20_000
TEXT_CLASSES = 20
TEXT_DIRICHLET = 0.02
TEXT_CLASS_SHARE = 0.5
TEXT_MIN_LENGTH = 20
TEXT_POISSON_LENGTH = 60

#: ``categorical``: the attributes' cardinalities, the Zipf exponent of their levels, classes, label-noise share,
#: and the standard deviation of the pairwise interaction scores (the main-effect scores have standard deviation 1)
CATEGORICAL_CARDINALITIES = (3, 5, 10, 20, 50, 100, 300, 1000)
CATEGORICAL_ZIPF_EXPONENT = 1.75
CATEGORICAL_CLASSES = 4
CATEGORICAL_LABEL_NOISE = 0.05
CATEGORICAL_INTERACTION_SD = 2.0

_MAX_SCALE_DRAWS = 10_000


# ----------------------------------------------------------------------------------------------- helpers


def _n_samples(value, n_classes: int) -> int:
    """``n_samples`` checked: an int, at least one example per class."""
    return check_int(value, "n_samples", low=n_classes)


def _sk_state(rng: np.random.Generator) -> int:
    """An int ``random_state`` for a scikit-learn generator, drawn from ``rng``."""
    return int(rng.integers(2**31 - 1))


def _log_uniform(rng: np.random.Generator, low: float, high: float, size) -> np.ndarray:
    """``10 ** U(low, high)``."""
    return 10.0 ** rng.uniform(low, high, size)


def _finish(X, y, n_classes: int, name: str, n_samples: int | None = None):
    """``(X float64, y int64)``; ParameterError naming ``n_samples`` if a class got no example."""
    y = np.asarray(y, dtype=np.int64)
    counts = np.bincount(y, minlength=n_classes)  # the builders emit labels in 0..n_classes-1 only
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        hint = f"n_samples={n_samples} is too small: " if n_samples is not None else ""
        raise ParameterError(
            f"{hint}{name!r} drew no example of class(es) {', '.join(map(str, empty[:10]))}"
            f"{' ...' if empty.size > 10 else ''} of {n_classes}; every class must be present, use a larger n_samples"
        )
    if not isinstance(X, np.ndarray):  # CSR, built here in canonical form
        return X, y
    return np.ascontiguousarray(X, dtype=np.float64), y


def _csr(data, indices, indptr, shape):
    from scipy.sparse import csr_matrix

    # the builders emit sorted, duplicate-free, nonzero entries: canonical form without a sort
    return csr_matrix((np.asarray(data, dtype=np.float64), indices, indptr), shape=shape)


def column_scale_spread(X) -> float:
    """``log10(max sd / min sd)`` over the non-constant columns of ``X`` (dense or sparse); 0 if fewer than two.

    A column is constant when its minimum equals its maximum (an all-zero sparse column too).
    """
    if isinstance(X, np.ndarray):
        lo, hi = X.min(axis=0), X.max(axis=0)
        sd = X.std(axis=0)
    else:
        X = X.tocsc()
        n = X.shape[0]
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
        mean = np.asarray(X.sum(axis=0)).ravel() / n
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() / n
        sd = np.sqrt(np.maximum(sq - mean**2, 0.0))
    sd = sd[(hi > lo) & (sd > 0)]
    return float(np.log10(sd.max() / sd.min())) if sd.size >= 2 else 0.0


# ----------------------------------------------------------------------------------------------- real data


def load_wine_raw() -> tuple[np.ndarray, np.ndarray]:
    """UCI Wine (Forina et al.; scikit-learn's :func:`~sklearn.datasets.load_wine`), raw: ``(178, 13)``, K=3.

    Feature scales run from ~0.1 (nonflavanoid phenols) to ~1,680 (proline); classes 59/71/48.
    """
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    return _finish(X, y, 3, "wine")


def load_breast_cancer_raw() -> tuple[np.ndarray, np.ndarray]:
    """Breast Cancer Wisconsin (Diagnostic) (Street, Wolberg & Mangasarian 1993; scikit-learn's
    :func:`~sklearn.datasets.load_breast_cancer`), raw: ``(569, 30)``, K=2, classes 212 (malignant) / 357.

    Feature scales run from ~1e-3 to ~4e3.
    """
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return _finish(X, y, 2, "breast-cancer")


# ----------------------------------------------------------------------------------------------- generated, dense


def make_mixed_scales(n_samples: int = 5000, seed: SeedLike = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``mixed-scales``: linear-ish classes with columns of wildly different scales, ``(n, 23)``, K=5.

    1. :func:`sklearn.datasets.make_classification` with ``n_features=20,
       n_informative=8, n_redundant=4, n_classes=5, n_clusters_per_class=1,
       class_sep=1.5`` (``flip_y=0.01``, its default);
    2. column ``j`` multiplied by ``10**e_j``, ``e_j ~ U(-3, 3)`` i.i.d.; the
       whole vector ``e`` is redrawn until the columns' standard deviations
       span at least six orders of magnitude (a few draws on average);
    3. appended: copies of two distinct random columns, then one constant
       column of value ``10**U(-3, 3)``.
    """
    n = _n_samples(n_samples, 5)
    rng_sk, rng_cols = spawn(seed, 2)
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n, n_features=20, n_informative=8, n_redundant=4, n_classes=5, n_clusters_per_class=1,
        class_sep=1.5, flip_y=0.01, random_state=_sk_state(rng_sk),
    )
    sd = X.std(axis=0)
    for _ in range(_MAX_SCALE_DRAWS):
        e = rng_cols.uniform(-3.0, 3.0, X.shape[1])
        scaled = sd * 10.0**e
        if np.log10(scaled.max() / scaled.min()) >= 6.0:
            break
    else:  # pragma: no cover - probability ~0 unless every column had the same spread
        raise ParameterError(f"mixed-scales: no scale draw spans six orders of magnitude in {_MAX_SCALE_DRAWS} tries")
    X *= 10.0**e
    dup = rng_cols.choice(X.shape[1], size=2, replace=False)
    const = np.full((n, 1), _log_uniform(rng_cols, -3.0, 3.0, None))
    return _finish(np.hstack([X, X[:, dup], const]), y, 5, "mixed-scales", n)


def make_many_classes(n_samples: int = 10_000, seed: SeedLike = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``many-classes``: 50 balanced, linear-ish classes with off-centre columns, ``(n, 40)``, K=50.

    :func:`sklearn.datasets.make_classification` with ``n_features=40,
    n_informative=30, n_redundant=0, n_classes=50, n_clusters_per_class=1,
    class_sep=2.5`` (``flip_y=0.01``); then 20 of the 40 columns (chosen by the
    seed) get an offset ``10**U(0, 4)`` added, and afterwards every column is
    multiplied by ``10**U(-2, 2)`` (so an offset is 1 to 10^4 times the
    column's own spread, whatever its scale).
    """
    n = _n_samples(n_samples, 50)
    rng_sk, rng_cols = spawn(seed, 2)
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n, n_features=40, n_informative=30, n_redundant=0, n_classes=50, n_clusters_per_class=1,
        class_sep=2.5, flip_y=0.01, random_state=_sk_state(rng_sk),
    )
    shifted = rng_cols.choice(40, size=20, replace=False)
    X[:, shifted] += _log_uniform(rng_cols, 0.0, 4.0, 20)
    X *= _log_uniform(rng_cols, -2.0, 2.0, 40)
    return _finish(X, y, 50, "many-classes", n)


def make_rings(n_samples: int = 5000, seed: SeedLike = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``rings``: concentric (nonlinear) classes among noise columns, ``(n, 10)``, K=3.

    :func:`sklearn.datasets.make_gaussian_quantiles` (``n_features=5,
    n_classes=3``: the classes are shells of a standard Gaussian cut at its
    chi-square quantiles, equal sizes), five standard-normal noise columns
    appended, then every column multiplied by ``10**U(-3, 3)``.
    """
    n = _n_samples(n_samples, 3)
    rng_sk, rng_cols = spawn(seed, 2)
    from sklearn.datasets import make_gaussian_quantiles

    X, y = make_gaussian_quantiles(n_samples=n, n_features=5, n_classes=3, random_state=_sk_state(rng_sk))
    X = np.hstack([X, rng_cols.standard_normal((n, 5))])
    X *= _log_uniform(rng_cols, -3.0, 3.0, 10)
    return _finish(X, y, 3, "rings", n)


def make_moons_offset(n_samples: int = 4000, seed: SeedLike = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``moons``: two interleaving half circles (nonlinear) among noise columns, ``(n, 8)``, K=2.

    :func:`sklearn.datasets.make_moons` (``noise=0.2``), six standard-normal
    noise columns appended; the two moon columns get offsets ``10**U(0, 3)``
    added, then every column is multiplied by ``10**U(-2, 2)``.
    """
    n = _n_samples(n_samples, 2)
    rng_sk, rng_cols = spawn(seed, 2)
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=n, noise=0.2, random_state=_sk_state(rng_sk))
    X = np.hstack([X, rng_cols.standard_normal((n, 6))])
    X[:, :2] += _log_uniform(rng_cols, 0.0, 3.0, 2)
    X *= _log_uniform(rng_cols, -2.0, 2.0, 8)
    return _finish(X, y, 2, "moons", n)


#: ``imbalanced``: the class weights of make_classification
IMBALANCED_WEIGHTS = (0.5, 0.25, 0.12, 0.07, 0.04, 0.02)


def make_imbalanced(n_samples: int = 8000, seed: SeedLike = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``imbalanced``: six very unbalanced linear-ish classes (50 % ... 2 %), ``(n, 30)``, K=6.

    :func:`sklearn.datasets.make_classification` with ``n_features=30,
    n_informative=10, n_redundant=8, n_classes=6, weights=[0.5, 0.25, 0.12,
    0.07, 0.04, 0.02], class_sep=1.2, flip_y=0.01`` (two clusters per class,
    the default), then every column multiplied by ``10**U(-3, 3)``.
    """
    n = _n_samples(n_samples, 6)
    rng_sk, rng_cols = spawn(seed, 2)
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n, n_features=30, n_informative=10, n_redundant=8, n_classes=6, weights=list(IMBALANCED_WEIGHTS),
        class_sep=1.2, flip_y=0.01, random_state=_sk_state(rng_sk),
    )
    X *= _log_uniform(rng_cols, -3.0, 3.0, 30)
    return _finish(X, y, 6, "imbalanced", n)


# ----------------------------------------------------------------------------------------------- generated, sparse


def _zipf(m: int, exponent: float = 1.0) -> np.ndarray:
    """The Zipf distribution ``p_i ∝ 1 / (i + 1) ** exponent`` on ``0..m-1``."""
    p = 1.0 / np.arange(1, m + 1, dtype=np.float64) ** exponent
    return p / p.sum()


def make_text(n_samples: int = 10_000, seed: SeedLike = DEFAULT_SEED):
    """``text``: a synthetic bag-of-words corpus, raw word counts as CSR ``(n, 20000)``, K=20 topics.

    - topic ``y ~ p``, ``p_k ∝ 1 / (k + 1)`` (Zipf priors: 28 % to 1.4 %);
    - topic ``k`` draws words from ``0.5 * phi_k + 0.5 * b``: ``phi_k ~
      Dirichlet(0.02)`` over the 20,000 words (a topic puts 90 % of its mass
      on ~700 words) and ``b`` the shared Zipf background ``b_j ∝ 1 / (j + 1)`` (word 0
      the commonest);
    - a document has ``20 + Poisson(60)`` words (mean 80), drawn i.i.d.;
      ``X[i, j]`` counts word ``j`` in document ``i`` (about 72 distinct words
      per document).

    The multinomial naive-Bayes model of text: the log-likelihood ratio of two
    topics is linear in the counts, so the boundaries are linear-ish.
    """
    K, d = TEXT_CLASSES, TEXT_VOCABULARY
    n = _n_samples(n_samples, K)
    rng_topics, rng_docs = spawn(seed, 2)
    phi = rng_topics.dirichlet(np.full(d, TEXT_DIRICHLET), size=K)
    mix = TEXT_CLASS_SHARE * phi + (1.0 - TEXT_CLASS_SHARE) * _zipf(d)
    y = rng_docs.choice(K, size=n, p=_zipf(K))
    lengths = TEXT_MIN_LENGTH + rng_docs.poisson(TEXT_POISSON_LENGTH, size=n)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    words = np.empty(doc.size, dtype=np.int64)
    token_class = np.repeat(y, lengths)
    for k in range(K):  # one vectorised draw per topic, over all of its documents' tokens
        at = np.flatnonzero(token_class == k)
        if at.size:
            words[at] = rng_docs.choice(d, size=at.size, p=mix[k] / mix[k].sum())
    keys, counts = np.unique(doc * d + words, return_counts=True)  # sorted by (row, column), duplicates summed
    rows = keys // d
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    X = _csr(counts, (keys % d).astype(np.int32), indptr.astype(np.int32), (n, d))
    return _finish(X, y, K, "text", n)


def make_categorical(n_samples: int = 20_000, seed: SeedLike = DEFAULT_SEED):
    """``categorical``: eight one-hot categorical attributes (CSR ``(n, 1488)``, 8 ones a row), K=4, nonlinear.

    - attribute ``a`` has ``c_a`` levels, ``c = (3, 5, 10, 20, 50, 100, 300,
      1000)`` (one-hot blocks in this order: d = 1,488); its level is drawn with
      Zipf probabilities ``∝ 1 / (l + 1) ** 1.75``, so popular levels repeat
      and many rows (about 30 % with the defaults) share their exact context
      with another row, as in categorical logs; rare levels may never occur
      (their columns are all zero);
    - labels: class ``k`` scores ``sum_a S_a[level_a, k] + T[level_0, level_1, k]``
      with main effects ``S_a ~ N(0, 1)`` per (attribute, level, class) and a
      pairwise interaction ``T ~ N(0, 2^2)`` per (level of attribute 0, level
      of attribute 1, class), which no additive (linear in the one-hot
      columns) rule represents; ``y`` is the argmax;
    - then 5 % of the rows (``round(0.05 n)``, without replacement) get a
      uniformly random label (possibly their own).
    """
    cards = np.asarray(CATEGORICAL_CARDINALITIES)
    K, m = CATEGORICAL_CLASSES, cards.size
    n = _n_samples(n_samples, K)
    rng_levels, rng_rule, rng_noise = spawn(seed, 3)
    levels = np.stack([rng_levels.choice(c, size=n, p=_zipf(int(c), CATEGORICAL_ZIPF_EXPONENT)) for c in cards], axis=1)
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]])
    main = rng_rule.standard_normal((int(cards.sum()), K))  # S_a stacked: row offsets[a] + level
    inter = rng_rule.normal(0.0, CATEGORICAL_INTERACTION_SD, (cards[0], cards[1], K))
    cols = levels + offsets  # increasing within a row: the one-hot blocks are in attribute order
    scores = main[cols].sum(axis=1) + inter[levels[:, 0], levels[:, 1]]
    y = scores.argmax(axis=1)
    flip = rng_noise.choice(n, size=int(round(CATEGORICAL_LABEL_NOISE * n)), replace=False)
    y[flip] = rng_noise.integers(0, K, size=flip.size)
    X = _csr(np.ones(n * m), cols.ravel().astype(np.int32), np.arange(0, n * m + 1, m, dtype=np.int32),
             (n, int(cards.sum())))
    return _finish(X, y, K, "categorical", n)


# ----------------------------------------------------------------------------------------------- the suite


@dataclass(frozen=True)
class _Entry:
    builder: Callable
    options: dict
    boundary: str
    source: str


_ENTRIES: dict[str, _Entry] = {
    "wine": _Entry(load_wine_raw, {}, "real", "UCI Wine via sklearn.datasets.load_wine"),
    "breast-cancer": _Entry(load_breast_cancer_raw, {}, "real",
                            "UCI Breast Cancer Wisconsin (Diagnostic) via sklearn.datasets.load_breast_cancer"),
    "mixed-scales": _Entry(make_mixed_scales, {"n_samples": 5000, "seed": DEFAULT_SEED}, "linear-ish",
                           "sklearn make_classification; scales 10^U(-3,3), 2 duplicated + 1 constant column"),
    "many-classes": _Entry(make_many_classes, {"n_samples": 10_000, "seed": DEFAULT_SEED}, "linear-ish",
                           "sklearn make_classification; offsets 10^U(0,4) on 20 columns, scales 10^U(-2,2)"),
    "rings": _Entry(make_rings, {"n_samples": 5000, "seed": DEFAULT_SEED}, "nonlinear",
                    "sklearn make_gaussian_quantiles + 5 noise columns; scales 10^U(-3,3)"),
    "moons": _Entry(make_moons_offset, {"n_samples": 4000, "seed": DEFAULT_SEED}, "nonlinear",
                    "sklearn make_moons + 6 noise columns; offsets 10^U(0,3), scales 10^U(-2,2)"),
    "imbalanced": _Entry(make_imbalanced, {"n_samples": 8000, "seed": DEFAULT_SEED}, "linear-ish",
                         "sklearn make_classification, weights 50%..2%; scales 10^U(-3,3)"),
    "text": _Entry(make_text, {"n_samples": 10_000, "seed": DEFAULT_SEED}, "linear-ish",
                   "generated: Dirichlet(0.02) topics + Zipf background, word counts"),
    "categorical": _Entry(make_categorical, {"n_samples": 20_000, "seed": DEFAULT_SEED}, "nonlinear",
                          "generated: 8 Zipf categorical attributes one-hot, main effects + pairwise interaction"),
}

#: the suite's dataset names, in order
SUITE: tuple[str, ...] = tuple(_ENTRIES)

#: name -> the options ``load_dataset`` accepts for it and their defaults (none for the two real sets)
SUITE_OPTIONS: dict[str, dict[str, object]] = {name: dict(e.options) for name, e in _ENTRIES.items() if e.options}


def build(name: str, **options):
    """Build suite member ``name`` with ``options`` (``n_samples``, ``seed`` for the generated ones): ``(X, y)``."""
    if name not in _ENTRIES:
        raise ParameterError(f"name must be one of {', '.join(map(repr, SUITE))}, got {name!r}")
    entry = _ENTRIES[name]
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        allowed = ", ".join(entry.options) or "none"
        raise ParameterError(f"unknown option(s) {', '.join(unknown)} for dataset {name!r}; its options are: {allowed}")
    return entry.builder(**options)


def suite_info(names: Iterable[str] | None = None) -> list[dict]:
    """One dict per data set (default options), computed from the built data:

    ``name``, ``n``, ``d``, ``K``, ``sparse`` (bool), ``nnz_per_row`` (mean
    number of non-zeros a row), ``min_class_share`` / ``max_class_share``
    (smallest and largest class share), ``log10_scale_ratio`` (log10 of largest
    / smallest per-column standard deviation among non-constant columns, see
    :func:`column_scale_spread`), ``boundary`` (``"linear-ish"``,
    ``"nonlinear"`` or ``"real"``) and ``source``.
    """
    names = SUITE if names is None else tuple(names)
    rows = []
    for name in names:
        X, y = build(name)
        n, d = X.shape
        counts = np.bincount(y)
        sparse = not isinstance(X, np.ndarray)
        nnz = X.nnz if sparse else int(np.count_nonzero(X))
        rows.append({
            "name": name,
            "n": int(n),
            "d": int(d),
            "K": int(counts.size),
            "sparse": sparse,
            "nnz_per_row": nnz / n,
            "min_class_share": float(counts.min() / n),
            "max_class_share": float(counts.max() / n),
            "log10_scale_ratio": column_scale_spread(X),
            "boundary": _ENTRIES[name].boundary,
            "source": _ENTRIES[name].source,
        })
    return rows
