"""AM experiments for ``nolo reproduce am``: error-curves (Fig. 2, 4-5), gamma-sweep (Fig. 3),
noise-rates (Tables 1-2) and claims (the qualitative claims and the Theorem 4 bound)."""

from nolo.papers import register_own_paper

register_own_paper("am")  # before its experiments register

from nolo.papers.am import curves, gamma_sweep, noise_rates  # noqa: F401, E402
from nolo.papers.am import vs_peers  # noqa: F401, E402

__all__ = ["curves", "gamma_sweep", "noise_rates"]
