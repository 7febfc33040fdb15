"""The registry, results and claims, ``nolo reproduce`` end to end, and the HTML report in headless chromium."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import warnings
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest

from nolo.exceptions import ParameterError
import nolo.papers
import nolo.papers.demo  # noqa: F401  (registers demo/noisy-regression)
from nolo.experiments import Claim, ExperimentResult, PaperRow, experiment, registry
from nolo.experiments.registry import get_experiments, load_experiment_modules, register_experiment
from nolo.experiments.result import STATUSES


# -- registry and results ------------------------------------------------------------------------
@pytest.fixture
def scratch_registry():
    load_experiment_modules()  # snapshot every paper's experiments, whichever test imported them first
    saved = registry.EXPERIMENTS.items()
    yield
    registry.EXPERIMENTS.clear()
    for key, exp in saved:
        registry.EXPERIMENTS.register(key, exp)


def test_registration_is_validated(scratch_registry):
    def f(ctx):
        return ExperimentResult()

    with pytest.raises(ParameterError, match=r"paper 'css12' is not registered: call register_paper\('css12'.*"
                                             r"registered: demo, css10, css11, am, oco, practice"):
        register_experiment(f, paper="css12", id="x", title="t")
    with pytest.raises(ParameterError, match="id must be a short id"):
        register_experiment(f, paper="demo", id="Bad Id", title="t")
    with pytest.raises(ParameterError, match="quick_seeds must be an integer >= 1"):
        register_experiment(f, paper="demo", id="x", title="t", quick_seeds=0)
    experiment(paper="am", id="tbl2", title="Table 2")(f)
    experiment(paper="am", id="tbl2", title="Table 2")(f)  # re-importing the same function is fine

    def g(ctx):
        return ExperimentResult()

    with pytest.raises(ParameterError, match="already registered"):
        experiment(paper="am", id="tbl2", title="Table 2")(g)
    keys = [e.key for e in get_experiments("all")]
    assert keys.index("demo/noisy-regression") < keys.index("am/tbl2")


def test_missing_modules_are_skipped_but_broken_ones_raise(tmp_path, monkeypatch):
    pkg = tmp_path / "nolo_fake_exps"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text("X = 1\n")
    (pkg / "broken.py").write_text("import nolo_fake_dependency_that_is_absent\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_experiment_modules(("nolo_fake_exps.missing", "nolo_fake_exps.good")) == ["nolo_fake_exps.good"]
    with pytest.raises(ModuleNotFoundError) as info:
        load_experiment_modules(("nolo_fake_exps.broken",))
    assert info.value.name == "nolo_fake_dependency_that_is_absent"


def test_a_paper_is_registered_before_its_experiments_and_validated(scratch_registry):
    from nolo.experiments.registry import PAPERS, register_paper

    saved = PAPERS.items()
    try:
        for bad, match in (("Bad Id", "paper id must be a short id"), ("all", "paper id must be"),
                           (3, "paper id must be")):
            with pytest.raises(ParameterError, match=match):
                register_paper(bad, name="x")
        with pytest.raises(ParameterError, match="name must be a string"):
            register_paper("p2", name=3)
        with pytest.raises(ParameterError, match="rank must be an integer"):
            register_paper("p2", name="x", rank=True)
        assert "p2" not in PAPERS
        register_paper("zeta", name="Zeta et al.", adds="more", rank=-1)  # ranked first
        register_paper("omega", name="Omega")  # unranked: after nolo's papers
        assert registry.papers() == ("zeta", *nolo.papers.PAPERS, "omega")
        assert registry.check_paper("omega") == "omega"
    finally:
        PAPERS.clear()
        for key, paper in saved:
            PAPERS.register(key, paper)


def test_no_installed_paper_is_said_plainly(monkeypatch, scratch_registry):
    """A checkout imported without its package metadata has no entry point: the error says where papers come from."""
    from nolo.experiments.registry import PAPERS

    saved = PAPERS.items()
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    try:
        PAPERS.clear()
        assert registry.load_experiment_modules() == []
        with pytest.raises(ParameterError, match="no papers are registered.*entry-point group 'nolo.papers'"):
            registry.check_paper("css10")
    finally:
        PAPERS.clear()
        for key, paper in saved:
            PAPERS.register(key, paper)


def test_another_distributions_papers_are_found_through_the_entry_point(tmp_path, monkeypatch, scratch_registry):
    """The engine knows no paper: a package that declares a ``nolo.papers`` entry point is reproduced like
    nolo's own (here an entry point made by hand, as the one its installed metadata would give)."""
    from importlib.metadata import EntryPoint

    from nolo.experiments.registry import PAPERS

    pkg = tmp_path / "nolo_third_party_papers"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from nolo.experiments import Claim, ExperimentResult, experiment, register_paper\n"
        "def register():\n"
        "    register_paper('mine', name='Mine (2026)', reproduced='my claim')\n"
        "    experiment(paper='mine', id='fig1', title='My figure')(fig1)\n"
        "def fig1(ctx):\n"
        "    return ExperimentResult(figures={'one': 1.0}, claims=[Claim('one is positive', 'one', '>', 0)])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint("zz-mine", "nolo_third_party_papers:register", "nolo.papers"),
           EntryPoint("nolo", "nolo.papers:register", "nolo.papers")]
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep for ep in eps if ep.group == group])
    saved = PAPERS.items()
    try:
        assert registry.load_experiment_modules() == ["nolo", "zz-mine"]  # nolo's own first
        assert registry.papers()[-1] == "mine"
        from nolo.experiments import reproduce as reproduce_mod
        from nolo.experiments.report import paper_paragraphs

        rep = reproduce_mod.reproduce("mine", quick=True, out=tmp_path / "out")
        assert rep.all_hold and [o.experiment.key for o in rep.outcomes] == ["mine/fig1"]
        (para,) = paper_paragraphs(rep.outcomes, quick=True)
        assert (para["paper"], para["name"], para["reproduced"]) == ("mine", "Mine (2026)", "my claim")
    finally:
        PAPERS.clear()
        for key, paper in saved:
            PAPERS.register(key, paper)


def test_the_command_line_names_nolos_papers():
    from nolo.cli.experiments import reproduce

    assert ", ".join(nolo.papers.PAPERS[:-1]) + " or " + nolo.papers.PAPERS[-1] in " ".join(reproduce.help.split())


