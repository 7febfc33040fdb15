"""Every experiment spec written in the docs is one the spec checker accepts.

A fenced block of ``docs/*.md`` or the README tagged ``yaml``, ``yml`` or ``toml`` (or untagged and parsing as
YAML) is an experiment spec when it is a mapping with ``learners`` and an ``environment``; each one is saved as a
file and loaded with :meth:`ExperimentSpec.from_file`, the path ``nolo run SPEC`` takes, and its grid is expanded.
The specs inside the guides' Python examples are loaded by those examples, which ``tests/test_docs_examples.py``
runs.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
# a fence (``` or ~~~, possibly indented inside a list item), its info string, its body, the same fence closing it
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S)
SPEC_KEYS = {"learners", "environment"}


def fenced_blocks(text: str):
    """``(language, body, line)`` for every fenced block of a Markdown page (the body dedented by its fence's
    indentation, ``line`` 1-based where the body starts)."""
    for m in FENCE.finditer(text):
        indent = m.group("indent")
        body = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in m.group("body").splitlines(keepends=True))
        info = m.group("info").strip()
        language = info.split()[0].lower() if info else ""
        yield language, body, text.count("\n", 0, m.start("body")) + 1


def _parse(language: str, body: str):
    if language == "toml":
        try:
            return tomllib.loads(body)
        except tomllib.TOMLDecodeError:
            return None
    if language in ("yaml", "yml", ""):
        try:
            return yaml.safe_load(body)
        except yaml.YAMLError:
            return None
    return None


def spec_blocks(pages=PAGES, root=ROOT):
    """``(where, suffix, body)`` for every block of ``pages`` that looks like an experiment spec; ``where`` is
    the page's path relative to ``root`` and the line the block starts on."""
    found = []
    for page in pages:
        for language, body, line in fenced_blocks(page.read_text(encoding="utf-8")):
            data = _parse(language, body)
            if isinstance(data, dict) and SPEC_KEYS <= set(data):
                found.append((f"{page.relative_to(root).as_posix()}:{line}", ".toml" if language == "toml" else ".yaml",
                              body))
    return found


SPECS = spec_blocks()


def test_the_docs_have_spec_blocks():
    assert any(where.startswith("docs/experiments.md:") for where, _, _ in SPECS)


def test_spec_blocks_are_found_in_every_form(tmp_path):
    """Tagged, untagged, TOML and indented blocks are found; a block without learners is not a spec."""
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "```yaml", "name: a", "environment: {generator: g}", "learners: []", "```",
        "```", "name: b", "environment: {generator: g}", "learners: []", "```",
        "* an item:", "", "  ```toml", '  name = "c"', "  learners = []", "  [environment]", '  generator = "g"',
        "  ```",
        "```yaml", "grid: {a: [1, 2]}", "```",
        "```python", "print('learners: environment:')", "```", ""]))
    found = spec_blocks([page], root=tmp_path)
    assert [(where, suffix) for where, suffix, _ in found] == [("page.md:2", ".yaml"), ("page.md:7", ".yaml"),
                                                                ("page.md:14", ".toml")]
    assert found[2][2].startswith('name = "c"\n')


@pytest.mark.parametrize("where,suffix,body", SPECS, ids=[where for where, _, _ in SPECS])
def test_docs_spec_is_valid(where, suffix, body, tmp_path):
    from nolo.experiments.spec import ExperimentSpec, SpecError

    path = tmp_path / f"spec{suffix}"
    path.write_text(body, encoding="utf-8")
    try:
        spec = ExperimentSpec.from_file(path)
        settings = spec.settings()
    except SpecError as exc:
        pytest.fail(f"the spec at {where} is rejected by the spec checker:\n{exc}")
    assert settings
