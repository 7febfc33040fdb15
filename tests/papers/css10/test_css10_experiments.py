"""CSS10 experiments: registration, the exact query law, and the experiment tasks on tiny sizes."""

import numpy as np
import pytest

from nolo.experiments import get_experiments, load_experiment_modules


def test_registered_ids():
    load_experiment_modules()
    ids = {e.id for e in get_experiments("css10")}
    assert {"unbiasedness", "queries", "learning", "regret", "one-copy"} <= ids


@pytest.mark.parametrize("kind,factor", [("dot", 1.0), ("gaussian", 3.0)])
@pytest.mark.parametrize("p", [1.5, 2.0, 4.0])
def test_exact_query_law_has_theorem_mean(kind, factor, p):
    from nolo.papers.css10.queries import exact_query_pmf, theorem_mean

    pmf = exact_query_pmf(kind, p, qmax=2000)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert (pmf * np.arange(pmf.size)).sum() == pytest.approx(theorem_mean(kind, p), rel=1e-6)
    assert theorem_mean(kind, p) == pytest.approx(factor * p / (p - 1) ** 2)


def test_an_unknown_kernel_kind_is_refused():
    from nolo.exceptions import ParameterError
    from nolo.papers.css10.queries import exact_query_pmf, theorem_mean

    for f in (theorem_mean, exact_query_pmf):
        with pytest.raises(ParameterError, match="kind must be one of 'dot', 'gaussian'"):
            f("exponential", 2.0)


def test_tasks_tiny():
    from nolo.papers.css10 import learning, queries, regret, unbiasedness

    # Subroutine 3 is unbiased for the Gaussian kernel k(x, x') in (0, 1] under switching noise
    r = unbiasedness.prod_task("gaussian", "switching", 50, 0)
    assert 0 < r["target"][0] <= 1 and abs(r["z_clean"][0]) <= 4
    # the corrected Grad_Length_Estimate is unbiased for y = -1 (erratum E1)
    g = unbiasedness.grad_task("smoothed_hinge", -1.0, 50, 0)
    assert abs(g["z"][0]) <= 4
    # queries per round: mean 3 p / (p - 1)^2 = 6 for the Gaussian kernel at p = 2 (Theorem 2's count)
    q = queries.queries_task("gaussian", 2.0, 50, 0)
    assert q["queries"].shape == (50,) and q["queries"].min() >= 0
    qs = q["queries"].astype(float)
    z_q = (qs.mean() - queries.theorem_mean("gaussian", 2.0)) / (qs.std(ddof=1) / np.sqrt(qs.size))
    assert abs(z_q) <= 4
    lc = learning.learning_task("squared", "poly2", "algorithm1", 60, 0)
    assert np.all(np.isfinite(lc["avg_clean_loss"])) and np.all(lc["avg_clean_loss"] > 0)
    # the naive one-copy learner's regret grows linearly (CSS10 Theorem 3): doubling T nearly doubles it
    # (sqrt(T) growth would give 1.41)
    rg = regret.regret_task("naive", 1000, 0)
    assert list(rg["T"]) == [500, 1000] and np.all(rg["regret"] > 0)
    assert rg["regret"][1] / rg["regret"][0] > 1.6


def test_one_copy_worlds_single_copies_identically_distributed():
    from nolo.papers.css10.one_copy import WORLD_NOISE, one_copy_task
    from nolo.noise import Oracle

    rng = np.random.default_rng(0)
    b = np.concatenate([Oracle([1.0], WORLD_NOISE["B"](), rng).query(1)[:, 0] for _ in range(4000)])
    a = np.concatenate([Oracle([rng.choice([3.0, -1.0])], WORLD_NOISE["A"](), rng).query(1)[:, 0] for _ in range(4000)])
    assert set(np.unique(a)) == set(np.unique(b)) == {-1.0, 3.0}
    assert abs(np.mean(a == 3.0) - np.mean(b == 3.0)) < 0.05
    r = one_copy_task("B", "one-copy", 3000, 0)
    assert r["avg_regret"][-1] > 0.3  # stuck near w = 0.2 while the best is w = 1