def test_result_claims_and_rows():
    r = ExperimentResult(
        figures={"slope": 0.5, "gap": (0.1, "rate"), "bad": {"value": float("nan"), "unit": ""}},
        claims=[Claim("s <= .65", "slope", "<=", 0.65), Claim("gap > 0.2", "gap", ">", 0.2),
                {"statement": "nan never holds", "figure": "bad", "op": ">=", "threshold": 0}],
        paper_rows=[PaperRow("error", paper=0.2, ours=0.25)],
    )
    assert [h for _, h in r.verdicts()] == [True, False, False]
    assert r.figures["gap"].unit == "rate"
    assert r.paper_rows[0].difference == pytest.approx(0.05)
    with pytest.raises(ParameterError, match="refers to figure 'nope'"):
        ExperimentResult(figures={"a": 1.0}, claims=[Claim("x", "nope", "<", 1)])
    with pytest.raises(ParameterError, match="op must be one of"):
        Claim("x", "a", "==", 1)


# -- reproduce end to end ---------------------------------------------------------------------------
SUMMARY_KEYS = {"nolo_version", "quick", "rounds", "totals", "experiments"}
EXPERIMENT_KEYS = {"paper", "id", "title", "status", "figures", "claims", "skipped"}
CLAIM_KEYS = {"statement", "figure", "op", "threshold", "holds", "status", "decidable_at"}


def _check_summary_shape(summary: dict) -> None:
    assert set(summary) == SUMMARY_KEYS
    assert isinstance(summary["nolo_version"], str) and summary["quick"] is True
    assert summary["experiments"]
    for e in summary["experiments"]:
        assert set(e) == EXPERIMENT_KEYS
        assert e["paper"] in registry.PAPERS
        assert isinstance(e["id"], str) and isinstance(e["title"], str)
        for name, fig in e["figures"].items():
            assert set(fig) == {"value", "unit"}, name
            assert fig["value"] is None or isinstance(fig["value"], (int, float))
            assert isinstance(fig["unit"], str)
        for c in e["claims"]:
            assert set(c) - {"se_figure"} == CLAIM_KEYS | ({"why"} if c["status"] == "fails" else set())
            assert c.get("se_figure", c["figure"]) in e["figures"]
            assert c["status"] in STATUSES
            assert c["status"] != "fails" or c["why"].strip()
            assert c["op"] in ("<=", ">=", "<", ">") and isinstance(c["holds"], bool)
            assert c["figure"] in e["figures"]
            assert isinstance(c["threshold"], (int, float))


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce") / "out"
    # The demo only: the paper experiments' quick versions take minutes together and are tested by
    # their own modules; test_reproduce_all_covers_every_paper_module checks what "all" would run.
    proc = subprocess.run(
        [sys.executable, "-c", "from nolo.cli import main; main()", "reproduce", "demo", "--quick",
         "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "CI": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


def test_reproduce_quick_writes_summary_runs_figures_and_report(reproduced):
    out, stdout = reproduced
    summary = json.loads((out / "summary.json").read_text())
    _check_summary_shape(summary)
    assert [e["paper"] for e in summary["experiments"]] == ["demo"]
    demo = summary["experiments"][0]
    assert demo["id"] == "noisy-regression"
    assert [c["holds"] for c in demo["claims"]] == [True, True, True, True]
    assert demo["figures"]["unbiased_regret_slope"]["value"] <= 0.65
    assert demo["figures"]["naive_avg_clean_loss"]["value"] > demo["figures"]["unbiased_avg_clean_loss"]["value"]
    assert len(list((out / "demo" / "noisy-regression" / "runs").glob("*.parquet"))) == 9
    pngs = sorted(p.name for p in (out / "demo" / "noisy-regression").glob("*.png"))
    assert pngs == ["clean_loss.png", "regret.png"]
    html = (out / "report.html").read_text()
    assert sorted(_img_srcs(html)) == ["demo/noisy-regression/clean_loss.png", "demo/noisy-regression/regret.png"]
    md = (out / "report.md").read_text()
    assert "demo/noisy-regression/regret.png" in md and "holds" in md
    # the contents list links every experiment's section through the anchor written before its heading
    links = re.findall(r"^- \[([^\]]+)\]\(#([^)]+)\)", md, flags=re.M)
    assert [name for name, _ in links] == ["demo / noisy-regression"]
    assert all(f'<a id="{a}"></a>' in md for _, a in links)
    assert md.index("## Contents") < md.index(f'<a id="{links[0][1]}"></a>')
    assert "demo/noisy-regression" in stdout and "claims hold" in stdout


def test_reproduce_all_covers_every_paper_module(monkeypatch, tmp_path, scratch_registry):
    """``all`` imports every existing paper module and runs each registered experiment once, in order."""
    import importlib.util

    from nolo.experiments import reproduce as reproduce_mod

    assert load_experiment_modules() == ["nolo"]  # nolo's entry point (pyproject.toml) registers its papers
    assert registry.papers() == nolo.papers.PAPERS
    for paper in nolo.papers.PAPERS:
        assert importlib.util.find_spec(f"nolo.papers.{paper}") is not None
        assert get_experiments(paper), paper
    expected = [e.key for e in get_experiments("all")]
    assert expected[0] == "demo/noisy-regression"
    ran = []
    for key, exp in registry.EXPERIMENTS.items():
        def stand_in(ctx, key=key):
            ran.append((key, ctx.quick, len(ctx.seeds), ctx.out_dir.relative_to(tmp_path).as_posix()))
            return ExperimentResult(figures={"one": 1.0}, claims=[Claim("one is positive", "one", ">", 0)])
        registry.EXPERIMENTS.register(key, type(exp)(**{**exp.__dict__, "func": stand_in}), replace=True)
    rep = reproduce_mod.reproduce("all", quick=True, out=tmp_path)
    assert [k for k, *_ in ran] == expected
    assert all(q and out == k for k, q, _, out in ran)
    assert [r[2] for r in ran] == [registry.EXPERIMENTS[k].quick_seeds for k in expected]
    summary = json.loads((tmp_path / "summary.json").read_text())
    _check_summary_shape(summary)
    assert [f"{e['paper']}/{e['id']}" for e in summary["experiments"]] == expected
    assert rep.all_hold


def test_strict_exits_nonzero_when_a_claim_fails(tmp_path, scratch_registry):
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="always-fails", title="A claim that fails", quick_seeds=1)
    def _fails(ctx):
        return ExperimentResult(figures={"x": 1.0}, claims=[Claim("x is negative", "x", "<", 0)],
                                paper_rows=[PaperRow("x", paper=2.0, ours=1.0)])

    lenient = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "a")])
    assert lenient.exit_code == 0, lenient.output
    strict = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "b"), "--strict"])
    assert strict.exit_code == 1
    assert "1 x not expected and not explained" in strict.output  # the failure, with its (default) why
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["experiments"][0]["claims"][0]["holds"] is False
    md = (tmp_path / "b" / "report.md").read_text()
    assert "| x | 2 | 1 | -1 |" in md  # paper, ours, difference


