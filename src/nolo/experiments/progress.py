"""Progress bars for the experiment engine: on an interactive terminal only, never under CI.

A module of its own so that the sweep runner and the run context can both use it without importing each other.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable

__all__ = ["progress_enabled", "progress"]


def progress_enabled() -> bool:
    """Progress bars only on an interactive terminal and never under CI (``CI`` set)."""
    if os.environ.get("CI"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str | None = None, enabled=None):
    """A tqdm progress bar on stderr, disabled when not on a terminal or under CI."""
    from tqdm.auto import tqdm

    on = progress_enabled() if enabled is None else bool(enabled)
    return tqdm(iterable, total=total, desc=desc, disable=not on, leave=False, file=sys.stderr)
