"""Write a benchmark's tables as a Markdown file the documentation includes, stamped with what produced it.

The stamp names nolo's version, Python, the processor and its core count, the load average when the benchmark
started and when the file was written (the machine may be shared: read the ratios measured in the same run), the
date and the exact command; a table without it is not a measurement anyone can check.  Used by the benchmarks'
``--markdown FILE`` option; docs/_generated/ holds the files the documentation pages include.

A benchmark imports this module when it starts (the load average at start is taken then, or by :func:`start`),
collects its tables with :func:`table` and writes them with :func:`write_markdown`::

    from _markdown import start, table, write_markdown

    start()
    ...
    write_markdown(args.markdown, ["loop", "rounds/s"], rows, notes=["Other figures ..."])
"""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
from pathlib import Path


def _load() -> str:
    try:
        return "{:.1f} / {:.1f} / {:.1f}".format(*os.getloadavg())
    except OSError:
        return "unknown"


_START_LOAD = _load()


def start() -> None:
    """Take the load average at the start of the measurement (import time otherwise)."""
    global _START_LOAD
    _START_LOAD = _load()


def processor() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """The processor and its logical core count, e.g. ``AMD EPYC, 2 logical cores``."""
    return f"{processor()}, {os.cpu_count()} logical cores"


def package_versions(*names: str) -> str:
    """``"numpy 2.4.0, river 0.26.1"`` for the installed distributions among ``names`` (absent ones: ``absent``)."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in names:
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            out.append(f"{name} absent")
    return ", ".join(out)


#: options whose value is a place on the measuring machine: the stamp shows the option with a placeholder
_LOCAL_PATHS = {"--data-dir": "DIR"}


def command(argv: list[str] | None = None) -> str:
    """The command that was run, the script's path relative to the repository and a data directory as ``DIR``.

    >>> command(["/opt/bench.py", "--data-dir", "/home/me/data", "--markdown=out.md"])
    'python /opt/bench.py --data-dir DIR --markdown=out.md'
    >>> command(["/opt/bench.py", "--data-dir=/home/me/data"])
    'python /opt/bench.py --data-dir=DIR'
    """
    argv = list(sys.argv if argv is None else argv)
    out = [_relative(argv[0])]
    args = iter(argv[1:])
    for a in args:
        opt, eq, _ = a.partition("=")
        if opt in _LOCAL_PATHS:
            if eq:
                out.append(f"{opt}={_LOCAL_PATHS[opt]}")
            else:
                out += [a, _LOCAL_PATHS[opt]]
                next(args, None)
            continue
        out.append(a)
    return "python " + " ".join(shlex.quote(a) for a in out)


def stamp(argv: list[str] | None = None, versions: str = "") -> str:
    """One line: version (and ``versions`` of peers), Python, machine, load average at start and end, date, command."""
    import nolo

    peers = f", {versions}" if versions else ""
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (f"nolo {nolo.__version__}{peers}, Python {platform.python_version()}, {machine()}, "
            f"load average {_START_LOAD} at start and {_load()} at end (1 / 5 / 15 min), {date}; "
            f"command: `{command(argv)}`")


def _relative(script: str) -> str:
    path = Path(script).resolve()
    repo = Path(__file__).resolve().parents[1]
    try:
        return str(path.relative_to(repo))
    except ValueError:
        return script


def table(header: list[str], rows: list[list[str]], align: str = "") -> str:
    """A Markdown table; ``align`` has one character per column, ``r`` for right-aligned (numbers), else left."""
    rule = ["---:" if align[i:i + 1] == "r" else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_markdown(path, header: list[str], rows: list[list[str]], notes=(), argv: list[str] | None = None,
                   align: str = "", versions: str = "", intro=()) -> Path:
    """Write the stamp, ``intro`` (paragraphs), ``header`` and ``rows`` as a Markdown table, then ``notes``
    (paragraphs, or more tables made by :func:`table`), each separated by a blank line.  ``versions`` names peers'
    versions for the stamp (e.g. ``package_versions("vowpalwabbit")``)."""
    blocks = [f"Generated by the benchmark: {stamp(argv, versions)}", *intro, table(header, rows, align), *notes]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(b.rstrip("\n") for b in blocks) + "\n")
    return path