def test_a_failing_experiment_is_reported_and_fails_the_command(tmp_path, scratch_registry):
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="raises", title="Raises", quick_seeds=1)
    def _raises(ctx):
        raise RuntimeError("boom in the experiment")

    res = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path)])
    assert res.exit_code == 1
    assert "boom in the experiment" in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "summary.json").read_text())["experiments"][0]["claims"] == []


def _img_srcs(html: str) -> list[str]:
    return re.findall(r'<img\b[^>]*\bsrc="([^"]*)"', html)


def _demo_pngs(out):
    return sorted((out / "demo" / "noisy-regression").glob("*.png"))


def _demo_outcomes(out):
    """One outcome of the demo experiment with the reproduced run's plots (for reports written elsewhere)."""
    from nolo.experiments.report import ExperimentOutcome

    result = ExperimentResult(figures={"x": 1.0}, claims=[Claim("x is positive", "x", ">", 0)], plots=_demo_pngs(out))
    return [ExperimentOutcome(registry.EXPERIMENTS["demo/noisy-regression"], result, seconds=1.0)]


def test_report_html_links_its_figures_and_is_small(reproduced):
    """By default report.html holds no image data: each <img> links a figure file by a path relative to the
    report, and every one of them exists.  The demo's page is about 6.5 kB (154 kB with its two 55 kB plots
    inside); the bound leaves room for a longer description or more claims."""
    out, _ = reproduced
    html = (out / "report.html").read_text()
    srcs = _img_srcs(html)
    assert len(srcs) == len(_demo_pngs(out)) == 2
    for src in srcs:
        parts = urlsplit(src)
        assert not parts.scheme and not parts.netloc and not src.startswith("/"), src  # relative, no data: URI
        assert (out / unquote(parts.path)).is_file(), src
    assert "base64" not in html and "data:" not in html
    size = (out / "report.html").stat().st_size
    assert size < 30_000, size
    assert size < sum(p.stat().st_size for p in _demo_pngs(out)) / 4
    assert (out / "report.md").stat().st_size < 30_000


def test_embed_figures_writes_one_self_contained_page(reproduced, tmp_path):
    """``embed_figures=True`` puts each figure inside the page (its bytes, as a data: URI); without it a report
    written in another directory links the same files by a relative path that resolves from there."""
    import base64

    from nolo.experiments.report import write_html

    out, _ = reproduced
    pngs, outcomes = _demo_pngs(out), _demo_outcomes(out)
    embedded = write_html(tmp_path / "embedded" / "report.html", outcomes, True, embed_figures=True)
    html = embedded.read_text()
    srcs = _img_srcs(html)
    assert [s.split(",", 1)[0] for s in srcs] == ["data:image/png;base64"] * len(pngs)
    assert [base64.b64decode(s.split(",", 1)[1]) for s in srcs] == [p.read_bytes() for p in pngs]
    assert embedded.stat().st_size > sum(p.stat().st_size for p in pngs)
    linked = write_html(tmp_path / "linked" / "report.html", outcomes, True)
    srcs = _img_srcs(linked.read_text())
    assert all(s.startswith("../") for s in srcs)
    assert [(linked.parent / unquote(s)).resolve() for s in srcs] == [p.resolve() for p in pngs]
    assert _Page(linked.read_text()).text == _Page(html).text  # the rest of the page is the same


# -- the HTML in a headless browser -------------------------------------------------------------------
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _screenshot(browser: str, html_path, png_path, profile) -> np.ndarray:
    from matplotlib.image import imread

    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--window-size=1200,2600", "--hide-scrollbars",
           f"--screenshot={png_path}", html_path.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert png_path.exists(), f"chromium wrote no screenshot: {proc.stderr[-2000:]}"
    return imread(png_path)[:, :, :3]


def _plot_line_pixels(img: np.ndarray) -> int:
    """Pixels in matplotlib's first two line colours (C0 blue, C1 orange): only the plots draw them."""
    px = (img * 255).astype(int)
    count = 0
    for rgb in ((31, 119, 180), (255, 127, 14)):
        count += int(np.sum(np.all(np.abs(px - np.array(rgb)) <= 12, axis=2)))
    return count


def test_report_html_renders_the_figures_in_headless_chromium(reproduced, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium); cannot screenshot report.html")
    from nolo.experiments.report import write_html

    out, _ = reproduced
    shot = _screenshot(browser, out / "report.html", tmp_path / "report.png", tmp_path / "profile1")
    # the same page moved away from its figure files: the tables render, the figures do not
    moved = tmp_path / "moved" / "report.html"
    moved.parent.mkdir()
    moved.write_text((out / "report.html").read_text())
    blank = _screenshot(browser, moved, tmp_path / "moved.png", tmp_path / "profile2")
    # the self-contained page renders its figures wherever it is
    embedded = write_html(tmp_path / "embedded" / "report.html", _demo_outcomes(out), True, embed_figures=True)
    inside = _screenshot(browser, embedded, tmp_path / "embedded.png", tmp_path / "profile3")
    assert _plot_line_pixels(shot) > 2000, "the report's figures did not render"
    assert _plot_line_pixels(inside) > 2000, "the self-contained report's figures did not render"
    assert _plot_line_pixels(blank) < 50
    assert not math.isclose(shot.std(), 0.0)


