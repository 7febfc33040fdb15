"""AM Figure 2 / Figures 4-5 (error curves) and the paper's qualitative claims with the Theorem 4 bound."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo.experiments import Claim, ExperimentResult, experiment
from nolo.papers.am import _common as C
from nolo.papers.am import vw as V
from nolo.experiments.play import BanditStream, play
from nolo.learners.bandit import Perceptron, corollary_gamma, theorem4_bound

COLORS = C.COLORS


def _plot(ctx, df: pd.DataFrame, dataset: str, ref, vw: pd.DataFrame | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True, sharey=True)
    for ax, (r0, r1) in zip(axes.ravel(), C.SETTINGS):
        sub = df[(df.dataset == dataset) & (df.rho0 == r0) & (df.rho1 == r1)]
        for algo in (*C.ALGORITHMS, "Perceptron"):
            a = sub[sub.algo == algo]
            if a.empty:
                continue
            g = a.groupby("t").error_rate
            m, lo, hi = g.mean(), g.min(), g.max()
            gam = a.gamma.iloc[0]
            label = algo if algo == "Perceptron" else f"{algo} (gamma={gam:g})"
            ls = "-." if algo == "Perceptron" else "-"
            ax.plot(m.index, m.values, ls, color=COLORS[algo], label=label, lw=1.4)
            ax.fill_between(m.index, lo.values, hi.values, color=COLORS[algo], alpha=0.15, lw=0)
            if algo == "RCNBF":
                K = int(C.load(dataset, ctx.quick)[1].max()) + 1
                ts = m.index.to_numpy()
                rate = [min(_theorem4(ref[0], ref[1], K, int(t), gam, r0, r1)[0] / t, 1.0) for t in ts]
                ax.plot(ts, rate, ":", color=COLORS[algo], lw=1.2, label="Thm 4 bound / t (RCNBF, capped at 1)")
        if vw is not None:
            v = vw[(vw.dataset == dataset) & (vw.rho0 == r0) & (vw.rho1 == r1)]
            if not v.empty:
                how = "--cbify" if v["mode"].iloc[0] == "cbify" else "--cb_explore, our flipped bit"
                ax.plot(v.t, v.error_rate, "--", color="0.55", lw=1.3, label=f"Vowpal Wabbit {how} (eps=0.05), reference")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(C.setting_label(r0, r1), fontsize=9)
        ax.legend(fontsize=6, loc="lower left")
        ax.grid(True, which="both", alpha=0.2)
    for ax in axes[-1]:
        ax.set_xlabel("number of examples")
    for ax in axes[:, 0]:
        ax.set_ylabel("cumulative error rate")
    fig.suptitle(f"AM Fig. 2 reproduction: {dataset} (mean over {len(ctx.seeds)} seeds, band = min..max)")
    fig.tight_layout()
    ctx.save_figure(fig, f"error_curves_{dataset}")


@experiment(paper="am", id="error-curves", title="Error rate vs examples, five algorithms x six noise settings (AM Fig. 2, 4-5)",
            quick_seeds=2, full_seeds=10, takes_rounds=True)
def error_curves(ctx):
    datasets, skipped = C.available(quick=ctx.quick)
    df = C.curves(ctx, datasets)
    vw = V.vw_curves(ctx, datasets)
    for d in datasets:
        _plot(ctx, df, d, _reference_margins(*C.load(d, ctx.quick)), vw)
    fin = C.final_errors(df)
    figures, claims = {}, []
    for d in datasets:
        for (r0, r1) in C.SETTINGS:
            for algo in (*C.ALGORITHMS, "Perceptron"):
                row = fin[(fin.dataset == d) & (fin.rho0 == r0) & (fin.rho1 == r1) & (fin.algo == algo)]
                figures[f"final_error/{d}/{r0:g},{r1:g}/{algo}"] = (float(row["mean"].iloc[0]), "rate")
        # every bandit learner learns something: final error below chance (1 - 1/K) in the noise-free run
        K = int(C.load(d, ctx.quick)[1].max()) + 1
        worst = float(fin[(fin.dataset == d) & (fin.rho0 == 0) & (fin.algo != "Perceptron")]["mean"].max())
        figures[f"worst_noise_free_error/{d}"] = (worst, "rate")
        claims.append(Claim(statement=f"{d}: without noise every bandit learner ends below chance error 1 - 1/K = {1 - 1 / K:.2f}",
                            figure=f"worst_noise_free_error/{d}", op="<", threshold=1 - 1 / K))
    table = fin.pivot_table(index=["dataset", "rho0", "rho1"], columns="algo", values="mean").reset_index()
    gam = (df.groupby(["dataset", "rho0", "rho1", "algo"]).gamma.first().unstack("algo").reset_index())
    rc = df[df.algo == "RCINE"]
    nrest_share = float(rc.groupby(["dataset", "rho0", "rho1", "seed"]).nrest_seconds.first().sum()
                        / max(rc.groupby(["dataset", "rho0", "rho1", "seed"]).seconds.first().sum(), 1e-12))
    figures["rcine_nrest_time_share"] = (nrest_share, "fraction")
    # where the run time goes: learners (curves + gamma tuning runs) vs NREst (inside RCINE's runs)
    per_run = df.groupby(["dataset", "rho0", "rho1", "algo", "seed"])[["seconds", "nrest_seconds"]].first()
    tune = float(df.groupby(["dataset", "rho0", "rho1"]).tune_seconds.first().sum()) if "tune_seconds" in df else 0.0
    nrest_total = float(per_run.nrest_seconds.sum())
    figures["seconds_learners"] = (float(per_run.seconds.sum()) - nrest_total + tune, "s")
    figures["seconds_gamma_tuning"] = (tune, "s")
    figures["seconds_nrest"] = (nrest_total, "s")
    notes = (f"Scales: {C.__doc__.split('Scales')[1].strip()}\n"
             f"The 'mnist' here is the 784-dimensional MNIST (its test set, 10,000 images, when that is the split present); "
             f"the authors' code reads 64-dimensional inputs, most likely scikit-learn's 8x8 digits, which is run as 'digits'. "
             f"gamma per algorithm was tuned on the grid {C.GAMMA_GRID} (the chosen values are in the table 'gamma'). "
             f"RCINE spent {100 * nrest_share:.0f}% of its run time in NREst.")
    tables = {"final_error": table, "gamma": gam}
    if vw is None:
        notes += (" Vowpal Wabbit reference: skipped (the optional package vowpalwabbit is not installed; "
                  "pip install vowpalwabbit).")
    else:
        tables["vowpal_wabbit"] = _vw_table(vw, fin, figures)
        notes += (f" Vowpal Wabbit reference (dashed grey, datasets {', '.join(V.VW_DATASETS)}, seed {ctx.seeds[0]}, the "
                  "same stream of examples and flip uniforms as our runs of that seed): noise-free runs use "
                  "--cbify K --epsilon 0.05; cbify computes the cost from the label and cannot take noisy feedback, "
                  "so noisy runs use --cb_explore K --epsilon 0.05 (the exploration layer cbify wraps) with our draw "
                  "from its distribution and the cost 1 - (flipped bit). Table 'vowpal_wabbit' sets its final "
                  "error beside ours. VW is not a method of the paper.")
    if skipped:
        notes += " Skipped (files absent): " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
    return ExperimentResult(figures=figures, claims=claims, tables=tables, notes=notes)


def _vw_table(vw: pd.DataFrame, fin: pd.DataFrame, figures: dict) -> pd.DataFrame:
    """VW's final cumulative error beside ours (mean over seeds) per dataset and setting; adds the figures."""
    rows = []
    for (d, r0, r1), v in vw.groupby(["dataset", "rho0", "rho1"]):
        last = v[v.t == v.t.max()]
        ours = fin[(fin.dataset == d) & (fin.rho0 == r0) & (fin.rho1 == r1)].set_index("algo")["mean"]
        bandit = ours.drop(labels=["Perceptron"], errors="ignore")
        err = float(last.error_rate.iloc[0])
        figures[f"vw_final_error/{d}/{r0:g},{r1:g}"] = (err, "rate")
        rows.append({"dataset": d, "rho0": r0, "rho1": r1, "rounds": int(last.t.iloc[0]), "vw_mode": last["mode"].iloc[0],
                     "VW": err, "RCNBF": float(ours["RCNBF"]), "BPA": float(ours["BPA"]),
                     "Banditron": float(ours["Banditron"]), "best_of_ours": str(bandit.idxmin()),
                     "best_of_ours_error": float(bandit.min()), "vw_seconds": float(last.seconds.iloc[0])})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# claims + Theorem 4
