"""Model files whose state breaks an invariant the compiled loops trust (issue 14 item 1): counts past a buffer's
capacity, buckets of the wrong shape, scales and rates out of range, round counters at the edge of int64.  Each is
refused by ``Learner.load`` with PersistenceError (only ``load`` runs here, so a regression fails the test without
reaching the out-of-bounds read; tests/fuzz/test_hostile_files.py runs the broader corpus in a subprocess)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fuzz_harness as H
import poisoned_states
from poisoned_states import array_edits
from nolo.checks import _Game, registered_learners
from nolo.exceptions import PersistenceError
from nolo.learners.base import Learner
from nolo.persistence import read_npz, write_npz_atomic

BY_NAME = {c.__name__: c for c in registered_learners()}


def _saved(cls, tmp_path):
    learner = H.played_learner(cls)[0]
    return read_npz(learner.save(tmp_path / "model.npz"))


def _write(tmp_path, header, arrays):
    return write_npz_atomic(tmp_path / "tampered.npz", header, arrays)


def _set_value(key, value):
    def edit(h, a):
        h["state"][key] = {"value": value}
    return edit


def _set_entry(key, index, value, i=None):
    """Entry ``index`` of the state array ``key`` (of list element ``i`` for a list of arrays) set to ``value``."""
    def edit(h, a):
        entry = h["state"][key]
        name = entry["arrays"][i] if i is not None else entry["array"]
        arr = a[name].copy()
        arr[index] = value
        a[name] = arr
    return edit


def _replace(key, fn, i=None):
    def edit(h, a):
        entry = h["state"][key]
        name = entry["arrays"][i] if i is not None else entry["array"]
        a[name] = fn(a[name])
    return edit


def _drop_list_item(key):
    def edit(h, a):
        h["state"][key]["arrays"] = h["state"][key]["arrays"][:-1]
    return edit


CASES = [
    # CSS10 Algorithm 1: bucket_dot reads copies_[n][:count_[n]] unchecked (a file with a large count segfaulted)
    ("NoisyKernelLearner", "count_[1] past the capacity of copies_[1]", _set_entry("count_", 1, 5)),
    ("NoisyKernelLearner", "count_[0] = 2**40", _set_entry("count_", 0, 2**40)),
    ("NoisyKernelLearner", "count_[1] < 0", _set_entry("count_", 1, -1)),
    ("NoisyKernelLearner", "coef_ shorter than copies_", _drop_list_item("coef_")),
    ("NoisyKernelLearner", "copies_ shorter than count_", _drop_list_item("copies_")),
    ("NoisyKernelLearner", "copies_[1] of capacity 0", _replace("copies_", lambda c: c[:0], i=1)),
    ("NoisyKernelLearner", "coef_[1] shorter than its bucket", _replace("coef_", lambda c: c[:-1], i=1)),
    ("NoisyKernelLearner", "copies_[1] of degree 2", _replace("copies_", lambda c: np.concatenate([c, c], axis=1), i=1)),
    ("NoisyKernelLearner", "log_scale_ > 0", _set_value("log_scale_", 1.0)),
    ("NoisyKernelLearner", "sqnorm_ < 0", _set_value("sqnorm_", -1.0)),
    # kernel OGD: size_ and the global scale
    ("CleanKernelOGD", "size_ past the buffer", _set_value("size_", 17)),
    ("CleanKernelOGD", "log_scale_ = 1e300", _set_value("log_scale_", 1e300)),
    ("CleanKernelOGD", "log_scale_ = -1e300", _set_value("log_scale_", -1e300)),
    ("CleanKernelOGD", "log_scale_ = 0.5", _set_value("log_scale_", 0.5)),
    ("NaiveKernelOGD", "log_scale_ = -201", _set_value("log_scale_", -201.0)),
    ("NaiveKernelOGD", "sqnorm_ < 0", _set_value("sqnorm_", -1e-3)),
    ("NaiveKernelOGD", "an empty buffer", lambda h, a: [_replace(k, lambda c: c[:0])(h, a) for k in ("points_", "coef_")]),
    # round counters at the edge of int64 (t_ + 1 overflowed the compiled loops' int64)
    ("OnlineLasso", "t_ = 2**63 - 1", _set_value("t_", 2**63 - 1)),
    ("NaiveOGDRegression", "t_ = 2**53", _set_value("t_", 2**53)),
    # RCINE: the refit block and the reservoir
    ("RCINE", "block_count_ = refit_every",
     lambda h, a: _set_value("block_count_", h["config"]["params"]["refit_every"])(h, a)),
    ("RCINE", "a reservoir label = K", _set_entry("res_played_", 0, 3)),
    ("RCINE", "a reservoir bit = 2", _set_entry("res_feedback_", 0, 2)),
    ("RCINE", "rho0_hat_ > rho_max", _set_value("rho0_hat_", 0.6)),
    # SOBA: the diagonal divides, the budget is >= 0
    ("SOBA", "a_ = 0 somewhere", _set_entry("a_", (0, 0), 0.0)),
    ("SOBAh", "budget_ < 0", _set_entry("budget_", 0, -1.0)),
    # TraceNormOGD: the projection schedule sets the segment length (pending_ >= k looped forever)
    ("TraceNormOGD", "pending_ = 2**31", _set_value("pending_", 2**31)),
    ("TraceNormOGD", "rank_ past min(M, N)", _set_value("rank_", 1000)),
    # the OCO notes' learners: the regret bound's step statistics
    ("OnlineLinearSVM", "eta_last_ < 0", _set_value("eta_last_", -1.0)),
    ("OnlineRidgeRegression", "stats_[1] < 0", _set_entry("stats_", 1, -1.0)),
    ("MaxEntryOGD", "stats_[2] < 0", _set_entry("stats_", 2, -1.0)),
    # SquareCB: the rate block's count sets the stream's segment length
    ("SquareCB", "est_[2] = 1e9", _set_entry("est_", 2, 1e9)),
    ("SquareCB", "est_[2] = 0.5", _set_entry("est_", 2, 0.5)),
    ("SquareCB", "est_[0] = 1.5", _set_entry("est_", 0, 1.5)),
    ("SquareCB", "a negative histogram count", _set_entry("hist_", 3, -1.0)),
]


@pytest.mark.parametrize("name,case,edit", CASES, ids=[f"{n}: {c}" for n, c, _ in CASES])
def test_load_refuses_broken_invariant(name, case, edit, tmp_path):
    header, arrays = _saved(BY_NAME[name], tmp_path)
    header = json.loads(json.dumps(header))
    arrays = dict(arrays)
    edit(header, arrays)
    path = _write(tmp_path, header, arrays)
    with pytest.raises(PersistenceError):
        Learner.load(path)


def _poison(key, desc, i=None):
    """The state array ``key`` (list element ``i``) replaced by its edit ``desc`` of tests/fuzz/poisoned_states.py."""
    return _replace(key, lambda a: dict(array_edits(a))[desc], i=i)


#: finite states a learner cannot learn from, one or a few per family tests/fuzz/poisoned_states.py finds: each loaded
#: without error before its class checked it; then every later update failed (NumericalError for ever, a bare
#: ZeroDivisionError), the scores were inf/NaN, or the learner went on from a covariance that is not one (an indefinite
#: inverse, a negative noise correction).  (class, the array the refusal must name, case, edit)
POISONED = [
    # a Cholesky factor whose Gram matrix underflows: the rank-one update divided by zero on the next item
    ("BiasCompensatedRLS", "chol_", "chol_ scaled by 1e-300", _poison("chol_", "scaled by 1e-300")),
    ("BiasCompensatedRLS", "chol_", "chol_ entry 1e200 (its Gram overflows)", _poison("chol_", "entry 0 = 1e+200")),
    ("BiasCompensatedRLS", "correction_", "correction_ scaled by 1e300", _poison("correction_", "scaled by 1e300")),
    ("BiasCompensatedRLS", "correction_", "correction_ negative definite", _poison("correction_", "negated")),
    ("BiasCompensatedRLS", "power_", "power_ off the unit sphere", _poison("power_", "entry 0 = 1e+300")),
    # KernelLabelTS: evidence that overflows the kernel sums (inf/NaN scores), norms out of step with the contexts
    ("KernelLabelTS", "history_evidence_", "evidence near the largest float",
     _poison("history_evidence_", "scaled to the largest float")),
    ("KernelLabelTS", "history_sqnorm_", "a context of 1e200", _poison("history_", "entry 0 = 1e+200")),
    ("KernelLabelTS", "history_sqnorm_", "norms scaled by 1e300", _poison("history_sqnorm_", "scaled by 1e300")),
    # SOBA: the update divides by products and sums of two diagonal entries
    ("SOBA", "a_", "a_ scaled by 1e-300", _poison("a_", "scaled by 1e-300")),
    ("SOBA", "a_", "a_ near the largest float", _poison("a_", "scaled to the largest float")),
    ("SOBAh", "W_", "W_ entry 1e200", _poison("W_", "entry 0 = 1e+200")),
    # ridge inverses (lam I + sum z z^T)^-1 that are not positive definite, or overflow
    ("LinUCB", "P_", "P_ indefinite with a positive diagonal", _poison("P_", "indefinite with a positive diagonal")),
    ("SquareCB", "P_", "P_ entry 1e200", _poison("P_", "entry 0 = 1e+200")),
    ("AutoCB", "P_", "P_ indefinite with a positive diagonal", _poison("P_", "indefinite with a positive diagonal")),
    ("AutoCB", "kernel_P_", "kernel_P_ indefinite", _poison("kernel_P_", "indefinite with a positive diagonal")),
    ("AutoCB", "W_", "W_ scaled by 1e300", _poison("W_", "scaled by 1e300")),
    ("AutoCB", "kernel_W_", "kernel_W_ entry 1e200", _poison("kernel_W_", "entry 0 = 1e+200")),
    ("AutoCB", "kernel_proj_", "kernel_proj_ entry 1e200", _poison("kernel_proj_", "entry 0 = 1e+200")),
    ("AutoCB", "norm_coef_", "norm_coef_ scaled by 1e300", _poison("norm_coef_", "scaled by 1e300")),
    ("AutoCB", "norm_stats_", "a running mean of 1e200", _poison("norm_stats_", "entry 0 = 1e+200")),
    # the FD-SON sketch: its inverse, its Gram matrix and the sketch itself
    ("FastCB", "sketch_inv_", "sketch_inv_ indefinite", _poison("sketch_inv_", "indefinite with a positive diagonal")),
    ("FastCB", "sketch_gram_", "sketch_gram_ scaled by 1e-300", _poison("sketch_gram_", "scaled by 1e-300")),
    ("FastCB", "sketch_", "sketch_ entry 1e200", _poison("sketch_", "entry 0 = 1e+200")),
    # linear and matrix OGD: an iterate whose squared norm overflows
    ("NaiveOGDRegression", "w_", "w_ entry 1e200", _poison("w_", "entry 0 = 1e+200")),
    ("TwoCopyLinearRegression", "w_", "w_ scaled by 1e300", _poison("w_", "scaled by 1e300")),
    ("ProjectedOGD", "w_", "w_ near the largest float", _poison("w_", "scaled to the largest float")),
    ("ProjectedOGD", "average_", "average_ near the largest float", _poison("average_", "scaled to the largest float")),
    ("OnlineRidgeRegression", "w_", "w_ entry 1e300", _poison("w_", "entry 0 = 1e+300")),
    ("MaxEntryOGD", "W_", "W_ scaled by 1e300", _poison("W_", "scaled by 1e300")),
    ("TraceNormOGD", "W_", "W_ entry 1e200", _poison("W_", "entry 0 = 1e+200")),
    # kernel expansions whose coefficients or points do not match the tracked norm
    ("CleanKernelOGD", "coef_", "a coefficient of 1e200", _poison("coef_", "entry 0 = 1e+200")),
    ("NaiveKernelOGD", "points_", "a point of 1e200 (the kernel overflows)", _poison("points_", "entry 0 = 1e+200")),
    ("KernelOGDRegression", "alpha_", "a coefficient of 1e200", _poison("alpha_", "entry 0 = 1e+200")),
    ("GaussianNoiseKernelRegression", "alpha_", "alpha_ scaled by 1e300", _poison("alpha_", "scaled by 1e300")),
    ("NoisyKernelLearner", "coef_", "a coefficient of 1e200", _poison("coef_", "entry 0 = 1e+200", i=0)),
    ("NoisyKernelLearner", "shift_", "a bucket shift of 1e200", _poison("shift_", "entry 0 = 1e+200")),
    ("PooledNoisyKernelLearner", "copies_", "copies scaled by 1e300", _poison("copies_", "scaled by 1e300", i=1)),
]


@pytest.mark.parametrize("name,key,case,edit", POISONED, ids=[f"{n}: {c}" for n, _, c, _ in POISONED])
def test_load_refuses_a_state_it_cannot_learn_from(name, key, case, edit, tmp_path):
    """A refusal at load, naming the array and the class, instead of a learner that fails at every later update."""
    header, arrays = _saved(BY_NAME[name], tmp_path)
    header = json.loads(json.dumps(header))
    arrays = dict(arrays)
    edit(header, arrays)
    with pytest.raises(PersistenceError) as err:
        Learner.load(_write(tmp_path, header, arrays))
    assert poisoned_states.names_entry(str(err.value), key, name), str(err.value)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_untampered_file_still_loads(name, tmp_path):
    """The invariants hold for a learner in normal use (the checks refuse nothing a learner can be in)."""
    header, arrays = _saved(BY_NAME[name], tmp_path)
    loaded = Learner.load(_write(tmp_path, header, arrays))
    assert loaded.t_ == 5


def test_noisy_kernel_learner_grown_buckets_load(tmp_path):
    """After enough rounds for buckets to double and new degrees to appear, the file still loads and resumes."""
    cls = BY_NAME["NoisyKernelLearner"]
    learner = cls(**H.test_params(cls)[0])
    game = _Game(learner, n_rounds=60)
    game.play(learner, 0, 60)
    assert max(c.shape[0] for c in learner.copies_) > 4  # a bucket really grew
    loaded = Learner.load(learner.save(tmp_path / "m.npz"))
    assert [int(c) for c in loaded.count_] == [int(c) for c in learner.count_]


# -- state sizes: arrays whose shapes disagree with each other or with the parameters -----------------------------
def _saved_with(cls, index, tmp_path, rounds=5):
    """(header, arrays) of a learner of ``cls`` with its test parameters number ``index``, played ``rounds``."""
    from nolo.checks import _build, test_params

    learner = _build(cls, test_params(cls)[index])
    _Game(learner, n_rounds=max(rounds, 30)).play(learner, 0, rounds)
    return read_npz(learner.save(tmp_path / "model.npz"))


def _resize(shapes, fill=1.0):
    """Each named state array replaced by ``fill`` in the given shape (C-ordered, or Fortran as the original)."""
    def edit(h, a):
        for key, shape in shapes.items():
            name = h["state"][key]["array"]
            new = np.full(shape, fill, dtype=a[name].dtype)
            a[name] = np.asfortranarray(new) if a[name].flags.f_contiguous and not a[name].flags.c_contiguous else new
    return edit


def _grown(key, axis):
    """The state array ``key`` one longer on ``axis`` (zeros appended, its memory layout kept)."""
    def fn(a):
        shape = list(a.shape)
        shape[axis] += 1
        new = np.zeros(shape, dtype=a.dtype, order="F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C")
        new[tuple(slice(0, n) for n in a.shape)] = a
        return new
    return _replace(key, fn)


def _stack_support(h, a):
    """The support and its coefficients repeated twice: more points than readings seen."""
    for key in ("support_", "alpha_"):
        name = h["state"][key]["array"]
        a[name] = np.ascontiguousarray(np.concatenate([a[name], a[name]]))


#: (class, test-parameter set, the array the refusal must name, case, edit).  Each file loaded without error before
#: the check: AutoCB's sparse regime (its 4th test set: no normaliser, no kernel) took non-empty normaliser and kernel
#: arrays (an axis of length 0 in a fresh instance could grow), and the kernel learners took more support points than
#: rounds seen.
SIZES = [
    ("AutoCB", 3, "kernel_buf_", "kernel_buf_ with a column while the kernel is off", _resize({"kernel_buf_": (0, 1)})),
    ("AutoCB", 3, "kernel_coef_", "kernel_coef_ with a column while the kernel is off",
     _resize({"kernel_coef_": (2, 1)})),
    ("AutoCB", 3, "kernel_land_", "kernel_land_ with a column while the kernel is off",
     _resize({"kernel_land_": (0, 1)})),
    ("AutoCB", 3, "norm_stats_", "a normaliser while the regime has none",
     _resize({"norm_stats_": (3, 4), "norm_coef_": (4, 4)}, fill=0.0)),
    ("AutoCB", 3, "kernel_buf_", "a landmark in every kernel array (and a rate row) while the kernel is off",
     _resize({"kernel_buf_": (1, 0), "kernel_land_": (1, 0), "kernel_lnorm_": (1,), "kernel_proj_": (1, 0),
              "rate_estimates_": (1, 3)})),
    ("KernelOGDRegression", 0, "support_", "twice the support points of the readings seen", _stack_support),
    ("GaussianNoiseKernelRegression", 0, "support_", "twice the support points of the readings seen", _stack_support),
    ("CleanKernelOGD", 0, "size_", "size_ = t_ + 1 (a point per round at most)",
     lambda h, a: _set_value("size_", h["state"]["t_"]["value"] + 1)(h, a)),
    ("NaiveKernelOGD", 0, "size_", "size_ = t_ + 1 (a point per round at most)",
     lambda h, a: _set_value("size_", h["state"]["t_"]["value"] + 1)(h, a)),
    ("KernelOGDRegression", 0, "support_", "support_ with a feature fewer than n_features_in_",
     _replace("support_", lambda s: np.ascontiguousarray(s[:, :-1]))),
    # a class declaring its growing axes: every other axis keeps the shape the parameters give it
    ("SquareCB", 0, "hist_", "hist_ a bin longer (shape)", _grown("hist_", 0)),
    ("SquareCB", 0, "rate_estimates_", "rate_estimates_ with a column more", _grown("rate_estimates_", 1)),
    ("LinUCB", 0, "P_", "P_ with a row more (shape)", _grown("P_", 1)),
    ("FastCB", 0, "W_", "W_ with a class more (shape)", _grown("W_", 0)),
    ("RCINE", 0, "res_X_", "res_X_ with a reservoir row more (shape)", _grown("res_X_", 0)),
    ("RCINE", 0, "estimates_", "estimates_ with a column more", _grown("estimates_", 1)),
    ("BiasCompensatedRLS", 5, "fold_gram_", "fold_gram_ with a fold while cv_folds is None (shape)",
     _grown("fold_gram_", 0)),
    ("BiasCompensatedRLS", 0, "theta_", "theta_ a coefficient longer (shape)", _grown("theta_", 0)),
]


@pytest.mark.parametrize("name,index,key,case,edit", SIZES, ids=[f"{n}: {c}" for n, _, _, c, _ in SIZES])
def test_load_refuses_inconsistent_sizes(name, index, key, case, edit, tmp_path):
    """Refused at load, naming the array (and, for a shape, the shape this configuration has)."""
    header, arrays = _saved_with(BY_NAME[name], index, tmp_path)
    header = json.loads(json.dumps(header))
    arrays = dict(arrays)
    edit(header, arrays)
    with pytest.raises(PersistenceError) as err:
        Learner.load(_write(tmp_path, header, arrays))
    msg = str(err.value)
    assert poisoned_states.names_entry(msg, key, name), msg
    if "shape" in case or "column" in case:
        assert "must have shape" in msg, msg


def test_autocb_sparse_regime_with_rate_estimates_loads(tmp_path):
    """The one AutoCB array that grows (a row per rate block) grows in every regime: a sparse-regime learner that
    estimated its rates saves and loads (its empty kernel arrays once counted as growing with it)."""
    from nolo.checks import test_params

    params = dict(test_params(BY_NAME["AutoCB"])[3], estimate_rates=True, rate_first=10, rate_every=12)
    learner = BY_NAME["AutoCB"](**params)
    _Game(learner, n_rounds=40).play(learner, 0, 40)
    assert learner.rate_estimates_.shape[0] >= 2 and learner.kernel_buf_.shape == (0, 0)
    loaded = Learner.load(learner.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.rate_estimates_, learner.rate_estimates_)


@pytest.mark.parametrize("param,value", [("memory_size", 2**40), ("n_classes", 10**9), ("n_landmarks", 10**6)])
def test_autocb_refuses_a_state_larger_than_memory(param, value, tmp_path):
    """AutoCB sizes its state before allocating: a ParameterError naming the parameter (a bare MemoryError before),
    and a model file asking for that size is a PersistenceError naming it."""
    from nolo.exceptions import ParameterError

    cls = BY_NAME["AutoCB"]
    extra = {"n_components": 10**5} if param == "n_landmarks" else {}
    with pytest.raises(ParameterError, match=param):
        cls(**{param: value}, **extra).initialize(4)
    header, arrays = _saved(cls, tmp_path)
    header = json.loads(json.dumps(header))
    header["config"]["params"].update({param: value}, **extra)
    with pytest.raises(PersistenceError, match=param):
        Learner.load(_write(tmp_path, header, dict(arrays)))


def test_kernel_label_ts_sizes_its_weights_too(tmp_path):
    """KernelLabelTS counts its n_classes x d weights with the history: a ParameterError naming n_classes (a bare
    MemoryError before), and a model file asking for that many classes a PersistenceError naming it."""
    from nolo.exceptions import ParameterError

    cls = BY_NAME["KernelLabelTS"]
    with pytest.raises(ParameterError, match="n_classes"):
        cls(n_classes=10**10).initialize(4)
    header, arrays = _saved(cls, tmp_path)
    header = json.loads(json.dumps(header))
    header["config"]["params"]["n_classes"] = 10**10
    with pytest.raises(PersistenceError, match="n_classes"):
        Learner.load(_write(tmp_path, header, dict(arrays)))
