"""Per-round throughput: one context arrives, the learner acts, the bit comes back and it learns -- the loop a live
system runs -- for nolo's bandit learners beside River's per-item learners on the same stream, in one run.

Rows (digits, 64 features, 10 classes, unit-norm rows; a (0.1, 0.1) flipped bit):

* ``nolo <learner> act+learn``: ``act(x)`` then ``learn(x, played, bit)`` on a dense row, per round.
* ``nolo default dict``: the default learner behind :class:`nolo.learners.bandit.dict_features.DictContexts` with a
  fixed vocabulary, ``act_one(x)`` then ``learn_one(x, played, bit)`` on a ``{"px0": v, ...}`` dict.
* ``nolo default act_many+learn_many``: contexts arriving in batches of ``--batch`` (default 100): ``act_many(X)``
  draws the batch's labels in one compiled call, the bits come back at the batch's end and ``learn_many`` learns
  them in one more (feedback delayed by up to a batch: a different stream of plays than one round at a time).
* ``nolo default run_stream``: the same learner over the same rounds in one compiled call (the upper bound).
* ``River LinUCBDisjoint pull+update``: River's contextual bandit on the same dicts (a disjoint LinUCB, one Bayesian
  linear regression per arm).
* ``River OvR logistic predict_one+learn_one``: River's one-vs-rest logistic regression on the same dicts, with the
  true label (a full-information linear learner: River's per-item overhead on a comparable linear model).

Ratios are against River's LinUCBDisjoint, measured in the same process.  Usage::

    python benchmarks/bench_per_round.py [--rounds 20000] [--river-rounds 3000] [--batch 100] [--markdown FILE]

``--markdown FILE`` also writes the table stamped with the version, the machine, its load and the command
(``benchmarks/_markdown.py``); docs/performance.md includes ``docs/_generated/bench_per_round.md``.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from sklearn.datasets import load_digits

import nolo
from nolo.learners.bandit import FastCB, LinUCB, SquareCB, default_learner, run_stream
from nolo.learners.bandit.dict_features import DictContexts


def stream(T: int, seed: int = 0):
    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    g = np.random.default_rng(seed)
    order = g.integers(len(X), size=T)
    flips = g.random(T) < 0.1
    return X, y, order, flips


def per_round(learner, X, y, order, flips) -> tuple[float, float]:
    """(rounds/s, error) of act + learn, one dense row per round."""
    mistakes = 0
    t0 = time.perf_counter()
    for i, f in zip(order, flips):
        x = X[i]
        a = learner.act(x)
        right = a == y[i]
        mistakes += not right
        learner.learn(x, a, int(right) ^ int(f))
    return len(order) / (time.perf_counter() - t0), mistakes / len(order)


def per_batch(learner, X, y, order, flips, batch: int = 100) -> tuple[float, float]:
    """(rounds/s, error) of ``act_many`` on each batch of arriving rows, then ``learn_many`` on their bits."""
    mistakes = 0
    t0 = time.perf_counter()
    for lo in range(0, len(order), batch):
        i, f = order[lo:lo + batch], flips[lo:lo + batch]
        Xb = X[i]
        a = learner.act_many(Xb)
        right = a == y[i]
        mistakes += int(np.count_nonzero(~right))
        learner.learn_many(Xb, a, right.astype(np.int64) ^ f)
    return len(order) / (time.perf_counter() - t0), mistakes / len(order)


def per_dict(bandit, D, y, order, flips) -> tuple[float, float]:
    mistakes = 0
    t0 = time.perf_counter()
    for i, f in zip(order, flips):
        a, _ = bandit.act_one(D[i])
        right = a == y[i]
        mistakes += not right
        bandit.learn_one(D[i], a, int(right) ^ int(f))
    return len(order) / (time.perf_counter() - t0), mistakes / len(order)


def river_linucb(D, y, order, flips) -> tuple[float, float]:
    from river import bandit

    policy = bandit.LinUCBDisjoint(alpha=1.0, seed=0)
    arms = list(range(10))
    mistakes = 0
    t0 = time.perf_counter()
    for i, f in zip(order, flips):
        a = policy.pull(arms, context=D[i])
        right = a == y[i]
        mistakes += not right
        policy.update(a, D[i], float(int(right) ^ int(f)))
    return len(order) / (time.perf_counter() - t0), mistakes / len(order)


def river_ovr(D, y, order) -> tuple[float, float]:
    from river import linear_model, multiclass

    model = multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    mistakes = 0
    t0 = time.perf_counter()
    for i in order:
        p = model.predict_one(D[i])
        mistakes += p != y[i]
        model.learn_one(D[i], int(y[i]))
    return len(order) / (time.perf_counter() - t0), mistakes / len(order)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20_000, help="rounds timed per nolo row")
    ap.add_argument("--river-rounds", type=int, default=3_000, help="rounds timed per River row")
    ap.add_argument("--batch", type=int, default=100, help="contexts per act_many/learn_many call")
    ap.add_argument("--warmup", type=int, default=600, help="untimed rounds first (compilation, landmarks)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as a stamped Markdown file")
    args = ap.parse_args(argv)
    if args.markdown:
        from _markdown import start

        start()
    X, y, order, flips = stream(args.warmup + args.rounds)
    names = [f"px{j}" for j in range(X.shape[1])]
    D = [{n: float(v) for n, v in zip(names, row) if v != 0.0} for row in X]
    w = args.warmup
    rows = []

    def nolo_row(label, make, fn, data):
        m = make()
        fn(m, data, y, order[:w], flips[:w])
        rate, err = fn(m, data, y, order[w:], flips[w:])
        rows.append((label, rate, err))

    nolo_row("nolo default act+learn", lambda: default_learner(10, 0.1, 0.1, seed=0), per_round, X)
    nolo_row("nolo default dict act_one+learn_one",
             lambda: DictContexts(default_learner(10, 0.1, 0.1, seed=0), vocabulary=names), per_dict, D)
    nolo_row("nolo default act_many+learn_many", lambda: default_learner(10, 0.1, 0.1, seed=0),
             lambda m, data, yy, o, f: per_batch(m, data, yy, o, f, args.batch), X)
    nolo_row("nolo FastCB act+learn", lambda: FastCB(n_classes=10, rho0=0.1, rho1=0.1, seed=0), per_round, X)
    nolo_row("nolo SquareCB act+learn", lambda: SquareCB(n_classes=10, rho0=0.1, rho1=0.1, seed=0), per_round, X)
    nolo_row("nolo LinUCB act+learn", lambda: LinUCB(n_classes=10, rho0=0.1, rho1=0.1, seed=0), per_round, X)
    m = default_learner(10, 0.1, 0.1, seed=0)
    run_stream(m, X, y, 1_000, 0.1, 0.1, seed=1)  # compile
    m = default_learner(10, 0.1, 0.1, seed=0)
    t0 = time.perf_counter()
    res = run_stream(m, X, y, args.rounds, 0.1, 0.1, seed=1)
    rows.append(("nolo default run_stream", args.rounds / (time.perf_counter() - t0), float(res.error_rate[-1])))
    R = min(args.river_rounds, args.rounds)
    river_linucb(D, y, order[:50], flips[:50])
    rate_r, err_r = river_linucb(D, y, order[w:w + R], flips[w:w + R])
    rows.append(("River LinUCBDisjoint pull+update", rate_r, err_r))
    rate_o, err_o = river_ovr(D, y, order[w:w + R])
    rows.append(("River OvR logistic predict_one+learn_one", rate_o, err_o))

    print(f"nolo {nolo.__version__}, Python {platform.python_version()}, {platform.processor() or platform.machine()}, "
          f"digits, {args.rounds} nolo rounds, {R} River rounds (after {w} untimed)")
    print(f"{'row':44s} {'rounds/s':>10s} {'x River LinUCB':>15s} {'x River OvR':>12s} {'error':>7s}")
    for label, rate, err in rows:
        print(f"{label:44s} {rate:10.0f} {rate / rate_r:15.1f} {rate / rate_o:12.2f} {err:7.3f}")
    if args.markdown:
        from _markdown import package_versions, write_markdown

        table = [[MARKDOWN_LABELS[label], f"{rate:,.0f}", f"{rate / rate_r:.1f}", f"{rate / rate_o:.2f}", f"{err:.3f}"]
                 for label, rate, err in rows]
        path = write_markdown(args.markdown, ["loop", "rounds/s", "x River LinUCBDisjoint", "x River OvR logistic",
                                              "error"], table, align="lrrrr",
                              versions=package_versions("numpy", "numba", "river"),
                              intro=[f"digits, {args.rounds:,} rounds per nolo row and {R:,} per River row, after {w} "
                                     f"untimed rounds; batches of {args.batch} contexts in the batch row; one run:"])
        print(f"wrote {path}")


MARKDOWN_LABELS = {
    "nolo default act+learn": "`default_learner` `act` + `learn` (dense row)",
    "nolo default dict act_one+learn_one": "`default_learner` in `DictContexts` `act_one` + `learn_one` (dict)",
    "nolo default act_many+learn_many": "`default_learner` `act_many` + `learn_many` (batches of arriving rows)",
    "nolo FastCB act+learn": "`FastCB` `act` + `learn`",
    "nolo SquareCB act+learn": "`SquareCB` `act` + `learn`",
    "nolo LinUCB act+learn": "`LinUCB` `act` + `learn`",
    "nolo default run_stream": "`default_learner` in `run_stream` (one compiled call)",
    "River LinUCBDisjoint pull+update": "River `bandit.LinUCBDisjoint` `pull` + `update`",
    "River OvR logistic predict_one+learn_one":
        "River `OneVsRestClassifier(LogisticRegression())` `predict_one` + `learn_one` (true label)",
}


if __name__ == "__main__":
    main()