# -- a navigable report: contents, linked summary, folded numbers, bold cells, integers, 1280 px ------------
class _Page:
    """What the navigation tests read from report.html: every id, the contents list's links, the links of
    each summary-table row, and the text a reader sees (no script, style or attribute)."""

    def __init__(self, html: str):
        from html.parser import HTMLParser

        page = self
        self.ids, self.contents, self.summary_rows, self.text = set(), [], [], []
        self.details = self.open_details = 0
        stack = []

        class Parser(HTMLParser):
            def handle_starttag(self, tag, attrs):
                a = dict(attrs)
                if "id" in a:
                    page.ids.add(a["id"])
                if tag not in ("img", "meta", "br", "hr"):
                    stack.append((tag, a.get("id")))
                inside = {i for _, i in stack}
                if tag == "details":
                    page.details += 1
                    page.open_details += "open" in a
                if tag == "tr" and "summary-table" in inside and any(t == "tbody" for t, _ in stack):
                    page.summary_rows.append([])
                if tag == "a" and a.get("href", "").startswith("#"):
                    if "contents" in inside:
                        page.contents.append(a["href"][1:])
                    if "summary-table" in inside and page.summary_rows:
                        page.summary_rows[-1].append(a["href"][1:])

            def handle_endtag(self, tag):
                while stack:
                    if stack.pop()[0] == tag:
                        break

            def handle_data(self, data):
                if not any(t in ("script", "style") for t, _ in stack):
                    page.text.append(data)

        Parser().feed(html)
        self.text = "".join(self.text)


_MEASURE = """<script>
window.addEventListener("load", function () {
  var root = document.documentElement, height = root.scrollHeight, right = 0;
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  document.querySelectorAll("table").forEach(function (t) {
    right = Math.max(right, t.getBoundingClientRect().right); });
  var out = document.createElement("pre");
  out.id = "layout-measured";
  out.textContent = JSON.stringify({height: height, unfolded_height: root.scrollHeight, table_right: right,
                                    page_width: root.scrollWidth});
  document.body.appendChild(out);
});
</script>"""


def _layout(browser: str, html_path, tmp_path, width: int = 1280) -> dict:
    """Load a copy of ``html_path`` with :data:`_MEASURE` injected in headless chromium at ``width`` px and read
    back (``--dump-dom``) the page's height as shown, its height with every ``<details>`` open, the largest
    right edge of any table (details open) and the page's scroll width."""
    import html as _html
    import re

    page = tmp_path / f"measured-{html_path.parent.name}.html"
    base = f'<head><base href="{html_path.parent.resolve().as_uri()}/">'  # the copy loads the figures beside the page
    page.write_text(html_path.read_text().replace("<head>", base, 1).replace("</body>", _MEASURE + "</body>"))
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / ('profile-' + html_path.parent.name)}", f"--window-size={width},900",
           "--hide-scrollbars", "--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="layout-measured">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"chromium reported no layout: {proc.stderr[-2000:]}"
    return json.loads(_html.unescape(m.group(1)))


def _wide_report(out):
    """A report with a grid as wide as am/vs-peers' (4 key columns and 15 learners, the best cell of each
    row in Markdown bold, horizons as floats), 61 long figure keys and a 120-row table, written to ``out``."""
    import pandas as pd

    from nolo.experiments.registry import Experiment
    from nolo.experiments.report import ExperimentOutcome, write_html, write_markdown

    learners = ["FastCB-optimistic", "FastCB-pessimistic", "RCNBF", "RCNBF-corrected", "AutoCB", "AutoCB-est",
                "VW-squarecb", "VW-epsilon", "VW-bag", "VW-cover", "SquareCB", "SquareCB-corrected", "LinUCB",
                "EpsGreedy", "Oracle"]
    rng = np.random.default_rng(0)
    rows = []
    for ds in ("breast-cancer", "digits", "a-much-longer-dataset-name"):
        for rho in ("0", "0.15", "0.4"):
            for h in (10000.0, 100000.0):
                v = rng.random(len(learners))
                rows.append({"dataset": ds, "rho0": rho, "rho1": rho, "horizon": h,
                             **{name: f"**{x:.3f}**" if x == v.min() else f"{x:.3f}" for name, x in zip(learners, v)}})
    rows[0][learners[3]] = "**0.016**"
    figures = {f"final_error/{ds}/0.25,0.25/{h}/{name}": float(rng.random())
               for ds in ("digits", "mnist") for h in (10000, 100000) for name in learners}
    figures["x"] = 1.0
    exp = Experiment(paper="am", id="wide", title="A wide grid", func=lambda ctx: None)
    result = ExperimentResult(figures=figures, claims=[Claim("x is positive", "x", ">", 0)],
                              tables={"final_errors": pd.DataFrame(rows),
                                      "long": pd.DataFrame({"n": np.arange(120) * 1000.0})},
                              notes="A note with an unbroken token: " + "x" * 400)
    outcomes = [ExperimentOutcome(experiment=exp, result=result, seconds=1.5),
                ExperimentOutcome(experiment=Experiment(paper="css11", id="broken", title="Raises",
                                                        func=lambda ctx: None),
                                  error="Traceback (most recent call last):\nRuntimeError: boom", seconds=0.1)]
    out.mkdir(parents=True, exist_ok=True)
    write_html(out / "report.html", outcomes, True)
    write_markdown(out / "report.md", outcomes, True)
    return out


def test_fmt_number_prints_integral_values_as_integers():
    from nolo.experiments.report import fmt_number

    assert [fmt_number(v) for v in (10000.0, 1e5, 2.0, -2500.0, 0, 0.0, np.int64(12345), np.float64(3e6))] == \
        ["10,000", "100,000", "2", "-2,500", "0", "0", "12,345", "3,000,000"]
    assert [fmt_number(v) for v in (0.377, 0.05717, 257.6, 1234.6, 12345.6, 123456.7, 1e-4, 0.001)] == \
        ["0.377", "0.05717", "257.6", "1,235", "1.235e+04", "1.235e+05", "1.000e-04", "0.001"]
    assert [fmt_number(v) for v in (None, float("nan"), float("inf"), 1e15)] == ["n/a", "n/a", "n/a", "1.000e+15"]


def test_markdown_bold_cells_become_bold_in_html_only(tmp_path):
    from nolo.experiments.report import _html_cell

    assert str(_html_cell("**0.016**")) == "<b>0.016</b>"
    assert str(_html_cell("**<i>x</i>**")) == "<b>&lt;i&gt;x&lt;/i&gt;</b>"  # the inside is escaped too
    for text in ("<script>", "T**0.5", "**a** and **b**", "** x **", "**"):
        assert str(_html_cell(text)) == text.replace("<", "&lt;").replace(">", "&gt;")
    out = _wide_report(tmp_path / "wide")
    html, md = (out / "report.html").read_text(), (out / "report.md").read_text()
    assert '<td class="num"><b>0.016</b></td>' in html and "**0.016**" not in html
    assert "**" not in _Page(html).text
    assert "| breast-cancer | 0 | 0 | 10,000 | " in md and "| **0.016** |" in md  # Markdown keeps **x**
    assert "| 100,000 |" in md and "e+0" not in md
    assert '<td class="num">100,000</td>' in html and "e+0" not in html
    assert "The first 50 of 120 rows." in md and "the first 50 of 120 rows" in html


