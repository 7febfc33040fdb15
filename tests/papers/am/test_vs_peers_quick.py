"""vs-peers at quick scale, as `nolo reproduce am --quick --only vs-peers` runs it: every claim is decided on nolo's
default learner (AutoCB) and each verdict is the recorded one (``EXPECTED_FAILS``, with the why of each kind in the
experiment, and ``EXPECTED_WITHIN_NOISE``; the 10^4-round cells are decided on the mean of 5 seeds); and the pieces that decide the short horizons on
5 seeds.

Slow (~10 min on 2 cores cold: 42 streams of 10^5 rounds and 168 more of 10^4 on AM's digits, Iris, SynSep and the
suite's wine, breast-cancer, moons, mixed-scales, gamma tuning, and Vowpal Wabbit at 10^4 rounds on 5 seeds when
installed -- the test extra installs it, so CI decides the claims against VW too)."""

from __future__ import annotations

import json

import pytest

import numpy as np
import pandas as pd

from nolo.papers.am import vs_peers as P
from nolo.papers.am import vw as V


def test_short_horizons_are_decided_on_five_seeds():
    # DECISION_ROUNDS = 5 x 10^4 rounds per learner: 5 seeds at 10^4, the run's own from 10^5 on
    assert P.decision_seeds([0], 10_000) == [0, 1, 2, 3, 4]
    assert P.decision_seeds([0, 1], 10_000) == [0, 1, 2, 3, 4]
    assert P.decision_seeds([0], 100_000) == [0] and P.decision_seeds([0, 1], 1_000_000) == [0, 1]
    assert P.decision_seeds([3, 7], 20_000) == [3, 7, 8]
    assert P.extra_runs([0], (10_000, 100_000)) == {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000}
    assert P.extra_runs([0, 1], (10_000, 100_000, 1_000_000)) == {2: 10_000, 3: 10_000, 4: 10_000}
    assert P.extra_runs([0], (5_000, 10_000)) == {s: 10_000 for s in range(1, 5)} | {s: 5_000 for s in range(5, 10)}


def test_paired_standard_error_by_hand():
    a = pd.Series([0.10, 0.20, 0.30, np.nan], index=[0, 1, 2, 3])
    b = pd.Series([0.20, 0.20, 0.50, 0.40], index=[0, 1, 2, 3])
    # a - b on the common seeds 0..2: -0.1, 0, -0.2; sd 0.1, se 0.1 / sqrt(3)
    assert P.paired_se(a, b) == pytest.approx(0.1 / np.sqrt(3))
    # a - 0.5 b: 0, 0.1, 0.05; sd 0.05
    assert P.paired_se(a, b, 0.5) == pytest.approx(0.05 / np.sqrt(3))
    assert np.isnan(P.paired_se(a[:1], b[:1]))  # one common seed: no standard error


def test_extra_seed_runs_replay_the_first_rounds_of_a_full_run():
    # the short-horizon seeds play the first rounds of the full run (same learners, same RCINE schedule, same draws)
    g = {"Banditron": 0.05, "BPA": 0.01, "SOBA": 0.1, "RCNBF": 0.1, "RCINE": 0.1}
    full = pd.DataFrame(P.peers_task("iris", 0.2, 0.2, 1, True, 3_000, gammas=g))
    stop = int(sorted(set(full.t))[-6])
    short = pd.DataFrame(P.peers_task("iris", 0.2, 0.2, 1, True, 3_000, gammas=g, stop=stop))
    assert short.t.max() == stop
    both = short.merge(full, on=["learner", "t"], suffixes=("_short", "_full"))
    assert len(both) == len(short) and set(both.learner) == set(full.learner)
    assert (both.error_rate_short == both.error_rate_full).all()
    assert full.t.max() == 3_000 > stop


