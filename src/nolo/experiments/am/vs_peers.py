"""vs-peers: every nolo bandit learner and Vowpal Wabbit on the same noisy streams (issue 11).

Each (dataset, noise setting, seed) is one stream: ClassificationBandit(order="replace") with
environment seed 1,000 + seed, so every learner sees the same example and the same flip uniform at
round t (the AM experiments' streams; VW replays them with :func:`nolo.experiments.am.vw.stream_draws`).
Every learner is fed the flipped bit.  Learners:

* AM's: Banditron, BPA, SOBA, RCNBF (true rates), RCINE (NREst) -- gamma tuned per cell from
  ``GAMMA_GRID`` on a separate seed over the longest horizon, as the error-curves experiment does;
* BPA-h and SOBA-h (:class:`~nolo.learners.bandit.BPAh`, :class:`~nolo.learners.bandit.SOBAh`): BPA and
  SOBA fed AM's h(f_rho) with the true rates, at the tuned gamma of BPA / SOBA;
* SquareCB (Foster & Rakhlin 2020), :class:`nolo.learners.bandit.SquareCB`: the default (ridge oracle,
  correction "target", true rates), "none" (rates ignored), "gap" with true rates and with rates
  estimated online ("gap-est"), and the O(d) OGD oracle ("ogd"); on d > ``RIDGE_MAX_D`` the ridge
  variants use the OGD oracle (the ridge state is K (d+1)^2 and memory-bound there, docs/squarecb.md);
* FastCB (Foster & Krishnamurthy 2021), :class:`nolo.learners.bandit.FastCB`: the default (ridge oracle, correction
  "target", true rates), "ogd", and "optimistic" (``prior_reward=1``, for the record); the first two also with the
  sketched second-order oracle ("-fdson") on d >= ``FDSON_MIN_D``;
* LinUCB (Li et al. 2010, Algorithm 1, disjoint models), :class:`nolo.learners.bandit.LinUCB`: the default (lam = 1)
  and "-lam3" (lam = 3, the stronger prior that won under (0.4, 0.4) on the tuning seeds), true rates, ridge oracle
  (FD-SON sketch on d > ``RIDGE_MAX_D``), to ``LINUCB_MAX_ROUNDS`` rounds (its widths cost O(K d^2) per round with
  the ridge oracle);
* on random Fourier features of the rows (:class:`nolo.kernels.RandomFourierFeatures`, ``RFF_COMPONENTS`` unit-norm
  features, image data sets): LinUCB (lam = 1 and 5) and FastCB on the FD-SON sketch ("-rff"), to
  ``LINUCB_MAX_ROUNDS`` rounds (quick scale: ``QUICK_RFF_ROUNDS``), with VW squarecb on the same features beside
  them at paper scale;
* KernelLabelTS (nolo's, :class:`nolo.learners.bandit.KernelLabelTS`: Thompson sampling on the label under a
  kernel-smoothed flip likelihood) on ``NYS_COMPONENTS`` Nystroem kernel-PCA coordinates of the rows
  (:class:`nolo.kernels.NystroemFeatures`, image data sets, "-nys"), to ``KERNEL_TS_ROUNDS`` rounds at both scales
  (its rounds cost O(t)).  The claims compare nolo's
  best of the fixed-configuration flip-aware learners with the true rates (``BEST_OF``, named in each claim);
  SquareCB's and FastCB's defaults get figures of their own;
* Vowpal Wabbit 9 (optional): ``--cb_explore_adf --squarecb -q sa`` and ``--cb_explore_adf --epsilon 0.05
  -q sa`` fed 1 - flipped bit as the cost, and ``--cbify K`` noise-free; driven from Python (~1-3k
  rounds/s here), so its runs are capped (``vw_rounds``) and cached.

Scales: quick -- horizons 10^4 and 10^5 on digits, SynSep (2 x 10^4 examples) and Iris, 1 seed, VW at
10^4 rounds; paper scale -- horizons 10^4, 10^5, 10^6 on every available dataset, 2 seeds, VW at 10^5.
Every claim is decided on the seed means over at least DECISION_ROUNDS (5 x 10^4) rounds per learner: at 10^4
rounds on 5 seeds (the run's seeds and the next ones, played to 10^4 rounds only), nolo's learners, the AM
learners and VW squarecb alike, with the paired standard error of each decision beside it.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import pandas as pd

from nolo.experiments import Claim, ExperimentResult, experiment
from nolo.experiments.am import _common as C
from nolo.experiments.am import vw as V
from nolo.experiments.am.vs_peers_data import RFF_COMPONENTS, RFF_DATASETS, horizons, rff_rows, runs_rff, vw_rounds
from nolo.experiments.am.vs_peers_vw import VW_CODE, VW_RFF, vw_peers_task

AM_LEARNERS = ("Banditron", "BPA", "SOBA", "RCNBF", "RCINE")
#: the flip-corrected AM baselines (true rates; gamma = the tuned gamma of BPA / SOBA): does the correction or the
#: oracle buy SquareCB's gain?
CORRECTED = ("BPA-h", "SOBA-h")
#: the regression-oracle learners (SquareCB and FastCB variants): name -> constructor parameters (rates added per
#: cell; ``learner`` names the class, SquareCB when absent)
SQUARECB = {
    "SquareCB": dict(oracle="ridge", correction="target"),
    "SquareCB-none": dict(oracle="ridge", correction="none"),
    "SquareCB-gap": dict(oracle="ridge", correction="gap"),
    "SquareCB-gap-est": dict(oracle="ridge", correction="gap", estimate_rates=True),
    "SquareCB-ogd": dict(oracle="ogd", correction="target"),
    "FastCB": dict(learner="FastCB", oracle="ridge", correction="target"),
    "FastCB-ogd": dict(learner="FastCB", oracle="ogd", correction="target"),
    "FastCB-optimistic": dict(learner="FastCB", oracle="ridge", correction="target", prior_reward=1.0),
    "SquareCB-fdson": dict(oracle="fdson", correction="target"),
    "FastCB-fdson": dict(learner="FastCB", oracle="fdson", correction="target"),
    "LinUCB": dict(learner="LinUCB", oracle="ridge", correction="target"),
    "LinUCB-lam3": dict(learner="LinUCB", oracle="ridge", correction="target", lam=3.0),
    # on random Fourier features of the rows (RFF_COMPONENTS, RFF_DATASETS, rff_rounds): the FD-SON sketch
    "LinUCB-rff": dict(learner="LinUCB", oracle="fdson", correction="target", rff=True),
    "LinUCB-rff-lam5": dict(learner="LinUCB", oracle="fdson", correction="target", lam=5.0, rff=True),
    "FastCB-rff": dict(learner="FastCB", oracle="fdson", correction="target", rff=True),
}
#: nolo's fixed-configuration flip-aware learners given the true rates: the claims are decided on the best of these
#: per cell (named in the claim's statement); SquareCB's and FastCB's defaults also get a figure each
#: (not FastCB-optimistic, optimistic initialisation: reported beside them, it is not a default -- it loses on digits at
#: 10^5 rounds on the tuning data, docs/squarecb.md#synsep)
BEST_OF = ("SquareCB", "SquareCB-ogd", "FastCB", "FastCB-ogd", "SquareCB-fdson", "FastCB-fdson", "LinUCB", "LinUCB-lam3",
           "LinUCB-rff", "LinUCB-rff-lam5", "FastCB-rff", "KernelLabelTS-nys")
#: nolo's nonparametric learner (:class:`nolo.learners.bandit.KernelLabelTS`, default bandwidth and temperature, true
#: rates) on the Nystroem coordinates of the rows (:func:`nys_rows`), on the image data sets (``RFF_DATASETS``), to
#: KERNEL_TS_ROUNDS rounds at both scales: its rounds read every stored context, O(t) each (~1.5 s per 10^4-round
#: stream on 50 coordinates).  Added in session 9 for the heavy-noise short-horizon cells; its defaults were tuned on
#: stream seeds 1100-1119 (never the experiment's), after a first choice had met the experiment's USPS (0.4, 0.4)
#: cell at 0.705x -- docs/squarecb.md#kernel-label-ts
KERNEL_TS = "KernelLabelTS-nys"
KERNEL_TS_ROUNDS = 10_000
#: the Nystroem map (:class:`nolo.kernels.NystroemFeatures`): landmarks, coordinates kept (unit-norm rows), seed;
#: bandwidth by the median heuristic on the rows (inputs only, no labels), as the random features'
NYS_LANDMARKS = 1000
NYS_COMPONENTS = 50
NYS_SEED = 0
#: the candidates on random Fourier features (:class:`nolo.kernels.RandomFourierFeatures`: Gaussian kernel, bandwidth
#: by the median heuristic on the rows -- inputs only, no labels --, unit-norm rows, seed RFF_SEED; one map per data
#: set, shared by every stream), on the image data sets only -- SynSep is linearly separable by construction and Iris
#: has 4 features -- and to LINUCB_MAX_ROUNDS rounds (QUICK_RFF_ROUNDS at quick scale: they cost about 10^4
#: rounds/s, and the quick run's length is the newcomer's first run). lam = 5 for the strong prior: on digits under (0.4, 0.4) at 10^4
#: rounds (stream seeds 100-159) it erred 0.021-0.025 less than lam = 3, the pixels' choice (docs/squarecb.md#random-features)
RFF = tuple(n for n, kw in SQUARECB.items() if kw.get("rff"))
#: at quick scale the RFF candidates run too, on the image data sets the quick run has (digits), but only over the
#: first QUICK_RFF_ROUNDS rounds of each stream: the short-horizon cells, where heavy noise leaves the linear
#: learners at the bar (digits (0.4, 0.4) at 10^4: 0.71x VW on the pixels), at about 80 s of CPU in a first run
#: (30 streams of 10^4 rounds; LinUCB on 1000 features: ~8k rounds/s); VW on the features stays paper-scale
#: (``runs_rff``)
QUICK_RFF_ROUNDS = 10_000
DEFAULTS = ("SquareCB", "FastCB")
#: the ridge oracle on inputs of at most this dimension (digits 64, Iris 4, USPS 256); above, the OGD oracle (at
#: d = 400 the ridge oracle is 20-35x slower per round and, on SynSep at 10^4 rounds, no more accurate:
#: docs/squarecb.md#synsep)
RIDGE_MAX_D = 300
#: the FD-SON (sketched second-order) variants run where the ridge oracle does not, d > RIDGE_MAX_D (SynSep, MNIST;
#: below it they would only approximate the ridge oracle, which runs there): one rule per data set, not per cell
#: (docs/squarecb.md#mnist-second-order)
FDSON_MIN_D = RIDGE_MAX_D + 1
#: LinUCB's widths read every class's inverse each round (ridge: O(K d^2), about K times the ridge oracle's step; on
#: d > RIDGE_MAX_D the FD-SON sketch's, O(K m d)): it runs to at most this many rounds (loaded machine: digits ~50k
#: rounds/s, USPS ~4k) -- one rule for every data set, fixed before the runs (docs/squarecb.md#linucb)
LINUCB_MAX_ROUNDS = 100_000
VW_MODES = ("squarecb", "epsilon", "cbify")
#: why a claim may fail, per dataset (measured; docs/squarecb.md)
WHY = {"synsep": ("SynSep at 10^4 rounds (mean of 5 seeds): the first ~1,000 rounds of learning per label dominate; with "
                  "LinUCB every cell held in session 6 (quick and paper scale; 0.29-0.59x VW, below BPA noise-free), "
                  "FastCB alone had trailed BPA noise-free and missed 0.7x under (0.4, 0.4) -- docs/squarecb.md#linucb"),
       "digits": ("digits at 10^4 rounds under (0.4, 0.4), kappa = 0.2 (mean of 5 seeds): on the pixels LinUCB-lam3 "
                  "erred 0.71x (+- 0.02) as often as VW squarecb, at the 0.7x bar; on random Fourier features "
                  "(LinUCB-rff-lam5) 0.64x (+- 0.013) on the same streams -- docs/squarecb.md#random-features"),
       "mnist": ("MNIST (d = 784): on the pixels nolo's linear learners stayed short noise-free and under (0.15, 0.15) at "
                 "10^5 (0.82x, 0.76x: VW's linear learner is near a linear model's floor there) and under (0.4, 0.4) at "
                 "10^4 (0.75x); on random Fourier features (paper scale, session 7) LinUCB-rff errs 0.54x and 0.58x at "
                 "10^5, and LinUCB-rff-lam5 0.69x under (0.4, 0.4) at 10^4, at the bar -- docs/squarecb.md#random-features"),
       "usps": ("USPS: under the heaviest noise (0.4, 0.4), kappa = 0.2, at 10^4 rounds the linear and random-feature "
                "learners beat VW squarecb only by 24-28 % (5 seeds: 0.76x on the pixels, LinUCB-rff-lam5 0.72x on random "
                "Fourier features); KernelLabelTS-nys (session 9) erred 0.63x on the same streams -- "
                "docs/squarecb.md#kernel-label-ts")}
#: every claim is decided on the mean over seeds of at least this many rounds per learner: at horizon H on
#: S(H) = max(the run's seeds, ceil(DECISION_ROUNDS / H)) seeds -- 5 at 10^4 rounds, the run's own from 10^5 on.
#: Fixed before the runs it decides (docs/squarecb.md#synsep-seeds): single-seed cells at 10^4 rounds scatter by
#: +-40 %, 5 seeds cut that by sqrt(5), and cost half of one 10^5-round run per learner (VW: 4 runs of 10^4)
DECISION_ROUNDS = 50_000
#: in this order so that the first two differ in row type (Iris is dense, the others CSR): the
#: pool's first two tasks then compile different stream loops (see ``cells`` in :func:`vs_peers`)
QUICK_DATASETS = ("digits", "iris", "synsep")
ALL_DATASETS = ("digits", "iris", "synsep", "usps", "mnist")


def decision_seeds(seeds, horizon: int) -> list[int]:
    """The seeds a claim at ``horizon`` is decided on: ``seeds`` (the run's), then the next integers up to
    ceil(DECISION_ROUNDS / horizon) seeds in all.

    >>> decision_seeds([0], 10_000), decision_seeds([0, 1], 10_000), decision_seeds([0, 1], 100_000)
    ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1])
    """
    seeds = [int(s) for s in seeds]
    n = max(len(seeds), -(-DECISION_ROUNDS // int(horizon)))
    return seeds + [max(seeds) + 1 + i for i in range(n - len(seeds))]


def extra_runs(seeds, hs) -> dict[int, int]:
    """{seed: rounds} of the runs beyond ``seeds`` that :func:`decision_seeds` asks for at the horizons ``hs``: each
    extra seed is played to the longest horizon that is decided on it."""
    out: dict[int, int] = {}
    for H in sorted(hs):
        for s in decision_seeds(seeds, H)[len(seeds):]:
            out[s] = max(out.get(s, 0), int(H))
    return out


def rff_rounds(dataset: str, quick: bool) -> int:
    """How many rounds of each stream the RFF candidates play on ``dataset`` (0: they do not run there):
    LINUCB_MAX_ROUNDS on the image data sets (``RFF_DATASETS``), QUICK_RFF_ROUNDS at quick scale.

    >>> rff_rounds("digits", True), rff_rounds("digits", False), rff_rounds("synsep", False)
    (10000, 100000, 0)
    """
    if dataset not in RFF_DATASETS:
        return 0
    return QUICK_RFF_ROUNDS if quick else LINUCB_MAX_ROUNDS


@lru_cache(maxsize=2)
def nys_rows(dataset: str, quick: bool) -> np.ndarray:
    """The data set's rows as NYS_COMPONENTS unit-norm Nystroem kernel-PCA coordinates (NYS_LANDMARKS landmarks,
    seed NYS_SEED), once per process.  (Here, not in ``vs_peers_data``: that module is part of VW's run key,
    ``VW_CODE``, and VW never sees these rows.)"""
    from nolo.kernels import NystroemFeatures

    X = C.load(dataset, quick)[0]
    return NystroemFeatures(n_landmarks=NYS_LANDMARKS, n_components=NYS_COMPONENTS, seed=NYS_SEED).fit_transform(X)


def make_squarecb(name: str, K: int, d: int, rho0: float, rho1: float, seed: int):
    """The regression-oracle learner ``name`` of SQUARECB for inputs of width ``d`` (the random features' width
    for the RFF candidates)."""
    from nolo.learners import bandit

    kw = dict(SQUARECB[name])
    kw.pop("rff", None)
    cls = getattr(bandit, kw.pop("learner", "SquareCB"))
    if cls is bandit.LinUCB and d > RIDGE_MAX_D:  # its widths from the FD-SON sketch (no OGD: it keeps no inverse)
        kw["oracle"] = "fdson"
    if d > RIDGE_MAX_D and kw["oracle"] == "ridge":
        kw["oracle"] = "ogd"
    if kw.get("estimate_rates"):
        return cls(n_classes=K, seed=seed, **kw)  # starts from rho = 0, never sees the true rates
    return cls(n_classes=K, rho0=rho0, rho1=rho1, seed=seed, **kw)


def gammas_task(dataset: str, rho0: float, rho1: float, quick: bool, rounds: int) -> dict:
    """The AM learners' gammas of one (dataset, noise) cell, tuned over ``rounds`` on their own seeds (the same for
    every stream seed of the cell); RCINE takes RCNBF's."""
    g = [C.tune_gamma(a, dataset, quick, rho0, rho1, int(rounds), 10_000 + 7 * i)
         for i, a in enumerate(("Banditron", "BPA", "SOBA", "RCNBF"))]
    return {"learner": np.array(AM_LEARNERS), "gamma": np.array([*g, g[-1]])}


