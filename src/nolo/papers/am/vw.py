"""Vowpal Wabbit's contextual-bandit reduction as an outside reference curve for AM Fig. 2 (optional).

Runs only when the optional ``vowpalwabbit`` package is importable (``pip install vowpalwabbit``);
:func:`available` says whether it is.  VW sees the very stream our learners see: the example
drawn at round t and the flip uniform of round t come from the environment generator of the
same seed (:func:`stream_draws` reproduces :class:`nolo.learners.bandit.ClassificationBandit`'s
draw order: per round one uniform for the index, then one for the flip).  Inputs are the same
unit-norm rows, written in VW's text format with *string* feature names (``f12:0.3``): with bare
integer names VW's default cbify does not learn at all.

Two modes, both epsilon-greedy with VW's default contextual-bandit learner:

* ``"cbify"`` -- ``--cbify K --epsilon eps``, VW's own classification-to-bandit reduction: VW draws the action and
  computes the cost 1[action != y] from the label itself.  cbify has no way to take an external
  cost, so it can only run noise-free.
* ``"cb_explore"`` -- ``--cb_explore K --epsilon eps``, the exploration layer cbify wraps: VW returns
  its action distribution, we draw the action (own generator) and feed back the cost
  1 - f_rho, where f_rho is 1[action == y] flipped by the channel with rates (rho0, rho1) and the
  environment's flip uniform -- exactly the feedback our learners get.  Used for every noisy setting.

The mistake counted is the played action's (action != y), cumulative, as AM plot.
"""

from __future__ import annotations

import time

import numpy as np

from nolo._validation import check_choice, check_flip_rates, check_int, check_scalar
from nolo.exceptions import ParameterError
from nolo.noise import FlipChannel
from nolo.noise.feedback_laws import flip_one

__all__ = ["available", "feature_lines", "stream_draws", "vw_progressive_error", "MODES"]

MODES = ("cbify", "cb_explore")


def available() -> bool:
    """True when the optional ``vowpalwabbit`` package is importable."""
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def feature_lines(X) -> list[str]:
    """VW text features of each row of X: ``"| f3:0.25 f17:0.5"`` (non-zeros only, string names)."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    out = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        out.append("| " + " ".join(f"f{j}:{v:.7g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi])))
    return out


def stream_draws(n_examples: int, n_rounds: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """(example index, flip uniform) per round, as ClassificationBandit(order="replace", seed=seed) draws them.

    A vectorised replay of the environment's draws for the external learner (tested equal to the
    environment's log in ``tests/papers/am/test_am_vw_reference.py``), because driving VW through the
    environment's per-round ``next()``/``feedback()`` makes these runs 2.5-3.5x slower."""
    u = np.random.default_rng(seed).random((int(n_rounds), 2))
    idx = np.minimum((u[:, 0] * n_examples).astype(np.int64), n_examples - 1)
    return idx, u[:, 1]


def draw_action(pmf, u: float) -> int:
    """The action whose cumulative mass first exceeds ``u`` times the total mass of ``pmf`` (VW's probabilities, in
    action order), summed in order as ``numpy.cumsum`` does, so the draw of ``searchsorted(cumsum(pmf), u *
    cumsum(pmf)[-1], side="right")``; the last action when rounding leaves none."""
    total = 0.0
    for p in pmf:
        total += p
    r, acc = u * total, 0.0
    for k, p in enumerate(pmf):
        acc += p
        if acc > r:
            return k
    return len(pmf) - 1


