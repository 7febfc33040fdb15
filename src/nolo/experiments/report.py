"""``report.md`` and ``report.html`` (figures embedded as base64 PNG) and ``summary.json``.

For each experiment: its figures, its claims with verdicts, the paper's
numbers beside ours with the difference (``ours - paper``), its plots and
tables.  ``summary.json`` has the fixed machine-readable shape of
``docs/experiments.md`` (non-finite numbers are written as ``null``).
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from nolo import __version__
from nolo.experiments.registry import Experiment
from nolo.experiments.result import ExperimentResult

__all__ = ["ExperimentOutcome", "summary_dict", "write_summary", "write_markdown", "write_html", "fmt_number"]


@dataclass
class ExperimentOutcome:
    """A finished (or failed) experiment: its registration, result, wall seconds and error text."""

    experiment: Experiment
    result: ExperimentResult = field(default_factory=ExperimentResult)
    seconds: float = 0.0
    error: str | None = None

    @property
    def verdicts(self):
        return self.result.verdicts()


def fmt_number(v: float) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.3e}"
    return f"{v:.4g}"


def _num(v: float):
    return v if math.isfinite(v) else None


def summary_dict(outcomes: list[ExperimentOutcome], quick: bool) -> dict:
    """The ``summary.json`` object."""
    exps = []
    for o in outcomes:
        exps.append({
            "paper": o.experiment.paper,
            "id": o.experiment.id,
            "title": o.experiment.title,
            "figures": {k: {"value": _num(f.value), "unit": f.unit} for k, f in o.result.figures.items()},
            "claims": [{"statement": c.statement, "figure": c.figure, "op": c.op, "threshold": _num(c.threshold),
                        "holds": bool(h)} for c, h in o.verdicts],
        })
    return {"nolo_version": __version__, "quick": bool(quick), "experiments": exps}


def _atomic_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_summary(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    return _atomic_text(Path(path), json.dumps(summary_dict(outcomes, quick), indent=2, allow_nan=False) + "\n")


# -- markdown ------------------------------------------------------------------------------------------
def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(map(_md_escape, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _frame_rows(df, max_rows: int = 50):
    header = [str(c) for c in df.columns]
    rows = []
    for _, r in df.head(max_rows).iterrows():
        rows.append([fmt_number(float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
                     for v in r.tolist()])
    return header, rows


def _claim_rows(o: ExperimentOutcome):
    rows = []
    for c, h in o.verdicts:
        f = o.result.figures.get(c.figure)
        rows.append(["holds" if h else "FAILS", c.statement, c.figure,
                     fmt_number(f.value) if f else "n/a", f"{c.op} {fmt_number(c.threshold)}"])
    return ["verdict", "claim", "figure", "ours", "required"], rows


def _paper_rows(o: ExperimentOutcome):
    rows = [[r.quantity, fmt_number(r.paper), fmt_number(r.ours), fmt_number(r.difference), r.unit, r.note]
            for r in o.result.paper_rows]
    return ["quantity", "paper", "ours", "difference (ours - paper)", "unit", "note"], rows


def _totals(outcomes):
    n = sum(len(o.verdicts) for o in outcomes)
    held = sum(1 for o in outcomes for _, h in o.verdicts if h)
    return held, n


def write_markdown(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    path = Path(path)
    held, n = _totals(outcomes)
    out = ["# nolo reproduction report", "",
           f"nolo {__version__}; {'quick (reduced) runs' if quick else 'paper-scale runs'}; "
           f"{held} of {n} claims hold.", ""]
    out.append(_md_table(["paper", "experiment", "claims holding", "seconds"],
                         [[o.experiment.paper, f"{o.experiment.id}: {o.experiment.title}",
                           "ERROR" if o.error else f"{sum(h for _, h in o.verdicts)}/{len(o.verdicts)}",
                           f"{o.seconds:.1f}"] for o in outcomes]))
    for o in outcomes:
        e = o.experiment
        out += ["", f"## {e.paper} / {e.id}: {e.title}", ""]
        if e.description:
            out += [e.description, ""]
        if o.error:
            out += ["**The experiment failed:**", "", "```", o.error.rstrip(), "```", ""]
            continue
        if o.verdicts:
            out += ["### Claims", "", _md_table(*_claim_rows(o)), ""]
        if o.result.paper_rows:
            out += ["### Paper vs ours", "", _md_table(*_paper_rows(o)), ""]
        if o.result.figures:
            out += ["### Figures", "", _md_table(["name", "value", "unit"],
                                                 [[k, fmt_number(f.value), f.unit] for k, f in o.result.figures.items()]), ""]
        for name, df in o.result.tables.items():
            out += [f"### {name}", "", _md_table(*_frame_rows(df)), ""]
        for p in o.result.plots:
            rel = os.path.relpath(p, path.parent)
            out += [f"![{p.stem}]({rel})", ""]
        if o.result.notes:
            out += [o.result.notes, ""]
    return _atomic_text(path, "\n".join(out) + "\n")


# -- HTML ----------------------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.holds { color: #0a6b1f; font-weight: bold; } td.fails { color: #b00020; font-weight: bold; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0.5em 0.5em 0; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; }
div.scroll { max-width: 100%; overflow-x: auto; }
"""


