"""Saying so when a call waits on numba's compiler.

nolo's compiled loops are compiled the first time a process needs them for a kind of learner and input, and cached on
disk (numba's ``cache=True``): later processes load them in well under a second.  A first call on a new machine can
wait a minute on the compiler; :func:`call_compiled` says so on the console (a ``logging`` warning on the ``nolo``
logger, shown without any logging setup) when a first call has not returned after :data:`NOTE_AFTER` seconds and
no new compiled version has appeared in the meantime -- so a long run of an already compiled loop says nothing.
Silence it with ``logging.getLogger("nolo.compiling").setLevel(logging.ERROR)``, or for a process and the workers it
starts with the environment variable ``NOLO_COMPILE_NOTE=0`` (``nolo``'s command line says it once itself).

Processes that start together on a cold cache (a sweep's workers, the test suite's) would each compile the same loop
at the same time.  The first call of a disk-cached loop therefore compiles under a lock file per compiled version (loop,
record and argument types) on the machine (:func:`compile_once`): one process compiles and writes numba's cache, the others wait and then load it
(numba reads its cache index again at each compile).  Only the compile is locked, not the run that follows.
``NOLO_COMPILE_LOCK=0`` turns the lock off (each process then compiles for itself, as numba alone does).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import threading
import time

__all__ = ["call_compiled", "compile_once", "NOTE_AFTER", "LOCK_WAIT"]

#: seconds a first call may take before it says it is compiling
NOTE_AFTER = 3.0
#: seconds a process waits for another one's compile of the same loop before compiling it itself
LOCK_WAIT = 900.0

_log = logging.getLogger("nolo.compiling")
_called: set = set()


def call_compiled(fn, key: type, entry: str, *args):
    """``fn(*args)``; on the first call in this process for ``(fn, key)`` (``key``: the type that selects the compiled
    version, a learner's state record, whose name less a ``State`` suffix names the learner in the note; ``entry``:
    what the call does, e.g. ``"learn"``), a note if it waits on the compiler longer than :data:`NOTE_AFTER` s, and
    the compile done once per machine (:func:`compile_once`), silenced note or not."""
    if (fn, key) in _called:
        return fn(*args)
    try:
        n0 = len(fn.signatures)
    except AttributeError:  # not a numba dispatcher
        n0 = None

    def note():
        if n0 is None or len(fn.signatures) == n0:
            name = getattr(key, "__name__", str(key)).removesuffix("State")
            _log.warning("compiling %s's %s for this machine, once (later processes load it from numba's cache) ...",
                         name, entry)

    timer = None
    if os.environ.get("NOLO_COMPILE_NOTE") != "0":
        timer = threading.Timer(NOTE_AFTER, note)
        timer.daemon = True
        timer.start()
    try:
        compile_once(fn, key, args)
        return fn(*args)
    finally:
        if timer is not None:
            timer.cancel()
        _called.add((fn, key))


def compile_once(fn, key: type, args) -> None:
    """Compile (or load from numba's disk cache) ``fn``'s version for ``args`` under a lock file per version (``fn``,
    ``key`` and the arguments' numba types) on this machine, so that processes starting together compile it once
    (one compiling another version of the loop, e.g. for sparse rows, does not hold them up); nothing for a
    dispatcher without a disk cache, a version this process has, or what cannot be typed here (the call itself then
    compiles, or raises numba's own error)."""
    cache = getattr(fn, "_cache", None)
    if cache is None or type(cache).__name__ == "NullCache" or not hasattr(fn, "compile"):
        return
    if os.environ.get("NOLO_COMPILE_LOCK") == "0":  # each process compiles for itself (numba's own behaviour)
        return
    try:
        sig = tuple(fn.typeof_pyval(a) for a in args)
    except Exception:  # noqa: BLE001 - left to the call, which gives numba's message
        return
    if sig in fn.overloads:
        return
    with _machine_lock(f"{_qualname(fn)}|{_qualname(key)}|{sig}"):
        try:
            fn.compile(sig)
        except Exception:  # noqa: BLE001 - the call compiles again and raises it where numba's dispatch would
            pass


def _qualname(obj) -> str:
    f = getattr(obj, "py_func", obj)
    return f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', repr(f))}"


@contextlib.contextmanager
def _machine_lock(name: str):
    """An exclusive ``flock`` on ``<tmp>/nolo-compile-locks/<hash of name>.lock``, waited on for at most
    :data:`LOCK_WAIT` seconds; no lock where ``fcntl`` or the directory is not available (the compile then simply
    runs, as without the lock)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        folder = os.path.join(tempfile.gettempdir(), "nolo-compile-locks")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, hashlib.sha1(name.encode()).hexdigest()[:20] + ".lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    locked = False
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
                break
            except OSError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
        yield
    finally:
        if locked:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