def vw_progressive_error(X, y, n_rounds: int, rho0: float = 0.0, rho1: float = 0.0, *, env_seed=0, seed: int = 0,
                         checkpoints=None, epsilon: float = 0.05, mode: str | None = None) -> dict:
    """VW's cumulative error of the played action at ``checkpoints`` over the stream of ``env_seed``.

    ``mode`` None picks "cbify" without noise and "cb_explore" with noise (cbify cannot take a
    noisy cost).  Returns ``{"t", "error_rate", "seconds", "mode"}``; raises ImportError when
    vowpalwabbit is absent.
    """
    T = check_int(n_rounds, "n_rounds", low=1)
    r0, r1 = check_flip_rates(rho0, rho1)
    eps = check_scalar(epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if mode is None:
        mode = "cbify" if r0 == 0 and r1 == 0 else "cb_explore"
    check_choice(mode, "mode", MODES)
    if mode == "cbify" and (r0 > 0 or r1 > 0):
        raise ParameterError("mode='cbify' computes the cost from the label and cannot take noisy feedback; "
                             "use mode='cb_explore' when rho0 or rho1 > 0")
    y = np.asarray(y, dtype=np.int64)
    K = int(y.max()) + 1
    cps = np.unique(np.asarray([T] if checkpoints is None else checkpoints, dtype=np.int64))
    if cps[0] < 1 or cps[-1] > T:
        raise ParameterError(f"checkpoints must lie in [1, {T}]")
    from vowpalwabbit import pyvw

    # VW's native calls (pylibvw) rather than Workspace.learn/predict, which wrap every example in a Python Example
    # and look up its label type on every call: the same calls in the same order, so the same run, faster
    native = pyvw.pylibvw.vw
    parse, finish = native._parse, native._finish_example
    lines = feature_lines(X)
    idx, u_flip = stream_draws(len(lines), T, env_seed)
    idx, u_flip, labels = idx.tolist(), u_flip.tolist(), y.tolist()
    errs = np.empty(cps.size)
    slot, stops = 0, set(cps.tolist())
    t0 = time.perf_counter()
    if mode == "cbify":
        ws = pyvw.Workspace(f"--cbify {K} --epsilon {eps} --quiet --random_seed {int(seed)}")
        for t in range(T):
            i = idx[t]
            ex = parse(ws, f"{labels[i] + 1} {lines[i]}")[0]
            native.learn(ws, ex)
            finish(ws, ex)
            if t + 1 in stops:
                errs[slot] = ws.get_sum_loss() / (t + 1)
                slot += 1
    else:
        ws = pyvw.Workspace(f"--cb_explore {K} --epsilon {eps} --quiet --random_seed {int(seed)}")
        u_play = np.random.default_rng(seed).random(T).tolist()
        law = FlipChannel(r0, r1).record()
        mistakes = 0
        for t in range(T):
            i = idx[t]
            line = lines[i]
            ex = parse(ws, line)[0]
            native.predict(ws, ex)
            pmf = ex.get_action_scores()
            finish(ws, ex)
            a = draw_action(pmf, u_play[t])
            f = 1 if a == labels[i] else 0
            mistakes += 1 - f
            f_rho = flip_one(law, f, u_flip[t], labels[i], a, i)  # the feedback law's one compiled rule
            ex = parse(ws, f"{a + 1}:{1 - f_rho}:{pmf[a]} {line}")[0]
            native.learn(ws, ex)
            finish(ws, ex)
            if t + 1 in stops:
                errs[slot] = mistakes / (t + 1)
                slot += 1
    seconds = time.perf_counter() - t0
    ws.finish()
    return {"t": cps, "error_rate": errs, "seconds": seconds, "mode": mode}


#: datasets that get VW's reference curve (the Figure 2 reproduction: digits, what the authors' code reads, and SynSep).
VW_DATASETS = ("digits", "synsep")


def vw_task(dataset: str, rho0: float, rho1: float, seed: int, quick: bool, rounds: int) -> dict:
    """VW's curve on the stream of the error-curves runs of ``seed`` (environment seed 1,000 + seed)."""
    from nolo.papers.am import _common as C
    from nolo.learners.bandit import log_checkpoints

    X, y = C.load(dataset, quick)
    r = vw_progressive_error(X, y, rounds, rho0, rho1, env_seed=1_000 + int(seed), seed=int(seed),
                             checkpoints=log_checkpoints(rounds))
    n = r["t"].size
    return {"t": r["t"], "error_rate": r["error_rate"], "seconds": np.full(n, r["seconds"]),
            "mode": np.array([r["mode"]] * n)}


def vw_curves(ctx, datasets) -> "object | None":
    """VW's curves (one seed, every setting) for the datasets of ``VW_DATASETS`` present; None without vowpalwabbit."""
    import pandas as pd

    from nolo.papers.am import _common as C

    if not available():
        return None
    tasks = [{"dataset": d, "rho0": r0, "rho1": r1, "seed": int(ctx.seeds[0]), "quick": bool(ctx.quick),
              "rounds": C.rounds_for(d, ctx.quick)} for d in datasets if d in VW_DATASETS for (r0, r1) in C.SETTINGS]
    if not tasks:
        return None
    frames = ctx.map(vw_task, tasks, name="am_vw")
    return pd.concat([f.assign(dataset=t["dataset"], rho0=t["rho0"], rho1=t["rho1"]) for t, f in zip(tasks, frames)],
                     ignore_index=True)
