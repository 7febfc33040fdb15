"""Learning and evaluating from a log of noisy bandit feedback: flip-corrected off-policy estimates, the flip rates
read from the log, and a policy learned from it against Vowpal Wabbit ``--cb_adf`` (docs/offpolicy.md#experiment).

**Logs.**  Each data set's examples (unit-norm rows, as in AM) are split by a seeded permutation: 30 % held out, the
rest the *pool*.  A log of ``rows`` rounds draws its contexts from the pool uniformly with replacement (AM's stream);
the logger plays

* ``uniform`` -- every label with probability 1/K;
* ``softmax`` -- a weak policy's softmax: a ridge classifier fitted on ``WEAK_EXAMPLES`` labelled pool examples,
  its scores standardised per row and played with probabilities softmax(scores) (known propensities, top label
  ~0.5-0.6 on average, the smallest propensities near 0.01);

and the bit is the AM flip channel's: a right play reads 0 with probability rho1, a wrong one 1 with probability rho0.

**Evaluation.**  The target policy is a ridge classifier fitted on ``TARGET_EXAMPLES`` other labelled pool examples,
played epsilon-greedy (epsilon = 0.1).  Its true value is its clean reward averaged over the pool (the distribution
the log's contexts come from), computed from the labels.  Every estimator of :mod:`nolo.offpolicy` estimates it from
the log with the known rates (corrected) and with the bit taken as the reward (uncorrected, what VW and OBP report):
does the 95 % interval hold the truth, and by how much is each estimate off?

**Rates.**  ``nolo estimate-noise``'s default (NREst, anchors rule, the command's network) with a 95 % half-sampling
interval (20 halves) on the logs of ``*_RATE_ROWS`` rounds (the first seed; at quick scale digits only): does the
interval hold the true (rho0, rho1), and where it does not, did the estimator's diagnosis warn?

**Learning.**  ``default_learner`` with the known rates learns the log in one pass (:func:`nolo.offpolicy.learn.learn_log`:
its oracles regress the bit on (context, label), which is sound for any logger that gives every label a positive
probability); the same learner on the importance-replicated log is reported beside it (not the claim's learner);
Vowpal Wabbit ``--cb_adf -q sa`` with ``--cb_type`` ips, dr and mtr learns the same rows in one pass (the bit as the
reward, VW's defaults otherwise); each then plays greedily on the held-out examples, scored on their clean labels
(at quick scale on the first seed).

Nothing is tuned: every learner, logger and estimator at the configuration fixed in this module; the claims are
decided on the stream seeds of the run (``ctx.seeds``, and for the OPE logs at quick scale four logs per seed,
:func:`ope_seeds`), which no setting here was chosen on.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo._validation import check_choice
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult

#: held-out share of each data set's examples (the learned policies are scored on it)
HELD_OUT = 0.3
#: labelled pool examples the weak logger and the target policy are fitted on
WEAK_EXAMPLES, TARGET_EXAMPLES = 30, 300
TARGET_EPSILON = 0.1
RIDGE_LAM = 1.0
#: the noise settings (rho0, rho1) and log lengths by scale
QUICK_SETTINGS = ((0.15, 0.15), (0.2, 0.4))
PAPER_SETTINGS = ((0.0, 0.0), (0.15, 0.15), (0.25, 0.25), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2))
QUICK_ROWS, PAPER_ROWS = (3_000, 20_000), (3_000, 20_000, 100_000)
#: the logs the rates are estimated on, and the log the policies learn from
QUICK_RATE_ROWS, PAPER_RATE_ROWS = (3_000,), (3_000, 20_000, 100_000)
QUICK_RATE_DATASETS = ("digits",)
LEARN_ROWS = 20_000
QUICK_DATASETS, PAPER_DATASETS = ("digits", "synsep"), ("digits", "usps", "mnist", "synsep")
LOGGERS = ("uniform", "softmax")
OPE_METHODS = ("ips", "snips", "dr", "switch-dr")
VW_CB_TYPES = ("ips", "dr", "mtr")
LEVEL = 0.95
RATE_HALVES = 20
#: logs per OPE cell and run seed, by scale.  A coverage claim of 95 % intervals at a 90 % bar needs about a hundred
#: logs to be decided: on 32 (two seeds at quick scale) an estimator of exact 95 % coverage misses the bar in one run
#: of fourteen (P(Binomial(32, 0.05) >= 4) = 0.074), and one of 93 % coverage in one of five; on 128, in one of 83
#: (P(Binomial(128, 0.05) >= 13) = 0.012).  The OPE cells are cheap, so quick
#: scale plays four logs per run seed (``ope_seeds``); paper scale's 600 noisy logs need no more.
QUICK_OPE_LOGS_PER_SEED, PAPER_OPE_LOGS_PER_SEED = 4, 1


def ope_seeds(seeds, per_seed: int) -> list[int]:
    """The OPE logs' seeds: ``s + j M`` for each run seed ``s`` and j < ``per_seed``, M = max(seeds) + 1 (so distinct
    for any distinct non-negative run seeds, and the run seeds themselves first; two seeds give 0..7 at quick scale)."""
    seeds = [int(s) for s in seeds]
    M = max(seeds) + 1
    return [s + M * j for j in range(int(per_seed)) for s in seeds]


def _ridge(X: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """(d, K) one-vs-rest ridge weights on one-hot targets."""
    Y = np.eye(K)[y]
    return np.linalg.solve(X.T @ X + RIDGE_LAM * np.eye(X.shape[1]), X.T @ Y)


class LinearPolicy:
    """A policy over K labels from linear scores ``X @ W``: ``"greedy"`` with ``epsilon`` uniform exploration, or
    ``"softmax"`` of the per-row standardised scores.  Has what :func:`nolo.offpolicy.file_eval.load_policy` needs."""

    def __init__(self, W: np.ndarray, kind: str, epsilon: float = 0.0):
        self.W, self.kind, self.epsilon = W, check_choice(kind, "kind", ("greedy", "softmax")), float(epsilon)
        self.n_classes = W.shape[1]

    def action_probabilities(self, X) -> np.ndarray:
        S = np.asarray(X, dtype=np.float64) @ self.W
        K = self.n_classes
        if self.kind == "softmax":
            Z = (S - S.mean(axis=1, keepdims=True)) / np.maximum(S.std(axis=1, keepdims=True), 1e-12)
            E = np.exp(Z - Z.max(axis=1, keepdims=True))
            return E / E.sum(axis=1, keepdims=True)
        P = np.full(S.shape, self.epsilon / K)
        P[np.arange(S.shape[0]), np.argmax(S, axis=1)] += 1.0 - self.epsilon
        return P


def make_log(dataset: str, quick: bool, rho0: float, rho1: float, logger: str, rows: int, seed: int) -> dict:
    """One cell's log and what scoring it needs (module docstring): ``X, played, propensity, bit`` of the log,
    ``target`` (a :class:`LinearPolicy`), ``true_value`` (its clean reward over the pool), ``X_test, y_test``."""
    from nolo.papers.am import _common as C

    X, y = C.load(dataset, quick)
    K = int(y.max()) + 1
    n = X.shape[0]
    # the split and the two fitted policies depend on the data set and the seed only (shared by every cell of it)
    rng = np.random.default_rng([int(seed), 7, n])
    perm = rng.permutation(n)
    n_test = int(HELD_OUT * n)
    test, pool = perm[:n_test], perm[n_test:]
    weak = pool[:WEAK_EXAMPLES]
    tgt = pool[WEAK_EXAMPLES:WEAK_EXAMPLES + TARGET_EXAMPLES]
    target = LinearPolicy(_ridge(X[tgt], y[tgt], K), "greedy", TARGET_EPSILON)
    Pt = target.action_probabilities(X[pool])
    true_value = float(Pt[np.arange(pool.size), y[pool]].mean())
    # the log: its own generator per (cell, seed)
    lrng = np.random.default_rng([int(seed), int(rows), round(rho0 * 1000), round(rho1 * 1000),
                                  LOGGERS.index(logger), n])
    idx = pool[lrng.integers(pool.size, size=int(rows))]
    Xl = X[idx]
    if logger == "uniform":
        P = np.full((int(rows), K), 1.0 / K)
    else:
        P = LinearPolicy(_ridge(X[weak], y[weak], K), "softmax").action_probabilities(Xl)
    u = lrng.random(int(rows))
    played = np.minimum((np.cumsum(P, axis=1) < u[:, None]).sum(axis=1), K - 1)
    right = played == y[idx]
    flip = lrng.random(int(rows))
    bit = np.where(right, flip >= rho1, flip < rho0).astype(np.int64)
    return {"X": Xl, "y": y[idx], "played": played, "propensity": P[np.arange(int(rows)), played], "bit": bit,
            "K": K, "target": target, "true_value": true_value, "X_test": X[test], "y_test": y[test]}


def ope_cell(dataset: str, quick: bool, rho0: float, rho1: float, logger: str, rows: int, seed: int) -> pd.DataFrame:
    """Every off-policy estimate of the target's value on one log, corrected (known rates) and uncorrected."""
    from nolo.offpolicy.file_eval import evaluate_arrays

    L = make_log(dataset, quick, rho0, rho1, logger, rows, seed)
    ev = evaluate_arrays(L["X"], L["played"], L["propensity"], L["bit"], L["target"], n_classes=L["K"],
                         rho0=rho0, rho1=rho1, methods=OPE_METHODS, level=LEVEL)
    out = []
    for corrected, ests in ((True, ev.corrected), (False, ev.uncorrected)):
        for m, e in ests.items():
            out.append({"dataset": dataset, "rho0": rho0, "rho1": rho1, "logger": logger, "rows": rows, "seed": seed,
                        "method": m, "corrected": corrected, "value": e.value, "se": e.se, "lo": e.ci[0],
                        "hi": e.ci[1], "true_value": L["true_value"], "covers": e.covers(L["true_value"]),
                        "ess": ev.ess, "max_weight": ev.max_weight})
    return pd.DataFrame(out)


