"""The test suite's own settings.

Real data: the MNIST test set and USPS live outside the repository.  The library never searches for them; the suite
points at them explicitly through ``NOLO_DATA_DIR``: the variable when already set, else ``../shared/datasets``
beside the checkout (the development machines' and CI's layout) when that folder exists.  Tests on the real files
skip with a reason when it does not."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "datasets"

if not os.environ.get("NOLO_DATA_DIR", "").strip() and SHARED_DATA.is_dir():
    os.environ["NOLO_DATA_DIR"] = str(SHARED_DATA)
