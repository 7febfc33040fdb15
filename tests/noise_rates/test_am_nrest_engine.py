"""NREst's NumPy MLP engine: the same network, minibatch order and Adam steps as scikit-learn's
MLPClassifier.partial_fit (engine="sklearn"), the float32 input encoding, the cached thread controller."""

from functools import partial

import numpy as np
import pytest

from nolo import ParameterError
from nolo.noise_rates import NREst, encode_inputs
from nolo.noise_rates import nrest as nrest_module
from noise_logs import clustered_log  # tests/noise_rates/noise_logs.py


_log = partial(clustered_log, n=1500, K=4, d=30)  # as test_am_nrest.py, smaller; optionally 80 % zeros


def _pair(X, played, fb, init=None, **kw):
    params = dict(hidden_layer_sizes=(16,), max_iter=4, warm_start=True, random_state=11)
    params.update(kw)
    a = NREst(engine="sklearn", **params).fit(X, played, fb, n_classes=4, init_weights=init)
    b = NREst(engine="numpy", **params).fit(X, played, fb, n_classes=4, init_weights=init)
    return a, b


def _assert_same_fit(a, b):
    # bit-identical on the machine where this was written; a tolerance keeps the test about the algorithm
    # (a wrong minibatch order, gradient or Adam step moves weights by 1e-3 or more) rather than BLAS kernels
    assert len(a.weights_) == len(b.weights_)
    for wa, wb in zip(a.weights_, b.weights_):
        assert wa.dtype == wb.dtype and wa.shape == wb.shape
        np.testing.assert_allclose(wb, wa, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.q_, a.q_, rtol=0, atol=1e-6)
    assert b.rho0_ == pytest.approx(a.rho0_, abs=1e-6) and b.rho1_ == pytest.approx(a.rho1_, abs=1e-6)
    assert b.validation_loss_ == pytest.approx(a.validation_loss_, rel=1e-6)


@pytest.mark.parametrize("kw", [{}, {"hidden_layer_sizes": (8, 6)}, {"dtype": "float64"}, {"rule": "per_class"},
                                {"validation_fraction": 0.0}, {"batch_size": 1000, "max_iter": 3}, {"alpha": 0.5},
                                {"label_encoding": "scalar", "normalize": False}])
def test_numpy_engine_matches_sklearn_cold(kw):
    X, played, fb = _log(0.2, 0.1, sparse="normalize" in kw)
    a, b = _pair(X, played, fb, **kw)
    _assert_same_fit(a, b)
    assert b.classifier_ is None and a.classifier_ is not None


def test_numpy_engine_matches_sklearn_warm_start_and_differs_from_cold():
    # the sklearn engine warm-starts from its own previous fit (the MLPClassifier it keeps, continued through
    # scikit-learn's public warm_start: a fresh Adam from those weights); the numpy engine from the same weights
    # saved (init_weights) takes the same steps
    X, played, fb = _log(0.3, 0.2, sparse=True)
    first = NREst(engine="sklearn", hidden_layer_sizes=(16,), max_iter=5, warm_start=True, random_state=3)
    first.fit(X, played, fb, n_classes=4)
    saved = [w.copy() for w in first.weights_]
    X2, played2, fb2 = _log(0.3, 0.2, seed=1, sparse=True)
    a = first.set_params(max_iter=2, random_state=11).fit(X2, played2, fb2, n_classes=4)  # continues in memory
    b = NREst(engine="numpy", hidden_layer_sizes=(16,), max_iter=2, warm_start=True, random_state=11)
    b.fit(X2, played2, fb2, n_classes=4, init_weights=saved)
    _assert_same_fit(a, b)
    cold = NREst(hidden_layer_sizes=(16,), max_iter=2, random_state=11).fit(X2, played2, fb2)
    assert np.abs(cold.q_ - b.q_).max() > 1e-3  # the warm start is used
    # warm_start=True without init_weights continues from this estimator's own previous fit
    again = NREst(hidden_layer_sizes=(16,), max_iter=2, warm_start=True, random_state=11)
    again.weights_ = saved
    again.fit(X2, played2, fb2)
    np.testing.assert_array_equal(again.q_, b.q_)


