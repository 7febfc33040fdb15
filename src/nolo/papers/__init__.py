"""The papers nolo reproduces, each a package of experiments run by the engine in :mod:`nolo.experiments`.

* ``demo`` -- a minute-long noisy-input regression, the install check (:mod:`nolo.papers.demo`);
* ``css10`` -- Cesa-Bianchi, Shalev-Shwartz, Shamir, Online Learning of Noisy Data with Kernels (COLT 2010);
* ``css11`` -- the same authors, Learning from Noisy Data under Distributional Assumptions (ICML 2011);
* ``am`` -- multiclass learning from noisy bandit feedback (RCNBF, RCINE, NREst and the baselines);
* ``oco`` -- the online convex optimisation notes' worked examples;
* ``practice`` -- experiments for practitioners: errors-in-variables, logged feedback (not a paper).

The engine finds them through the entry point ``nolo.papers`` (``pyproject.toml``), which calls :func:`register`;
importing one paper's package registers that paper and its experiments only.  The plain-language paragraphs
of the report are in ``papers.yaml`` beside this file.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

__all__ = ["PAPERS", "register", "register_own_paper"]

#: nolo's papers, in report order
PAPERS: tuple[str, ...] = ("demo", "css10", "css11", "am", "oco", "practice")


@lru_cache(maxsize=1)
def _texts() -> dict:
    import yaml

    return yaml.safe_load(Path(__file__).with_name("papers.yaml").read_text(encoding="utf-8")) or {}


def register_own_paper(paper: str) -> None:
    """Register one of nolo's :data:`PAPERS` with its paragraphs from ``papers.yaml`` (called by its package)."""
    from nolo.experiments.registry import register_paper

    t = _texts().get(paper, {})
    register_paper(paper, name=t.get("name", paper), reproduced=t.get("reproduced", ""),
                   not_reproduced=t.get("not_reproduced", ""), adds=t.get("adds", ""), rank=PAPERS.index(paper))


def register() -> None:
    """Register every paper of nolo and its experiments (the ``nolo.papers`` entry point)."""
    for paper in PAPERS:
        importlib.import_module(f"{__name__}.{paper}")
        register_own_paper(paper)  # again: a paper registry cleared since the first import
