"""One threadpoolctl controller per process (building one scans the loaded native libraries, milliseconds), and
BLAS limited to one thread for a block: small dense factorisations on a loaded 2-core machine ran several times
slower threaded, and a threaded result's last bits can depend on the thread count."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["thread_controller", "one_blas_thread"]


@lru_cache(maxsize=1)
def thread_controller():
    """The process's :class:`threadpoolctl.ThreadpoolController`, built on first use."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread():
    """A context manager limiting BLAS to one thread inside its block (the process's controller)."""
    return thread_controller().limit(limits=1, user_api="blas")
