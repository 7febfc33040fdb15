"""Feedback laws (nolo.noise.feedback_laws): one compiled rule per law, shared by the compiled stream, the per-round
environment and the VW replays.

* class-conditional flips (FlipChannel: rho0 = P(bit 1 | truth 0), rho1 = P(bit 0 | truth 1));
* FlipMatrix: Q[y, a] = P(flipped | true label y, played a) -- diagonal flips a true 1, off-diagonal a true 0;
* ContextFlips: per-row rates rho0[i], rho1[i].
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nolo import FeedbackLawWarning, ParameterError
from nolo.learners.bandit import RCNBF, Banditron, ClassificationBandit, run_stream
from nolo.noise import ContextFlips, FeedbackLaw, FlipChannel, FlipMatrix
from nolo.noise.feedback_laws import ClassFlips, MatrixFlips, RowFlips, flip_many, flip_one, flip_rates

Q3 = np.array([[0.10, 0.20, 0.30],
               [0.05, 0.40, 0.15],
               [0.25, 0.35, 0.00]])


def _problem(n=40, d=4, K=3, seed=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.integers(0, K, size=n)


# ---------------------------------------------------------------------------------------------
# hand-worked flips on fixed uniforms
# ---------------------------------------------------------------------------------------------


def test_class_conditional_rule_by_hand():
    law = ClassFlips(0.2, 0.3)
    # (bit, u) -> received: a true 1 flips when u < rho1 = 0.3, a true 0 when u < rho0 = 0.2
    cases = [(1, 0.29, 0), (1, 0.30, 1), (1, 0.9, 1), (0, 0.19, 1), (0, 0.20, 0), (0, 0.5, 0)]
    for bit, u, want in cases:
        assert flip_one(law, bit, u, 0, 0, 0) == want, (bit, u)
        assert flip_rates(bit, u, 0.2, 0.3) == want  # the two-rate rule every law applies
    # y, played, row are ignored by this law
    assert flip_one(law, 1, 0.29, 2, 2, 7) == 0 and flip_one(law, 0, 0.19, 2, 1, 7) == 1


def test_matrix_rule_by_hand():
    law = FlipMatrix(Q3).record()
    assert isinstance(law, MatrixFlips)
    # right label (played == y): a true 1 flips when u < Q[y, y]
    assert flip_one(law, 1, 0.39, 1, 1, 0) == 0 and flip_one(law, 1, 0.40, 1, 1, 0) == 1
    assert flip_one(law, 1, 0.0, 2, 2, 0) == 1  # Q[2, 2] = 0: never flipped
    # wrong label a != y: a true 0 flips when u < Q[y, a]
    assert flip_one(law, 0, 0.14, 1, 2, 0) == 1 and flip_one(law, 0, 0.15, 1, 2, 0) == 0
    assert flip_one(law, 0, 0.04, 1, 0, 0) == 1 and flip_one(law, 0, 0.06, 1, 0, 0) == 0
    assert flip_one(law, 0, 0.34, 2, 1, 0) == 1 and flip_one(law, 0, 0.36, 2, 1, 0) == 0
    bits = flip_many(law, [1, 0, 0, 0], [0.39, 0.14, 0.15, 0.29], [1, 1, 1, 0], [1, 2, 2, 2], [0, 0, 0, 0])
    assert bits.tolist() == [0, 1, 0, 1]


def test_context_rule_by_hand():
    law = ContextFlips([0.0, 0.3, 0.1], [0.5, 0.2, 0.0]).record()
    assert isinstance(law, RowFlips)
    # row 0: rho0 = 0, rho1 = 0.5; row 1: 0.3, 0.2; row 2: 0.1, 0
    assert flip_one(law, 1, 0.49, 0, 0, 0) == 0 and flip_one(law, 1, 0.5, 0, 0, 0) == 1
    assert flip_one(law, 0, 0.0, 0, 1, 0) == 0  # rho0[0] = 0
    assert flip_one(law, 0, 0.29, 0, 1, 1) == 1 and flip_one(law, 1, 0.29, 1, 1, 1) == 1
    assert flip_one(law, 1, 0.19, 1, 1, 1) == 0
    assert flip_one(law, 0, 0.09, 2, 0, 2) == 1 and flip_one(law, 1, 0.0, 2, 2, 2) == 1


def test_kappa():
    assert FlipChannel(0.2, 0.3).kappa == pytest.approx(0.5)
    assert FlipChannel(0.2, 0.3).kappa_range == pytest.approx((0.5, 0.5))
    # kappa(y, a) = 1 - Q[y, y] - Q[y, a], a != y: row 0: .7, .6; row 1: .55, .45; row 2: .75, .65
    assert FlipMatrix(Q3).kappa_range == pytest.approx((0.45, 0.75))
    assert ContextFlips([0.0, 0.3, 0.1], [0.5, 0.2, 0.0]).kappa_range == pytest.approx((0.5, 0.9))
    assert isinstance(FlipChannel(), FeedbackLaw) and FlipChannel.constant_rates
    assert not FlipMatrix.constant_rates and not ContextFlips.constant_rates


# ---------------------------------------------------------------------------------------------
# Monte Carlo: empirical flip rates per (y, played) cell
# ---------------------------------------------------------------------------------------------


def _assert_rate(flipped, p, what):
    n = flipped.size
    if p == 0.0:
        assert flipped.sum() == 0, what
    else:
        se = np.sqrt(p * (1 - p) / n)
        assert abs(flipped.mean() - p) <= 4 * se, (what, flipped.mean(), p)


def test_matrix_law_empirical_rates_per_cell():
    law, n = FlipMatrix(Q3), 20_000
    K = Q3.shape[0]
    y, a = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    y, a = np.repeat(y.ravel(), n), np.repeat(a.ravel(), n)
    bits = law.sample(y, a, np.zeros_like(y), np.random.default_rng(3))
    flipped = bits != (y == a)
    for yy in range(K):
        for aa in range(K):
            _assert_rate(flipped[(y == yy) & (a == aa)], Q3[yy, aa], (yy, aa))


def test_context_law_empirical_rates_per_row_and_cell():
    r0, r1 = np.array([0.05, 0.3, 0.0]), np.array([0.4, 0.1, 0.2])
    law, n = ContextFlips(r0, r1), 20_000
    rows = np.repeat(np.arange(3), 2 * n)
    y = np.zeros_like(rows)
    played = np.tile(np.repeat([0, 1], n), 3)  # truth 1 (played 0 == y), then truth 0
    bits = law.sample(y, played, rows, np.random.default_rng(4))
    flipped = bits != (played == y)
    for i in range(3):
        _assert_rate(flipped[(rows == i) & (played == 0)], r1[i], (i, "truth 1"))
        _assert_rate(flipped[(rows == i) & (played == 1)], r0[i], (i, "truth 0"))


# ---------------------------------------------------------------------------------------------
# the stream: today's results, per-round = compiled for every law
# ---------------------------------------------------------------------------------------------

# run_stream(Banditron(n_classes=3, gamma=0.1, seed=2), X, y, 60, rho0=0.2, rho1=0.3, seed=7, log=True) on
# _problem(), recorded on the code before the feedback laws existed (the two-rate loop)
BASE_INDEX = [25, 31, 12, 0, 31, 12, 10, 20, 39, 24, 8, 24, 1, 18, 25, 19, 0, 27, 14, 33, 10, 20, 25, 3, 20, 14, 2,
              12, 32, 39, 24, 27, 17, 16, 38, 26, 34, 5, 37, 22, 7, 22, 35, 22, 16, 1, 18, 12, 1, 1, 38, 17, 34, 23,
              14, 30, 6, 0, 32, 16]
BASE_PLAYED = [0, 0, 0, 1, 2, 1, 0, 2, 0, 1, 2, 2, 1, 0, 0, 0, 2, 0, 1, 2, 1, 1, 1, 0, 1, 0, 1, 1, 1, 2, 1, 2, 0, 1,
               1, 1, 0, 2, 2, 2, 1, 2, 0, 2, 2, 0, 2, 2, 0, 0, 2, 2, 0, 2, 0, 2, 0, 0, 0, 2]
BASE_FEEDBACK = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0,
                 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
BASE_MISTAKES = (38, 39)  # played, greedy
# ClassificationBandit(X, y, 0.2, 0.3, seed=7): next(); feedback(t % 3) for t < 20
BASE_PER_ROUND = [1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1]


def _check_base(r):
    log = r.extra["log"]
    assert log["index"].tolist() == BASE_INDEX
    assert log["played"].tolist() == BASE_PLAYED
    assert log["feedback"].tolist() == BASE_FEEDBACK
    assert (int(r.played_mistakes[-1]), int(r.greedy_mistakes[-1])) == BASE_MISTAKES


@pytest.mark.parametrize("how", ["rates", "channel", "matrix", "context"])
def test_class_conditional_law_reproduces_the_recorded_stream(how):
    """rho0/rho1, a FlipChannel, and a FlipMatrix / ContextFlips holding the same rates in every cell give the stream
    recorded before the laws existed, bit for bit (one uniform per round, the same comparisons)."""
    X, y = _problem()
    laws = {"rates": None, "channel": FlipChannel(0.2, 0.3),
            "matrix": FlipMatrix(np.where(np.eye(3, dtype=bool), 0.3, 0.2)),
            "context": ContextFlips(np.full(40, 0.2), np.full(40, 0.3))}
    kw = {"rho0": 0.2, "rho1": 0.3} if how == "rates" else {"feedback": laws[how]}
    _check_base(run_stream(Banditron(n_classes=3, gamma=0.1, seed=2), X, y, 60, seed=7, log=True, **kw))
    env = ClassificationBandit(X, y, seed=7, **kw)
    got = []
    for t in range(20):
        env.next()
        got.append(env.feedback(t % 3))
    assert got == BASE_PER_ROUND


def _per_round(m, env, n):
    played, fb, index = [], [], []
    for _ in range(n):
        x = env.next()
        a = m.act(x)
        f = env.feedback(a)
        m.learn(x, a, f)
        played.append(a)
        fb.append(f)
        index.append(env.current_index)
    return index, played, fb


@pytest.mark.parametrize("law", [
    FlipChannel(0.25, 0.15),
    FlipMatrix(Q3),
    ContextFlips(np.linspace(0.0, 0.45, 40), np.linspace(0.5, 0.05, 40)),
], ids=["class-conditional", "matrix", "context"])
def test_per_round_equals_stream_bit_for_bit(law):
    X, y = _problem()
    T = 300
    a, b = Banditron(n_classes=3, gamma=0.2, seed=4), Banditron(n_classes=3, gamma=0.2, seed=4)
    r = run_stream(a, X, y, T, seed=9, log=True, feedback=law)
    index, played, fb = _per_round(b, ClassificationBandit(X, y, seed=9, feedback=law), T)
    log = r.extra["log"]
    assert log["index"].tolist() == index
    assert log["played"].tolist() == played
    assert log["feedback"].tolist() == fb
    assert np.array_equal(a.W_, b.W_) and a.t_ == b.t_
    assert a.rng_.bit_generator.state == b.rng_.bit_generator.state
    # the flips the stream applied are the law's: recompute them from the environment's uniforms
    truth = (np.asarray(played) == y[np.asarray(index)]).astype(int)
    assert np.any(truth != np.asarray(fb)) and set(np.unique(fb)) <= {0, 1}


def test_csr_and_dense_give_the_same_stream_under_a_matrix_law():
    X, y = _problem()
    r1 = run_stream(Banditron(n_classes=3, gamma=0.2, seed=4), X, y, 200, seed=9, log=True, feedback=FlipMatrix(Q3),
                    representation="dense")
    r2 = run_stream(Banditron(n_classes=3, gamma=0.2, seed=4), X, y, 200, seed=9, log=True, feedback=FlipMatrix(Q3),
                    representation="csr")
    for k in ("index", "played", "feedback"):
        assert np.array_equal(r1.extra["log"][k], r2.extra["log"][k])


# ---------------------------------------------------------------------------------------------
# the learners' fixed-rate corrections: a warning under the other laws
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("law, name", [(FlipMatrix(Q3), "FlipMatrix"),
                                       (ContextFlips(np.full(40, 0.1), np.full(40, 0.2)), "ContextFlips")])
def test_a_fixed_rate_learner_warns_once_under_a_varying_law(law, name):
    X, y = _problem()
    with pytest.warns(FeedbackLawWarning, match=f"{name}.*biased") as rec:
        r = run_stream(RCNBF(n_classes=3, gamma=0.1, rho0=0.1, rho1=0.2, seed=1), X, y, 50, seed=2, feedback=law)
    assert sum(issubclass(w.category, FeedbackLawWarning) for w in rec) == 1
    assert r.n_rounds == 50 and issubclass(FeedbackLawWarning, UserWarning)
    with pytest.warns(FeedbackLawWarning, match=name):
        ClassificationBandit(X, y, seed=2, feedback=law).run(RCNBF(n_classes=3, rho0=0.1, rho1=0.2, seed=1), 10)


def test_no_warning_under_the_class_conditional_law_or_without_rates():
    X, y = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeedbackLawWarning)
        run_stream(RCNBF(n_classes=3, gamma=0.1, rho0=0.1, rho1=0.2, seed=1), X, y, 50, seed=2,
                   feedback=FlipChannel(0.1, 0.2))
        run_stream(RCNBF(n_classes=3, gamma=0.1, rho0=0.1, rho1=0.2, seed=1), X, y, 50, 0.1, 0.2, seed=2)
        run_stream(Banditron(n_classes=3, gamma=0.1, seed=1), X, y, 50, seed=2, feedback=FlipMatrix(Q3))


# ---------------------------------------------------------------------------------------------
# bad parameters: a ParameterError naming the parameter, nothing changed
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("Q, match", [
    (None, "Q"),
    (np.zeros((2, 3)), "Q must be a square"),
    (np.zeros((1, 1)), "Q must be a square"),
    ([[0.1, 1.0], [0.0, 0.0]], r"Q must hold flip probabilities in \[0, 1\)"),
    ([[0.1, -0.1], [0.0, 0.0]], "Q must hold"),
    ([[0.1, np.nan], [0.0, 0.0]], "Q must hold"),
    ([[0.6, 0.4], [0.0, 0.0]], r"Q\[0, 0\] \+ Q\[0, 1\]"),
    ([[0.0, 0.0, 0.0], [0.5, 0.5, 0.1], [0.0, 0.5, 0.0]], r"Q\[1, 1\] \+ Q\[1, 0\]"),
])
def test_matrix_law_rejects_bad_Q(Q, match):
    with pytest.raises(ParameterError, match=match):
        FlipMatrix(Q).validate()
    with pytest.raises(ParameterError, match=match):
        FlipMatrix(Q).record()


@pytest.mark.parametrize("r0, r1, match", [
    (None, [0.1], "rho0"),
    ([0.1, 0.2], None, "rho1"),
    ([[0.1]], [0.1], "rho0 must be a non-empty 1-d"),
    ([0.1, 1.0], [0.1, 0.1], r"rho0 must hold rates in \[0, 1\), got rho0\[1\]"),
    ([0.1, 0.1], [0.1, -0.2], r"rho1 must hold rates .* rho1\[1\]"),
    ([0.1, 0.2], [0.1], "rho0 and rho1 must have one length"),
    ([0.1, 0.6], [0.1, 0.4], r"rho0\[1\] \+ rho1\[1\]"),
])
def test_context_law_rejects_bad_rates(r0, r1, match):
    with pytest.raises(ParameterError, match=match):
        ContextFlips(r0, r1).validate()


def test_set_params_with_a_bad_value_changes_nothing():
    law = FlipMatrix(Q3)
    with pytest.raises(ParameterError, match="Q"):
        law.set_params(Q=np.full((3, 3), 0.6))
    assert law.Q is Q3
    ctx = ContextFlips([0.1, 0.2], [0.1, 0.2])
    with pytest.raises(ParameterError, match="rho1"):
        ctx.set_params(rho1=[0.1, 1.5])
    assert ctx.rho1 == [0.1, 0.2]


def test_environment_rejects_bad_feedback_and_changes_nothing():
    X, y = _problem()
    with pytest.raises(ParameterError, match="feedback: give the flips either as rho0/rho1 or as a feedback law"):
        ClassificationBandit(X, y, rho0=0.1, feedback=FlipMatrix(Q3))
    with pytest.raises(ParameterError, match="feedback must be a feedback law"):
        run_stream(Banditron(n_classes=3), X, y, 10, feedback=(0.1, 0.2))
    with pytest.raises(ParameterError, match="one entry per row of X"):
        ClassificationBandit(X, y, feedback=ContextFlips(np.full(39, 0.1), np.full(39, 0.1)))
    with pytest.raises(ParameterError, match=r"Q must be at least \(3, 3\) to cover y"):
        ClassificationBandit(X, y, feedback=FlipMatrix([[0.1, 0.2], [0.2, 0.1]]))
    with pytest.raises(ParameterError, match="Q must hold"):
        ClassificationBandit(X, y, feedback=FlipMatrix(np.full((3, 3), 2.0)))
    # a learner playing more labels than Q covers: refused before anything moves
    env = ClassificationBandit(X, y, seed=3, feedback=FlipMatrix(Q3))
    before = env.rng.bit_generator.state
    m = Banditron(n_classes=4, seed=1)
    with pytest.raises(ParameterError, match="learner.n_classes"):
        env.run(m, 10)
    assert env.rng.bit_generator.state == before and env.pos[0] == 0 and not hasattr(m, "W_")
    env.next()
    with pytest.raises(ParameterError, match="played"):
        env.feedback(3)


def test_the_environment_keeps_its_own_copy_of_the_law():
    X, y = _problem()
    Q = Q3.copy()
    law = FlipMatrix(Q)
    env = ClassificationBandit(X, y, seed=1, feedback=law)
    Q[:] = 0.0
    assert env.feedback_law.Q is not Q and np.array_equal(env.feedback_law.Q, Q3)
    assert env.rho0 is None and env.rho1 is None
    assert ClassificationBandit(X, y, feedback=FlipChannel(0.1, 0.2)).rho0 == 0.1


def test_the_vw_replays_call_the_shared_rule():
    """The experiments' VW replays flip with the law's compiled rule, not a copy of it."""
    import inspect

    from nolo.papers.am import vs_peers_vw, vw

    for mod in (vw, vs_peers_vw):
        src = inspect.getsource(mod)
        assert "flip_one(law" in src and "< rho1" not in src and "< r1" not in src, mod.__name__


# ---------------------------------------------------------------------------------------------
# per-row rules (what an experiment spec states): ColumnRates, ContextFlips.bind
# ---------------------------------------------------------------------------------------------


def test_column_rates_by_hand_dense_and_sparse():
    import scipy.sparse as sp

    from nolo.noise import ColumnRates

    X = np.array([[0.0, 2.0], [1.0, 2.0], [4.0, 2.0], [2.0, 2.0]])
    np.testing.assert_allclose(ColumnRates(column=0, low=0.1, high=0.3).rates_for(X), [0.1, 0.15, 0.3, 0.2])
    np.testing.assert_allclose(ColumnRates(column=0, low=0.3, high=0.1).rates_for(X), [0.3, 0.25, 0.1, 0.2])
    np.testing.assert_allclose(ColumnRates(column=1, low=0.1, high=0.3).rates_for(X), 0.1)  # constant column
    np.testing.assert_array_equal(ColumnRates(column=0, low=0.1, high=0.3).rates_for(sp.csr_matrix(X)),
                                  ColumnRates(column=0, low=0.1, high=0.3).rates_for(X))
    for kw, match in (({"column": -1}, "column"), ({"low": 1.0}, "low"), ({"high": -0.1}, "high")):
        with pytest.raises(ParameterError, match=match):
            ColumnRates(**kw).validate()
    with pytest.raises(ParameterError, match=r"column must be a feature index in \[0, 2\)"):
        ColumnRates(column=2).rates_for(X)


def test_context_law_with_rules_is_bound_to_the_data():
    from nolo.noise import ColumnRates

    X, y = _problem(n=60)
    law = ContextFlips(ColumnRates(column=0, low=0.0, high=0.3), np.full(60, 0.1))
    law.validate()  # the rule's parameters and the array alone
    assert law.has_rules
    with pytest.raises(ParameterError, match=r"rho0 is a per-row rule \(ColumnRates\): bind the law"):
        law.record()
    bound = law.bind(X)
    assert not bound.has_rules and bound.bind(X) is bound
    np.testing.assert_allclose(bound.rates()[0], ColumnRates(column=0, low=0.0, high=0.3).rates_for(X))
    np.testing.assert_array_equal(bound.rates()[1], 0.1)
    # the bound law plays like the arrays it holds, compiled and round by round
    a = run_stream(Banditron(n_classes=3, gamma=0.2, seed=1), X, y, 500, seed=2, feedback=bound)
    b = run_stream(Banditron(n_classes=3, gamma=0.2, seed=1), X, y, 500, seed=2,
                   feedback=ContextFlips(*bound.rates()))
    np.testing.assert_array_equal(a.played_mistakes, b.played_mistakes)
    with pytest.raises(ParameterError, match=r"rho1 must have one entry per row of X \(60\)"):
        ContextFlips(ColumnRates(high=0.2), np.full(59, 0.1)).bind(X)
    with pytest.raises(ParameterError, match=r"rho0 \+ rho1 must be < 1 in every row"):
        ContextFlips(ColumnRates(high=0.6), ColumnRates(high=0.6)).bind(X)
    with pytest.raises(ParameterError, match="low"):
        ContextFlips(ColumnRates(low=2.0), np.full(60, 0.1)).validate()
    assert FlipMatrix(Q3).bind(X).Q is Q3 and FlipChannel(0.1, 0.2).bind(X).rho0 == 0.1  # laws without rules: self