# ------------------------------------------------------------------------------------------------


def _reference_margins(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Multiclass margins of W_perc (a 5-pass full-information Perceptron) on the data, and ||W_perc||_F^2."""
    K = int(y.max()) + 1
    p = Perceptron(n_classes=K)
    T = 5 * X.shape[0]
    play(p, BanditStream(X, y, T, order="cycle"), "bandit", [T])  # full information on the compiled stream
    S = X @ p.W_.T
    sy = S[np.arange(len(y)), y].copy()
    S[np.arange(len(y)), y] = -np.inf
    return sy - S.max(axis=1), float(np.sum(p.W_ * p.W_))


def _theorem4(margins: np.ndarray, normW2: float, K: int, T: int, gamma: float, rho0: float,
              rho1: float) -> tuple[float, float]:
    """Smallest Theorem 4 bound on E[M] after T rounds over W* = c * W_perc, c on a log grid.

    R_H = T * mean hinge loss of W* over the data (the stream samples uniformly), D = ||W*||_F^2;
    returns (bound, the minimising c)."""
    best, best_c = math.inf, 0.0
    for c in np.geomspace(1e-3, 1e4, 141):
        RH = T * float(np.mean(np.maximum(0.0, 1.0 - c * margins)))
        b = theorem4_bound(T, K, gamma, rho0, rho1, c * c * normW2, RH)
        if b < best:
            best, best_c = b, float(c)
    return best, best_c


@experiment(paper="am", id="claims", title="AM's qualitative claims per dataset and noise setting, with the Theorem 4 bound",
            quick_seeds=2, full_seeds=10, takes_rounds=True)
def claims(ctx):
    datasets, skipped = C.available(quick=ctx.quick)
    df = C.curves(ctx, datasets)
    fin = C.final_errors(df)
    figures, claim_list, rows = {}, [], []
    for d in datasets:
        X, y = C.load(d, ctx.quick)
        T = C.horizon(ctx, d)
        margins, normW2 = _reference_margins(X, y)
        for (r0, r1) in C.SETTINGS:
            sel = fin[(fin.dataset == d) & (fin.rho0 == r0) & (fin.rho1 == r1)].set_index("algo")["mean"]
            base = float(min(sel["Banditron"], sel["BPA"], sel["SOBA"]))
            key = f"{d}/{r0:g},{r1:g}"
            g = float(df[(df.dataset == d) & (df.rho0 == r0) & (df.rho1 == r1) & (df.algo == "RCNBF")].gamma.iloc[0])
            bound, c = _theorem4(margins, normW2, int(y.max()) + 1, T, g, r0, r1)
            kappa = 1 - r0 - r1
            row = {"dataset": d, "rho0": r0, "rho1": r1, "best_baseline": base, "RCNBF": float(sel["RCNBF"]),
                   "RCINE": float(sel["RCINE"]), "gamma_RCNBF": g,
                   "thm4_bound_rate": bound / T, "thm4_scale_c": c,
                   "gamma_cor4.1": corollary_gamma("cor4.1", T), "gamma_cor4.3": corollary_gamma("cor4.3", T, kappa=kappa)}
            noisy = r0 + r1 > 0
            yn = {True: "yes", False: "no"}
            row["RCNBF_below_baselines"] = yn[row["RCNBF"] < base] if noisy else "-"
            row["RCINE_below_baselines"] = yn[row["RCINE"] < base] if noisy else "-"
            row["comparable_noise_free"] = "-" if noisy else yn[row["RCNBF"] - base <= 0.05]
            row["RCINE_tracks_RCNBF"] = yn[abs(row["RCINE"] - row["RCNBF"]) <= 0.05]
            row["thm4_vacuous"] = yn[bound >= T]
            rows.append(row)
            figures[f"rcnbf_minus_best_baseline/{key}"] = (row["RCNBF"] - base, "rate")
            figures[f"rcine_minus_best_baseline/{key}"] = (row["RCINE"] - base, "rate")
            figures[f"rcine_minus_rcnbf/{key}"] = (abs(row["RCINE"] - row["RCNBF"]), "rate")
            figures[f"rcnbf_minus_banditron/{key}"] = (row["RCNBF"] - float(sel["Banditron"]), "rate")
            figures[f"rcnbf_over_thm4_bound/{key}"] = (row["RCNBF"] * T / bound, "ratio")
            if r0 + r1 > 0:
                claim_list.append(Claim(statement=f"{key}: under noise RCNBF ends below Banditron, BPA and SOBA (AM section 4)",
                                        figure=f"rcnbf_minus_best_baseline/{key}", op="<", threshold=0.0, decidable_at="paper",
                                        why="BPA ahead of RCNBF until ~10^6-10^7 rounds under low symmetric noise -- docs/am-reproduction.md#horizon"))
                claim_list.append(Claim(statement=f"{key}: under noise RCINE ends below Banditron, BPA and SOBA (AM section 4)",
                                        figure=f"rcine_minus_best_baseline/{key}", op="<", threshold=0.0, decidable_at="paper",
                                        why="RCINE follows RCNBF, and BPA is ahead of RCNBF until ~10^6-10^7 rounds under low symmetric noise -- docs/am-reproduction.md#horizon"))
                claim_list.append(Claim(statement=f"{key}: under noise RCNBF's correction h(f) beats the same learner fed the "
                                                  "raw bit (RCNBF below Banditron, AM Lemma 2)",
                                        figure=f"rcnbf_minus_banditron/{key}", op="<", threshold=0.0))
            else:
                claim_list.append(Claim(statement=f"{key}: without noise RCNBF is comparable to the best baseline (within 0.05)",
                                        figure=f"rcnbf_minus_best_baseline/{key}", op="<=", threshold=0.05, decidable_at="paper",
                                        why="without noise BPA is far ahead of RCNBF on MNIST, USPS and digits -- docs/am-reproduction.md#noise-free"))
            claim_list.append(Claim(statement=f"{key}: RCINE tracks RCNBF (final errors within 0.05; AM: 'comparably')",
                                    figure=f"rcine_minus_rcnbf/{key}", op="<=", threshold=0.05, decidable_at="paper",
                                    why="RCINE's rate estimates are not identifiable at the small gamma tuned on separable data -- docs/am-reproduction.md#rcine-estimates"))
            claim_list.append(Claim(statement=f"{key}: RCNBF's mistakes stay within the Theorem 4 bound",
                                    figure=f"rcnbf_over_thm4_bound/{key}", op="<=", threshold=1.0,
                                    why="a theorem cannot fail: check the bound's evaluation (vacuous at these horizons) -- docs/am-reproduction.md#theorem-4"))
    table = pd.DataFrame(rows)
    held = sum(c.holds(ExperimentResult(figures=figures).figures) for c in claim_list)
    noisy = table[table.rho0 + table.rho1 > 0]
    notes = (f"{held} of {len(claim_list)} claims hold in our runs (see the verdicts; the table has one row per dataset "
             "and setting with yes/no columns for each qualitative claim). Under noise RCNBF ends below the best "
             f"baseline in {int((noisy.RCNBF_below_baselines == 'yes').sum())} of {len(noisy)} settings and RCINE in "
             f"{int((noisy.RCINE_below_baselines == 'yes').sum())} (docs/am-reproduction.md follows RCNBF against BPA "
             "from 2 x 10^4 to 10^7 rounds: BPA plateaus early, RCNBF keeps learning). The Theorem 4 bound is vacuous "
             f"(at least T mistakes) in {int((table.thm4_vacuous == 'yes').sum())} of {len(table)} runs at this T: "
             "the claim 'within the bound' then cannot fail and says nothing. The Theorem 4 bound is evaluated "
             "for each run's T, gamma and true rates, minimised over W* = c * (a 5-pass full-information Perceptron) "
             "with R_H = T * mean hinge loss of W* on the data and D = ||W*||^2; 'thm4_bound_rate' is the bound "
             "divided by T, to set beside RCNBF's final cumulative error. gamma_cor4.1/4.3 are the exploration rates "
             "of Corollaries 4.1 and 4.3 with constant 1 for that T and kappa.")
    if skipped:
        notes += " Skipped (files absent): " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
    return ExperimentResult(figures=figures, claims=claim_list, tables={"claims": table}, notes=notes)