def peers_task(dataset: str, rho0: float, rho1: float, seed: int, quick: bool, rounds: int, gammas=None,
               stop=None) -> dict:
    """Every nolo learner on the stream of (dataset, rho0, rho1, seed); cumulative error at log-spaced checkpoints.

    ``rounds``: the run's horizon (the learners are set up for it: RCINE's refit schedule); ``stop``: play only the
    first ``stop`` rounds of it (the extra seeds of the short horizons: the same rounds a full run plays first);
    ``gammas``: the AM learners' gammas by name (:func:`gammas_task`), tuned here when None."""
    from nolo.learners.bandit import log_checkpoints, run_stream

    X, y = C.load_stream(dataset, quick)
    K, d = int(y.max()) + 1, X.shape[1]
    T = int(rounds)
    cps = np.union1d(log_checkpoints(T, 40), [h for h in horizons(quick) if h <= T])
    if stop is not None:
        cps = np.union1d(cps[cps < int(stop)], [int(stop)])
    n_play = int(cps[-1])
    rows: dict[str, list] = {k: [] for k in ("learner", "t", "error_rate", "seconds", "gamma", "rho0_hat", "rho1_hat",
                                             "oracle")}

    def add(name, res, gamma=np.nan, est=(np.nan, np.nan), oracle=""):
        n = res.checkpoints.size
        rows["learner"] += [name] * n
        rows["t"] += res.checkpoints.tolist()
        rows["error_rate"] += res.error_rate.tolist()
        rows["seconds"] += [res.seconds] * n
        rows["gamma"] += [gamma] * n
        rows["rho0_hat"] += [float(est[0])] * n
        rows["rho1_hat"] += [float(est[1])] * n
        rows["oracle"] += [oracle] * n

    if gammas is None:
        g = gammas_task(dataset, rho0, rho1, quick, T)
        gammas = dict(zip(g["learner"].tolist(), g["gamma"].tolist()))
    gammas = {k: float(v) for k, v in gammas.items()}
    for algo in AM_LEARNERS:
        m = C.make_learner(algo, K, gammas[algo], rho0, rho1, int(seed), quick=quick, rounds=T, dataset=dataset)
        res = run_stream(m, X, y, n_play, rho0, rho1, seed=1_000 + int(seed), checkpoints=cps)
        est = m.estimates_[-1] if algo == "RCINE" and len(m.estimates_) else (np.nan, np.nan)
        add(algo, res, gammas[algo], est)
    from nolo.learners.bandit import BPAh, SOBAh

    for name, cls, g in (("BPA-h", BPAh, gammas["BPA"]), ("SOBA-h", SOBAh, gammas["SOBA"])):
        m = cls(n_classes=K, gamma=g, rho0=rho0, rho1=rho1, seed=int(seed))
        add(name, run_stream(m, X, y, n_play, rho0, rho1, seed=1_000 + int(seed), checkpoints=cps), g)
    for name in SQUARECB:
        rff = SQUARECB[name].get("rff", False)
        if rff and not rff_rounds(dataset, quick):
            continue
        Xn, dn = (rff_rows(dataset, quick), RFF_COMPONENTS) if rff else (X, d)
        if SQUARECB[name]["oracle"] == "fdson" and dn < FDSON_MIN_D:
            continue
        n_run, cps_run = n_play, cps
        if rff or SQUARECB[name].get("learner") == "LinUCB":
            n_run = min(n_play, rff_rounds(dataset, quick) if rff else LINUCB_MAX_ROUNDS)
            cps_run = cps[cps <= n_run]
        m = make_squarecb(name, K, dn, rho0, rho1, int(seed))
        res = run_stream(m, Xn, y, n_run, rho0, rho1, seed=1_000 + int(seed), checkpoints=cps_run)
        g = np.nan if SQUARECB[name].get("learner") == "LinUCB" else float(m.gamma_scale)  # LinUCB has no gamma
        add(name, res, g, m.rates_ if m.estimate_rates else (np.nan, np.nan), m.oracle)
    if dataset in RFF_DATASETS:
        from nolo.learners.bandit import KernelLabelTS

        n_run = min(n_play, KERNEL_TS_ROUNDS)
        m = KernelLabelTS(n_classes=K, rho0=rho0, rho1=rho1, seed=int(seed))
        res = run_stream(m, nys_rows(dataset, quick), y, n_run, rho0, rho1, seed=1_000 + int(seed),
                         checkpoints=cps[cps <= n_run])
        add(KERNEL_TS, res)
    return {k: np.asarray(v) for k, v in rows.items()}