#: the quick-scale claims that fail, by (figure, threshold): digits under (0.4, 0.4), at 10^4 rounds (decided on the
#: mean of 5 seeds) and the rates at 10^5 rounds (one seed, so decided on the value; docs/default-learner.md)
EXPECTED_FAILS: set[tuple[str, float]] = {
    ("unknown_minus_known_rates/digits/0.4,0.4/10000", 0.02),
    ("default_over_vw_squarecb/digits/0.4,0.4/10000", 0.7),
    ("default_est_over_vw_squarecb/digits/0.4,0.4/10000", 0.8),
    ("unknown_minus_known_rates/digits/0.4,0.4/100000", 0.02),
}

#: the claims whose 5-seed mean lies within two paired standard errors of the bar (``within_noise``: not decided by
#: these seeds): the 10^4-round cells under noise, where the seed-to-seed spread is 0.02-0.09 (docs/default-learner.md)
EXPECTED_WITHIN_NOISE: set[tuple[str, float]] = {
    ("unknown_minus_known_rates/digits/0.15,0.15/10000", 0.02),
    ("unknown_minus_known_rates/digits/0.2,0.4/10000", 0.02),
    ("unknown_minus_known_rates/digits/0.25,0.25/10000", 0.02),
    ("default_over_vw_squarecb/digits/0.25,0.25/10000", 0.7),
    ("default_est_over_vw_squarecb/digits/0.25,0.25/10000", 0.8),
    ("unknown_minus_known_rates/digits/0.4,0.2/10000", 0.02),
    ("default_over_vw_squarecb/digits/0.4,0.2/10000", 0.7),
    ("default_est_over_vw_squarecb/digits/0.4,0.2/10000", 0.8),
    ("unknown_minus_known_rates/iris/0.25,0.25/10000", 0.02),
    ("unknown_minus_known_rates/iris/0.4,0.4/10000", 0.02),
    ("default_over_vw_squarecb/mixed-scales/0.15,0.15/10000", 0.7),
    ("unknown_minus_known_rates/mixed-scales/0.2,0.4/10000", 0.02),
    ("default_over_vw_squarecb/mixed-scales/0.2,0.4/10000", 0.7),
    ("default_est_over_vw_squarecb/mixed-scales/0.2,0.4/10000", 0.8),
    ("unknown_minus_known_rates/mixed-scales/0.25,0.25/10000", 0.02),
    ("default_over_vw_squarecb/mixed-scales/0.25,0.25/10000", 0.7),
    ("default_est_over_vw_squarecb/mixed-scales/0.25,0.25/10000", 0.8),
    ("unknown_minus_known_rates/mixed-scales/0.4,0.2/10000", 0.02),
    ("default_est_over_vw_squarecb/mixed-scales/0.4,0.2/10000", 0.8),
    ("unknown_minus_known_rates/mixed-scales/0.4,0.4/10000", 0.02),
    ("default_over_vw_squarecb/mixed-scales/0.4,0.4/10000", 0.7),
    ("default_est_over_vw_squarecb/mixed-scales/0.4,0.4/10000", 0.8),
    ("default_over_vw_squarecb/synsep/0.2,0.4/10000", 0.7),
    ("default_over_vw_squarecb/synsep/0.25,0.25/10000", 0.7),
    ("unknown_minus_known_rates/synsep/0.4,0.2/10000", 0.02),
    ("default_est_over_vw_squarecb/synsep/0.4,0.2/10000", 0.8),
    ("unknown_minus_known_rates/synsep/0.4,0.4/10000", 0.02),
    ("default_over_vw_squarecb/synsep/0.4,0.4/10000", 0.7),
    ("default_est_over_vw_squarecb/synsep/0.4,0.4/10000", 0.8),
    ("unknown_minus_known_rates/wine/0.4,0.2/10000", 0.02),
    ("unknown_minus_known_rates/wine/0.4,0.4/10000", 0.02),
}


def _se_of(claim, figures) -> float | None:
    """The claim's standard error, from the figure the experiment named for it (none for a one-seed cell)."""
    se = figures[claim["se_figure"]]["value"] if "se_figure" in claim else None
    return se if se is not None and np.isfinite(se) else None