def test_sklearn_engine_refuses_saved_weights_and_names_the_numpy_engine():
    X, played, fb = _log(0.3, 0.2)
    numpy_fit = NREst(hidden_layer_sizes=(8,), max_iter=2, warm_start=True, random_state=0).fit(X, played, fb)
    # init_weights given
    with pytest.raises(ParameterError, match=r"engine='sklearn' cannot warm-start from saved weights \(init_weights\)"
                                             r".*engine='numpy'"):
        NREst(engine="sklearn", hidden_layer_sizes=(8,), warm_start=True).fit(X, played, fb,
                                                                            init_weights=numpy_fit.weights_)
    # weights_ without a fitted MLPClassifier: set by hand, or a fit of the numpy engine
    by_hand = NREst(engine="sklearn", hidden_layer_sizes=(8,), warm_start=True)
    by_hand.weights_ = numpy_fit.weights_
    switched = numpy_fit.set_params(engine="sklearn")
    for est in (by_hand, switched):
        with pytest.raises(ParameterError, match=r"engine='sklearn' cannot warm-start from saved weights.*"
                                                 r"engine='numpy'"):
            est.fit(X, played, fb)
    # without warm_start the weights are not used, so nothing is refused; nor is a first (cold) fit
    NREst(engine="sklearn", hidden_layer_sizes=(8,), max_iter=2).fit(X, played, fb, init_weights=numpy_fit.weights_)
    est = NREst(engine="sklearn", hidden_layer_sizes=(8,), max_iter=2, warm_start=True, random_state=0)
    est.fit(X, played, fb).fit(X, played, fb)  # and the second continues the first
    with pytest.raises(ParameterError, match="hidden_layer_sizes"):
        est.set_params(hidden_layer_sizes=(4,)).fit(X, played, fb)


def test_sklearn_engine_sets_no_attribute_of_the_mlp(monkeypatch):
    """engine="sklearn" drives MLPClassifier through its public API only: no nolo code writes an attribute of the
    estimator (scikit-learn's own methods set its fitted state; the code before issue 30 wrote 17 of them to
    warm-start from saved weights, and wrote coefs_/intercepts_ back to keep the best epoch)."""
    import sys

    from sklearn.neural_network import MLPClassifier

    written = []
    setattr_ = MLPClassifier.__setattr__

    def spy(self, name, value):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("nolo"):
            written.append((caller, name))
        setattr_(self, name, value)

    monkeypatch.setattr(MLPClassifier, "__setattr__", spy)
    X, played, fb = _log(0.2, 0.1)
    est = NREst(engine="sklearn", hidden_layer_sizes=(8,), max_iter=4, warm_start=True, random_state=2)
    est.fit(X, played, fb, n_classes=4)
    est.set_params(max_iter=3).fit(X, played, fb, n_classes=4)  # a warm start from the fitted classifier
    NREst(engine="sklearn", hidden_layer_sizes=(8,), max_iter=3, rule="anchors", random_state=2).fit(X, played, fb)
    assert isinstance(est.classifier_, MLPClassifier)
    assert written == []


def test_numpy_engine_reproducible_and_seed_sensitive():
    X, played, fb = _log(0.2, 0.2)
    f = lambda seed: NREst(hidden_layer_sizes=(16,), max_iter=3, random_state=seed).fit(X, played, fb)  # noqa: E731
    np.testing.assert_array_equal(f(5).q_, f(5).q_)
    assert np.abs(f(5).q_ - f(6).q_).max() > 1e-3
    est = NREst(hidden_layer_sizes=(16,), max_iter=3, random_state=None).fit(X, played, fb)  # unseeded: runs
    assert 0.0 <= est.rho0_ <= 1.0 and 0.0 <= est.rho1_ <= 1.0


def test_numpy_engine_estimates_close_to_truth():
    """The accuracy bar of tests/noise_rates/test_am_nrest.py (n=6000, 20 epochs, |error| < 0.06) with the default engine."""
    X, played, fb = _log(0.2, 0.1, n=6000, d=10)
    est = NREst(hidden_layer_sizes=(32,), max_iter=20, random_state=0).fit(X, played, fb, n_classes=4)
    assert est.engine == "numpy"
    assert abs(est.rho0_ - 0.2) < 0.06 and abs(est.rho1_ - 0.1) < 0.06, (est.rho0_, est.rho1_)


@pytest.mark.parametrize("label_encoding", ["onehot", "scalar"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_encode_inputs_equals_the_plain_formula(label_encoding, dtype):
    X, played, _ = _log(0.1, 0.1, n=700, d=50, sparse=True)  # 700 rows: several blocks of _ENCODE_ROWS
    X[5] *= 1e-150  # tiny and large rows
    X[6] *= 1e150
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    lab = np.eye(4)[played] if label_encoding == "onehot" else played[:, None].astype(float)
    want = np.hstack([X / np.where(norms > 0, norms, 1.0), lab]).astype(dtype)
    got = encode_inputs(X, played, 4, label_encoding, normalize=True, dtype=dtype)
    assert got.dtype == dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:3, :50], 0.0)
    Xm, lm, pm = X[7:], lab[7:], played[7:]  # without the extreme rows
    np.testing.assert_array_equal(encode_inputs(Xm, pm, 4, label_encoding, normalize=False, dtype=dtype),
                                  np.hstack([Xm, lm]).astype(dtype))
    Xi = (Xm * 10).astype(int)  # integer input: encoded as its float64 values
    np.testing.assert_array_equal(encode_inputs(Xi, pm, 4, label_encoding, dtype=dtype),
                                  encode_inputs(Xi.astype(float), pm, 4, label_encoding, dtype=dtype))