def vw_tasks(datasets, seeds, quick: bool) -> list[dict]:
    """VW's tasks of a ``vs-peers`` run: squarecb and epsilon (cbify noise-free) on the run's first seed to
    :func:`vw_rounds`, squarecb on the extra seeds of the short horizons (:func:`extra_runs`), and squarecb on the
    random features where the RFF candidates run.  (Their runs are keyed by ``VW_CODE`` only: computed once, they
    are reused across changes to nolo's learners.)"""
    TV = vw_rounds(quick)
    s0 = int(seeds[0])
    out = [{"dataset": d, "rho0": r0, "rho1": r1, "seed": s0, "quick": bool(quick), "rounds": TV, "mode": mode}
           for d in datasets for (r0, r1) in C.SETTINGS for mode in VW_MODES
           if not (mode == "cbify" and (r0, r1) != (0.0, 0.0))]
    vextra = extra_runs([s0], [h for h in horizons(quick) if h <= TV])
    out += [{"dataset": d, "rho0": r0, "rho1": r1, "seed": s, "quick": bool(quick), "rounds": H, "mode": "squarecb"}
            for d in datasets for (r0, r1) in C.SETTINGS for s, H in vextra.items()]
    out += [{"dataset": d, "rho0": r0, "rho1": r1, "seed": s0, "quick": bool(quick), "rounds": TV, "mode": VW_RFF}
            for d in datasets if runs_rff(d, quick) for (r0, r1) in C.SETTINGS]
    return out


