"""``summary.json``, ``timings.json``, ``report.md`` and ``report.html``.

``summary.json`` is the verdict and nothing else: per experiment its figures
and its claims, each with ``"status"`` (``holds`` / ``fails`` /
``not_at_this_scale`` / ``within_noise``; ``"se_figure"`` when it names its
standard error) and, for a failure, the one-line ``"why"`` pointing to the docs.  It holds no wall-clock number, so two runs of the same code give
byte-identical files; the timings (seconds per experiment, runs reused and
computed, wall-clock figures such as ``seconds_nrest``) go to
``timings.json``.

``report.html`` opens with a contents list (one link per experiment, with its
claims held / failed / deferred), the summary as a table (each row linking to
its experiment's section, then the failed claims grouped by cause) and one
plain-language paragraph per paper (given by the paper's :func:`~nolo.experiments.registry.register_paper`).  Per
experiment come its claims (a dataset x setting grid when the claims are keyed
that way), the paper's numbers beside ours, the plots, and then the named
figures and data tables folded in ``<details>`` elements, so the page is as
long as the claims and the plots.  A cell written as Markdown bold (``**x**``,
the best cell of a grid) is bold in HTML; numbers are printed by
:func:`fmt_number`.  ``report.md`` has the console summary, a contents list
linking each experiment's section (an explicit anchor, the HTML page's id) and
the same sections unfolded.  Both pages link the figure files the experiments
wrote (``<paper>/<id>/<name>.png`` beside the report) by relative paths, so the
report stays small and the directory can be moved or archived whole;
``write_html(..., embed_figures=True)`` puts the figures inside ``report.html``
as ``data:`` URIs instead, one self-contained (and larger) file.  Pages are
rendered from Jinja2 templates (``templates/report.*.j2``); docstrings are
reStructuredText, rendered with docutils.
"""

from __future__ import annotations

import base64
import json
import math
import mimetypes
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from nolo import __version__
from nolo.experiments.registry import PAPERS, Experiment, papers
from nolo.experiments.result import NOISE_Z, STATUSES, ExperimentResult, is_timing

__all__ = ["ExperimentOutcome", "summary_dict", "timings_dict", "write_summary", "write_timings", "write_markdown",
           "write_html", "fmt_number", "console_summary", "rst_to_html", "scale_label"]

_TEMPLATES = Path(__file__).with_name("templates")
_SKIPPED_RE = re.compile(r"Skipped \(files absent\): (.*?)(?:$|\n)")


@dataclass
class ExperimentOutcome:
    """A finished (or failed) experiment: its registration, result, wall seconds, error text and run counts."""

    experiment: Experiment
    result: ExperimentResult = field(default_factory=ExperimentResult)
    seconds: float = 0.0
    error: str | None = None
    quick: bool = True
    rounds: int | None = None
    rounds_base: int | None = None
    runs_reused: int = 0
    runs_computed: int = 0
    runs_failed: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.skipped:
            self.skipped = skipped_from_notes(self.result.notes)

    @property
    def verdicts(self):
        """``(claim, holds)`` pairs: whether each comparison holds, whatever the scale."""
        return self.result.verdicts()

    @property
    def paper_scale(self) -> bool:
        """A run at the paper's own scale: neither ``--quick`` nor a ``--rounds`` override."""
        return not self.quick and self.rounds is None

    @property
    def statuses(self):
        """``(claim, status)`` pairs at this run's scale (claims decidable only at paper scale wait for a
        run without ``--quick`` and ``--rounds``)."""
        return self.result.statuses(not self.paper_scale)

    def count(self, status: str) -> int:
        return sum(1 for _, s in self.statuses if s == status)

    def why(self, claim) -> str:
        """The one line shown when ``claim`` fails: its own ``why``; for a claim without one, in a run whose
        ``--rounds`` is below the horizon the experiment uses at this scale (``rounds_base``), that fact
        (the claim was calibrated for longer runs); else "not expected ... a regression to investigate"."""
        if not claim.why and self.rounds is not None and self.rounds_base and self.rounds < self.rounds_base:
            return (f"measured at --rounds {self.rounds:,}, below the {self.rounds_base:,} rounds this experiment "
                    "plays at this scale and is calibrated for -- docs/experiments.md#rounds")
        return claim.why_text


