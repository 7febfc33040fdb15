"""NREst's existing paths give the numbers they gave before the anchors rule was added (issue 13).

The AM reproduction (src/nolo/papers/am/noise_rates.py) and RCINE call NREst with the pooled rule;
adding rules must not move them.  The values below were recorded from the code at 5a5dcd4 (before the
change) on this log; a tolerance of 1e-6 leaves room for BLAS rounding on other machines, while any change
to the network, the split, the epochs or the read-out moves them by 1e-3 or more.
"""

from functools import partial

import numpy as np
import pytest

from nolo.learners.bandit import RCINE, ClassificationBandit
from nolo.noise_rates import NREst
from noise_logs import clustered_log  # tests/noise_rates/noise_logs.py

#: name -> (NREst parameters, (rho0_, rho1_, q_.sum()) recorded at 5a5dcd4)
RECORDED = {
    "default": (dict(random_state=0), (0.17029836773872375, 0.07283878326416016, 1954.5772204510868)),
    "am_quick": (dict(hidden_layer_sizes=(32,), max_iter=20, percentile=89.0, random_state=0),
                 (0.21076461672782898, 0.06438314914703369, 1980.8164555579424)),
    "am_full_like": (dict(hidden_layer_sizes=(16, 16), max_iter=12, n_iter_no_change=3, percentile=94.0, random_state=1),
                     (0.13208919763565063, 0.0823468565940857, 1908.827849842608)),
    "per_class": (dict(hidden_layer_sizes=(16,), max_iter=8, rule="per_class", random_state=2),
                  (0.18550651458402476, 0.12283043563365936, 1858.8644798211753)),
    "sklearn": (dict(hidden_layer_sizes=(16,), max_iter=6, engine="sklearn", random_state=3),
                (0.15868277847766876, 0.09933686256408691, 1852.3064260706306)),
    "rcine_default": (dict(hidden_layer_sizes=(32,), max_iter=5, warm_start=True, random_state=4),
                      (0.19580082595348358, 0.06307542324066162, 1999.60675804317)),
}

#: RCINE(n_classes=4, gamma=0.2, refit_every=500, reservoir_size=300, seed=7), 2,000 rounds: estimates_ at 5a5dcd4
RCINE_ESTIMATES = [[0.36680617928504944, 0.4630976915359497], [0.45414820313453674, 0.3712082505226135],
                   [0.5584841370582581, 0.3288818597793579], [0.5119349360466003, 0.33675849437713623]]


_log = partial(clustered_log, n=3000, K=4, d=12)


@pytest.mark.parametrize("name", list(RECORDED))
def test_nrest_paths_unchanged(name):
    params, (rho0, rho1, qsum) = RECORDED[name]
    X, played, fb = _log(0.2, 0.1)
    est = NREst(**params).fit(X, played, fb, n_classes=4)
    assert est.rho0_ == pytest.approx(rho0, abs=1e-6) and est.rho1_ == pytest.approx(rho1, abs=1e-6)
    assert float(est.q_.sum()) == pytest.approx(qsum, abs=1e-3)  # 3,000 float32 outputs: sum within 1e-3


def test_rcine_estimates_unchanged():
    rng = np.random.default_rng(5)
    Xs = rng.standard_normal((400, 8))
    ys = (Xs[:, 0] > 0).astype(int) + 2 * (Xs[:, 1] > 0)
    m = RCINE(n_classes=4, gamma=0.2, refit_every=500, reservoir_size=300, seed=7)
    ClassificationBandit(Xs, ys, 0.2, 0.1, seed=8).run(m, 2000, checkpoints=[2000])
    np.testing.assert_allclose(m.estimates_, RCINE_ESTIMATES, rtol=0, atol=1e-6)
    assert m.rho0_hat_ == 0.49  # clipped at rho_max
