"""The noise-rate estimators ``nolo estimate-noise --method`` offers, by name: one registry, easy to extend.

Each entry maps a method name to a one-line description and a factory taking the CLI's common
options (keyword arguments: ``hidden_layer_sizes``, ``max_iter``, ``percentile``, ``n_iter_no_change``,
``random_state``) and returning an unfitted estimator with ``fit(X, played, feedback, n_classes=...)``,
``rho0_``/``rho1_`` after the fit and ``get_params``.  Another estimator joins by adding an entry to
:data:`METHODS`.

``oracle``: :class:`nolo.learners.bandit.rate_oracle.OracleRates`, the rates read off a per-class ridge
regression of the raw bit (SquareCB's own estimate, docs/squarecb.md), no network; its ``fit`` also takes
the logger's ``propensity`` per round (then rho0 comes from the inverse-propensity identity).  Its class
lives with the bandit oracles it fits, so the factory imports it when called (``nolo.noise_rates`` itself
never imports the learners).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from nolo.exceptions import ParameterError
from nolo.noise_rates.nrest import NREst

__all__ = ["Method", "METHODS", "DEFAULT_METHOD", "make_estimator"]


class Method(NamedTuple):
    description: str
    factory: Callable[..., object]


def _nrest(rule: str) -> Callable[..., NREst]:
    def factory(**options) -> NREst:
        return NREst(rule=rule, **options)

    return factory


def _oracle(random_state=None, **network_options) -> object:
    """OracleRates with its defaults; the network options (hidden sizes, epochs, percentile, patience) do not
    apply to it."""
    from nolo.learners.bandit.rate_oracle import OracleRates

    return OracleRates(random_state=random_state)


METHODS: dict[str, Method] = {
    "nrest-anchors": Method("NREst network, rates read from the feedback of per-class anchors (nolo; any share "
                            "of right plays, e.g. a uniform logger)", _nrest("anchors")),
    "nrest-pooled": Method("NREst network, pooled percentile rule (AM Algorithm 3 as the authors' code; needs "
                           "well over 1 - percentile/100 of the plays right and wrong)", _nrest("pooled")),
    "nrest-per-class": Method("NREst network, per-class percentile rule (AM eq. 6 as the paper text)",
                              _nrest("per_class")),
    "oracle": Method("per-class ridge regression of the raw bit, no network (SquareCB's own estimate): 1 - rho1 "
                     "from its confident top predictions, rho0 from the logged propensities (a 'propensity' column) "
                     "or else the other labels' predictions; the network options do not apply", _oracle),
}

#: the CLI's default: the rule that suits the widest range of logs (docs/noise-rates.md)
DEFAULT_METHOD = "nrest-anchors"


def make_estimator(method: str, **options):
    """An unfitted estimator for the method name ``method`` (a key of :data:`METHODS`) and the common options."""
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return METHODS[method].factory(**options)