def skipped_from_notes(notes: str) -> dict[str, str]:
    """Datasets an experiment skipped, from its notes' ``Skipped (files absent): name: reason; ...``."""
    m = _SKIPPED_RE.search(notes or "")
    if not m:
        return {}
    out = {}
    for item in re.split(r";\s+(?=[\w-]+: )", m.group(1).strip()):
        name, _, reason = item.partition(": ")
        out[name.strip()] = reason.strip()
    return out


def fmt_number(v: float) -> str:
    """A number as the reports print it: ``n/a`` for None, NaN and infinities; an integral value as an integer
    with thousands separators (``10000.0`` -> ``10,000``, below 10^15); anything else to four significant
    digits (``0.01717``, ``257.6``, ``1,235``), in scientific notation (``1.235e+05``, ``5.000e-04``) below
    10^-3 and where four digits do not reach the units."""
    if v is None or not math.isfinite(v):
        return "n/a"
    if v == 0:
        return "0"
    a = abs(v)
    if a < _INT_LIMIT and float(v).is_integer():
        return f"{int(v):,}"
    text = f"{v:,.4g}"
    return f"{v:.3e}" if a < 1e-3 or "e" in text else text


_INT_LIMIT = 1e15  # integral values below this print in full (every digit exact in a float)


def _num(v: float):
    return v if math.isfinite(v) else None


def _rounds(outcomes) -> int | None:
    """The ``--rounds`` override of this reproduction (None: each experiment's own horizon)."""
    return next((o.rounds for o in outcomes if o.rounds is not None), None)


def scale_label(outcomes, quick: bool) -> str:
    """The scale in words: ``quick scale``, ``paper scale``, or ``quick runs at 5,000 rounds`` under ``--rounds``."""
    label = "quick scale" if quick else "paper scale"
    r = _rounds(outcomes)
    return label if r is None else f"{'quick' if quick else 'paper-size'} runs at {r:,} rounds"


def _decidable_json(d):
    return d if isinstance(d, int) else str(d)


# -- summary.json / timings.json ------------------------------------------------------------------------
def summary_dict(outcomes: list[ExperimentOutcome], quick: bool) -> dict:
    """The ``summary.json`` object: deterministic (no wall-clock figure, no timestamp)."""
    exps = []
    totals = dict.fromkeys(STATUSES, 0)
    for o in outcomes:
        claims = []
        for (c, h), (_, st) in zip(o.verdicts, o.statuses):
            totals[st] += 1
            entry = {"statement": c.statement, "figure": c.figure, "op": c.op, "threshold": _num(c.threshold),
                     "holds": bool(h), "status": st, "decidable_at": _decidable_json(c.decidable_at)}
            if c.se_figure is not None:
                entry["se_figure"] = c.se_figure
            if st == "fails":
                entry["why"] = o.why(c)
            claims.append(entry)
        exps.append({
            "paper": o.experiment.paper,
            "id": o.experiment.id,
            "title": o.experiment.title,
            "status": "error" if o.error else "ok",
            "figures": {k: {"value": _num(f.value), "unit": f.unit} for k, f in o.result.figures.items()
                        if not is_timing(k, f)},
            "claims": claims,
            "skipped": dict(sorted(o.skipped.items())),
        })
    return {"nolo_version": __version__, "quick": bool(quick), "rounds": _rounds(outcomes), "totals": totals,
            "experiments": exps}


def timings_dict(outcomes: list[ExperimentOutcome], quick: bool) -> dict:
    """The ``timings.json`` object: what varies from run to run (seconds, runs reused / computed)."""
    return {"nolo_version": __version__, "quick": bool(quick), "rounds": _rounds(outcomes), "experiments": [{
        "paper": o.experiment.paper, "id": o.experiment.id, "seconds": round(o.seconds, 3),
        "runs_reused": o.runs_reused, "runs_computed": o.runs_computed,
        "figures": {k: {"value": _num(f.value), "unit": f.unit} for k, f in o.result.figures.items()
                    if is_timing(k, f)},
    } for o in outcomes]}


