"""Hypothesis profiles of the fuzz harness and the census of the long profile.

* ``ci`` (default): seeded (derandomized), a few examples per entry point -- about a minute on 2 cores;
* ``long``: ``NOLO_FUZZ_PROFILE=long python -m pytest tests/fuzz`` -- >= 10,000 cases, every verdict counted
  instead of failing at the first; the counts are written to ``tests/fuzz/census-long.json`` (and printed).
"""

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

_COMMON = dict(
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile("ci", max_examples=int(os.environ.get("NOLO_FUZZ_EXAMPLES", 6)),
                          phases=[Phase.explicit, Phase.generate], **_COMMON)
settings.register_profile("long", max_examples=int(os.environ.get("NOLO_FUZZ_EXAMPLES", 100)),
                          phases=[Phase.explicit, Phase.generate], **_COMMON)
settings.load_profile(os.environ.get("NOLO_FUZZ_PROFILE", "ci"))


def _write_census():
    try:
        import fuzz_harness as harness
    except ImportError:  # pragma: no cover
        return
    if not harness.CENSUS:
        return
    totals = {}
    for counter in harness.CENSUS.values():
        for k, v in counter.items():
            totals[k] = totals.get(k, 0) + v
    families: dict = {}  # the generated bad values, and the pandas.NA / read-only family (its targets' suffixes)
    for target, counter in harness.CENSUS.items():
        fam = "read-only" if target.endswith(" [read-only]") else "NA" if target.endswith(" [NA]") else "fuzz"
        entry = families.setdefault(fam, {"targets": 0, "cases": 0, "totals": {}})
        entry["targets"] += 1
        entry["cases"] += sum(counter.values())
        for k, v in counter.items():
            entry["totals"][k] = entry["totals"].get(k, 0) + v
    out = {
        "profile": harness.PROFILE,
        "cases": sum(totals.values()),
        "targets": len(harness.CENSUS),
        "totals": dict(sorted(totals.items())),
        "families": families,
        "failing_targets": {
            t: {k: v for k, v in c.items() if k in harness.FAILURES}
            for t, c in sorted(harness.CENSUS.items()) if any(k in harness.FAILURES for k in c)
        },
        "examples": {f"{t} / {o}": e for (t, o), e in sorted(harness.EXAMPLES.items())},
    }
    path = Path(__file__).with_name(f"census-{harness.PROFILE}.json")
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"\nfuzz census ({harness.PROFILE}): {out['cases']} cases over {out['targets']} entry points: {out['totals']}"
          f" -> {path}")


def pytest_sessionfinish(session, exitstatus):
    _write_census()