def _near_the_noise_band(claim, figures) -> bool:
    """The figure lies within one standard error of the band edge at NOISE_Z standard errors from the bar, where
    another CPU's BLAS rounding may move a 5-seed cell across the edge (a one-seed cell has no standard error)."""
    from nolo.experiments.result import NOISE_Z

    se = _se_of(claim, figures)
    if se is None:
        return False
    return abs(abs(figures[claim["figure"]]["value"] - claim["threshold"]) - NOISE_Z * se) <= se


def test_near_the_noise_band_by_hand():
    figs = {"a": {"value": 0.79}, "a_se": {"value": 0.05}, "b": {"value": 0.95}, "b_se": {"value": 0.05},
            "c": {"value": 0.001}}
    # 0.09 from the bar, the edge at 0.10: within one se of it; 0.25 from the bar: decided, far from the edge
    assert _near_the_noise_band({"figure": "a", "se_figure": "a_se", "threshold": 0.7}, figs)
    assert not _near_the_noise_band({"figure": "b", "se_figure": "b_se", "threshold": 0.7}, figs)
    assert not _near_the_noise_band({"figure": "c", "threshold": 0.0}, figs)  # a one-seed cell names no se


def _expected_status(claim, vw: bool) -> str:
    key = (claim["figure"], claim["threshold"])
    if not vw and "vw" in claim["figure"]:
        return "holds"
    return "fails" if key in EXPECTED_FAILS else "within_noise" if key in EXPECTED_WITHIN_NOISE else "holds"


@pytest.fixture(scope="module")
def quick_vs_peers(tmp_path_factory):
    from nolo.experiments.reproduce import reproduce

    out = tmp_path_factory.mktemp("vs-peers")
    reproduce("am", quick=True, out=out, only=["vs-peers"], jobs=2, show_progress=False)
    summary = json.loads((out / "summary.json").read_text())
    (exp,) = summary["experiments"]
    return exp["claims"], exp["figures"]


@pytest.mark.timeout(1800)  # the fixture's run: ~3 min idle, several times that on a loaded machine
def test_quick_claims_hold_but_the_expected_failures(quick_vs_peers):
    claims, figures = quick_vs_peers
    assert all(c["status"] in ("holds", "fails", "within_noise") for c in claims)  # none deferred to paper scale
    vw = V.available()
    # a verdict other than the expected one is accepted only for a 5-seed cell within one standard error of the edge of
    # its noise band (another CPU's BLAS may round differently and move such a cell across it), and only into or out
    # of the band: never a recorded failure that holds, or the reverse
    unexplained = [(c["figure"], c["threshold"], c["status"]) for c in claims
                   if c["status"] != _expected_status(c, vw)
                   and ({c["status"], _expected_status(c, vw)} == {"holds", "fails"}
                        or not _near_the_noise_band(c, figures))]
    assert not unexplained, f"verdicts other than the recorded ones: {sorted(unexplained)}"
    assert all(c["why"].strip() for c in claims if c["status"] == "fails")
    noisy = [c for c in claims if c["status"] == "within_noise"]
    assert noisy and all("/10000:" in c["statement"] for c in noisy)  # only the 5-seed cells have a standard error
    n_cells = 7 * 6 * 2  # digits, Iris, SynSep, wine, breast-cancer, moons, mixed-scales x six settings x 10^4, 10^5
    assert all("nolo's default learner" in c["statement"] for c in claims)  # decided on the default alone
    vs_am = [c for c in claims if "every AM learner" in c["statement"]]
    assert len(vs_am) == n_cells
    rates = [c for c in claims if "estimated online" in c["statement"] and "VW" not in c["statement"]]
    assert len(rates) == n_cells
    short = [c for c in claims if "/10000:" in c["statement"]]
    assert short and all("5 seeds" in c["statement"] for c in short)  # decided on 5 seeds (DECISION_ROUNDS)
    vs_vw = [c for c in claims if "VW" in c["statement"]]
    assert len(vs_vw) == (7 * 6 * 3 if V.available() else 0)  # 0.7x, 1.0x, AutoCB-est 0.8x; VW runs 10^4 rounds