def paired_se(a: pd.Series, b: pd.Series, r: float = 1.0) -> float:
    """Standard error of the mean of a_s - r b_s over the seeds s both have (NaN below 2 seeds): for r = 1 that of
    the difference of two seed means; for r = mean(a) / mean(b), divided by mean(b), the delta-method standard error
    of the ratio of the means."""
    both = a.notna() & b.notna()
    k = int(both.sum())
    if k < 2:
        return float("nan")
    return float(np.std(a[both].to_numpy() - r * b[both].to_numpy(), ddof=1) / np.sqrt(k))


COLORS = {"Banditron": "tab:blue", "BPA": "tab:orange", "SOBA": "tab:green", "RCNBF": "tab:red", "RCINE": "tab:purple",
          "BPA-h": "gold", "SOBA-h": "lime", "SquareCB": "black", "SquareCB-none": "0.35", "SquareCB-gap": "tab:brown", "SquareCB-gap-est": "tab:pink",
          "SquareCB-ogd": "tab:olive", "FastCB": "navy", "FastCB-ogd": "darkcyan", "FastCB-optimistic": "slateblue", "SquareCB-fdson": "darkorange", "FastCB-fdson": "teal", "LinUCB": "crimson", "LinUCB-lam3": "magenta", "LinUCB-rff": "darkred", "LinUCB-rff-lam5": "deeppink", "FastCB-rff": "midnightblue", "KernelLabelTS-nys": "darkgreen", "VW squarecb-rff": "tab:pink", "VW squarecb": "tab:cyan", "VW epsilon": "tab:gray", "VW cbify": "tab:gray"}


