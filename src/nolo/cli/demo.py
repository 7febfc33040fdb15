"""``nolo demo``: a one-minute tour -- learners that correct for input noise vs learners that ignore it.

The demo experiment's problem (:func:`nolo.papers.demo.demo_spec`): a
noisy-input linear regression (CSS10 section 2: each instance is seen only
through an oracle of independent noisy copies, noise of the order of the
signal), played for a few thousand rounds over three seeds by the experiment
runner (:func:`nolo.experiments.runner.run_learner`): the two-copy unbiased
gradient (CSS10 footnote 2 = CSS11 Setting 1) and the known-covariance
correction (CSS11 Setting 2) against plain OGD on one noisy copy, whose
gradient is biased by ``2 Sigma w``.

For each learner the table gives the average loss on the *clean* instances,
the regret against the best fixed predictor in hindsight on the clean data
(:mod:`nolo.oco.regret`), the fitted log-log growth rate of that regret, and
the oracle queries per round.
"""

from __future__ import annotations

import time

import click
import numpy as np

__all__ = ["demo", "run_demo"]


#: what the table calls each learner of the specs
LABELS = {
    "unbiased": "two-copy unbiased (CSS11 Setting 1)",
    "known-cov": "known covariance (CSS11 Setting 2)",
    "naive": "naive OGD on one copy",
}


def run_demo(rounds: int = 4000, noise_std: float = 0.5, progress=None) -> list[dict]:
    """Run the demo problems; one summary row per (problem, learner), averaged over the spec's seeds."""
    from nolo.papers.demo import demo_spec
    from nolo.experiments.plots import fit_slope
    from nolo.experiments.runner import run_learner

    rows = []
    for spec in [demo_spec(rounds=rounds, noise_std=noise_std, record_every=max(1, rounds // 50))]:
        for learner in spec.learners:
            finals, slopes, queries, seconds = [], [], [], 0.0
            for seed in spec.seeds:
                if progress is not None:
                    progress(f"{spec.name}: {learner.name}, seed {seed}")
                res = run_learner(spec, learner.name, seed)
                seconds += res.seconds
                df = res.frame
                last = df.iloc[-1]
                finals.append((float(last["avg_clean_loss"]), float(last["regret"])))
                half = df[df["t"] >= df["t"].max() / 8]
                slopes.append(float(fit_slope(half["t"].to_numpy(), half["regret"].to_numpy())))
                queries.append(float(last["queries"]) / float(last["t"]))
            finals = np.asarray(finals)
            n = len(spec.seeds)
            rows.append({
                "problem": f"noisy linear regression, d=5, T={spec.rounds}",
                "learner": LABELS.get(learner.name, learner.name),
                "avg_clean_loss": finals[:, 0].mean(),
                "avg_clean_loss_se": finals[:, 0].std(ddof=1) / np.sqrt(n),
                "regret": finals[:, 1].mean(),
                "regret_se": finals[:, 1].std(ddof=1) / np.sqrt(n),
                "regret_slope": float(np.mean(slopes)),
                "queries_per_round": float(np.mean(queries)),
                "seconds": seconds,
            })
    return rows


@click.command()
@click.option("--rounds", default=4000, show_default=True, type=click.IntRange(min=100),
              help="Rounds of the regression problem (the classification problem plays half as many).")
@click.option("--noise-std", default=0.5, show_default=True, type=click.FloatRange(min=0.0),
              help="Standard deviation of the Gaussian input noise per coordinate (instances have norm <= 1).")
def demo(rounds: int, noise_std: float) -> None:
    """Learn from noisy copies: unbiased estimators vs ignoring the noise (about a minute)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    start = time.perf_counter()
    console.print(f"[bold]nolo demo[/bold]: inputs seen only through noisy copies x + Z, Z ~ N(0, {noise_std}^2 I), 3 seeds")
    with console.status("running") as status:
        rows = run_demo(rounds, noise_std, progress=lambda msg: status.update(msg))
    table = Table(title=f"{rows[0]['problem']}: clean loss, regret vs best fixed w in hindsight (mean +- SE)")
    for col, just in [("learner", "left"), ("avg clean loss", "right"),
                      ("regret", "right"), ("growth", "right"), ("queries/round", "right")]:
        table.add_column(col, justify=just)
    for r in rows:
        table.add_row(r["learner"],
                      f"{r['avg_clean_loss']:.4f} +- {r['avg_clean_loss_se']:.4f}",
                      f"{r['regret']:.1f} +- {r['regret_se']:.1f}",
                      f"T^{r['regret_slope']:.2f}", f"{r['queries_per_round']:.2f}")
    console.print(table)
    naive = next(r for r in rows if r["learner"] == LABELS["naive"])
    for r in rows:
        if r is naive:
            continue
        verdict = "lower" if r["avg_clean_loss"] < naive["avg_clean_loss"] else "NOT lower"
        console.print(
            f"{r['learner']}: clean loss {verdict} than the naive learner's "
            f"({r['avg_clean_loss']:.4f} vs {naive['avg_clean_loss']:.4f}); "
            f"regret grows like T^{r['regret_slope']:.2f} vs T^{naive['regret_slope']:.2f}."
        )
    console.print(f"done in {time.perf_counter() - start:.1f} s. Next: nolo reproduce all --quick")
