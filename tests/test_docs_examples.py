"""Every guide's Python examples run as written: the blocks of one file in order, in one namespace."""

import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCKS = {
    path.name: re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S) for path in sorted(DOCS.glob("*.md"))
}
FILES = sorted(name for name, blocks in BLOCKS.items() if blocks)


@pytest.fixture
def empty_experiment_registry():
    """An example may register a paper and its experiments (docs/experiments.md): it runs on an empty experiment
    registry and the papers registered so far, both restored after (a paper the example adds does not leak)."""
    from nolo.experiments import registry

    saved, saved_papers = registry.EXPERIMENTS.items(), registry.PAPERS.items()
    registry.EXPERIMENTS.clear()
    yield
    registry.EXPERIMENTS.clear()
    for key, exp in saved:
        registry.EXPERIMENTS.register(key, exp)
    registry.PAPERS.clear()
    for key, paper in saved_papers:
        registry.PAPERS.register(key, paper)


def test_docs_have_examples():
    assert FILES


@pytest.mark.parametrize("name", FILES)
def test_docs_examples_run(name, tmp_path, monkeypatch, empty_experiment_registry):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")  # an example that plots never opens a window
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")
    namespace = {"__name__": f"docs_{Path(name).stem.replace('-', '_')}"}
    for i, code in enumerate(BLOCKS[name]):
        source = tmp_path / f"{Path(name).stem.replace('-', '_')}_block{i}.py"  # a real file: numba's cache=True needs one
        source.write_text(code)
        try:
            exec(compile(code, str(source), "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"docs/{name} block {i} failed: {type(exc).__name__}: {exc}")
