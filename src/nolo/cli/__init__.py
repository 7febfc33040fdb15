"""The ``nolo`` command line.  Thin: each command lives in its own module and calls the library.

Commands are loaded lazily (``COMMANDS``, in :mod:`nolo.cli._commands`, maps a name to ``module:attribute``)
so that ``nolo --help`` stays fast and one command's heavy imports do not slow
the others.  The command line needs the ``cli`` extra (click, rich, tqdm); without it
``nolo`` prints the pip command that adds it, in one line.  A command whose module needs
another extra (the experiment platform's) says so in one line when it is invoked.
"""

from __future__ import annotations

from nolo._extras import missing_message
from nolo.cli._commands import COMMANDS

__all__ = ["COMMANDS", "main"]

_NO_CLI = missing_message("cli", "the nolo command line")

if _NO_CLI is None:
    from nolo.cli._group import main
else:

    def main() -> None:
        """Without the ``cli`` extra: the pip command on stderr, exit status 1 (no traceback)."""
        raise SystemExit(_NO_CLI)