def test_report_html_is_navigable(reproduced, tmp_path):
    """A contents list linking every experiment, a summary table whose every row links to a section, the
    numbers folded under the plots, and no Markdown left in the text -- for the demo and a wide report."""
    out, _ = reproduced
    summary = json.loads((out / "summary.json").read_text())
    wide = _wide_report(tmp_path / "wide")
    for html_path, anchors in ((out / "report.html", [f"{e['paper']}-{e['id']}" for e in summary["experiments"]]),
                               (wide / "report.html", ["am-wide", "css11-broken"])):
        html = html_path.read_text()
        page = _Page(html)
        assert "<nav id=\"contents\">" in html and '<pre class="summary">' not in html
        assert [a for a in page.contents if a in anchors] == anchors  # one entry per experiment, in order
        assert set(page.contents) <= page.ids
        internal = re.findall(r'href="#([^"]*)"', html)  # contents, summary rows, causes, back to the contents
        assert "contents" in internal and set(internal) <= page.ids
        assert len(page.summary_rows) == len(anchors)
        for links in page.summary_rows:
            assert links and set(links) <= page.ids
        assert [links[0] for links in page.summary_rows] == anchors
        assert "**" not in page.text
        assert page.details >= 1 and page.open_details == 0  # the numbers are folded
        # the claims come first, then the plots, then the folded numbers
        first = anchors[0]
        section = html[html.index(f'id="{first}"'):]
        assert section.index("<h3>Claims") < section.index("<details>")
        if "<img" in section:
            assert section.index("<h3>Claims") < section.index("<img") < section.index("<details>")
    assert "held, 0 failed, 0 deferred" in (out / "report.html").read_text()
    assert "raised an error" in (wide / "report.html").read_text()


def test_report_html_fits_a_1280_px_window_in_headless_chromium(reproduced, tmp_path):
    """At a 1280 px window no table's right edge passes 1280 px (with every fold open), nor does the page.
    The demo report's height as shown is its header, contents and summary (about 700 px), four claims
    (about 250 px) and its two 550 x 400 plots side by side (about 420 px): 1,739 px in chromium 156 at
    1280 px.  The bound, 2,400 px, leaves a third for other fonts; the numbers folded away are what opening
    the folds adds."""
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium); cannot lay out report.html")
    out, _ = reproduced
    demo = _layout(browser, out / "report.html", tmp_path)
    assert demo["table_right"] <= 1280 and demo["page_width"] <= 1280, demo
    assert 600 < demo["height"] < 2400, demo
    assert demo["unfolded_height"] > demo["height"] + 200, demo  # the 8 named figures are folded
    wide = _layout(browser, _wide_report(tmp_path / "wide") / "report.html", tmp_path)
    assert wide["table_right"] <= 1280 and wide["page_width"] <= 1280, wide
    assert wide["unfolded_height"] > 2 * wide["height"], wide


# -- verdicts by scale, the summary, byte-reproducible summaries ------------------------------------
def test_claims_are_decided_at_their_scale():
    figs = {"gap": 0.3, "n": 1.0}
    paper = Claim("gap closes at paper scale", "gap", "<", 0.0, decidable_at="paper",
                  why="the horizon -- docs/am-reproduction.md#horizon")
    horizon = Claim("gap closes after 10^6 rounds", "gap", "<", 0.0, decidable_at=10**6, at=10**5)
    anywhere = Claim("n is positive", "n", ">", 0)
    r = ExperimentResult(figures=figs, claims=[paper, horizon, anywhere])
    assert [s for _, s in r.statuses(quick=True)] == ["not_at_this_scale", "not_at_this_scale", "holds"]
    assert [s for _, s in r.statuses(quick=False)] == ["fails", "not_at_this_scale", "holds"]
    assert Claim("x", "gap", "<", 0, decidable_at=10**5, at=10**5).status({"gap": r.figures["gap"]}, True) == "fails"
    assert paper.why_text.endswith("#horizon") and "regression" in anywhere.why_text
    with pytest.raises(ParameterError, match="decidable_at must be 'any', 'paper' or a horizon"):
        Claim("x", "n", "<", 0, decidable_at="someday")
    with pytest.raises(ParameterError, match="needs at="):
        Claim("x", "n", "<", 0, decidable_at=100)
    with pytest.raises(ParameterError, match="why must be one line"):
        Claim("x", "n", "<", 0, why="two\nlines")


def test_a_claim_within_two_standard_errors_of_its_bar_is_within_noise():
    def status(value, se, thr=0.02, **kw):
        figs = {"d": value, "d_se": se}
        return ExperimentResult(figures=figs, claims=[Claim("d at most 0.02", "d", "<=", thr, se_figure="d_se",
                                                            **kw)]).statuses(quick=True)[0][1]

    assert status(0.035, 0.01) == "within_noise"  # 1.5 se above the bar
    assert status(0.005, 0.01) == "within_noise"  # 1.5 se below it: not a hold either
    assert status(0.045, 0.01) == "fails" and status(-0.005, 0.01) == "holds"  # 2.5 se away
    assert status(0.035, float("nan")) == "fails" and status(0.035, 0.0) == "fails"  # no se: the value decides
    assert status(0.035, 0.01, decidable_at="paper") == "not_at_this_scale"  # the scale comes first
    with pytest.raises(ParameterError, match="refers to figure 'd_sd'"):
        ExperimentResult(figures={"d": 0.0}, claims=[Claim("d", "d", "<=", 0.02, se_figure="d_sd")])
    with pytest.raises(ParameterError, match="se_figure must be a figure name"):
        Claim("d", "d", "<=", 0.02, se_figure="")


