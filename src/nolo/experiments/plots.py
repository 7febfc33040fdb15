"""Matplotlib figures in the papers' styles, drawn without pyplot (Agg canvas, no display needed).

* :func:`metric_vs_rounds` -- error rate / clean loss vs rounds on log-log axes,
  the mean over seeds with a band of +-1 standard error (CSS10/CSS11/AM figures);
* :func:`regret_vs_rounds` -- regret vs T on log-log axes with the fitted slope
  of log(regret) on log(T) in the legend (the exponent 1/2 of the theorems);
* :func:`estimates_vs_truth` -- Monte Carlo estimates with error bars against the
  true values and the identity line (unbiasedness checks);
* :func:`shared_legend` -- one legend for a figure of several panels (done by
  :func:`save_figure` for every multi-panel figure whose panels carry legends).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nolo.exceptions import ParameterError

__all__ = ["new_figure", "save_figure", "fit_slope", "metric_vs_rounds", "regret_vs_rounds",
           "estimates_vs_truth", "mean_band", "shared_legend"]


def new_figure(width: float = 5.5, height: float = 4.0):
    """A figure with one axes on an Agg canvas: ``(fig, ax)``."""
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _style_key(h):
    from matplotlib.colors import to_hex

    get = lambda name, default=None: getattr(h, f"get_{name}", lambda: default)()  # noqa: E731
    color = get("color") if hasattr(h, "get_color") else get("facecolor")
    try:
        color = to_hex(color[0] if hasattr(color, "__len__") and len(color) and not isinstance(color, str)
                       and hasattr(color[0], "__len__") else color)
    except (ValueError, TypeError):
        color = str(color)
    return (type(h).__name__, color, str(get("linestyle")), str(get("marker")))


def _merged_label(labels: list[str]) -> str:
    """One label for entries drawn alike: their common words (``"RCNBF (gamma=0.1)"``, ``"RCNBF (gamma=0.25)"``
    -> ``"RCNBF"``)."""
    if len(set(labels)) == 1:
        return labels[0]
    words = [lab.split() for lab in labels]
    common = []
    for ws in zip(*words):
        if len(set(ws)) != 1:
            break
        common.append(ws[0])
    text = " ".join(common).rstrip(" ,(-:")
    return text or labels[0]


def shared_legend(fig, fontsize: float = 9.0) -> bool:
    """Replace the per-panel legends of a multi-panel figure by one legend below the panels.

    Entries drawn alike (same artist type, colour, line style and marker) are merged into one, labelled by
    the words their labels share, so per-panel details such as ``(gamma=0.1)`` do not multiply the
    entries.  Returns True if the figure was changed (several axes, at least one with a legend)."""
    if len(fig.get_axes()) < 2 or not any(ax.get_legend() is not None for ax in fig.get_axes()):
        return False
    entries: dict = {}
    for ax in fig.get_axes():
        if ax.get_legend() is None:
            continue
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab and not lab.startswith("_"):
                entries.setdefault(_style_key(h), (h, []))[1].append(lab)
        ax.get_legend().remove()
    if not entries:
        return False
    handles = [h for h, _ in entries.values()]
    labels = [_merged_label(labs) for _, labs in entries.values()]
    ncol = min(len(labels), 4)
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=fontsize, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    rows = -(-len(labels) // ncol)
    bottom = min(0.03 + 0.035 * rows, 0.4)
    engine = fig.get_layout_engine()
    if engine is not None and type(engine).__name__ == "ConstrainedLayoutEngine":
        engine.set(rect=(0, bottom, 1, 1 - bottom))
    else:
        fig.set_layout_engine(None)
        fig.subplots_adjust(bottom=bottom + 0.07)
    return True


def save_figure(fig, path: str | os.PathLike) -> Path:
    """Write ``fig`` as PNG to ``path`` atomically (parents created); works for pyplot figures too.

    A figure of several panels whose panels carry legends gets one shared legend instead
    (:func:`shared_legend`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    shared_legend(fig)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fig.savefig(tmp, format="png", dpi=100)
    os.replace(tmp, path)
    try:  # release pyplot's reference if the figure came from pyplot
        import sys

        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close(fig)
    except Exception:  # pragma: no cover - cosmetic
        pass
    return path


def fit_slope(t, values, min_t: float | None = None) -> float:
    """Least-squares slope of log(values) on log(t) over the points with t >= min_t and values > 0.

    NaN when fewer than 3 such points remain.
    """
    t = np.asarray(t, dtype=float)
    v = np.asarray(values, dtype=float)
    keep = (v > 0) & np.isfinite(v) & (t > 0)
    if min_t is not None:
        keep &= t >= min_t
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(v[keep]), 1)[0])