def _h(s) -> str:
    return html.escape(str(s))


def _html_table(header, rows, verdict_col: int | None = None) -> str:
    out = ['<div class="scroll"><table><thead><tr>' + "".join(f"<th>{_h(c)}</th>" for c in header)
           + "</tr></thead><tbody>"]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cls = ""
            if verdict_col is not None and i == verdict_col:
                cls = ' class="holds"' if c == "holds" else ' class="fails"'
            cells.append(f"<td{cls}>{_h(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def write_html(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    path = Path(path)
    held, n = _totals(outcomes)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>nolo reproduction report</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>nolo reproduction report</h1>",
           f"<p>nolo {_h(__version__)}; {'quick (reduced) runs' if quick else 'paper-scale runs'}; "
           f"<b>{held} of {n} claims hold</b>.</p>"]
    out.append(_html_table(["paper", "experiment", "claims holding", "seconds"],
                           [[o.experiment.paper, f"{o.experiment.id}: {o.experiment.title}",
                             "ERROR" if o.error else f"{sum(h for _, h in o.verdicts)}/{len(o.verdicts)}",
                             f"{o.seconds:.1f}"] for o in outcomes]))
    for o in outcomes:
        e = o.experiment
        out.append(f'<h2 id="{_h(e.paper)}-{_h(e.id)}">{_h(e.paper)} / {_h(e.id)}: {_h(e.title)}</h2>')
        if e.description:
            out.append(f"<p>{_h(e.description)}</p>")
        if o.error:
            out.append(f"<p class='fails'><b>The experiment failed:</b></p><pre>{_h(o.error)}</pre>")
            continue
        if o.verdicts:
            out += ["<h3>Claims</h3>", _html_table(*_claim_rows(o), verdict_col=0)]
        if o.result.paper_rows:
            out += ["<h3>Paper vs ours</h3>", _html_table(*_paper_rows(o))]
        if o.result.figures:
            out += ["<h3>Figures</h3>", _html_table(["name", "value", "unit"],
                                                    [[k, fmt_number(f.value), f.unit]
                                                     for k, f in o.result.figures.items()])]
        for name, df in o.result.tables.items():
            out += [f"<h3>{_h(name)}</h3>", _html_table(*_frame_rows(df))]
        for p in o.result.plots:
            data = base64.b64encode(Path(p).read_bytes()).decode("ascii")
            out.append(f'<img alt="{_h(p.stem)}" src="data:image/png;base64,{data}">')
        if o.result.notes:
            out.append(f"<p>{_h(o.result.notes)}</p>")
    out.append("</body></html>")
    return _atomic_text(path, "\n".join(out) + "\n")
