"""The click group behind ``nolo``: loads a command's module when the command is asked for."""

from __future__ import annotations

import importlib

import click

from nolo import __version__
from nolo.cli._commands import COMMANDS
from nolo.exceptions import MissingExtraError


def _needs_extra(name: str, message: str) -> click.Command:
    """A stand-in for a command whose module needs an extra that is not installed: listed by ``nolo --help`` with
    the pip command, and failing in one line (exit status 1) when invoked."""

    def callback(**_):
        raise click.ClickException(message)

    return click.Command(name, callback=callback, help=message, short_help="needs " + message.split(": ")[-1],
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


class _LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except MissingExtraError as exc:
            return _needs_extra(name, str(exc))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MissingExtraError as exc:  # a command that imports an extra's module only when it runs
            raise click.ClickException(str(exc)) from None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nolo")
def main() -> None:
    """nolo: noisy online learning (CSS10, CSS11, AM) -- learners, experiments, paper reproductions."""
