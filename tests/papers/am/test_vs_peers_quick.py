"""vs-peers at quick scale, as `nolo reproduce am --quick --only vs-peers` runs it: every claim is decided on nolo's
default learner (AutoCB) and each verdict is the recorded one (``EXPECTED_FAILURES``, with the why of each kind in the
experiment; the 10^4-round cells are decided on the mean of 5 seeds); and the pieces that decide the short horizons on
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


#: the claims that fail at quick scale, all at 10^4 rounds but two (decided on the mean of 5 seeds; docs/default-learner.md):
#: (kind, cell), kind "am" (<= every AM learner), "vw" (<= 0.7 x or <= 1.0 x VW squarecb, or AutoCB-est <= 0.8 x), or
#: "rates" (AutoCB-est within 0.02 of AutoCB)
EXPECTED_FAILURES: set[tuple[str, str]] = {
    ("am", "synsep/0,0/10000"),
    ("rates", "digits/0.2,0.4/10000"), ("rates", "digits/0.4,0.2/10000"), ("rates", "digits/0.4,0.4/10000"),
    ("rates", "digits/0.4,0.4/100000"), ("rates", "iris/0.4,0.4/10000"), ("rates", "mixed-scales/0.4,0.2/10000"),
    ("rates", "synsep/0.2,0.4/10000"), ("rates", "synsep/0.4,0.2/10000"), ("rates", "synsep/0.4,0.4/10000"),
    ("rates", "synsep/0.4,0.4/100000"), ("rates", "wine/0.4,0.2/10000"), ("rates", "wine/0.4,0.4/10000"),
    ("vw", "digits/0.25,0.25/10000"), ("vw", "digits/0.4,0.4/10000"), ("vw", "mixed-scales/0.4,0.4/10000"),
    ("vw", "synsep/0.15,0.15/10000"), ("vw", "synsep/0.2,0.4/10000"), ("vw", "synsep/0.25,0.25/10000"),
    ("vw", "synsep/0.4,0.2/10000"), ("vw", "synsep/0.4,0.4/10000"),
}


def _within_one_se(claim, figures) -> bool:
    name = claim["figure"]
    kind = name.split("/")[0]
    se = figures.get(name.replace(kind, kind + "_se", 1), {}).get("value")
    value = figures[name]["value"]
    return se is not None and np.isfinite(se) and abs(value - claim["threshold"]) <= se


def test_within_one_se_by_hand():
    figs = {"best_over_vw_squarecb/a/10000": {"value": 0.74}, "best_over_vw_squarecb_se/a/10000": {"value": 0.05},
            "best_over_vw_squarecb/b/10000": {"value": 0.80}, "best_over_vw_squarecb_se/b/10000": {"value": 0.05},
            "best_minus_best_am/c/100000": {"value": 0.001}}
    assert _within_one_se({"figure": "best_over_vw_squarecb/a/10000", "threshold": 0.7}, figs)
    assert not _within_one_se({"figure": "best_over_vw_squarecb/b/10000", "threshold": 0.7}, figs)
    assert not _within_one_se({"figure": "best_minus_best_am/c/100000", "threshold": 0.0}, figs)  # no SE: exact


def _kind_cell(claim) -> tuple[str, str]:
    cell = claim["statement"].split(":")[0]
    return ("vw" if "VW" in claim["statement"] else "am" if "every AM learner" in claim["statement"] else "rates"), cell


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
    assert all(c["status"] in ("holds", "fails") for c in claims)  # every claim decided at quick scale
    failed = {_kind_cell(c) for c in claims if c["status"] == "fails"}
    if not V.available():
        expected = {k for k in EXPECTED_FAILURES if k[0] != "vw"}
    else:
        expected = EXPECTED_FAILURES
    # a verdict other than the expected one is accepted only for a 5-seed cell whose mean lies within one paired
    # standard error of the bar (another CPU's BLAS may round differently and move such a cell across it)
    flipped = [c for c in claims if (_kind_cell(c) in failed) != (_kind_cell(c) in expected)]
    unexplained = [_kind_cell(c) for c in flipped if not _within_one_se(c, figures)]
    assert not unexplained, (f"unexpected failures {sorted(set(unexplained) & failed)}, "
                             f"unexpected holds {sorted(set(unexplained) - failed)}")
    assert all(c["why"].strip() for c in claims if c["status"] == "fails")
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
