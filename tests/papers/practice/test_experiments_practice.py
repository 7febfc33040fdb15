"""The practitioners' experiments (practice/eiv first): registration, task functions and claim figures at tiny scale."""

import math

import numpy as np
import pandas as pd
import pytest

from nolo.experiments.registry import get_experiments, load_experiment_modules, papers


def test_registered_under_paper_practice():
    load_experiment_modules()
    assert "practice" in papers()
    assert [e.id for e in get_experiments("practice")] == ["eiv", "eiv-inference", "offline"]
    assert "practice/eiv" in {e.key for e in get_experiments("all")}


def test_grid_cell_fits_every_estimator_at_both_scales():
    from nolo.papers.practice.eiv import grid_cell
    from nolo.papers.practice.estimators import ESTIMATORS

    df = grid_cell(m=2, nsr=2.0, d=3, n=2000, scales=[1.0, 100.0], seed=0)
    assert set(df["estimator"]) == set(ESTIMATORS) and set(df["scale"]) == {1.0, 100.0}
    r2 = df[df["scale"] == 1.0].set_index("estimator")["r2"]
    # attenuation 1/2: OLS on the mean keeps R^2 ~ 1 - (1 - 1/2)^2 = 0.75; the corrected estimators ~ 1
    assert 0.6 < r2["ols_mean"] < 0.85
    assert r2["corrected_ls"] > 0.9 and r2["bcrls_1pass"] > 0.9
    assert abs(r2["bcrls_1pass"] - r2["corrected_ls"]) < 0.01
    big = df[df["scale"] == 100.0].set_index("estimator")["r2"]
    for name in ("corrected_ls", "bcrls_1pass", "bcrls_converged"):  # scale-equivariant: same R^2
        assert big[name] == pytest.approx(r2[name], abs=1e-9)
    err = df[df["scale"] == 1.0].set_index("estimator")["coef_error"]
    assert err["bcrls_1pass"] < err["ols_mean"]


def test_grid_cell_is_deterministic():
    from nolo.papers.practice.eiv import grid_cell

    a = grid_cell(m=4, nsr=0.5, d=3, n=200, scales=[1.0], seed=3)
    b = grid_cell(m=4, nsr=0.5, d=3, n=200, scales=[1.0], seed=3)
    pd.testing.assert_frame_equal(a, b)


def test_diabetes_cell_scores_on_clean_test_patients():
    from nolo.papers.practice.eiv import diabetes_cell

    df = diabetes_cell(m=4, nsr=0.5, seed=0).set_index("estimator")
    assert (df["dataset"] == "diabetes").all() and (df["n"] == 309).all()
    assert 0.2 < df.loc["ols_mean", "r2"] < 0.7  # diabetes' clean-input R^2 ceiling is about 0.5
    assert np.isfinite(df.loc["bcrls_1pass", "coef_error"])


def test_claim_figures_on_a_hand_made_table():
    from nolo.papers.practice.eiv import _summary, claim_figures

    rows = []
    for scale in (1.0, 100.0):
        for att, m, nsr in ((0.5, 2, 2.0), (0.9, 8, 0.8)):
            vals = {"ols_mean": 0.75 if att < 0.8 else 0.98, "ols_one": 0.5, "corrected_ls": 0.99,
                    "bcrls_1pass": 0.985, "bcrls_converged": 0.99, "two_copy_ogd": 0.9 if scale == 1 else 0.05,
                    "known_cov_ogd": 0.9, "corrected_ls_fuller5": 0.97, "bcrls_1pass_fuller5": 0.7,
                    "corrected_ls_full": 0.995, "bcrls_1pass_full": 0.6 if att < 0.8 else 0.99}
            for est, r2 in vals.items():
                rows.append({"dataset": "synthetic", "m": m, "nsr": nsr, "d": 3, "n": 2000, "scale": scale,
                             "attenuation": att, "estimator": est, "r2": r2, "coef_error": 0.1, "seed": 0})
    figs = claim_figures(_summary(pd.DataFrame(rows)))
    assert figs["bcrls_1pass_max_gap_to_cls_n2000"] == pytest.approx(0.005)
    assert figs["bcrls_1pass_worst_loss_to_ols_mean"] == pytest.approx(-0.005)
    assert figs["bcrls_1pass_min_gain_where_attenuated"] == pytest.approx(0.235)
    assert figs["scale_change_r2_two_copy_ogd"] == pytest.approx(0.85)
    assert figs["scale_change_r2_max_nolo"] == pytest.approx(0.85)
    assert figs["scale_change_r2_corrected_ls"] == 0.0
    assert figs["bcrls_1pass_fuller5_worst_loss_to_ols_mean"] == pytest.approx(0.28)
    assert figs["corrected_ls_fuller5_worst_loss_to_ols_mean"] == pytest.approx(0.01)
    assert figs["bcrls_1pass_full_worst_loss_to_ols_mean"] == pytest.approx(0.15)
    assert figs["bcrls_1pass_worst_loss_to_full_correction"] == pytest.approx(0.005)  # 0.99 - 0.985
    assert figs["corrected_ls_worst_loss_to_full_correction"] == pytest.approx(0.005)
    # gain 0.235 of the 0.25 OLS on the mean leaves: a share of 0.94
    assert figs["bcrls_1pass_min_share_of_gap_closed_where_attenuated_n2000"] == pytest.approx(0.94)
    assert figs["bcrls_1pass_min_share_of_gap_closed_where_attenuated"] == pytest.approx(0.94)
    assert figs["cells_attenuated"] == 1.0 and math.isfinite(figs["max_possible_gain_at_largest_attenuated_lambda"])


def test_experiment_runs_end_to_end_on_a_tiny_grid(tmp_path, monkeypatch):
    from nolo.experiments.context import Context
    from nolo.papers.practice import eiv as E

    monkeypatch.setattr(E, "QUICK_GRID", {"m": [2], "nsr": [2.0], "d": [3], "n": [2000], "scale": [1.0, 100.0]})
    monkeypatch.setattr(E, "QUICK_REAL_GRID", {"m": [2], "nsr": [1.0]})
    ctx = Context(paper="practice", id="eiv", quick=True, out_dir=tmp_path, seeds=[0])
    res = E.eiv(ctx)
    status = {c.figure: s for c, s in res.statuses(quick=True)}
    assert status["bcrls_1pass_max_gap_to_cls_n2000"] == "holds"
    assert status["bcrls_1pass_min_gain_where_attenuated"] == "holds"  # attenuation 1/2: room for the gain
    assert status["bcrls_1pass_min_share_of_gap_closed_where_attenuated_n2000"] == "holds"
    assert status["bcrls_1pass_worst_loss_to_ols_mean"] == "holds"
    assert res.figures["corrected_ls_failed_fits"].value == 0.0
    assert status["scale_change_r2_max_nolo"] == "holds"  # scale-free sklearn_api defaults (issue 15 item 3, h-skl)
    assert all(c.why for c, s in res.statuses(quick=True) if s == "fails")
    assert {p.name for p in ctx.plots} == {"r2_vs_noise.png", "diabetes_r2_vs_noise.png"}
    assert {"clean_r2", "coef_error", "all_cells"} <= set(res.tables)
