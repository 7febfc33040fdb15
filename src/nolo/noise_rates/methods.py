"""The noise-rate estimators ``nolo estimate-noise --method`` offers, by name: one registry, easy to extend.

Each entry maps a method name to a one-line description and a factory taking the CLI's common
options (keyword arguments: ``hidden_layer_sizes``, ``max_iter``, ``percentile``, ``n_iter_no_change``,
``random_state``) and returning an unfitted estimator with ``fit(X, played, feedback, n_classes=...)``,
``rho0_``/``rho1_`` after the fit and ``get_params``.  Another estimator joins by adding an entry to
:data:`METHODS`.

``oracle``: :class:`nolo.learners.bandit.rate_oracle.OracleRates`, the rates read off a per-class ridge
regression of the raw bit (SquareCB's own estimate, docs/squarecb.md), no network; its ``fit`` also takes
the logger's ``propensity`` per round (then rho0 comes from the inverse-propensity identity).  Its class
lives with the bandit oracles it fits, one layer up, so that module registers the entry itself with
:func:`register_method` when it is imported (``nolo.learners.bandit`` imports it; ``nolo.noise_rates``
never imports the learners: RCINE, a learner, imports NREst from here).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from nolo.exceptions import ParameterError
from nolo.noise_rates.nrest import NREst

__all__ = ["Method", "METHODS", "DEFAULT_METHOD", "make_estimator", "register_method"]


class Method(NamedTuple):
    description: str
    factory: Callable[..., object]


def _nrest(rule: str) -> Callable[..., NREst]:
    def factory(**options) -> NREst:
        return NREst(rule=rule, **options)

    return factory


METHODS: dict[str, Method] = {
    "nrest-anchors": Method("NREst network, rates read from the feedback of per-class anchors (nolo; any share "
                            "of right plays, e.g. a uniform logger)", _nrest("anchors")),
    "nrest-pooled": Method("NREst network, pooled percentile rule (AM Algorithm 3 as the authors' code; needs "
                           "well over 1 - percentile/100 of the plays right and wrong)", _nrest("pooled")),
    "nrest-per-class": Method("NREst network, per-class percentile rule (AM eq. 6 as the paper text)",
                              _nrest("per_class")),
}


def register_method(name: str, description: str, factory: Callable[..., object]) -> None:
    """Add an estimator under ``name`` (its module calls this at import; re-registering the same name replaces)."""
    METHODS[name] = Method(description, factory)

#: the CLI's default: the rule that suits the widest range of logs (docs/noise-rates.md)
DEFAULT_METHOD = "nrest-anchors"


def make_estimator(method: str, **options):
    """An unfitted estimator for the method name ``method`` (a key of :data:`METHODS`) and the common options."""
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return METHODS[method].factory(**options)
