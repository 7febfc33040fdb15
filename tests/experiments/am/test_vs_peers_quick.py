"""Issue 11's experiment at quick scale, as `nolo reproduce am --quick --only vs-peers` runs it: every claim holds
except the SynSep cells at 10^4 rounds, which fail with their why (docs/squarecb.md#synsep-seeds).

Slow (~2-3 min on 2 cores: 18 streams of 10^5 rounds x 13 learners, gamma tuning, and Vowpal Wabbit at 10^4 rounds
when installed -- the test extra installs it, so CI decides the claims against VW too)."""

from __future__ import annotations

import json

import pytest

from nolo.experiments.am import vw as V


@pytest.fixture(scope="module")
def quick_vs_peers(tmp_path_factory):
    from nolo.experiments.reproduce import reproduce

    out = tmp_path_factory.mktemp("vs-peers")
    reproduce("am", quick=True, out=out, only=["vs-peers"], jobs=2, show_progress=False)
    summary = json.loads((out / "summary.json").read_text())
    (exp,) = summary["experiments"]
    return exp["claims"]


@pytest.mark.timeout(1800)  # the fixture's run: ~3 min idle, several times that on a loaded machine
def test_quick_claims_hold_but_synsep_at_ten_thousand_rounds(quick_vs_peers):
    claims = quick_vs_peers
    failed = [c for c in claims if c["status"] == "fails"]
    assert all(c["status"] in ("holds", "fails") for c in claims)  # every claim decided at quick scale
    unexpected = [c["statement"] for c in failed if not c["statement"].startswith("synsep/") or "/10000:" not in c["statement"]]
    assert not unexpected, unexpected
    assert all(c["why"].strip() for c in failed)
    n_cells = 3 * 6 * 2  # digits, SynSep, Iris x AM's six settings x horizons 10^4, 10^5
    vs_am = [c for c in claims if "every AM learner" in c["statement"]]
    assert len(vs_am) == n_cells
    vs_vw = [c for c in claims if "VW" in c["statement"]]
    if V.available():
        assert len(vs_vw) == 3 * 6  # VW runs 10^4 rounds at quick scale
        assert sum(c["status"] == "holds" for c in vs_vw) >= 14  # 3 or 4 SynSep cells miss the 0.7x bar
    else:
        assert not vs_vw
    held = sum(c["status"] == "holds" for c in claims)
    assert held >= len(claims) - 5, f"{held} of {len(claims)} hold"
