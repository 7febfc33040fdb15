"""Saying so when a call waits on numba's compiler.

nolo's compiled loops are compiled the first time a process needs them for a kind of learner and input, and cached on
disk (numba's ``cache=True``): later processes load them in well under a second.  A first call on a new machine can
wait a minute on the compiler; :func:`call_compiled` says so on the console (a ``logging`` warning on the ``nolo``
logger, shown without any logging setup) when a first call has not returned after :data:`NOTE_AFTER` seconds and
no new compiled version has appeared in the meantime -- so a long run of an already compiled loop says nothing.
Silence it with ``logging.getLogger("nolo.compiling").setLevel(logging.ERROR)``, or for a process and the workers it
starts with the environment variable ``NOLO_COMPILE_NOTE=0`` (``nolo``'s command line says it once itself).
"""

from __future__ import annotations

import logging
import os
import threading

__all__ = ["call_compiled", "NOTE_AFTER"]

#: seconds a first call may take before it says it is compiling
NOTE_AFTER = 3.0

_log = logging.getLogger("nolo.compiling")
_called: set = set()


def call_compiled(fn, key: type, entry: str, *args):
    """``fn(*args)``; on the first call in this process for ``(fn, key)`` (``key``: the type that selects the compiled
    version, a learner's state record, whose name less a ``State`` suffix names the learner in the note; ``entry``:
    what the call does, e.g. ``"learn"``), a note if it waits on the compiler longer than :data:`NOTE_AFTER` s."""
    if (fn, key) in _called:
        return fn(*args)
    if os.environ.get("NOLO_COMPILE_NOTE") == "0":
        _called.add((fn, key))
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

    timer = threading.Timer(NOTE_AFTER, note)
    timer.daemon = True
    timer.start()
    try:
        return fn(*args)
    finally:
        timer.cancel()
        _called.add((fn, key))
