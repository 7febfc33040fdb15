"""SynSep and SynNonSep: the synthetic 9-class, 400-dimensional text-like sets of the Banditron paper.

Kakade, Shalev-Shwartz & Tewari, "Efficient Bandit Algorithms for Online
Multiclass Prediction", ICML 2008, section 5 (used by AM section 4 with 10^5
examples).  The paper's text was not retrievable; the recipe follows
docs/math.md, item 12, reconstructed from two agreeing
re-implementations:

1. rare words are coordinates ``0..n_rare-1`` (120), common words the rest (280);
2. class ``k`` has a prototype: the indicator of a uniformly random subset
   ``R_k`` of the rare words with ``|R_k| ~ Unif{20..40}``;
3. an example of class ``y ~ Unif{0..8}`` is ``v_y`` with 5 coordinates of
   ``R_y`` (uniform, without replacement) set to 0 and 20 common words
   (uniform, without replacement) set to 1; not normalised;
4. separability (our addition, docs/math.md, item 12): prototypes are redrawn until
   ``|R_k \\ R_k'| > 5`` for all ``k != k'``; then the certificate ``W`` with
   ``w_kj = 1`` on ``R_k``, ``-(max_k |R_k| + 1)`` (= -41) on the other rare words
   and 0 on common words classifies every example with a positive margin.

SynNonSep (docs/math.md, item 12, Caoang327 variant, a reconstruction): the same data
where a random 5 % of the examples get a uniformly random *different* label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nolo._validation import check_int, check_probability
from nolo.datasets._checks import check_flag
from nolo.exceptions import ParameterError
from nolo.random import SeedLike, as_generator

__all__ = ["SynSepPrototypes", "draw_synsep_prototypes", "make_synsep", "make_synnonsep", "multiclass_margins"]

_CHUNK = 8192  # examples generated per block (bounds the temporary memory)


@dataclass(frozen=True)
class SynSepPrototypes:
    """The class prototypes of a SynSep draw: ``rare_sets[k]`` is ``R_k`` (sorted indices)."""

    rare_sets: tuple[np.ndarray, ...]
    n_features: int
    n_rare: int
    n_dropped: int
    n_common_on: int

    @property
    def n_classes(self) -> int:
        return len(self.rare_sets)

    def is_separable(self) -> bool:
        """The separability condition of docs/math.md, item 12: ``|R_k \\ R_k'| > n_dropped`` for all ``k != k'``."""
        sets = [set(r.tolist()) for r in self.rare_sets]
        return all(len(a - b) > self.n_dropped for i, a in enumerate(sets) for j, b in enumerate(sets) if i != j)

    def certificate(self) -> np.ndarray:
        """The separating matrix ``W`` (n_classes x n_features) of docs/math.md, item 12.

        ``w_kj = 1`` on ``R_k``, ``-(max_k |R_k| + 1)`` on the other rare words
        (-41 with the default sizes), 0 on the common words.
        """
        penalty = -(max(len(r) for r in self.rare_sets) + 1.0)
        W = np.zeros((self.n_classes, self.n_features))
        W[:, : self.n_rare] = penalty
        for k, r in enumerate(self.rare_sets):
            W[k, r] = 1.0
        return W


def draw_synsep_prototypes(
    seed: SeedLike = None,
    *,
    n_classes: int = 9,
    n_features: int = 400,
    n_rare: int = 120,
    prototype_size: tuple[int, int] = (20, 40),
    n_dropped: int = 5,
    n_common_on: int = 20,
    max_tries: int = 1000,
) -> SynSepPrototypes:
    """Draw SynSep prototypes, redrawing all of them until the separability condition holds."""
    rng = as_generator(seed)
    n_classes = check_int(n_classes, "n_classes", low=2)
    n_features = check_int(n_features, "n_features", low=2)
    n_rare = check_int(n_rare, "n_rare", low=1, high=n_features - 1)
    if isinstance(prototype_size, (str, bytes)) or not hasattr(prototype_size, "__len__") or len(prototype_size) != 2:
        raise ParameterError(f"prototype_size must be a pair (low, high) of ints, the range of |R_k|, got {prototype_size!r}")
    lo, hi = prototype_size
    lo = check_int(lo, "prototype_size[0]", low=1, high=n_rare)
    hi = check_int(hi, "prototype_size[1]", low=lo, high=n_rare)
    n_dropped = check_int(n_dropped, "n_dropped", low=0, high=lo - 1)
    n_common_on = check_int(n_common_on, "n_common_on", low=0, high=n_features - n_rare)
    max_tries = check_int(max_tries, "max_tries", low=1)
    for _ in range(max_tries):
        sizes = rng.integers(lo, hi + 1, size=n_classes)
        sets = tuple(np.sort(rng.choice(n_rare, size=int(m), replace=False)) for m in sizes)
        protos = SynSepPrototypes(sets, n_features, n_rare, n_dropped, n_common_on)
        if protos.is_separable():
            return protos
    raise ParameterError(
        f"could not draw separable SynSep prototypes in max_tries={max_tries} attempts with n_classes={n_classes}, "
        f"n_rare={n_rare}, prototype_size={prototype_size}, n_dropped={n_dropped}; "
        "increase n_rare or max_tries, or lower n_dropped"
    )


def _choose_k_of_m(rng: np.random.Generator, rows: int, m: int, k: int) -> np.ndarray:
    """``rows`` independent uniform k-subsets of ``range(m)`` (without replacement), as a (rows, k) array."""
    if k == 0:
        return np.empty((rows, 0), dtype=np.intp)
    keys = rng.random((rows, m))
    return np.argpartition(keys, k - 1, axis=1)[:, :k]


def _sample(protos: SynSepPrototypes, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, protos.n_classes, size=n).astype(np.int64)
    X = np.zeros((n, protos.n_features))
    n_common = protos.n_features - protos.n_rare
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        block = X[start:stop]
        yb = y[start:stop]
        for k, r in enumerate(protos.rare_sets):
            rows = np.flatnonzero(yb == k)
            if rows.size == 0:
                continue
            block[np.ix_(rows, r)] = 1.0
            drop = r[_choose_k_of_m(rng, rows.size, r.size, protos.n_dropped)]
            block[rows[:, None], drop] = 0.0
        common = protos.n_rare + _choose_k_of_m(rng, stop - start, n_common, protos.n_common_on)
        block[np.arange(stop - start)[:, None], common] = 1.0
    return X, y


_RECIPE = ("n_classes", "n_features", "n_rare", "prototype_size", "n_dropped", "n_common_on", "max_tries")


def _generate(n_samples, seed, recipe):
    n_samples = check_int(n_samples, "n_samples", low=1)
    unknown = sorted(set(recipe) - set(_RECIPE))
    if unknown:
        raise ParameterError(f"unknown SynSep option(s) {', '.join(unknown)}; the recipe's options are {', '.join(_RECIPE)}")
    # three independent streams: prototypes, examples, SynNonSep label noise
    rng_protos, rng_examples, rng_noise = as_generator(seed).spawn(3)
    protos = draw_synsep_prototypes(rng_protos, **recipe)
    X, y = _sample(protos, n_samples, rng_examples)
    return X, y, protos, rng_noise


def make_synsep(
    n_samples: int = 100_000,
    seed: SeedLike = None,
    *,
    return_prototypes: bool = False,
    **recipe,
):
    """Generate SynSep: ``(X float64 (n, 400) binary, y int64 in 0..8)``.

    With ``return_prototypes=True`` returns ``(X, y, prototypes)``;
    ``prototypes.certificate()`` is a separating ``W`` (check it with
    :func:`multiclass_margins`).  ``recipe`` overrides the defaults of
    :func:`draw_synsep_prototypes` (``n_classes=9``, ``n_features=400``,
    ``n_rare=120``, ``prototype_size=(20, 40)``, ``n_dropped=5``,
    ``n_common_on=20``).  Same seed, same data.  Not normalised (the recipe's
    step 3); :func:`nolo.datasets.load_dataset` normalises rows by default.
    """
    return_prototypes = check_flag(return_prototypes, "return_prototypes")
    X, y, protos, _ = _generate(n_samples, seed, recipe)
    return (X, y, protos) if return_prototypes else (X, y)


def make_synnonsep(
    n_samples: int = 100_000,
    seed: SeedLike = None,
    *,
    label_noise: float = 0.05,
    return_clean_labels: bool = False,
    **recipe,
):
    """Generate SynNonSep: SynSep where ``round(label_noise * n)`` random examples get a different label.

    The flipped examples are chosen uniformly without replacement and each gets
    a label drawn uniformly from the other ``n_classes - 1`` labels.  The
    features and clean labels equal those of ``make_synsep(n_samples, seed)``
    for an int seed.  With ``return_clean_labels=True`` returns
    ``(X, y_noisy, y_clean)``.
    """
    label_noise = check_probability(label_noise, "label_noise")
    return_clean_labels = check_flag(return_clean_labels, "return_clean_labels")
    X, y_clean, protos, rng_noise = _generate(n_samples, seed, recipe)
    y = y_clean.copy()
    flip = rng_noise.choice(y.size, size=int(round(label_noise * y.size)), replace=False)
    shift = rng_noise.integers(1, protos.n_classes, size=flip.size)
    y[flip] = (y_clean[flip] + shift) % protos.n_classes
    return (X, y, y_clean) if return_clean_labels else (X, y)


def multiclass_margins(W, X, y) -> np.ndarray:
    """Per-example multiclass margins ``w_y.x - max_{k != y} w_k.x`` (positive = correctly separated)."""
    W = np.asarray(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    scores = X @ W.T
    rows = np.arange(y.size)
    true = scores[rows, y].copy()
    scores[rows, y] = -np.inf
    return true - scores.max(axis=1)
