"""The package's import graph runs downwards only (issue 10): no subpackage imports one above it, lazily or not,
so there is no cycle.  The layers, lowest first, follow docs/architecture (cli -> experiments -> learners ->
kernels/losses/noise -> estimators; oco = math only)."""

import ast
import pathlib

import nolo

RANK = {
    "exceptions": 0, "_compiling": 0, "_registry": 1, "_validation": 1, "random": 1, "_threads": 1, "_scale": 1,
    "_extras": 1,
    "_config": 2,
    "persistence": 3, "datasets": 3, "estimators": 3, "noise": 3,
    "kernels": 4, "losses": 4,
    "oco": 5, "batch": 5, "noise_rates": 5,
    "learners": 6,
    "checks": 7, "sklearn_api": 7, "offpolicy": 7,
    "experiments": 8,
    "cli": 9,
}
ROOT = pathlib.Path(nolo.__file__).parent


def _edges():
    for f in ROOT.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        if parts == ("__init__",) or parts == ("__main__",):
            continue
        me = parts[0]
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level:
                mods = [node.module or ""]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for m in mods:
                bits = m.split(".")
                if bits[0] == "nolo" and len(bits) > 1 and bits[1] != me:
                    yield f.relative_to(ROOT), me, bits[1]


def test_every_subpackage_has_a_layer():
    names = {p.stem if p.suffix == ".py" else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.name not in ("__init__.py", "__main__.py")}
    assert names <= set(RANK), sorted(names - set(RANK))


def test_no_upward_import():
    upward = [f"{f}: {me} (layer {RANK[me]}) imports nolo.{it} (layer {RANK[it]})"
              for f, me, it in _edges() if RANK[it] >= RANK[me]]
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path, monkeypatch):
    """Negative control: a module of a low layer importing the learners is reported."""
    fake = tmp_path / "nolo"
    (fake / "noise").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "noise" / "__init__.py").write_text("from nolo.learners import base\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", fake)
    assert [(me, it) for _, me, it in _edges()] == [("noise", "learners")]
