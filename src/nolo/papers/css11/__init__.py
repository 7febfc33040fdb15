"""CSS11 experiments (Cesa-Bianchi, Shalev-Shwartz & Shamir, ICML 2011), registered for ``nolo reproduce css11``.

* ``unbiasedness`` -- Monte Carlo z-scores of the Settings 1-2 gradient estimates, the Gaussian
  surrogate kernel (diagonal and full Sigma) and the radial surrogate; quadrature accuracy;
* ``regret`` -- regret of Settings 1-2 against the bounds ``B_w sqrt(G T)`` (Theorems 1-2), naive OGD;
* ``recovery`` -- online-to-batch parameter recovery vs naive OGD and the batch EIV estimator;
* ``kernel-noise`` -- Algorithm 2 (Gaussian, radial) vs naive and clean kernel OGD.
"""

from nolo.papers import register_own_paper

register_own_paper("css11")  # before its experiments register

from nolo.papers.css11 import kernel_noise, recovery, regret, unbiasedness  # noqa: F401, E402  (registration)
