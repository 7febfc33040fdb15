"""numba's ``njit`` for nolo's compiled code, with a disk cache that goes stale as a whole when any compiled module does.

numba's disk cache (``cache=True``) keys a function's compiled code on its own source file's modification time and size.
A compiled loop inlines or links the rules of other modules -- the bandit stream loop (``learners/bandit/_stream.py``)
holds each learner's ``update``, written in the learner's module -- so after an edit of the learner's module alone, or
a ``git pull`` into an editable install that changes it and not the loop's file, numba would load the loop compiled
from the old rule: stale results, no error.

Every module of nolo that defines compiled code imports ``njit`` from here.  Importing this module first registers a
cache locator for nolo's files that adds :func:`tree_stamp` -- the modification times and sizes of every source file of
:data:`COMPILED_PACKAGES` -- to numba's stamp, so a change to any of them recompiles every cached function of nolo
once (on the next call that needs it), and never loads code compiled from other sources.  Where the cache lives
(``NUMBA_CACHE_DIR``, ``__pycache__`` beside the sources, the user-wide fallback) is numba's choice as before.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import njit
from numba.core import caching

__all__ = ["njit", "tree_stamp", "COMPILED_PACKAGES", "NOLO_ROOT"]

#: the subpackages of nolo that hold compiled code (``tests/test_compiled_modules.py`` checks no module elsewhere does)
COMPILED_PACKAGES = ("kernels", "learners", "noise", "noise_rates", "oco")
NOLO_ROOT = Path(__file__).resolve().parent


def tree_stamp(root: Path = NOLO_ROOT, packages=COMPILED_PACKAGES) -> str:
    """A digest of the relative path, modification time (ns) and size of every ``.py`` file under ``root/<package>``
    for each of ``packages`` (numba's own freshness test, applied to the tree)."""
    h = hashlib.blake2b(digest_size=16)
    for pkg in packages:
        entries = []
        for dirpath, dirnames, filenames in os.walk(root / pkg):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    st = os.stat(path)
                    entries.append((os.path.relpath(path, root), st.st_mtime_ns, st.st_size))
        for rel, mtime, size in sorted(entries):
            h.update(f"{rel}\0{mtime}\0{size}\n".encode())
    return h.hexdigest()


def _install() -> bool:
    """Put :class:`_TreeStampedLocator` first in numba's locator list (once); False where this numba has no such list
    (the cache then works as numba alone makes it)."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = getattr(caching, "_CacheLocator", None)
    classes = getattr(impl, "_locator_classes", None)
    if impl is None or base is None or not isinstance(classes, list):
        return False
    if any(getattr(c, "_nolo_tree_stamp", False) for c in classes):
        return True
    inner_classes = list(classes)
    stamp = tree_stamp()
    root = str(NOLO_ROOT) + os.sep

    class _TreeStampedLocator(base):
        """numba's locator for the file (the first of its own list that accepts it), its stamp extended by the tree's."""

        _nolo_tree_stamp = True

        def __init__(self, inner):
            self._inner = inner

        def ensure_cache_path(self):
            return self._inner.ensure_cache_path()

        def get_cache_path(self):
            return self._inner.get_cache_path()

        def get_source_stamp(self):
            return (self._inner.get_source_stamp(), "nolo-tree", stamp)

        def get_disambiguator(self):
            return self._inner.get_disambiguator()

        def __getattr__(self, name):  # anything else numba asks of its locator
            if name == "_inner":
                raise AttributeError(name)
            return getattr(self._inner, name)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(root):
                return None
            for c in inner_classes:
                inner = c.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner)
            return None

    classes.insert(0, _TreeStampedLocator)
    return True


INSTALLED = _install()
