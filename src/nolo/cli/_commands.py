"""The ``nolo`` commands by name, kept apart from the package so that the click group can read them at import."""

from __future__ import annotations

__all__ = ["COMMANDS"]

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