def test_within_noise_is_counted_and_shown_apart_from_fails(tmp_path, scratch_registry):
    from nolo.experiments.reproduce import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="seeds", title="A mean over seeds near its bar", quick_seeds=1)
    def _seeds(ctx):
        return ExperimentResult(figures={"d": 0.03, "d_se": 0.01, "x": 2.0},
                                claims=[Claim("d is at most 0.02", "d", "<=", 0.02, se_figure="d_se"),
                                        Claim("x is above one", "x", ">", 1.0)])

    rep = reproduce("demo", quick=True, out=tmp_path / "o")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["totals"] == {"holds": 1, "fails": 0, "not_at_this_scale": 0, "within_noise": 1}
    claims = summary["experiments"][0]["claims"]
    assert [c["status"] for c in claims] == ["within_noise", "holds"]
    assert claims[0]["se_figure"] == "d_se" and "se_figure" not in claims[1]
    assert rep.all_hold  # within noise is not a failure
    md = (tmp_path / "o" / "report.md").read_text()
    assert "1 within 2 standard errors of their bar" in md and "| within noise | d is at most 0.02 |" in md
    assert "lies within 2 standard errors of the bar" in md
    assert "1 within noise" in (tmp_path / "o" / "report.html").read_text()


def test_am_horizon_claims_are_deferred_at_quick_scale_and_explained():
    """The AM claims the paper makes about 10^6-10^7-round curves are not decided by a quick run, and each
    carries a why pointing to an anchor that exists in docs/am-reproduction.md."""
    import re
    from pathlib import Path

    src = (Path(__file__).resolve().parents[2] / "src" / "nolo" / "papers" / "am" / "curves.py").read_text()
    docs = (Path(__file__).resolve().parents[2] / "docs" / "am-reproduction.md").read_text()
    whys = re.findall(r'why="[^"]*docs/am-reproduction\.md#([\w-]+)"', src)
    assert len(whys) >= 5
    for anchor in whys:
        assert f'<a id="{anchor}"></a>' in docs, anchor
    assert src.count('decidable_at="paper"') >= 4


def _fake_summary(tmp_path, name):
    from nolo.experiments.report import summary_dict
    from nolo.experiments.reproduce import reproduce

    rep = reproduce("demo", quick=True, out=tmp_path / name)
    return (tmp_path / name / "summary.json").read_bytes(), rep, summary_dict(rep.outcomes, True)


def test_summary_json_is_byte_reproducible_and_timings_go_to_their_own_file(tmp_path, scratch_registry):
    import time as _time

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="timed", title="Figures beside wall-clock ones", quick_seeds=1)
    def _timed(ctx):
        t0 = _time.perf_counter()
        sum(range(10_000))
        return ExperimentResult(figures={"x": 1.5, "seconds_work": (_time.perf_counter() - t0, "s"),
                                         "work_time_share": (_time.perf_counter() - t0, "fraction"),
                                         "elapsed": {"value": _time.perf_counter(), "unit": "", "timing": True}},
                                claims=[Claim("x is above one", "x", ">", 1.0),
                                        Claim("x is below one at paper scale", "x", "<", 1.0, decidable_at="paper")])

    a, rep, summary = _fake_summary(tmp_path, "a")
    b, _, _ = _fake_summary(tmp_path, "b")
    assert a == b  # two runs, byte-identical verdicts (issue 14.8)
    assert set(summary["experiments"][0]["figures"]) == {"x"}
    timings = json.loads((tmp_path / "a" / "timings.json").read_text())
    assert set(timings["experiments"][0]["figures"]) == {"seconds_work", "work_time_share", "elapsed"}
    assert timings["experiments"][0]["seconds"] >= 0
    assert summary["totals"] == {"holds": 1, "fails": 0, "not_at_this_scale": 1, "within_noise": 0}
    assert rep.all_hold  # a deferred claim is not a failure


def test_demo_summary_is_byte_identical_across_processes(reproduced, tmp_path):
    out, _ = reproduced
    proc = subprocess.run(
        [sys.executable, "-c", "from nolo.cli import main; main()", "reproduce", "demo", "--quick",
         "--out", str(tmp_path / "again"), "--jobs", "1", "--quiet"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "CI": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "again" / "summary.json").read_bytes() == (out / "summary.json").read_bytes()


def test_console_summary_is_short_and_groups_failures_by_cause(tmp_path, scratch_registry):
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="many", title="Many keyed claims", quick_seeds=1)
    def _many(ctx):
        figs, claims = {}, []
        for ds in ("mnist", "usps", "digits"):
            for setting in ("0,0", "0.15,0.15", "0.4,0.4"):
                key = f"{ds}/{setting}"
                figs[f"gap/{key}"] = 0.1 if ds != "digits" else -0.1
                claims.append(Claim(f"{key}: RCNBF ends below the baselines", f"gap/{key}", "<", 0.0,
                                    decidable_at="paper", why="the horizon -- docs/am-reproduction.md#horizon"))
                claims.append(Claim(f"{key}: the bound holds", f"gap/{key}", "<", 1.0))
                figs[f"other/{key}"] = 2.0
                claims.append(Claim(f"{key}: something else", f"other/{key}", "<", 1.0,
                                    why="a known deviation -- docs/x.md#y"))
        return ExperimentResult(figures=figs, claims=claims,
                                notes="Skipped (files absent): fashion-mnist: no file; usps: no file either")

    res = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path), "--strict"])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1  # --strict: 9 claims fail
    assert len(lines) <= 8, res.output
    assert "FAILS" not in res.output
    assert any("9 x a known deviation -- docs/x.md#y (demo/many)" in ln for ln in lines)
    assert any(ln.startswith("skipped datasets") and "fashion-mnist; usps" in ln for ln in lines)
    assert "9 claims hold, 9 fail, 9 not decidable at quick scale" in res.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["experiments"][0]["skipped"] == {"fashion-mnist": "no file", "usps": "no file either"}
    # the report: a dataset x setting grid instead of 27 rows, and the failures with their why
    md = (tmp_path / "report.md").read_text()
    assert "| dataset | 0,0 | 0.15,0.15 | 0.4,0.4 |" in md
    assert md.count("\n| mnist |") == 3  # one row per claim text
    assert "a known deviation -- docs/x.md#y" in md
    deferred = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "p")])
    assert deferred.exit_code == 0


def test_rst_to_html_raises_no_warning():
    """No (pending) deprecation warning from Docutils: rst_to_html would swallow it as an error and fall back to
    escaped text, so it is checked directly, every warning recorded."""
    from nolo.experiments.report import rst_to_html

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        html = rst_to_html("Uses :class:`~nolo.learners.bandit.RCNBF` on ``x_t``; see *AM*.")
    assert [str(w.message) for w in caught] == []
    assert 'class="docutils literal"' in html and "<em>AM</em>" in html


