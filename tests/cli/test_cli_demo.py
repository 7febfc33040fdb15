"""``nolo demo`` and the top-level CLI."""

from click.testing import CliRunner

from nolo import __version__
from nolo.cli import COMMANDS, main
from nolo.cli.demo import LABELS, run_demo


def test_version_and_help_list_every_command():
    runner = CliRunner()
    assert __version__ in runner.invoke(main, ["--version"]).output
    out = runner.invoke(main, ["--help"]).output
    for name in COMMANDS:
        assert name in out
        assert runner.invoke(main, [name, "--help"]).exit_code == 0, name


def test_demo_rows_show_the_unbiased_learners_beating_the_naive_one():
    rows = {r["learner"]: r for r in run_demo(rounds=2000)}
    naive = rows[LABELS["naive"]]
    for key in ("unbiased", "known-cov"):
        ours = rows[LABELS[key]]
        assert ours["avg_clean_loss"] < 0.5 * naive["avg_clean_loss"]
        assert ours["regret"] < naive["regret"]
        assert ours["regret_slope"] <= 0.65
    assert naive["regret_slope"] >= 0.85
    assert rows[LABELS["unbiased"]]["queries_per_round"] == 2.0


def test_demo_command_prints_its_table():
    res = CliRunner().invoke(main, ["demo", "--rounds", "600"])
    assert res.exit_code == 0, res.output
    assert "naive OGD on one" in res.output and "regret" in res.output and "clean loss lower" in res.output
