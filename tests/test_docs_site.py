"""The documentation site builds with warnings as errors and has a page for every public class.

The build is the README's command (``python -m sphinx -W --keep-going -b html docs <out>``), run on a
copy of ``docs/`` in a temporary directory so the checkout stays clean (autosummary writes the API
stubs next to the sources) and no stale stub can hide a missing one.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra (sphinx, myst-parser, numpydoc, furo) is not installed")
pytest.importorskip("myst_parser", reason="the docs extra (myst-parser) is not installed")
pytest.importorskip("numpydoc", reason="the docs extra (numpydoc) is not installed")
pytest.importorskip("furo", reason="the docs extra (furo) is not installed")

import nolo  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs"

# The modules of the API reference (docs/api.md); each class in their __all__ gets a page.
API_MODULES = [
    "nolo",
    "nolo.learners",
    "nolo.learners.bandit",
    "nolo.learners.linear",
    "nolo.learners.kernel",
    "nolo.learners.convex",
    "nolo.sklearn_api",
    "nolo.batch",
    "nolo.offpolicy",
    "nolo.noise_rates",
    "nolo.noise",
    "nolo.estimators",
    "nolo.kernels",
    "nolo.losses",
    "nolo.oco",
    "nolo.datasets",
    "nolo.experiments",
]


def _public(module_name: str, kind) -> list[str]:
    module = importlib.import_module(module_name)
    return [name for name in module.__all__ if kind(getattr(module, name))]


@pytest.mark.slow
def test_docs_site_builds_with_warnings_as_errors(tmp_path):
    api_md = (DOCS / "api.md").read_text()
    assert all(f"   {name}\n" in api_md for name in API_MODULES), "docs/api.md lists every API module"

    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "api"))
    # the examples gallery shows the scripts of examples/ (``literalinclude`` of ../examples/*.py)
    shutil.copytree(DOCS.parent / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "html"
    env = dict(os.environ)
    src = str(Path(nolo.__file__).resolve().parents[1])  # the nolo under test, wherever it is installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(source), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, f"sphinx -W failed:\n{proc.stderr[-6000:]}"

    # every Markdown page of docs/ is a page of the site
    for page in DOCS.glob("*.md"):
        assert (out / f"{page.stem}.html").is_file(), page.name

    # a page per public class, naming it; every public function documented on its module's page
    missing = []
    for module_name in API_MODULES:
        module_page = out / "api" / f"{module_name}.html"
        assert module_page.is_file(), module_name
        module_html = module_page.read_text()
        for name in _public(module_name, inspect.isclass):
            page = out / "api" / f"{module_name}.{name}.html"
            if not page.is_file() or name not in page.read_text():
                missing.append(f"{module_name}.{name}")
        for name in _public(module_name, inspect.isfunction):
            if f'id="{module_name}.{name}"' not in module_html and not (
                out / "api" / f"{module_name}.{name}.html"
            ).is_file():
                missing.append(f"{module_name}.{name}()")
    assert not missing, f"no API entry for: {missing}"

    # the pages' own anchors resolve (page.md#anchor links are checked by -W; spot-check one output)
    assert 'id="item-1"' in (out / "math.html").read_text()