def test_docstrings_render_as_html_not_as_rst_markup(tmp_path, scratch_registry):
    from nolo.experiments.report import rst_to_html
    from nolo.experiments.reproduce import reproduce

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DeprecationWarning / PendingDeprecationWarning from Docutils either
        html = rst_to_html("The regret of :func:`nolo.oco.ogd` against ``f*(x)``:\n\n* one\n* two\n")
    assert 'class="docutils literal"' in html and "f*(x)</" in html and ":func:" not in html and "``" not in html
    assert "<li>" in html
    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="doc", title="Docstring", quick_seeds=1)
    def _doc(ctx):
        """Uses :class:`~nolo.learners.bandit.RCNBF` on ``x_t``; see *AM* eq. (3)."""
        return ExperimentResult(figures={"x": 1.0}, claims=[Claim("x", "x", ">", 0)])

    reproduce("demo", quick=True, out=tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "literal" in page and ":class:" not in page and "``x_t``" not in page and "<em>AM</em>" in page
    assert "span.literal" in page  # styled as code
    assert "Demonstration (not a paper)" in page  # the paragraph per paper
    md = (tmp_path / "report.md").read_text()
    assert "`RCNBF`" in md or "`nolo.learners.bandit.RCNBF`" in md


def test_only_seeds_and_data_dir_change_one_thing_from_outside(tmp_path, scratch_registry, monkeypatch):
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce
    from nolo.datasets.paths import resolve_data_dir

    registry.EXPERIMENTS.unregister("demo/noisy-regression")
    seen = {}

    @experiment(paper="demo", id="first", title="First", quick_seeds=2)
    def _first(ctx):
        seen["first"] = (list(ctx.seeds), str(ctx.data_dir), str(resolve_data_dir().path),
                         os.environ.get("NOLO_DATA_DIR"))
        return ExperimentResult(figures={"x": 1.0}, claims=[Claim("x", "x", ">", 0)])

    @experiment(paper="demo", id="second", title="Second", quick_seeds=2)
    def _second(ctx):
        seen["second"] = list(ctx.seeds)
        return ExperimentResult()

    monkeypatch.delenv("NOLO_DATA_DIR", raising=False)
    data = tmp_path / "data"
    data.mkdir()
    res = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "o"), "--only", "first",
                                         "--seeds", "4", "--data-dir", str(data)])
    assert res.exit_code == 0, res.output
    # the data directory reaches the experiment through its context; the environment is never set
    assert seen == {"first": ([0, 1, 2, 3], str(data.resolve()), str(data.resolve()), None)}
    assert "NOLO_DATA_DIR" not in os.environ
    res = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "o"), "--only", "demo/second",
                                         "--seeds", "5,7"])
    assert res.exit_code == 0 and seen["second"] == [5, 7]
    bad = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path / "o"), "--data-dir",
                                         str(tmp_path / "nope")])
    assert bad.exit_code == 2 and "--data-dir" in bad.output


# -- --rounds: honoured by the experiments that have a horizon, refused by the others ------------------
def test_context_horizon_and_horizons_follow_the_override():
    from nolo.experiments.context import Context

    quick = Context(paper="demo", id="x", quick=True, out_dir="o", seeds=[0])
    assert quick.horizon(300, 9000) == 300 and quick.horizons([1, 2], [1, 2, 4]) == [1, 2]
    paper = Context(paper="demo", id="x", quick=False, out_dir="o", seeds=[0])
    assert paper.horizon(300, 9000) == 9000 and paper.horizons([1, 2], [1, 2, 4]) == [1, 2, 4]
    over = Context(paper="demo", id="x", quick=False, out_dir="o", seeds=[0], rounds=1000)
    assert not over.rounds_read
    assert over.horizon(300, 9000) == 1000 and over.rounds_read
    # the paper grid rescaled to end at 1000 (same ratios), duplicates after rounding dropped
    assert over.horizons([10], [500, 1000, 2000, 4000, 8000]) == [62, 125, 250, 500, 1000]
    assert Context(paper="demo", id="x", quick=True, out_dir="o", seeds=[0], rounds=2).horizons(
        [1000, 2000, 4000], [1]) == [1, 2]
    for bad in (0, -5, 2.5, True, "100"):
        with pytest.raises(ParameterError, match="rounds must be None or an integer >= 1"):
            Context(paper="demo", id="x", quick=True, out_dir="o", seeds=[0], rounds=bad)


