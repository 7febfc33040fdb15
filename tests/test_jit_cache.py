"""nolo's disk cache of compiled code goes stale as a whole (``nolo._jit``): numba keys a function's cache on its own
file, but nolo's compiled loops link rules written in other modules, so an edit of a rule's module alone would load a
loop compiled from the old rule."""

import ast
import os
import subprocess
import sys
import textwrap

import nolo._jit as J
from nolo.learners.bandit import _stream
from nolo.learners.bandit import autocb


def test_tree_stamp_moves_with_any_source_file_of_the_compiled_packages(tmp_path):
    for pkg, name in (("learners", "a.py"), ("learners", os.path.join("sub", "b.py")), ("noise", "c.py"),
                      ("cli", "d.py")):
        (tmp_path / pkg / os.path.dirname(name)).mkdir(parents=True, exist_ok=True)
        (tmp_path / pkg / name).write_text("x = 1\n")
    stamp = J.tree_stamp(tmp_path, ("learners", "noise"))
    assert J.tree_stamp(tmp_path, ("learners", "noise")) == stamp  # stable
    f = tmp_path / "learners" / "sub" / "b.py"
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    moved = J.tree_stamp(tmp_path, ("learners", "noise"))
    assert moved != stamp  # a nested file's time
    (tmp_path / "noise" / "c.py").write_text("x = 22\n")
    assert J.tree_stamp(tmp_path, ("learners", "noise")) != moved  # another package's file's size
    now = J.tree_stamp(tmp_path, ("learners", "noise"))
    (tmp_path / "cli" / "d.py").write_text("x = 333\n")
    assert J.tree_stamp(tmp_path, ("learners", "noise")) == now  # outside the compiled packages


def test_nolo_functions_are_cached_under_the_tree_stamp_and_others_as_numba_does(tmp_path):
    assert J.INSTALLED
    stamp = J.tree_stamp()
    for fn in (_stream._run_rounds_cached, _stream._learn_round_cached, autocb.autocb_update):
        locator = fn._cache._impl.locator
        assert type(locator).__name__ == "_TreeStampedLocator"
        assert locator.get_source_stamp()[1:] == ("nolo-tree", stamp)
    script = textwrap.dedent("""
        import nolo._jit
        from numba import njit
        @njit(cache=True)
        def f(x):
            return x + 1
        print(type(f._cache._impl.locator).__name__)
    """)
    (tmp_path / "user_code.py").write_text(script)
    out = subprocess.run([sys.executable, str(tmp_path / "user_code.py")], capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert out.stdout.strip() and "TreeStamped" not in out.stdout  # a user's own function: numba's locator


def test_every_module_with_compiled_code_is_in_a_compiled_package_and_imports_nolo_jit():
    """A compiled module outside COMPILED_PACKAGES would not move the stamp; one that takes njit from numba directly
    could be decorated before the locator is installed."""
    for f in J.NOLO_ROOT.rglob("*.py"):
        text = f.read_text()
        tree = ast.parse(text)
        cached = any(isinstance(k, ast.keyword) and k.arg == "cache" for k in ast.walk(tree))
        if not cached or f.name == "_jit.py":
            continue
        rel = f.relative_to(J.NOLO_ROOT)
        assert rel.parts[0] in J.COMPILED_PACKAGES, f"{rel}: compiled code outside nolo._jit.COMPILED_PACKAGES"
        assert "nolo._jit" in text, f"{rel}: takes njit from numba, not from nolo._jit"
        direct = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "numba"
                  and any(a.name == "njit" for a in n.names)]
        assert not direct, f"{rel}: `from numba import njit`"
