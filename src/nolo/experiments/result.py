"""What an experiment returns: figures, claims, paper-vs-ours rows, plots, tables.

The platform (not the experiment) decides whether a claim holds:
``figures[claim.figure].value <op> claim.threshold``; a missing or non-finite
figure makes the claim fail.

A claim also says at which scale it is decidable (``decidable_at``): at any
scale (the default), only at paper scale (``"paper"``: a ``--quick`` run
reports it as ``"not_at_this_scale"``), or from a horizon of rounds on (an
integer, compared with the rounds ``at`` which its figure was measured).  Its
``why`` is the one-line explanation, pointing to the docs, shown when it fails.

A claim whose figure is a mean over seeds may name the figure holding its
standard error (``se_figure``): where the figure lies within ``NOISE_Z``
standard errors of the threshold, the run's seeds cannot tell which side of the
bar the claim is on, and it is reported as ``"within_noise"`` rather than held
or failed (more seeds decide it).  A non-finite standard error (fewer than two
seeds) leaves the claim decided on its figure alone.
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nolo.exceptions import ParameterError

__all__ = ["Figure", "Claim", "PaperRow", "ExperimentResult", "OPS", "STATUSES", "NOISE_Z", "is_timing", "UNEXPLAINED"]

#: comparison operators a claim may use.
OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}

#: the verdicts a claim can get.
STATUSES = ("holds", "fails", "not_at_this_scale", "within_noise")

#: standard errors of its figure within which a claim's threshold is not decided by the run's seeds
NOISE_Z = 2.0

#: the ``why`` of a failing claim that declared none.
UNEXPLAINED = "not expected and not explained in the docs: a regression to investigate"

_TIME_UNITS = {"s", "ms", "seconds", "min", "h"}


def is_timing(name: str, fig: "Figure") -> bool:
    """True for a wall-clock figure (unit s/ms/..., or ``seconds``/``time_share`` in its name, or
    ``Figure(timing=True)``): it varies between runs, so it is kept out of the verdict (summary.json)."""
    return bool(fig.timing or fig.unit in _TIME_UNITS or "seconds" in name or "time_share" in name)


@dataclass(frozen=True)
class Figure:
    """A number the experiment measured, with its unit ("" when dimensionless)."""

    value: float
    unit: str = ""
    timing: bool = False

    def __post_init__(self):
        if isinstance(self.value, bool) or not isinstance(self.value, numbers.Real):
            raise ParameterError(f"figure value must be a real number, got {self.value!r}")
        object.__setattr__(self, "value", float(self.value))
        if not isinstance(self.unit, str):
            raise ParameterError(f"figure unit must be a string, got {self.unit!r}")
        if not isinstance(self.timing, bool):
            raise ParameterError(f"figure timing must be True or False, got {self.timing!r}")

    def to_json(self) -> dict:
        v = self.value
        return {"value": v if math.isfinite(v) else None, "unit": self.unit}


@dataclass(frozen=True)
class Claim:
    """``figures[figure] <op> threshold``, stated in words citing the paper's theorem or figure.

    ``decidable_at``: ``"any"`` (default), ``"paper"`` (only a paper-scale run decides it) or an
    integer horizon in rounds (decided once ``at`` -- the rounds its figure was measured at -- reaches
    it); ``why``: one line saying why it fails when it does, with the docs section that explains it
    (``"BPA ahead of RCNBF until ~10^7 rounds -- docs/am-reproduction.md#horizon"``); ``se_figure``: the
    figure holding the standard error of ``figure`` over the run's seeds, if it is a mean over seeds (the claim is
    ``"within_noise"`` where ``figure`` lies within :data:`NOISE_Z` of them of the threshold).
    """

    statement: str
    figure: str
    op: str
    threshold: float
    decidable_at: str | int = "any"
    why: str = ""
    at: int | None = None
    se_figure: str | None = None

    def __post_init__(self):
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise ParameterError(f"claim statement must be a non-empty string, got {self.statement!r}")
        if self.op not in OPS:
            raise ParameterError(f"claim op must be one of {', '.join(map(repr, OPS))}, got {self.op!r}")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, numbers.Real):
            raise ParameterError(f"claim threshold must be a real number, got {self.threshold!r}")
        object.__setattr__(self, "threshold", float(self.threshold))
        d = self.decidable_at
        if isinstance(d, bool) or not (d in ("any", "paper") or (isinstance(d, numbers.Integral) and d >= 1)):
            raise ParameterError(f"claim decidable_at must be 'any', 'paper' or a horizon in rounds (an integer "
                                 f">= 1), got {d!r}")
        if isinstance(d, numbers.Integral):
            object.__setattr__(self, "decidable_at", int(d))
            if self.at is None:
                raise ParameterError("a claim with a horizon decidable_at needs at= (the rounds its figure was "
                                     "measured at)")
        if self.at is not None and (isinstance(self.at, bool) or not isinstance(self.at, numbers.Integral)
                                    or self.at < 1):
            raise ParameterError(f"claim at must be a number of rounds (an integer >= 1), got {self.at!r}")
        if not isinstance(self.why, str) or "\n" in self.why:
            raise ParameterError(f"claim why must be one line of text, got {self.why!r}")
        if self.se_figure is not None and (not isinstance(self.se_figure, str) or not self.se_figure):
            raise ParameterError(f"claim se_figure must be a figure name or None, got {self.se_figure!r}")

    def holds(self, figures: dict[str, Figure]) -> bool:
        fig = figures.get(self.figure)
        if fig is None or not math.isfinite(fig.value):
            return False
        return bool(OPS[self.op](fig.value, self.threshold))

    def decidable(self, quick: bool) -> bool:
        """Whether a run at this scale (``quick`` or paper scale) decides the claim."""
        if self.decidable_at == "paper":
            return not quick
        if isinstance(self.decidable_at, int):
            return self.at >= self.decidable_at
        return True

    def within_noise(self, figures: dict[str, Figure]) -> bool:
        """Whether the figure lies within :data:`NOISE_Z` of its standard errors (``se_figure``, when finite and
        positive) of the threshold: the run's seeds do not decide the claim."""
        if self.se_figure is None:
            return False
        fig, se = figures.get(self.figure), figures.get(self.se_figure)
        if fig is None or se is None or not (math.isfinite(fig.value) and math.isfinite(se.value) and se.value > 0):
            return False
        return abs(fig.value - self.threshold) < NOISE_Z * se.value

    def status(self, figures: dict[str, Figure], quick: bool) -> str:
        """``"holds"``, ``"fails"``, ``"not_at_this_scale"`` or ``"within_noise"``."""
        if not self.decidable(quick):
            return "not_at_this_scale"
        if self.within_noise(figures):
            return "within_noise"
        return "holds" if self.holds(figures) else "fails"

    @property
    def why_text(self) -> str:
        return self.why or UNEXPLAINED