def rates_cell(dataset: str, quick: bool, rho0: float, rho1: float, logger: str, rows: int, seed: int) -> dict:
    """``nolo estimate-noise``'s default estimate of the rates from one log, with its 95 % half-sampling interval."""
    from nolo.noise_rates.methods import DEFAULT_METHOD, make_estimator
    from nolo.noise_rates.bootstrap import bootstrap_rates
    from nolo.noise_rates.regime import diagnose

    L = make_log(dataset, quick, rho0, rho1, logger, rows, seed)
    est = make_estimator(DEFAULT_METHOD, random_state=int(seed))
    est.fit(L["X"], L["played"], L["bit"], n_classes=L["K"])
    ci = bootstrap_rates(est, L["X"], L["played"], L["bit"], n_classes=L["K"], n_boot=RATE_HALVES, level=LEVEL,
                         seed=int(seed))
    warned = len(diagnose(est, L["X"], L["played"], L["bit"]).warnings) > 0
    return {"dataset": dataset, "rho0": rho0, "rho1": rho1, "logger": logger, "rows": rows, "seed": seed,
            "rho0_hat": float(est.rho0_), "rho1_hat": float(est.rho1_), "rho0_lo": ci.rho0[0], "rho0_hi": ci.rho0[1],
            "rho1_lo": ci.rho1[0], "rho1_hi": ci.rho1[1],
            "covers": bool(ci.rho0[0] <= rho0 <= ci.rho0[1] and ci.rho1[0] <= rho1 <= ci.rho1[1]),
            "warned": warned}


