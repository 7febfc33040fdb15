"""Vowpal Wabbit's tasks of ``vs-peers`` (:mod:`nolo.papers.am.vs_peers`): ``--cb_explore_adf`` on the same
streams as nolo's learners, fed the flipped bit as a cost.  Their runs are keyed by :data:`VW_CODE` only, so a change
to nolo's learners does not recompute them (VW is about half of a paper-scale ``vs-peers``)."""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from nolo.papers.am import vw as V
from nolo.papers.am.vs_peers_data import horizons, load_rows, rff_rows
from nolo.noise import FlipChannel
from nolo.noise.feedback_laws import flip_one

#: VW squarecb on the random features the RFF candidates see (where they run; the run's first seed to vw_rounds):
#: reported beside them, so the report says what the features buy each side
VW_RFF = "squarecb-rff"
#: VW's arguments per mode: its defaults (squarecb, epsilon) and, for the grid (``grid_mode``), squarecb with a
#: learning rate and a gap scale of :data:`VW_GRID`
VW_ARGS = {"squarecb": "--cb_explore_adf --squarecb -q sa", "epsilon": "--cb_explore_adf --epsilon 0.05 -q sa",
           VW_RFF: "--cb_explore_adf --squarecb -q sa"}
#: the small grid of VW squarecb configurations: -l (learning rate; VW's default 0.5) x --gamma_scale (VW's default
#: 10); the claim compares nolo's default with the one configuration of the grid that errs least over the suite
VW_GRID = tuple((lr, gs) for lr in (0.1, 0.5, 2.0) for gs in (1.0, 3.0, 10.0, 100.0))
VW_DEFAULT_CONFIG = (0.5, 10.0)


def grid_mode(lr: float, gs: float) -> str:
    """The mode name of a grid configuration ("squarecb" for VW's defaults)."""
    if (float(lr), float(gs)) == VW_DEFAULT_CONFIG:
        return "squarecb"
    return f"squarecb-l{lr:g}-g{gs:g}"


def mode_args(mode: str) -> str:
    """VW's arguments for a mode of :data:`VW_ARGS` or of the grid (``squarecb-l{lr}-g{gs}``)."""
    if mode in VW_ARGS:
        return VW_ARGS[mode]
    for lr, gs in VW_GRID:
        if grid_mode(lr, gs) == mode:
            return f"--cb_explore_adf --squarecb -q sa -l {lr:g} --gamma_scale {gs:g}"
    raise ValueError(f"unknown VW mode {mode!r}")


#: the source files VW's runs depend on (path prefixes inside the package, nolo.experiments.sweep.code_version):
#: this module, the stream and feature code, the data sets' loaders and what they import
VW_CODE = ("papers/am/vs_peers_vw.py", "papers/am/vs_peers_data.py", "papers/am/vw.py",
           "papers/am/_common.py", "datasets/", "kernels/random_features.py", "learners/bandit/simulator.py",
           "random.py", "_validation.py", "exceptions.py")


@lru_cache(maxsize=2)
def _shared_lines(dataset: str, quick: bool, rff: bool = False) -> tuple[str, ...]:
    """The VW ``shared |s`` lines of a dataset's rows (``rff``: of their random features, :func:`rff_rows`),
    formatted once per process (the VW tasks of a dataset share them: formatting SynSep's 2 x 10^4 rows cost about
    a third of a 10^4-round VW run)."""
    return _adf_shared(rff_rows(dataset, quick) if rff else load_rows(dataset, quick)[0])


def _adf_shared(X) -> tuple[str, ...]:
    return tuple("shared |s " + line[2:] for line in V.feature_lines(X))


def _vw_adf(X, y, T: int, rho0: float, rho1: float, env_seed: int, seed: int, args: str, checkpoints,
            shared=None) -> dict:
    """VW ``--cb_explore_adf`` (``args``) on the stream: shared features in namespace s, action k as feature a=k in
    namespace a; we draw the action from VW's pmf (own generator) and teach it the cost 1 - flipped bit.
    ``shared``: X's shared lines when already formatted (:func:`_shared_lines`).

    Each round is VW's own parse, ``predict`` and ``learn`` of the text examples, called on VW's native examples
    (``pylibvw``) rather than through ``Workspace.predict``/``learn``: those wrap every line of every call in a
    Python ``Example`` and look up its label type, which was about half of a round on digits (K = 10).  The same
    calls in the same order, so the same predictions and updates."""
    from vowpalwabbit import pyvw

    native = pyvw.pylibvw.vw
    parse, predict, learn = native._parse, native.predict_multi, native.learn_multi
    finish = native._finish_example_multi_ex
    K = int(y.max()) + 1
    shared = _adf_shared(X) if shared is None else shared
    acts = [f"|a a{k}" for k in range(K)]
    unlabelled = "\n" + "\n".join(acts)
    idx, u_flip = V.stream_draws(len(shared), T, env_seed)
    idx, u_flip, labels = idx.tolist(), u_flip.tolist(), np.asarray(y, dtype=np.int64).tolist()
    law = FlipChannel(rho0, rho1).record()
    u_play = np.random.default_rng(seed).random(T).tolist()
    ws = pyvw.Workspace(f"{args} --quiet --random_seed {int(seed)}")
    stops = {int(c): k for k, c in enumerate(checkpoints)}
    errs = np.empty(len(checkpoints))
    mistakes = 0
    t0 = time.perf_counter()
    for t in range(T):
        i = idx[t]
        ex = parse(ws, shared[i] + unlabelled)
        predict(ws, ex)
        pmf = ex[0].get_action_scores()
        finish(ws, ex)
        a = V.draw_action(pmf, u_play[t])
        f = int(a == labels[i])
        mistakes += 1 - f
        f_rho = flip_one(law, f, u_flip[t], labels[i], a, i)  # the feedback law's one compiled rule
        ex = parse(ws, "\n".join([shared[i], *[(f"0:{1 - f_rho}:{pmf[k]} " if k == a else "") + acts[k]
                                                for k in range(K)]]))
        learn(ws, ex)
        finish(ws, ex)
        if t + 1 in stops:
            errs[stops[t + 1]] = mistakes / (t + 1)
    seconds = time.perf_counter() - t0
    ws.finish()
    return {"t": np.asarray(checkpoints), "error_rate": errs, "seconds": np.full(len(checkpoints), seconds)}


def vw_peers_task(dataset: str, rho0: float, rho1: float, seed: int, quick: bool, rounds: int, mode: str) -> dict:
    """VW on the stream of ``peers_task`` (environment seed 1,000 + seed)."""
    from nolo.learners.bandit import log_checkpoints

    X, y = load_rows(dataset, quick)
    T = int(rounds)
    cps = np.union1d(log_checkpoints(T, 25), [h for h in horizons(quick) if h <= T])
    if mode == "cbify":
        r = V.vw_progressive_error(X, y, T, 0.0, 0.0, env_seed=1_000 + int(seed), seed=int(seed), checkpoints=cps,
                                   mode="cbify")
        return {"t": r["t"], "error_rate": r["error_rate"], "seconds": np.full(r["t"].size, r["seconds"])}
    return _vw_adf(X, y, T, rho0, rho1, 1_000 + int(seed), int(seed), mode_args(mode), cps,
                   _shared_lines(dataset, bool(quick), mode == VW_RFF))