def _plot(ctx, df: pd.DataFrame, vw: pd.DataFrame | None, dataset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True, sharey=True)
    for ax, (r0, r1) in zip(axes.ravel(), C.SETTINGS):
        sub = df[(df.dataset == dataset) & (df.rho0 == r0) & (df.rho1 == r1)]
        for name in (*AM_LEARNERS, *CORRECTED, *SQUARECB):
            g = sub[sub.learner == name].groupby("t").error_rate.mean()
            if not g.empty:
                ax.plot(g.index, g.values, "-", color=COLORS[name], lw=1.8 if name in DEFAULTS else 1.1, label=name)
        if vw is not None:
            v = vw[(vw.dataset == dataset) & (vw.rho0 == r0) & (vw.rho1 == r1)]
            for mode in (*VW_MODES, VW_RFF):
                g = v[v["mode"] == mode].groupby("t").error_rate.mean()
                if not g.empty:
                    ax.plot(g.index, g.values, "--", color=COLORS[f"VW {mode}"], lw=1.2, label=f"VW {mode}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(C.setting_label(r0, r1), fontsize=9)
        ax.grid(True, which="both", alpha=0.2)
    axes[0, 0].legend(fontsize=6, loc="lower left")
    for ax in axes[-1]:
        ax.set_xlabel("round")
    for ax in axes[:, 0]:
        ax.set_ylabel("cumulative error rate")
    fig.suptitle(f"vs-peers: {dataset}, every learner fed the flipped bit on the same stream")
    fig.tight_layout()
    ctx.save_figure(fig, f"vs_peers_{dataset}")


def _bold_table(fin: pd.DataFrame) -> pd.DataFrame:
    """Final cumulative error per (dataset, noise, horizon) x learner, the best of each row in **bold** (markdown)."""
    piv = fin.pivot_table(index=["dataset", "rho0", "rho1", "horizon"], columns="learner", values="error_rate")
    out = piv.copy().astype(object)
    for key, row in piv.iterrows():
        best = row.min()
        for col in piv.columns:
            v = row[col]
            out.loc[key, col] = "" if not np.isfinite(v) else (f"**{v:.3f}**" if v == best else f"{v:.3f}")
    return out.reset_index()


@experiment(paper="am", id="vs-peers", title="SquareCB and every nolo bandit learner vs Vowpal Wabbit on the same noisy streams",
            quick_seeds=1, full_seeds=2)
def vs_peers(ctx):
    datasets, skipped = C.available(QUICK_DATASETS if ctx.quick else ALL_DATASETS, quick=ctx.quick)
    hs = horizons(ctx.quick)
    T = max(hs)
    # data sets interleaved (noise setting, then data set), so that the pool's workers start on different data sets:
    # each compiles the stream loops for its rows' type (dense Iris, CSR for the others; on a cold numba cache
    # ~150 s per type) and then reads the other's from numba's cache, instead of both compiling the same loops
    # (QUICK_DATASETS' order)
    cells = [{"dataset": d, "rho0": r0, "rho1": r1, "quick": bool(ctx.quick)} for (r0, r1) in C.SETTINGS for d in datasets]
    t0 = time.perf_counter()
    gframes = ctx.map(gammas_task, [{**c, "rounds": T} for c in cells], name="am_vs_peers_gammas")
    gammas = [dict(zip(f.learner.tolist(), f.gamma.tolist())) for f in gframes]
    # the run's seeds over the whole horizon, then the extra seeds of the short horizons (DECISION_ROUNDS)
    extra = extra_runs(ctx.seeds, hs)
    tasks = [{**c, "seed": int(s), "rounds": T, "gammas": g} for c, g in zip(cells, gammas) for s in ctx.seeds]
    tasks += [{**c, "seed": s, "rounds": T, "gammas": g, "stop": H} for c, g in zip(cells, gammas)
              for s, H in extra.items()]
    frames = ctx.map(peers_task, tasks, name="am_vs_peers")
    wall = time.perf_counter() - t0
    df = pd.concat([f.assign(dataset=t["dataset"], rho0=t["rho0"], rho1=t["rho1"], seed=t["seed"])
                    for t, f in zip(tasks, frames)], ignore_index=True)
    vw = None
    vw_note = "Vowpal Wabbit is not installed (pip install vowpalwabbit): its columns and the claims against it are skipped."
    if V.available():
        TV = vw_rounds(ctx.quick)
        s0 = int(ctx.seeds[0])
        vtasks = vw_tasks(datasets, ctx.seeds, ctx.quick)
        vextra = extra_runs([s0], [h for h in hs if h <= TV])
        vframes = ctx.map(vw_peers_task, vtasks, name="am_vs_peers_vw", code_scope=VW_CODE,
                          packages=("vowpalwabbit",))
        vw = pd.concat([f.assign(dataset=t["dataset"], rho0=t["rho0"], rho1=t["rho1"], mode=t["mode"], seed=t["seed"])
                        for t, f in zip(vtasks, vframes)], ignore_index=True)
        vw_note = (f"Vowpal Wabbit {'--cb_explore_adf --squarecb -q sa'}, {'--cb_explore_adf --epsilon 0.05 -q sa'} "
                   f"(cost = 1 - flipped bit, on the same stream) and --cbify (noise-free only) ran {TV:,} rounds, one "
                   "seed: driven from Python it manages ~1-3k rounds/s here, so longer horizons are compared only "
                   "among nolo's learners."
                   + (f" VW squarecb also ran seeds {', '.join(map(str, vextra))} to "
                      f"{', '.join(sorted({f'{H:,}' for H in vextra.values()}))} rounds, for the short-horizon claims."
                      if vextra else "")
                   + (f" On {', '.join(d for d in datasets if runs_rff(d, ctx.quick))} VW squarecb also ran on the "
                      f"random Fourier features the RFF candidates see ('VW {VW_RFF}', seed {s0}, {TV:,} rounds; "
                      "figure best_rff_over_vw_squarecb_rff, no claim)."
                      if any(runs_rff(d, ctx.quick) for d in datasets) else ""))
    # final errors per horizon and seed: a claim at horizon H is decided on the seeds played to H (decision_seeds)
    rows = [df[df.t.isin(hs)].rename(columns={"t": "horizon"})[["dataset", "rho0", "rho1", "horizon", "learner",
                                                               "seed", "error_rate"]]]
    if vw is not None:
        v = vw[vw.t.isin(hs)].rename(columns={"t": "horizon"})
        rows.append(v.assign(learner="VW " + v["mode"])[["dataset", "rho0", "rho1", "horizon", "learner", "seed",
                                                         "error_rate"]])
    per_seed = pd.concat(rows, ignore_index=True).astype({"horizon": np.int64, "seed": np.int64})
    fin = per_seed.groupby(["dataset", "rho0", "rho1", "horizon", "learner"]).error_rate.mean().reset_index()
    long_df = df[df.seed.isin(ctx.seeds)]  # the curves: the run's seeds over the whole horizon
    for d in datasets:
        _plot(ctx, long_df, None if vw is None else vw[vw.seed == int(ctx.seeds[0])], d)
    figures, claims, decisions = {}, [], []
    for (d, r0, r1, H), cell in per_seed.groupby(["dataset", "rho0", "rho1", "horizon"]):
        tab = cell.pivot_table(index="seed", columns="learner", values="error_rate")  # seed x learner, NaN: not run
        e = tab.mean()
        key = f"{d}/{r0:g},{r1:g}/{H}"
        for name, v in e.items():
            figures[f"final_error/{key}/{name}"] = (float(v), "rate")
        best = min((n for n in BEST_OF if n in e.index), key=lambda n: (float(e[n]), BEST_OF.index(n)))
        ours = float(e[best])
        n_seeds = int(tab[best].notna().sum())
        over = f"; mean of {n_seeds} seeds" if n_seeds > 1 else ""
        figures[f"n_seeds/{key}"] = (float(n_seeds), "seeds")
        why = WHY.get(d, "")
        am = min(AM_LEARNERS, key=lambda n: float(e[n]))
        best_am = float(e[am])
        vw_sq = float(e["VW squarecb"]) if "VW squarecb" in e.index else None
        for name in (n for n in (*DEFAULTS, "FastCB-optimistic") if n in e.index):  # each alone, for the record
            figures[f"{name.lower()}_minus_best_am/{key}"] = (float(e[name]) - best_am, "rate")
            if vw_sq is not None:
                figures[f"{name.lower()}_over_vw_squarecb/{key}"] = (float(e[name]) / max(vw_sq, 1e-12), "ratio")
        figures[f"best_minus_best_am/{key}"] = (ours - best_am, "rate")
        se_am = paired_se(tab[best], tab[am])
        if np.isfinite(se_am):
            figures[f"best_minus_best_am_se/{key}"] = (se_am, "rate")
        claims.append(Claim(statement=f"{key}: nolo's best flip-aware learner with the true rates ({best}; best of "
                                      f"{', '.join(BEST_OF)}) ends at or below every AM learner (Banditron, BPA, SOBA, "
                                      f"RCNBF, RCINE){over}", figure=f"best_minus_best_am/{key}", op="<=",
                            threshold=0.0, why=why))
        row = {"dataset": d, "rho0": r0, "rho1": r1, "horizon": int(H), "n_seeds": n_seeds, "best": best, "best_error": ours,
               "best_am": am, "best_am_error": best_am, "best_minus_best_am": ours - best_am, "paired_se_am": se_am}
        if vw_sq is not None:
            ratio = ours / max(vw_sq, 1e-12)
            figures[f"best_over_vw_squarecb/{key}"] = (ratio, "ratio")
            se_vw = paired_se(tab[best], tab["VW squarecb"], ratio) / max(vw_sq, 1e-12)
            if np.isfinite(se_vw):
                figures[f"best_over_vw_squarecb_se/{key}"] = (se_vw, "ratio")
            n_vw = int(tab["VW squarecb"].notna().sum())
            over_vw = f"; means of {n_seeds} and {n_vw} seeds" if n_vw != n_seeds else over
            claims.append(Claim(statement=f"{key}: nolo's best flip-aware learner with the true rates ({best}) errs at "
                                          "most 0.7 x as often as VW --cb_explore_adf --squarecb on the same flipped "
                                          f"bits{over_vw}", figure=f"best_over_vw_squarecb/{key}", op="<=",
                                threshold=0.7, why=why))
            row.update(vw_squarecb_error=vw_sq, vw_seeds=n_vw, best_over_vw_squarecb=ratio, paired_se_vw=se_vw)
        if f"VW {VW_RFF}" in e.index and any(n in e.index for n in RFF):
            # the same random features on both sides (for the record: VW on them ran one seed)
            rb = min((n for n in RFF if n in e.index), key=lambda n: float(e[n]))
            vr = float(e[f"VW {VW_RFF}"])
            figures[f"best_rff_over_vw_squarecb_rff/{key}"] = (float(e[rb]) / max(vr, 1e-12), "ratio")
            row.update(best_rff=rb, best_rff_error=float(e[rb]), vw_squarecb_rff_error=vr,
                       best_rff_over_vw_squarecb_rff=float(e[rb]) / max(vr, 1e-12))
        decisions.append(row)
        if H >= 100_000:
            # signed: not knowing the rates may cost at most 0.02 (estimated rates that explore more than the
            # true ones can do better: SynSep (0.4, 0.4) 0.121 vs 0.214 in the quick run, docs/squarecb.md)
            gap = float(e["SquareCB-gap-est"]) - float(e["SquareCB-gap"])
            figures[f"unknown_minus_known_rates/{key}"] = (gap, "rate")
            claims.append(Claim(statement=f"{key}: SquareCB-gap with rates estimated online from its own oracle errs "
                                          "at most 0.02 more than the same learner given the true rates",
                                figure=f"unknown_minus_known_rates/{key}", op="<=", threshold=0.02))
    # the rate estimates (vs NREst in RCINE, on the same streams)
    last = df[df.t == T].groupby(["dataset", "rho0", "rho1", "learner"])[["rho0_hat", "rho1_hat"]].mean().reset_index()
    est = last[last.learner.isin(["SquareCB-gap-est", "RCINE"])].pivot_table(
        index=["dataset", "rho0", "rho1"], columns="learner", values=["rho0_hat", "rho1_hat"])
    est.columns = [f"{a}:{b}" for a, b in est.columns]
    est = est.reset_index()
    for _, r in est.iterrows():
        for who in ("SquareCB-gap-est", "RCINE"):
            if f"rho0_hat:{who}" in est:
                err = abs(r[f"rho0_hat:{who}"] - r.rho0) + abs(r[f"rho1_hat:{who}"] - r.rho1)
                figures[f"rate_abs_error/{r.dataset}/{r.rho0:g},{r.rho1:g}/{who}"] = (float(err) / 2, "rate")
    nolo_seconds = float(df.groupby(["dataset", "rho0", "rho1", "seed", "learner"]).seconds.first().sum())
    figures["seconds_nolo_learners"] = (nolo_seconds, "s")
    figures["seconds_wall_nolo_tasks"] = (wall, "s")
    held = sum(c.holds(ExperimentResult(figures=figures).figures) for c in claims)
    notes = (f"{held} of {len(claims)} claims hold. " + (__doc__.split("Scales:")[1].strip()) + " " + vw_note +
             f" The nolo tasks (gamma tuning of the AM learners included) took {wall:.0f} s wall "
             f"({nolo_seconds:.0f} s inside the learners' stream loops). Table 'final_errors': mean final cumulative "
             "error over the seeds a claim is decided on, best of each row in bold. Table 'decisions': per cell, the "
             "seeds, nolo's best and the best AM learner with the paired standard error of their difference, VW "
             "squarecb and the ratio with its paired (delta-method) standard error. Table 'rate_estimates': "
             "SquareCB-gap-est's online estimate "
             "at the last round vs RCINE's last NREst estimate on the same stream.")
    if skipped:
        notes += " Skipped (files absent): " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
    return ExperimentResult(figures=figures, claims=claims,
                            tables={"final_errors": _bold_table(fin), "decisions": pd.DataFrame(decisions),
                                    "rate_estimates": est}, notes=notes)
