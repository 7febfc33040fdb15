"""The ``nolo`` command line.  Thin: each command lives in its own module and calls the library.

Commands are loaded lazily (``COMMANDS`` maps a name to ``module:attribute``)
so that ``nolo --help`` stays fast and one command's heavy imports do not slow
the others.
"""

from __future__ import annotations

import importlib

import click

from nolo import __version__

#: command name -> "module:click command".  Add one line per command module.
COMMANDS: dict[str, str] = {
    "demo": "nolo.cli.demo:demo",
    "run": "nolo.cli.experiments:run",
    "reproduce": "nolo.cli.experiments:reproduce",
    "results": "nolo.cli.experiments:results",
    "plot": "nolo.cli.plot:plot",
    "data": "nolo.cli.data:data",
    "estimate-noise": "nolo.cli.estimate_noise:estimate_noise",
    "evaluate": "nolo.cli.evaluate:evaluate",
    "learn": "nolo.cli.learn:learn",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nolo")
def main() -> None:
    """nolo: noisy online learning (CSS10, CSS11, AM) -- learners, experiments, paper reproductions."""