def _vw_error(L: dict, cb_type: str, seed: int) -> float:
    """VW ``--cb_adf -q sa --cb_type cb_type`` trained on the log in one pass (cost 1 - bit), greedy on the held-out
    examples: its clean error there."""
    import vowpalwabbit

    from nolo.papers.am.vw import feature_lines

    K = L["K"]
    acts = [f"|a a{k}" for k in range(K)]
    ws = vowpalwabbit.Workspace(f"--cb_adf -q sa --cb_type {cb_type} --quiet --random_seed {int(seed)}")
    try:
        for line, a, p, f in zip(feature_lines(L["X"]), L["played"].tolist(), L["propensity"].tolist(),
                                 L["bit"].tolist()):
            ex = ["shared |s " + line[2:]] + [(f"0:{1 - f}:{p:.9g} " if k == a else "") + acts[k] for k in range(K)]
            ws.learn(ex)
        wrong = 0
        for line, yt in zip(feature_lines(L["X_test"]), L["y_test"].tolist()):
            cost = ws.predict(["shared |s " + line[2:]] + acts)
            wrong += int(int(np.argmin(cost)) != yt)
    finally:
        ws.finish()
    return wrong / len(L["y_test"])


def learn_cell(dataset: str, quick: bool, rho0: float, rho1: float, logger: str, rows: int, seed: int,
               with_vw: bool) -> pd.DataFrame:
    """The held-out clean error of ``default_learner`` (known rates) and of VW ``--cb_adf`` learned from one log."""
    import time

    from nolo.learners.bandit import default_learner
    from nolo.offpolicy.learn import learn_log

    L = make_log(dataset, quick, rho0, rho1, logger, rows, seed)
    base = {"dataset": dataset, "rho0": rho0, "rho1": rho1, "logger": logger, "rows": rows, "seed": seed}
    out = []
    for name, weighting in (("nolo default", "none"), ("nolo default, importance-weighted", "importance")):
        t0 = time.perf_counter()
        learner = learn_log(default_learner(L["K"], rho0=rho0, rho1=rho1, seed=int(seed)), L["X"], L["played"],
                            L["bit"], L["propensity"], weighting=weighting, seed=int(seed))
        err = float(np.mean(learner.predict(L["X_test"]) != L["y_test"]))
        out.append({**base, "learner": name, "error": err, "seconds": time.perf_counter() - t0})
    if with_vw:
        for cb in VW_CB_TYPES:
            t0 = time.perf_counter()
            out.append({**base, "learner": f"VW cb_adf {cb}", "error": _vw_error(L, cb, seed),
                        "seconds": time.perf_counter() - t0})
    return pd.DataFrame(out)