def _atomic_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_summary(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    return _atomic_text(Path(path), json.dumps(summary_dict(outcomes, quick), indent=2, allow_nan=False) + "\n")


def write_timings(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    return _atomic_text(Path(path), json.dumps(timings_dict(outcomes, quick), indent=2, allow_nan=False) + "\n")


# -- the console summary (also the top of the report) --------------------------------------------------
def _causes(outcomes) -> "OrderedDict[str, list[tuple[str, str]]]":
    """Failed claims grouped by their ``why``: ``{why: [(experiment key, statement), ...]}``."""
    groups: OrderedDict[str, list] = OrderedDict()
    for o in outcomes:
        for c, st in o.statuses:
            if st == "fails":
                groups.setdefault(o.why(c), []).append((o.experiment.key, c.statement))
    return groups


def _skipped(outcomes) -> "OrderedDict[str, str]":
    """Datasets skipped by any experiment (files absent), with the first reason given."""
    skipped: OrderedDict[str, str] = OrderedDict()
    for o in outcomes:
        for name, reason in o.skipped.items():
            skipped.setdefault(name, reason)
    return skipped


def _totals_line(outcomes, quick: bool) -> str:
    """Claims held / failed / deferred over all experiments, and the runs reused, computed and failed."""
    failed_runs = sum(len(o.runs_failed) for o in outcomes)
    reused = sum(o.runs_reused for o in outcomes)
    computed = sum(o.runs_computed for o in outcomes)
    runs = f"{reused} runs reused, {computed} computed" + (f", {failed_runs} failed" if failed_runs else "")
    n = {s: sum(o.count(s) for o in outcomes) for s in STATUSES}
    noise = (f", {n['within_noise']} within {NOISE_Z:g} standard errors of their bar on this run's seeds"
             if n["within_noise"] else "")
    return (f"{n['holds']} claims hold, {n['fails']} fail, {n['not_at_this_scale']} not decidable at "
            f"{scale_label(outcomes, quick)}{noise}; {runs}")


def _anchor(experiment: Experiment) -> str:
    """The id of an experiment's section in ``report.html``: ``paper-id`` (``demo-noisy-regression``)."""
    return f"{experiment.paper}-{experiment.id}"


def _summary_table(outcomes: list[ExperimentOutcome], quick: bool) -> dict:
    """The report's summary as data: one row per experiment (its anchor, claims held / failed / deferred,
    seconds, or the last line of its error), the failed claims grouped by cause (each with the experiments
    it concerns), skipped datasets, experiments that raised, and the totals line."""
    rows = []
    for o in outcomes:
        err = None
        if o.error:
            err = o.error.strip().splitlines()[-1] if o.error.strip() else "error"
        rows.append({"key": o.experiment.key, "anchor": _anchor(o.experiment), "title": o.experiment.title,
                     "held": o.count("holds"), "failed": o.count("fails"),
                     "deferred": o.count("not_at_this_scale"), "noise": o.count("within_noise"),
                     "seconds": f"{o.seconds:.1f}", "error": err})
    anchors = {o.experiment.key: _anchor(o.experiment) for o in outcomes}
    causes = [{"why": why, "count": len(items),
               "experiments": [(k, anchors[k]) for k in sorted({k for k, _ in items})]}
              for why, items in _causes(outcomes).items()]
    return {"rows": rows, "causes": causes, "skipped": list(_skipped(outcomes).items()),
            "errors": [(o.experiment.key, anchors[o.experiment.key]) for o in outcomes if o.error],
            "totals": _totals_line(outcomes, quick)}


def console_summary(outcomes: list[ExperimentOutcome], quick: bool, out: Path | None = None,
                    max_causes: int = 5, not_run: dict[str, str] | None = None) -> list[str]:
    """The few lines ``nolo reproduce`` prints: one per experiment, failures grouped by cause, skipped
    datasets, experiments left out (``not_run``: ``--rounds`` does not apply), run counts, totals and where
    the report is."""
    w = max([len(o.experiment.key) for o in outcomes] + [10])
    noise = any(o.count("within_noise") for o in outcomes)
    lines = [f"{'experiment':<{w}}  {'held':>5} {'failed':>6} {'deferred':>8}" + (f" {'noise':>5}" if noise else "")
             + f"  {'seconds':>7}"]
    for o in outcomes:
        if o.error:
            first = o.error.strip().splitlines()[-1] if o.error.strip() else "error"
            lines.append(f"{o.experiment.key:<{w}}  {'ERROR':>22}  {o.seconds:>7.1f}  {first[:80]}")
            continue
        lines.append(f"{o.experiment.key:<{w}}  {o.count('holds'):>5} {o.count('fails'):>6} "
                     f"{o.count('not_at_this_scale'):>8}" + (f" {o.count('within_noise'):>5}" if noise else "")
                     + f"  {o.seconds:>7.1f}")
    causes = _causes(outcomes)
    if causes:
        lines.append("failed claims, by cause:")
        for why, items in list(causes.items())[:max_causes]:
            exps = sorted({k for k, _ in items})
            lines.append(f"  {len(items)} x {why} ({', '.join(exps)})")
        if len(causes) > max_causes:
            lines.append(f"  ... {len(causes) - max_causes} more causes: see the report")
    skipped = _skipped(outcomes)
    if skipped:
        lines.append("skipped datasets (files absent; --data-dir DIR or NOLO_DATA_DIR): "
                     + "; ".join(f"{n}" for n in skipped))
    if not_run:
        lines.append(f"not run (--rounds does not apply: no horizon in rounds): {', '.join(not_run)}")
    errors = [o.experiment.key for o in outcomes if o.error]
    if errors:
        lines.append(f"experiments that raised (traceback in the report): {', '.join(errors)}")
    lines.append(_totals_line(outcomes, quick))
    if out is not None:
        lines.append(f"report: {Path(out) / 'report.html'} (also report.md, summary.json)")
    return lines


def paper_paragraphs(outcomes: list[ExperimentOutcome], quick: bool) -> list[dict]:
    """One plain-language paragraph per paper present in ``outcomes``, with this run's counts."""
    out = []
    for paper in papers():
        mine = [o for o in outcomes if o.experiment.paper == paper]
        if not mine:
            continue
        t = PAPERS[paper]
        n = {s: sum(o.count(s) for o in mine) for s in STATUSES}
        counts = (f"This run ({scale_label(mine, quick)}): {n['holds']} of {sum(n.values())} claims "
                  f"hold, {n['fails']} fail")
        if n["within_noise"]:
            counts += (f", {n['within_noise']} lie within {NOISE_Z:g} standard errors of their bar on this run's "
                       "seeds (more seeds decide them)")
        counts += (f", {n['not_at_this_scale']} are decided only at paper scale (nolo reproduce {paper} "
                   "without --quick or --rounds)." if n["not_at_this_scale"] else ".")
        errs = [o.experiment.id for o in mine if o.error]
        if errs:
            counts += f" Experiments that raised: {', '.join(errs)}."
        skipped = sorted({k for o in mine for k in o.skipped})
        if skipped:
            counts += f" Datasets skipped (files absent): {', '.join(skipped)}."
        out.append({"paper": paper, "name": t.name, "reproduced": t.reproduced, "not_reproduced": t.not_reproduced,
                    "adds": t.adds, "counts": counts})
    return out


# -- claims as rows or as a grid -------------------------------------------------------------------------
_MARK = {"holds": "holds", "fails": "FAILS", "not_at_this_scale": "deferred", "within_noise": "within noise"}
_SYMBOL = {"holds": "\u2713", "fails": "\u2717", "not_at_this_scale": "\u00b7", "within_noise": "\u2248"}
_KEY_RE = re.compile(r"^([^\s:/]+)/([^\s:]+): (.+)$")


def _claim_rows(o: ExperimentOutcome):
    rows = []
    for c, st in o.statuses:
        f = o.result.figures.get(c.figure)
        rows.append([_MARK[st], c.statement, c.figure, fmt_number(f.value) if f else "n/a",
                     f"{c.op} {fmt_number(c.threshold)}", o.why(c) if st == "fails" else ""])
    return ["verdict", "claim", "figure", "ours", "required", "why it fails"], rows


def claim_grid(o: ExperimentOutcome, min_claims: int = 12):
    """Claims stated as ``"<dataset>/<setting>: <text>"`` as a grid: one row per (text, dataset), one column
    per setting, each cell the verdict symbol and our figure.  None when the claims are not keyed that way."""
    st = o.statuses
    if len(st) < min_claims:
        return None
    cells, texts, rows_seen, cols = {}, [], [], []
    for c, s in st:
        m = _KEY_RE.match(c.statement)
        if not m:
            return None
        ds, setting, text = m.groups()
        if text not in texts:
            texts.append(text)
        if ds not in rows_seen:
            rows_seen.append(ds)
        if setting not in cols:
            cols.append(setting)
        f = o.result.figures.get(c.figure)
        cells[(text, ds, setting)] = (s, f"{_SYMBOL[s]} {fmt_number(f.value) if f else 'n/a'}")
    groups = []
    for text in texts:
        rows = []
        for ds in rows_seen:
            row = [cells.get((text, ds, col)) for col in cols]
            if any(row):
                rows.append({"label": ds, "cells": [r or ("", "") for r in row]})
        groups.append({"text": text, "rows": rows,
                       "table_rows": [[r["label"], *(c[1] for c in r["cells"])] for r in rows]})
    return {"columns": cols, "groups": groups}


def _paper_rows(o: ExperimentOutcome):
    rows = [[r.quantity, fmt_number(r.paper), fmt_number(r.ours), fmt_number(r.difference), r.unit, r.note]
            for r in o.result.paper_rows]
    return ["quantity", "paper", "ours", "difference (ours - paper)", "unit", "note"], rows


def _frame_rows(df, max_rows: int = 50):
    header = [str(c) for c in df.columns]
    rows = []
    for _, r in df.head(max_rows).iterrows():
        rows.append([fmt_number(float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
                     for v in r.tolist()])
    return header, rows


# -- reStructuredText ------------------------------------------------------------------------------------
_SPHINX_ROLES = ("func", "class", "meth", "mod", "attr", "data", "exc", "obj", "ref", "doc", "py:func",
                 "py:class", "py:meth", "eq", "cite", "term", "any")


@lru_cache(maxsize=1)
def _register_roles() -> None:
    from docutils import nodes
    from docutils.parsers.rst import roles

    def literal_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        shown = text.split("<")[0].strip() if "<" in text and text.endswith(">") else text
        return [nodes.literal(rawtext, shown.lstrip("~!"))], []

    for r in _SPHINX_ROLES:
        roles.register_local_role(r, literal_role)


def rst_to_html(text: str) -> str:
    """reStructuredText (a docstring) as an HTML fragment; Sphinx roles such as ``:func:`` render as code."""
    import html

    from docutils.core import publish_parts
    from docutils.writers.html5_polyglot import Writer

    if not text or not text.strip():
        return ""
    _register_roles()
    try:
        # a Writer instance: writer_name="html5" is deprecated (Docutils 0.22 warns) and a name in writer= needs a
        # recent Docutils; an instance is the same call on every supported Docutils (>= 0.18), without a warning
        parts = publish_parts(text, writer=Writer(), settings_overrides={
            "report_level": 5, "halt_level": 5, "doctitle_xform": False, "initial_header_level": 4,
            "syntax_highlight": "none", "input_encoding": "unicode", "output_encoding": "unicode",
            "embed_stylesheet": False, "file_insertion_enabled": False, "raw_enabled": False})
        return parts["body"]
    except Exception:  # never let a docstring break the report
        return "<p>" + html.escape(text) + "</p>"


def rst_to_markdown(text: str) -> str:
    """The light touch a docstring needs in Markdown: ``code`` and :role:`x` become `x`."""
    text = re.sub(r":[\w:]+:`~?([^`<]+?)(?:\s*<[^>]+>)?`", r"`\1`", text or "")
    return re.sub(r"``(.+?)``", r"`\1`", text)


# -- pages -----------------------------------------------------------------------------------------------
_MD_BOLD_RE = re.compile(r"\*\*(\S(?:[^*]*\S)?)\*\*")
_NUMBER_RE = re.compile(r"(\*\*)?(?:[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|n/a)(?(1)\*\*)")


def _is_number(value) -> bool:
    """Whether a table cell is one number as :func:`fmt_number` prints it (bold or not): such a cell is
    right-aligned and never broken across lines."""
    return bool(_NUMBER_RE.fullmatch(str(value)))


def _html_cell(value):
    """A table cell for ``report.html``: a cell written as Markdown bold, ``**x**`` (the best cell of a
    grid), becomes ``<b>x</b>``; anything else, and ``x`` itself, is escaped."""
    from markupsafe import Markup, escape

    text = str(value)
    m = _MD_BOLD_RE.fullmatch(text)
    return Markup("<b>%s</b>") % m.group(1) if m else escape(text)


@lru_cache(maxsize=1)
def _env():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)), autoescape=jinja2.select_autoescape(
        enabled_extensions=("html.j2",), default_for_string=False), trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["md"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    env.filters["rst_md"] = rst_to_markdown
    env.filters["cell"] = _html_cell
    env.tests["number"] = _is_number
    return env


def _png_size(data: bytes) -> dict:
    """``{"width": w, "height": h}`` from a PNG's header (so the page lays out before the image decodes);
    empty for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return {"width": int.from_bytes(data[16:20], "big"), "height": int.from_bytes(data[20:24], "big")}
    return {}


def _plot_item(p, report_dir: Path, html: bool, embed_figures: bool) -> dict:
    """A figure of the report: ``stem`` and ``rel`` (its path relative to the report, for Markdown); for HTML,
    when the file exists, ``src`` (the relative path as a URL, or with ``embed_figures`` a ``data:`` URI) and its
    pixel size for a PNG."""
    p = Path(p)
    rel = os.path.relpath(p, report_dir)
    item = {"stem": p.stem, "rel": rel}
    if html and p.is_file():
        with p.open("rb") as fh:
            head = fh.read(24)
        item.update(_png_size(head))
        if embed_figures:
            mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
            item["src"] = f"data:{mime};base64," + base64.b64encode(p.read_bytes()).decode("ascii")
        else:
            item["src"] = quote(Path(rel).as_posix())
    return item


def _context(outcomes, quick, path: Path, html: bool, embed_figures: bool = False) -> dict:
    from markupsafe import Markup

    exps = []
    for o in outcomes:
        e = o.experiment
        plots = [_plot_item(p, path.parent, html, embed_figures) for p in o.result.plots]
        tables = []
        for name, df in o.result.tables.items():
            header, rows = _frame_rows(df)
            tables.append({"name": name, "header": header, "rows": rows, "total_rows": len(df)})
        ch, cr = _claim_rows(o)
        ph, pr = _paper_rows(o)
        exps.append({
            "paper": e.paper, "id": e.id, "key": e.key, "title": e.title, "description": e.description,
            "anchor": _anchor(e), "held": o.count("holds"), "failed": o.count("fails"),
            "deferred": o.count("not_at_this_scale"), "noise": o.count("within_noise"),
            "description_html": Markup(rst_to_html(e.description)) if html else "", "error": o.error,
            "claims_header": ch, "claims": cr, "grid": claim_grid(o), "paper_header": ph, "paper_rows": pr,
            "figures": [[k, fmt_number(f.value), f.unit] for k, f in o.result.figures.items()],
            "tables": tables, "plots": plots, "notes": o.result.notes, "skipped": o.skipped,
        })
    return {"version": __version__, "quick": quick, "summary": console_summary(outcomes, quick),
            "summary_table": _summary_table(outcomes, quick), "papers": paper_paragraphs(outcomes, quick),
            "experiments": exps, "symbols": _SYMBOL, "noise_z": f"{NOISE_Z:g}"}


def write_markdown(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool) -> Path:
    """Write ``report.md``; its figures are links relative to ``path``."""
    path = Path(path)
    text = _env().get_template("report.md.j2").render(**_context(outcomes, quick, path, html=False))
    return _atomic_text(path, text)


def write_html(path: str | os.PathLike, outcomes: list[ExperimentOutcome], quick: bool, *,
               embed_figures: bool = False) -> Path:
    """Write ``report.html``.

    Its ``<img>`` elements link the figure files by paths relative to ``path`` (keep the report with its
    directory); ``embed_figures=True`` puts each figure inside the page as a ``data:`` URI instead, for one
    file that opens anywhere, at the size of its figures (about 55 kB per plot)."""
    path = Path(path)
    context = _context(outcomes, quick, path, html=True, embed_figures=embed_figures)
    text = _env().get_template("report.html.j2").render(**context)
    return _atomic_text(path, text)