@dataclass(frozen=True)
class PaperRow:
    """A number the paper reports beside ours; ``difference = ours - paper``."""

    quantity: str
    paper: float
    ours: float
    unit: str = ""
    note: str = ""

    def __post_init__(self):
        for name in ("paper", "ours"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ParameterError(f"paper row {name!r} must be a real number, got {v!r}")
            object.__setattr__(self, name, float(v))

    @property
    def difference(self) -> float:
        return self.ours - self.paper


def _as_figure(name: str, value: Any) -> Figure:
    if isinstance(value, Figure):
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"value", "unit", "timing"}
        if "value" not in value or unknown:
            raise ParameterError(f"figure {name!r} must be {{'value': number, 'unit': str}}, got {value!r}")
        return Figure(value["value"], value.get("unit", ""), value.get("timing", False))
    if isinstance(value, tuple) and len(value) == 2:
        return Figure(*value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return Figure(value)
    raise ParameterError(
        f"figure {name!r} must be a Figure, a number, a (value, unit) pair or {{'value', 'unit'}}, got {value!r}"
    )


def _as_claim(value: Any) -> Claim:
    if isinstance(value, Claim):
        return value
    if isinstance(value, dict):
        return Claim(**value)
    raise ParameterError(f"a claim must be a Claim or a dict with statement, figure, op, threshold; got {value!r}")


def _as_row(value: Any) -> PaperRow:
    if isinstance(value, PaperRow):
        return value
    if isinstance(value, dict):
        return PaperRow(**value)
    raise ParameterError(f"a paper row must be a PaperRow or a dict with quantity, paper, ours; got {value!r}")


@dataclass
class ExperimentResult:
    """The outcome of one experiment.

    ``figures``: ``{name: Figure}`` (numbers, ``(value, unit)`` pairs and
    ``{"value", "unit"}`` dicts are accepted and converted); ``claims``: list of
    :class:`Claim`; ``paper_rows``: list of :class:`PaperRow`; ``plots``: PNG
    paths (``ctx.save_figure`` fills it for you); ``tables``: ``{name:
    pandas.DataFrame}`` shown in the report.
    """

    figures: dict[str, Figure] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    paper_rows: list[PaperRow] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    tables: dict[str, Any] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self):
        if not isinstance(self.figures, dict):
            raise ParameterError(f"figures must be a dict name -> figure, got {type(self.figures).__name__}")
        self.figures = {str(k): _as_figure(str(k), v) for k, v in self.figures.items()}
        self.claims = [_as_claim(c) for c in self.claims]
        self.paper_rows = [_as_row(r) for r in self.paper_rows]
        self.plots = [Path(p) for p in self.plots]
        for c in self.claims:
            for name in (c.figure, c.se_figure):
                if name is not None and name not in self.figures:
                    raise ParameterError(
                        f"claim {c.statement!r} refers to figure {name!r}, which is not among the figures "
                        f"({', '.join(sorted(self.figures)) or 'none'})"
                    )

    def verdicts(self) -> list[tuple[Claim, bool]]:
        """Each claim with whether its comparison holds on this result's figures (whatever the scale)."""
        return [(c, c.holds(self.figures)) for c in self.claims]

    def statuses(self, quick: bool) -> list[tuple[Claim, str]]:
        """Each claim with its verdict at this scale: one of :data:`STATUSES`."""
        return [(c, c.status(self.figures, quick)) for c in self.claims]