def claim_figures(ope: pd.DataFrame, rates: pd.DataFrame, learned: pd.DataFrame) -> dict:
    """The figures the claims are decided on (module docstring)."""
    figs: dict = {}
    cor, unc = ope[ope["corrected"]], ope[~ope["corrected"]]
    for m in OPE_METHODS:
        c = cor[cor["method"] == m]
        figs[f"ope_coverage_{m}"] = float(c["covers"].mean())
        figs[f"ope_mean_abs_error_{m}"] = float((c["value"] - c["true_value"]).abs().mean())
        u = unc[unc["method"] == m]
        figs[f"ope_uncorrected_coverage_{m}"] = float(u["covers"].mean())
    figs["ope_coverage_ips_dr_min"] = min(figs["ope_coverage_ips"], figs["ope_coverage_dr"])
    noisy = unc[(unc["rho0"] + unc["rho1"]) > 0]
    figs["ope_uncorrected_coverage_noisy_max"] = float(
        noisy.groupby("method")["covers"].mean().max()) if len(noisy) else math.nan
    # the uncorrected estimate estimates the noisy value rho0 + (1 - rho0 - rho1) V, not V: its bias against the flip
    # channel's prediction rho0 - (rho0 + rho1) V, and how often its interval holds the noisy value
    for m in ("ips", "dr"):
        u = noisy[noisy["method"] == m]
        if not len(u):
            continue
        bias = u["value"] - u["true_value"]
        pred = u["rho0"] - (u["rho0"] + u["rho1"]) * u["true_value"]
        noisy_value = u["true_value"] + pred
        figs[f"ope_uncorrected_{m}_mean_bias"] = float(bias.mean())
        figs[f"ope_uncorrected_{m}_predicted_bias"] = float(pred.mean())
        figs[f"ope_uncorrected_{m}_covers_noisy_value"] = float(((u["lo"] <= noisy_value)
                                                                 & (noisy_value <= u["hi"])).mean())
    if "ope_uncorrected_ips_covers_noisy_value" in figs and "ope_uncorrected_dr_covers_noisy_value" in figs:
        figs["ope_uncorrected_bias_as_predicted_min"] = min(figs["ope_uncorrected_ips_covers_noisy_value"],
                                                            figs["ope_uncorrected_dr_covers_noisy_value"])
    figs["ope_cells"] = float(len(cor.drop_duplicates(["dataset", "rho0", "rho1", "logger", "rows", "seed"])))
    if len(rates):
        figs["rates_coverage"] = float(rates["covers"].mean())
        for lg in LOGGERS:
            r = rates[rates["logger"] == lg]
            figs[f"rates_coverage_{lg}"] = float(r["covers"].mean()) if len(r) else math.nan
        figs["rates_coverage_min_logger"] = min(figs[f"rates_coverage_{lg}"] for lg in LOGGERS)
        missed = rates[~rates["covers"]]
        figs["rates_missed_unwarned"] = float((~missed["warned"]).sum())
        figs["rates_max_abs_error"] = float(np.maximum((rates["rho0_hat"] - rates["rho0"]).abs(),
                                                       (rates["rho1_hat"] - rates["rho1"]).abs()).max())
    if len(learned) and (learned["learner"] != "nolo default").any():
        keys = ["dataset", "rho0", "rho1", "logger", "rows"]
        mean = learned.groupby(keys + ["learner"], as_index=False)["error"].mean()
        wide = mean.pivot_table(index=keys, columns="learner", values="error")
        vw = wide[[c for c in wide.columns if c.startswith("VW")]].min(axis=1)
        ratio = wide["nolo default"] / vw.clip(lower=1e-3)
        figs["learn_max_ratio_to_best_vw"] = float(ratio.max())
        figs["learn_mean_ratio_to_best_vw"] = float(ratio.mean())
        iw = "nolo default, importance-weighted"
        if iw in wide:  # reported beside the claim, which is decided on the unweighted default
            figs["learn_max_ratio_to_best_vw_importance_weighted"] = float((wide[iw] / vw.clip(lower=1e-3)).max())
            figs["learn_importance_minus_plain_max"] = float((wide[iw] - wide["nolo default"]).max())
            figs["learn_importance_minus_plain_min"] = float((wide[iw] - wide["nolo default"]).min())
    return figs


