"""The practitioners' experiments: the offline logs (their estimates, what they learn, their figures) and the EIV
inference cells."""

import numpy as np
import pandas as pd
import pytest

from nolo.papers.practice import offline as O


@pytest.mark.parametrize("logger", O.LOGGERS)
def test_logs_carry_the_loggers_propensities_and_the_flip_channels_bits(logger):
    L = O.make_log("digits", True, 0.2, 0.4, logger, 20_000, 3)
    K = L["K"]
    if logger == "uniform":
        assert np.all(L["propensity"] == 1.0 / K)
    else:  # the propensity of the played label is the softmax logger's, and the logger is far from uniform
        weak = O.make_log("digits", True, 0.2, 0.4, logger, 20_000, 3)
        assert np.array_equal(weak["played"], L["played"])  # same seed, same log
        assert L["propensity"].min() < 0.02 and L["propensity"].max() > 0.5
        # the played labels' frequencies follow the propensities: E[1 / p(a)] = K for any full-support logger
        assert abs(np.mean(1.0 / L["propensity"]) - K) < 0.5
    right = L["played"] == L["y"]
    n_r, n_w = right.sum(), (~right).sum()
    # P(bit 0 | right) = rho1, P(bit 1 | wrong) = rho0, within 4 standard errors
    assert abs(np.mean(L["bit"][right] == 0) - 0.4) < 4 * np.sqrt(0.24 / n_r)
    assert abs(np.mean(L["bit"][~right] == 1) - 0.2) < 4 * np.sqrt(0.16 / n_w)
    assert 0.5 < L["true_value"] <= 1.0


def test_a_policy_of_an_unknown_kind_is_refused():
    from nolo.exceptions import ParameterError

    with pytest.raises(ParameterError, match="kind must be one of 'greedy', 'softmax'"):
        O.LinearPolicy(np.eye(3), "argmax")


def test_corrected_estimates_find_the_truth_and_uncorrected_ones_the_flip_bias():
    df = O.ope_cell("digits", True, 0.15, 0.15, "softmax", 20_000, 0)
    cor = df[df["corrected"]].set_index("method")
    unc = df[~df["corrected"]].set_index("method")
    V = float(df["true_value"].iloc[0])
    for m in ("ips", "dr"):
        assert abs(cor.loc[m, "value"] - V) < 4 * cor.loc[m, "se"]
        # uncorrected: E[bit] = rho0 + (1 - rho0 - rho1) V
        assert abs(unc.loc[m, "value"] - (0.15 + 0.7 * V)) < 4 * unc.loc[m, "se"]
        assert not unc.loc[m, "covers"]


def test_the_default_learner_learns_a_noisy_log_plain_and_importance_weighted():
    df = O.learn_cell("digits", True, 0.15, 0.15, "softmax", 20_000, 0, with_vw=False).set_index("learner")
    assert list(df.index) == ["nolo default", "nolo default, importance-weighted"]
    assert (df["error"] < 0.15).all()  # the logger errs ~0.4 on its own plays; the default learned online ~0.07


def test_claim_figures_on_hand_made_frames():
    base = {"dataset": "d", "rho0": 0.1, "rho1": 0.1, "logger": "uniform", "rows": 100, "seed": 0}
    ope = pd.DataFrame([
        {**base, "method": m, "corrected": c, "value": 0.5, "se": 0.1, "lo": 0.4, "hi": 0.6, "true_value": 0.55,
         "covers": c, "ess": 100.0, "max_weight": 1.0}
        for m in O.OPE_METHODS for c in (True, False)])
    rates = pd.DataFrame([{**base, "logger": lg, "rho0_hat": 0.1, "rho1_hat": 0.3, "rho0_lo": 0, "rho0_hi": 1,
                           "rho1_lo": 0, "rho1_hi": 1, "covers": lg == "uniform", "warned": False}
                          for lg in O.LOGGERS])
    learned = pd.DataFrame([{**base, "learner": name, "error": e, "seconds": 1.0}
                            for name, e in (("nolo default", 0.1), ("VW cb_adf ips", 0.4), ("VW cb_adf mtr", 0.2))])
    f = O.claim_figures(ope, rates, learned)
    assert f["ope_coverage_ips_dr_min"] == 1.0 and f["ope_uncorrected_coverage_noisy_max"] == 0.0
    assert f["ope_uncorrected_ips_mean_bias"] == pytest.approx(-0.05)
    assert f["ope_uncorrected_ips_predicted_bias"] == pytest.approx(0.1 - 0.2 * 0.55)
    # the noisy value 0.55 + (0.1 - 0.2 x 0.55) = 0.54 lies in [0.4, 0.6]: the bias is as predicted
    assert f["ope_uncorrected_bias_as_predicted_min"] == 1.0
    # an uncorrected DR interval off the noisy value fails it, whatever IPS does
    shifted = ope.copy()
    off = (~shifted["corrected"]) & (shifted["method"] == "dr")
    shifted.loc[off, ["value", "lo", "hi"]] = [0.58, 0.56, 0.6]
    g = O.claim_figures(shifted, rates, learned)
    assert g["ope_uncorrected_dr_covers_noisy_value"] == 0.0 and g["ope_uncorrected_ips_covers_noisy_value"] == 1.0
    assert g["ope_uncorrected_bias_as_predicted_min"] == 0.0
    assert f["rates_coverage_uniform"] == 1.0 and f["rates_coverage_softmax"] == 0.0
    assert f["rates_coverage_min_logger"] == 0.0 and f["rates_missed_unwarned"] == 1.0
    assert f["rates_max_abs_error"] == pytest.approx(0.2)
    assert f["learn_max_ratio_to_best_vw"] == pytest.approx(0.5)  # against the best VW cb_type, not the mean


def test_the_ope_logs_seeds_are_fixed_by_the_run_seeds_and_distinct():
    assert O.ope_seeds([0, 1], 1) == [0, 1]
    assert O.ope_seeds([0, 1], 4) == [0, 1, 2, 3, 4, 5, 6, 7]
    # no two logs share a seed, whatever the run seeds (a fixed stride of 1000 collided on [0, 1000])
    for run in ([0, 1000], [3, 7, 2000], [5]):
        got = O.ope_seeds(run, 4)
        assert len(set(got)) == 4 * len(run) and got[:len(run)] == run


def test_the_experiment_is_registered():
    from nolo.experiments.registry import get_experiments, load_experiment_modules

    load_experiment_modules()
    assert "offline" in [e.id for e in get_experiments("practice")]


def test_eiv_inference_cells():
    from nolo.papers.practice import eiv_inference as E

    cell = E.coverage_cell(200, 1.0, 0, 200)
    assert all(0.88 <= cell[k] <= 1.0 for k in ("cover_x0", "cover_x1", "cover_intercept")), cell
    unb = E.unbalanced_cell(0, 20, n=300)
    assert (unb["items"] == 300).all() and unb["singles"].min() > 30
    assert abs(unb["cls_x0"].mean() - 1.0) < 0.1 and unb["ols_x0"].mean() < 0.8  # corrected vs attenuated


def test_eiv_inference_fuller_cell():
    from nolo.papers.practice import eiv_inference as E

    ful = E.fuller_cell(0, 300)
    assert list(ful.columns) == ["seed", "draw", "alpha1", "alpha4"] and len(ful) == 300
    # alpha = 4 shrinks more than alpha = 1 on every draw (its scale g is smaller by 3/nu)
    assert (ful["alpha4"].abs() < ful["alpha1"].abs()).all()
    assert abs(ful["alpha1"].mean() - 1.0) < 0.06
