"""The package's import graph runs downwards only (issue 10): no subpackage imports one above it, lazily or not.
The layers, lowest first, follow docs/architecture (cli -> papers -> experiments -> learners -> kernels/losses/noise ->
estimators; oco = math only).  And no module's imports, lazy ones included, lead back to it: no cycle."""

import ast
import pathlib

import nolo

RANK = {
    "exceptions": 0, "_compiling": 0, "_jit": 0, "_registry": 1, "_validation": 1, "random": 1, "_threads": 1, "_scale": 1,
    "_extras": 1,
    "_config": 2,
    "persistence": 3, "datasets": 3, "estimators": 3, "noise": 3,
    "kernels": 4, "losses": 4,
    "oco": 5, "batch": 5, "noise_rates": 5,
    "learners": 6,
    "checks": 7, "sklearn_api": 7, "offpolicy": 7,
    "experiments": 8,
    "papers": 9,
    "cli": 10,
}
ROOT = pathlib.Path(nolo.__file__).parent


def _imports(f):
    """The ``nolo`` modules (dotted names) that file ``f`` imports, at the top or inside a function."""
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module or "", [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def _edges():
    for f in ROOT.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        if parts == ("__init__",) or parts == ("__main__",):
            continue
        me = parts[0]
        for m, _ in _imports(f):
            bits = m.split(".")
            if bits[0] == "nolo" and len(bits) > 1 and bits[1] != me:
                yield f.relative_to(ROOT), me, bits[1]


def _module_graph():
    """Every ``nolo`` module (``nolo.kernels`` for ``kernels/__init__.py``) -> the ``nolo`` modules it imports;
    ``from nolo.a import b`` is an edge to ``nolo.a.b`` when that is a module, else to ``nolo.a``."""
    files = {}
    for f in ROOT.rglob("*.py"):
        parts = ("nolo",) + f.relative_to(ROOT).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph = {}
    for name, f in files.items():
        targets = set()
        for m, names in _imports(f):
            if m.split(".")[0] != "nolo":
                continue
            subs = {f"{m}.{n}" for n in names} & files.keys()
            targets |= subs if subs and len(subs) == len(names) else subs | {m}
        graph[name] = sorted(t for t in targets if t in files and t != name)
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


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


def test_no_import_cycle():
    """No module reaches itself through imports, lazy ones included: a cycle hidden inside a function still makes
    the modules one unit that cannot be read, tested or moved apart."""
    cycles = _cycles(_module_graph())
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_check_sees_a_cycle(tmp_path, monkeypatch):
    """Negative control: two modules of one subpackage importing each other, one of them lazily, are reported."""
    fake = tmp_path / "nolo"
    (fake / "kernels").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "kernels" / "__init__.py").write_text("")
    (fake / "kernels" / "a.py").write_text("from nolo.kernels.b import f\n")
    (fake / "kernels" / "b.py").write_text("def f():\n    from nolo.kernels import a\n")
    (fake / "kernels" / "c.py").write_text("from nolo.kernels import a, b\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", fake)
    assert _cycles(_module_graph()) == [["nolo.kernels.a", "nolo.kernels.b"]]


#: what a learner's import must not pull in: scikit-learn (with scipy.stats and pandas beneath it) and
#: scipy.optimize cost a new process about 1.5-3 s, and no learner needs them to act and learn.
HEAVY = ("sklearn", "scipy.stats", "scipy.optimize", "pandas")


def _heavy_imports_of(statement):
    import subprocess
    import sys

    code = f"import sys\n{statement}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_importing_the_learners_stays_light():
    assert _heavy_imports_of("from nolo.learners.bandit import default_learner, FastCB, run_stream") == ""
    assert _heavy_imports_of("import nolo.learners, nolo.oco, nolo.kernels, nolo.losses, nolo.noise") == ""


def test_the_light_import_check_sees_a_heavy_import():
    assert "sklearn" in _heavy_imports_of("from nolo.learners.bandit import FastCB\nimport sklearn.base")