def _plot(ctx, ope: pd.DataFrame) -> None:
    import matplotlib.pyplot as plt

    cells = ope[ope["method"] == "ips"].copy()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True, layout="constrained")
    for ax, corrected in zip(axes, (True, False)):
        c = cells[cells["corrected"] == corrected].reset_index(drop=True)
        x = np.arange(len(c))
        err = c["value"] - c["true_value"]
        ax.errorbar(x, err, yerr=[c["value"] - c["lo"], c["hi"] - c["value"]], fmt="o", ms=3,
                    color="tab:blue" if corrected else "tab:red")
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel("cell (data set x noise x logger x rows x seed)")
        ax.set_title(("flip-corrected" if corrected else "uncorrected (VW / OBP)") + " IPS: estimate - truth, 95 % CI")
    axes[0].set_ylabel("estimated minus true clean value")
    ctx.save_figure(fig, "ope_intervals")


@experiment(paper="practice", id="offline",
            title="Learning and evaluating from logged noisy feedback: flip-corrected IPS/DR, rates from the log, "
                  "and a policy learned from it vs VW --cb_adf",
            quick_seeds=2, full_seeds=5)
def offline(ctx) -> ExperimentResult:
    """Off-policy evaluation, rate estimation and off-policy learning on logs of AM-noised bandit feedback."""
    from nolo.papers.am import _common as C
    from nolo.papers.am import vw as V

    datasets, skipped = C.available(ctx.scale(QUICK_DATASETS, PAPER_DATASETS), ctx.quick)
    settings = ctx.scale(QUICK_SETTINGS, PAPER_SETTINGS)
    base = [{"dataset": d, "quick": bool(ctx.quick), "rho0": r0, "rho1": r1, "logger": lg}
            for d in datasets for (r0, r1) in settings for lg in LOGGERS]
    ope = pd.concat(ctx.map(ope_cell, [{**b, "rows": n, "seed": s} for b in base for n in ctx.scale(QUICK_ROWS, PAPER_ROWS)
                                       for s in ope_seeds(ctx.seeds, ctx.scale(QUICK_OPE_LOGS_PER_SEED,
                                                                               PAPER_OPE_LOGS_PER_SEED))],
                            name="practice-offline-ope"), ignore_index=True)
    # the rates and the learning cost a network fit per half-sample and a VW pass per cell: one seed of each cell,
    # and at quick scale the rates on digits only (their claim is decided at paper scale)
    rate_datasets = ctx.scale(QUICK_RATE_DATASETS, datasets)
    rtasks = [{**b, "rows": n, "seed": ctx.seeds[0]} for b in base if b["rho0"] + b["rho1"] > 0
              and b["dataset"] in rate_datasets for n in ctx.scale(QUICK_RATE_ROWS, PAPER_RATE_ROWS)]
    rates = pd.concat(ctx.map(rates_cell, rtasks, name="practice-offline-rates"), ignore_index=True)
    with_vw = V.available()
    learn_seeds = ctx.scale(ctx.seeds[:1], ctx.seeds)
    learned = pd.concat(ctx.map(learn_cell, [{**b, "rows": LEARN_ROWS, "seed": s, "with_vw": with_vw}
                                             for b in base for s in learn_seeds],
                                name="practice-offline-learn", packages=["vowpalwabbit"] if with_vw else None),
                        ignore_index=True)
    _plot(ctx, ope)
    figs = claim_figures(ope, rates, learned)
    figs["tuning_streams"] = 0.0  # nothing here is tuned; every claim is decided on ctx.seeds
    claims = [
        Claim("flip-corrected IPS and DR (known rates) hold the target's true clean value within their 95 % interval in "
              "at least 90 % of the cells", "ope_coverage_ips_dr_min", ">=", 0.9,
              why="an estimator's interval is too narrow for these logs -- docs/offpolicy.md#experiment"),
        Claim("the uncorrected IPS and DR (the bit as the reward: VW, OBP) are biased as the flip channel predicts, by "
              "rho0 - (rho0 + rho1) V: their 95 % interval holds rho0 + (1 - rho0 - rho1) V instead of V in at least "
              "90 % of the noisy cells (measured and predicted mean bias in the figures)",
              "ope_uncorrected_bias_as_predicted_min", ">=", 0.9,
              why="the uncorrected estimates are off by more than the flip channel explains -- "
                  "docs/offpolicy.md#experiment"),
        Claim("the rates' 95 % half-sampling intervals (nolo estimate-noise's default method) hold the true rates in at "
              "least 90 % of the cells, for the uniform and the softmax logger alike", "rates_coverage_min_logger",
              ">=", 0.9, decidable_at="paper",
              why="the anchors rule is biased on short or skewed logs beyond its interval's spread -- "
                  "docs/offpolicy.md#experiment"),
        Claim("a policy learned from the log by default_learner errs on held-out clean labels at most 0.8x as often as "
              "the best of VW --cb_adf -q sa --cb_type ips|dr|mtr learned from the same log, in every cell",
              "learn_max_ratio_to_best_vw", "<=", 0.8,
              why="in some cell VW's reduction learns the log as well as nolo's regression oracles -- "
                  "docs/offpolicy.md#experiment"),
    ]
    keys = ["dataset", "rho0", "rho1", "logger", "rows"]
    ope_table = (ope.groupby(keys + ["corrected", "method"], as_index=False)
                 .agg(coverage=("covers", "mean"), bias=("value", "mean"), truth=("true_value", "mean"),
                      se=("se", "mean")))
    ope_table["bias"] = ope_table["bias"] - ope_table["truth"]
    tables = {"ope": ope_table.round(4), "rates": rates.round(4),
              "learned": learned.groupby(keys + ["learner"], as_index=False)["error"].mean().round(4)}
    for t in tables.values():  # log lengths as counts, not floats
        t["rows"] = t["rows"].map("{:,}".format)
    if skipped:
        tables["skipped_datasets"] = pd.DataFrame({"dataset": list(skipped), "reason": list(skipped.values())})
    return ExperimentResult(figures=figs, claims=claims, tables=tables)
