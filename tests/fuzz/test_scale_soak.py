"""Scale soak: every registered bandit learner on unit-norm digits under feature transforms it may not be built for
(x1e-6, x1e6, column scales 10^U(-4, 4), a constant column, duplicated columns) must either learn -- end within
MARGIN of its error on the untransformed stream -- or say why not with a :class:`nolo.exceptions.ScaleWarning`.
Every value stays finite either way.  BiasCompensatedRLS gets the same check on a regression stream.

The margin is wider than the transforms' real cost: on 3000 rounds a learner's error moves by a few hundredths with
the seed and with a harmless extra column (FastCB measured +0.053 with a constant column, still learning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nolo.checks import registered_learners
from nolo.datasets import load_dataset, normalize_rows
from nolo.datasets.builtin import load_digits_arrays
from nolo.exceptions import ScaleWarning
from nolo.learners.bandit import run_stream
from nolo.learners.linear.bias_compensated_rls import BiasCompensatedRLS

MARGIN = 0.08
ROUNDS = 3000
BANDIT = [c for c in registered_learners() if c.protocol == "bandit"]


def _digits():
    X, y = load_digits_arrays()
    return normalize_rows(X), y


X0, Y0 = _digits()
_G = np.random.default_rng(0)
TRANSFORMS = {
    "x1e-6": X0 * 1e-6,
    "x1e6": X0 * 1e6,
    "mixed": X0 * 10.0 ** _G.uniform(-4, 4, X0.shape[1]),
    "constant": np.hstack([X0, np.ones((X0.shape[0], 1))]),
    "duplicated": np.hstack([X0, X0[:, :16]]),
}


def _play(cls, X, y=Y0, rounds=ROUNDS):
    m = cls(n_classes=int(y.max()) + 1, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run_stream(m, X, y, rounds, seed=1)
    scale = [w for w in caught if issubclass(w.category, ScaleWarning)]
    assert all(np.all(np.isfinite(v)) for k, v in vars(m).items() if k.endswith("_") and isinstance(v, np.ndarray)
               and v.dtype.kind == "f"), f"{cls.__name__}: a non-finite state"
    return res.error_rate[-1], scale


_BASE: dict[str, float] = {}


def _base(cls) -> float:
    if cls.__name__ not in _BASE:
        err, scale = _play(cls, X0)
        assert not scale, f"{cls.__name__} warned on unit-norm digits: {scale[0].message}"
        _BASE[cls.__name__] = err
    return _BASE[cls.__name__]


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("cls", BANDIT, ids=lambda c: c.__name__)
def test_learns_or_warns(cls, transform):
    base = _base(cls)
    err, scale = _play(cls, TRANSFORMS[transform])
    assert np.isfinite(err)
    assert err <= base + MARGIN or scale, (f"{cls.__name__} under {transform}: error {err:.3f} against {base:.3f} "
                                           "unscaled, and no ScaleWarning")
    assert len(scale) <= 1  # once per learner


_STREAMS = {name: load_dataset(name) for name in ("synsep",)}


@pytest.mark.parametrize("cls", BANDIT, ids=lambda c: c.__name__)
def test_no_warning_on_the_project_streams(cls):
    # the AM data sets and the sparse text set, rows at unit norm (load_dataset's default)
    for name, (X, y) in _STREAMS.items():
        _, scale = _play(cls, X[:2000], y[:2000], rounds=300)
        assert not scale, f"{cls.__name__} warned on {name}: {scale[0].message}"


def test_round_by_round_and_learn_many_warn_once_at_the_callers_line():
    from nolo.learners.bandit import FastCB

    X = X0[:200] * 1e-6
    m = FastCB(n_classes=10, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x, y in zip(X, Y0):
            a = m.act(x)
            m.learn(x, a, int(a == y))
        m.predict(X)
    scale = [w for w in caught if issubclass(w.category, ScaleWarning)]
    assert len(scale) == 1 and scale[0].filename == __file__
    assert "FastCB" in str(scale[0].message) and "lam = 1" in str(scale[0].message)
    m2 = FastCB(n_classes=10, seed=0)
    with pytest.warns(ScaleWarning, match="far below") as rec:
        m2.learn_many(X, np.zeros(len(X), dtype=np.int64), (Y0[:200] == 0).astype(np.int64))
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScaleWarning)
        m2.learn_many(X, np.zeros(len(X), dtype=np.int64), np.zeros(len(X), dtype=np.int64))  # once per learner


def test_scale_free_learners_do_not_warn_on_a_global_scale():
    from nolo.learners.bandit import BPA, Perceptron

    for cls in (BPA, Perceptron):
        m = cls(n_classes=10)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ScaleWarning)
            for x, y in zip(X0[:100] * 1e-6, Y0):
                m.learn(x, a, int(a == y)) if cls is BPA and (a := m.act(x)) is not None else m.learn(x, int(y))


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_bias_compensated_rls_learns_or_warns(scale):
    g = np.random.default_rng(0)
    T, d = 1500, 5
    w = g.normal(size=d)
    X = g.normal(size=(T, d))
    y = X @ w + 0.1 * g.normal(size=T)
    R = (X[:, None, :] + 0.3 * g.normal(size=(T, 3, d))) * scale
    Xt = g.normal(size=(500, d))
    m = BiasCompensatedRLS()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.learn_stream(R, y)
    scale_w = [c for c in caught if issubclass(c.category, ScaleWarning)]
    rmse = float(np.sqrt(np.mean(((Xt * scale) @ m.coef_ + m.intercept_ - Xt @ w) ** 2)))
    assert np.isfinite(rmse) and np.all(np.isfinite(m.coef_))
    assert rmse < 0.1 or scale_w, f"scale {scale}: RMSE {rmse:.3f} and no ScaleWarning"
    assert not (scale == 1.0 and scale_w)