def test_thread_controller_is_built_once_and_n_threads_none_works():
    X, played, fb = _log(0.2, 0.1, n=300)
    NREst(hidden_layer_sizes=(4,), max_iter=1, random_state=0).fit(X, played, fb)
    c = nrest_module.thread_controller()
    assert nrest_module.thread_controller() is c
    a = NREst(hidden_layer_sizes=(4,), max_iter=2, random_state=0, n_threads=None).fit(X, played, fb)
    b = NREst(hidden_layer_sizes=(4,), max_iter=2, random_state=0, n_threads=1).fit(X, played, fb)
    np.testing.assert_allclose(a.q_, b.q_, atol=1e-6)


def test_engine_parameters_validated():
    X, played, fb = _log(0.2, 0.1, n=100)
    with pytest.raises(ParameterError, match="engine"):
        NREst(engine="torch").fit(X, played, fb)
    with pytest.raises(ParameterError, match="random_state"):
        NREst(random_state=-1).fit(X, played, fb)
    with pytest.raises(ParameterError, match="init_weights"):
        NREst(hidden_layer_sizes=(8,), warm_start=True).fit(X, played, fb, n_classes=4,
                                                             init_weights=[np.zeros((5, 8)), np.zeros((8, 1)),
                                                                           np.zeros(8), np.zeros(1)])


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_rejected_and_huge_finite_X_accepted(normalize, bad):
    """X's finiteness is checked through the row norms of the encoding (a full scan only when one is not finite)."""
    X, played, fb = _log(0.2, 0.1, n=200)
    Xb = X.copy()
    Xb[150, 3] = bad  # in a later block of rows
    with pytest.raises(ParameterError, match="X must contain only finite values"):
        NREst(hidden_layer_sizes=(4,), max_iter=1, normalize=normalize).fit(Xb, played, fb)
    Xh = X.copy()
    Xh[150] *= 1e300  # finite, but its squared norm overflows: accepted as before (the row encodes as zeros)
    with np.errstate(over="ignore"):  # the squared norm overflows (np.linalg.norm warned alike)
        est = NREst(hidden_layer_sizes=(4,), max_iter=1, random_state=0).fit(Xh, played, fb)
    assert np.isfinite(est.q_).all()


def test_encode_inputs_rejects_labels_out_of_range():
    with pytest.raises(ParameterError, match="played labels"):
        encode_inputs(np.ones((3, 2)), [0, 1, 4], 4)
    with pytest.raises(ParameterError, match="played labels"):
        encode_inputs(np.ones((3, 2)), [0, -1, 2], 4)


def test_validation_loss_of_saturated_float32_outputs_is_finite():
    """A float32 network can output exactly 0 or 1; the validation cross-entropy clips in float64 (1 - 1e-12 is 1
    in float32) and stays finite, without a divide-by-zero warning."""
    import warnings

    from nolo.noise_rates import NREst

    p = np.array([1.0, 0.0, 0.5], dtype=np.float32)
    f = np.array([0.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = NREst._validation_loss(p, f)
    assert loss == pytest.approx((2 * -np.log(1e-12) + np.log(2)) / 3, rel=1e-6)  # two mistakes at the clip, one 1/2


@pytest.mark.parametrize("engine", ["numpy", "sklearn"])
def test_patience_stops_early_and_keeps_the_same_best_epoch(engine):
    """n_iter_no_change stops once the validation loss has not improved for that many epochs; the kept network
    is the one a run of exactly that many epochs keeps, and without patience all max_iter epochs run."""
    X, played, fb = _log(0.2, 0.2, n=1200, seed=3)
    kw = dict(hidden_layer_sizes=(16,), learning_rate_init=0.05, engine=engine, random_state=5)
    early = NREst(max_iter=80, n_iter_no_change=3, **kw).fit(X, played, fb, n_classes=4)
    assert early.n_epochs_ < 80
    same = NREst(max_iter=early.n_epochs_, **kw).fit(X, played, fb, n_classes=4)
    assert same.n_epochs_ == early.n_epochs_
    for a, b in zip(early.weights_, same.weights_):
        np.testing.assert_array_equal(a, b)
    assert (early.rho0_, early.rho1_) == (same.rho0_, same.rho1_)
    with pytest.raises(ParameterError, match="n_iter_no_change"):
        NREst(n_iter_no_change=0).fit(X, played, fb, n_classes=4)