def test_rounds_is_honoured_refused_or_reported(tmp_path, scratch_registry):
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce as cli_reproduce
    from nolo.experiments.reproduce import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")
    seen = {}

    @experiment(paper="demo", id="curve", title="Has a horizon", quick_seeds=1, takes_rounds=True)
    def _curve(ctx):
        T = ctx.horizon(100, 1000)
        seen["curve"] = T
        return ExperimentResult(figures={"T": float(T)},
                                claims=[Claim("any scale", "T", ">", 0),
                                        Claim("paper scale only", "T", ">", 0, decidable_at="paper"),
                                        Claim("from 400 rounds on", "T", ">", 0, decidable_at=400, at=T)])

    @experiment(paper="demo", id="draws", title="Estimator draws", quick_seeds=1)
    def _draws(ctx):
        seen["draws"] = True
        return ExperimentResult()

    # a paper's selection: the experiment with a horizon runs at --rounds, the other is left out and said so
    rep = reproduce("demo", quick=False, out=tmp_path / "a", rounds=500)
    assert seen == {"curve": 500}
    assert rep.rounds == 500 and list(rep.not_run) == ["demo/draws"]
    (o,) = rep.outcomes
    # a --rounds run is not a paper-scale run: the paper-scale claim waits; the horizon claim is decided (500 >= 400)
    assert [s for _, s in o.statuses] == ["holds", "not_at_this_scale", "holds"]
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["rounds"] == 500 and summary["totals"] == {"holds": 2, "fails": 0, "not_at_this_scale": 1, "within_noise": 0}
    assert json.loads((tmp_path / "a" / "timings.json").read_text())["rounds"] == 500
    seen.clear()
    reproduce("demo", quick=True, out=tmp_path / "b", rounds=300)
    assert seen == {"curve": 300}
    (o,) = reproduce("demo", quick=True, out=tmp_path / "b", rounds=300, only="curve").outcomes
    assert [s for _, s in o.statuses] == ["holds", "not_at_this_scale", "not_at_this_scale"]  # 300 < 400
    # without --rounds: both run at their scale, and the paper-scale claim is decided at paper scale
    seen.clear()
    rep = reproduce("demo", quick=False, out=tmp_path / "c")
    assert seen == {"curve": 1000, "draws": True} and rep.not_run == {} and rep.rounds is None
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["rounds"] is None
    assert [s for _, s in rep.outcomes[0].statuses] == ["holds", "holds", "holds"]
    # naming an experiment that has no horizon: refused before anything runs
    seen.clear()
    with pytest.raises(ParameterError, match="rounds: demo/draws has no horizon in rounds.*take it: demo/curve"):
        reproduce("demo", quick=True, out=tmp_path / "d", rounds=300, only=["draws"])
    with pytest.raises(ParameterError, match="rounds must be an integer >= 1"):
        reproduce("demo", quick=True, out=tmp_path / "d", rounds=0)
    assert seen == {}
    # the CLI: the same, with the left-out experiment named in the summary and a usage error for N < 1
    res = CliRunner().invoke(cli_reproduce, ["demo", "--quick", "--out", str(tmp_path / "e"), "--rounds", "250"])
    assert res.exit_code == 0, res.output
    assert "not run (--rounds does not apply: no horizon in rounds): demo/draws" in res.output
    assert "not decidable at quick runs at 250 rounds" in res.output
    res = CliRunner().invoke(cli_reproduce, ["demo", "--quick", "--out", str(tmp_path / "e"), "--rounds", "250",
                                             "--only", "draws"])
    assert res.exit_code == 2 and "error: rounds: demo/draws has no horizon" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(cli_reproduce, ["demo", "--quick", "--out", str(tmp_path / "e"), "--rounds", "0"])
    assert res.exit_code == 2 and "--rounds" in res.output


def test_an_experiment_that_declares_takes_rounds_but_ignores_it_is_an_error(tmp_path, scratch_registry):
    from nolo.experiments.reproduce import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="liar", title="Ignores --rounds", quick_seeds=1, takes_rounds=True)
    def _liar(ctx):
        return ExperimentResult(figures={"T": float(ctx.scale(100, 1000))})

    (o,) = reproduce("demo", quick=True, out=tmp_path, rounds=300).outcomes
    assert o.error and "never read the horizon" in o.error and "--rounds was ignored" in o.error
    (o,) = reproduce("demo", quick=True, out=tmp_path).outcomes  # without --rounds it is fine
    assert o.error is None


def test_every_registered_experiment_declares_whether_it_takes_rounds_and_reads_it():
    """The experiments with a horizon declare ``takes_rounds`` and read it through ``ctx.horizon(s)``; the
    others (estimator draws / NREst blocks / the fixed 10^4-10^5 peer horizons) do not call them."""
    import inspect

    load_experiment_modules()
    exps = get_experiments("all")
    takers = {e.key for e in exps if e.takes_rounds}
    assert takers == {"demo/noisy-regression", "css10/queries", "css10/learning", "css10/one-copy", "css10/regret",
                      "css11/kernel-noise", "css11/recovery", "css11/regret", "am/error-curves", "am/claims",
                      "am/gamma-sweep", "oco/svm", "oco/regularised", "oco/matrix"}
    for e in exps:
        src = inspect.getsource(e.func)
        reads = any(h in src for h in ("ctx.horizon(", "ctx.horizons(", "C.horizon(ctx", "C.curves(ctx"))
        assert reads == e.takes_rounds, e.key


def test_demo_honours_rounds_end_to_end(tmp_path):
    """The real demo experiment at --rounds 600: every stored run ends at round 600."""
    from click.testing import CliRunner

    from nolo.cli.experiments import reproduce
    from nolo.experiments import load_results

    res = CliRunner().invoke(reproduce, ["demo", "--quick", "--out", str(tmp_path), "--rounds", "600",
                                         "--jobs", "1", "-q"])
    assert res.exit_code == 0, res.output
    df = load_results(tmp_path)
    assert not df.empty and df.groupby("run_id").t.max().eq(600).all()
    assert json.loads((tmp_path / "summary.json").read_text())["rounds"] == 600


def test_a_claim_failing_below_the_calibrated_horizon_says_so(tmp_path, scratch_registry):
    from nolo.experiments.reproduce import reproduce

    registry.EXPERIMENTS.unregister("demo/noisy-regression")

    @experiment(paper="demo", id="slope", title="Needs a long horizon", quick_seeds=1, takes_rounds=True)
    def _slope(ctx):
        T = ctx.horizons([100, 200, 400], [100, 200, 400, 800])[-1]
        return ExperimentResult(figures={"T": float(T)},
                                claims=[Claim("T reaches 300", "T", ">=", 300),
                                        Claim("T reaches 300 (explained)", "T", ">=", 300, why="own reason -- docs/x.md")])

    short = reproduce("demo", quick=True, out=tmp_path / "a", rounds=50)
    claims = json.loads((tmp_path / "a" / "summary.json").read_text())["experiments"][0]["claims"]
    assert [c["status"] for c in claims] == ["fails", "fails"]
    assert claims[0]["why"].startswith("measured at --rounds 50, below the 400 rounds this experiment plays")
    assert claims[1]["why"] == "own reason -- docs/x.md"  # a claim's own why is kept
    assert short.outcomes[0].rounds_base == 400
    (o,) = reproduce("demo", quick=True, out=tmp_path / "b", rounds=250).outcomes
    assert [s for _, s in o.statuses] == ["fails", "fails"]
    assert o.why(o.result.claims[0]).startswith("measured at --rounds 250, below the 400 rounds")
    # at or above the calibrated horizon a failure is unexplained again (a regression to investigate)
    long = reproduce("demo", quick=False, out=tmp_path / "c", rounds=800)
    assert [s for _, s in long.outcomes[0].statuses] == ["holds", "holds"]
    from nolo.experiments.result import UNEXPLAINED

    o = reproduce("demo", quick=True, out=tmp_path / "d", rounds=400).outcomes[0]
    failing = Claim("T above 10^4", "T", ">", 1e4)
    assert o.why(failing) == UNEXPLAINED