def mean_band(df: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    """Mean and standard error of ``metric`` over seeds at each t, per group ``by``."""
    if metric not in df:
        raise ParameterError(f"metric must be a recorded column ({', '.join(map(str, df.columns))}), got {metric!r}")
    g = df.groupby(by + ["t"], sort=True)[metric]
    out = g.mean().rename("mean").to_frame()
    n = g.size()
    out["se"] = (g.std(ddof=1).fillna(0.0) / np.sqrt(n)).values
    return out.reset_index()


_ID_LIKE = {"run_id", "seed", "t", "kind", "spec_name", "setting", "learner", "experiment"}


def _groups(df: pd.DataFrame) -> list[str]:
    if "learner" in df and df["learner"].notna().any():
        by = ["learner"]
        if "setting" in df and df["setting"].nunique() > 1:
            by = ["setting", "learner"]
    else:  # experiment tasks (no learner column): their own descriptive columns, e.g. algo and dataset
        by = [c for c in df.columns if c not in _ID_LIKE and not pd.api.types.is_float_dtype(df[c])
              and 1 < df[c].nunique() <= 12][:3] or (["spec_name"] if "spec_name" in df else [])
    if "experiment" in df and df["experiment"].nunique() > 1:
        by = ["experiment", *by]
    return by


def _label(key) -> str:
    return " / ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def metric_vs_rounds(df: pd.DataFrame, metric: str = "error_rate", *, ylabel: str | None = None,
                     title: str | None = None, loglog: bool = True, by: list[str] | None = None):
    """``metric`` vs rounds per learner (and setting), or per the columns ``by``: mean over seeds with a
    +-1 SE band."""
    fig, ax = new_figure()
    by = list(by) if by else _groups(df)
    if not by:
        df = df.assign(_all="all")
        by = ["_all"]
    band = mean_band(df, metric, by)
    for key, part in band.groupby(by if len(by) > 1 else by[0], sort=True):
        line, = ax.plot(part["t"], part["mean"], label=_label(key), lw=1.6)
        ax.fill_between(part["t"], part["mean"] - part["se"], part["mean"] + part["se"],
                        color=line.get_color(), alpha=0.25, lw=0)
    if loglog:
        ax.set_xscale("log")
        if (band["mean"] > 0).all():
            ax.set_yscale("log")
    ax.set_xlabel("rounds t")
    ax.set_ylabel(ylabel or metric)
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(frameon=False)
    return fig


def regret_vs_rounds(df: pd.DataFrame, *, metric: str = "regret", min_t_frac: float = 0.1,
                     title: str | None = None):
    """Mean regret vs T per learner on log-log axes with fitted slopes; returns ``(fig, {label: slope})``.

    The slope is fitted on the mean curve over the rounds ``t >= min_t_frac * T`` where it is positive.
    """
    fig, ax = new_figure()
    by = _groups(df)
    band = mean_band(df, metric, by)
    slopes: dict[str, float] = {}
    T = float(band["t"].max())
    for key, part in band.groupby(by if len(by) > 1 else by[0], sort=True):
        label = _label(key)
        slope = fit_slope(part["t"], part["mean"], min_t=min_t_frac * T)
        slopes[label] = slope
        pos = part[part["mean"] > 0]
        line, = ax.plot(pos["t"], pos["mean"], lw=1.6, label=f"{label} (slope {slope:.2f})")
        ax.fill_between(pos["t"], np.maximum(pos["mean"] - pos["se"], pos["mean"] * 1e-3),
                        pos["mean"] + pos["se"], color=line.get_color(), alpha=0.25, lw=0)
        fit = part[(part["t"] >= min_t_frac * T) & (part["mean"] > 0)]
        if np.isfinite(slope) and len(fit):
            c = np.mean(np.log(fit["mean"])) - slope * np.mean(np.log(fit["t"]))
            tt = np.array([fit["t"].min(), fit["t"].max()], dtype=float)
            ax.plot(tt, np.exp(c) * tt ** slope, ls="--", color=line.get_color(), lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T (rounds)")
    ax.set_ylabel("regret vs best fixed predictor")
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(frameon=False)
    return fig, slopes


def estimates_vs_truth(truth, estimates, se=None, *, labels=None, xlabel: str = "true value",
                       ylabel: str = "estimate (mean over draws)", title: str | None = None):
    """Estimates (with +-2 SE error bars) against true values, with the identity line."""
    truth = np.asarray(truth, dtype=float)
    est = np.asarray(estimates, dtype=float)
    if truth.shape != est.shape or truth.ndim != 1:
        raise ParameterError(f"truth and estimates must be 1-d of equal length, got {truth.shape} and {est.shape}")
    fig, ax = new_figure(4.5, 4.5)
    err = None if se is None else 2.0 * np.asarray(se, dtype=float)
    ax.errorbar(truth, est, yerr=err, fmt="o", ms=5, capsize=3, label="estimate +- 2 SE")
    lo, hi = float(min(truth.min(), est.min())), float(max(truth.max(), est.max()))
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=1, label="y = x")
    if labels is not None:
        for x, y, s in zip(truth, est, labels):
            ax.annotate(str(s), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False)
    return fig
