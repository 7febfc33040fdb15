"""Which noise-rate rule suits a log: the regime of an exploration log, and warnings when a rule does not fit it.

A fitted :class:`~nolo.noise_rates.NREst` (any rule) gives q(x, j) for every label j
(:meth:`NREst.counterfactual_q`).  From it and the log:

* ``positive_share`` -- share of feedback bits equal to 1;
* ``correct_share`` -- share of plays whose label is the network's predicted label argmax_j q(x, j):
  the estimated share of right plays (a uniform logger over K labels: about 1/K);
* ``signal`` -- 1 - rho0_hat - rho1_hat, how much the feedback depends on the played label being right.

The pooled percentile rule of AM (``rule="pooled"``, percentile p) reads 1 - rho1 at the p-th percentile
of q over the logged pairs, which lies among the right plays only if more than 1 - p/100 of the plays
are right (and reads rho0 among the wrong ones only if more than 1 - p/100 are wrong): with p = 89, more
than 11 %.  :func:`diagnose` names the rule's assumption when the log breaks it.  See docs/noise-rates.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Regime", "diagnose", "WEAK_SIGNAL", "MIN_ANCHORS", "POOLED_SLACK", "MIN_ROUNDS"]

#: 1 - rho0_hat - rho1_hat below this: the feedback barely depends on the play; any estimate is fragile.
WEAK_SIGNAL = 0.2
#: fewer anchor rows than this on either side (right / wrong plays): the read-out rests on too few bits.
MIN_ANCHORS = 30
#: fewer logged rounds than this: the estimates can sit outside their own interval (measured on digits logs, rates
#: (0.1, 0.3): at 3,000 rounds the anchors rule read rho1 0.34-0.56, at 20,000 within 0.01 of the truth)
MIN_ROUNDS = 10_000
#: the pooled rule is flagged when the share of right (or wrong) plays is within this factor of 1 - p/100.
POOLED_SLACK = 1.5


@dataclass
class Regime:
    """The regime of a log as a fitted NREst sees it (see the module docstring), and the warnings it raises."""

    positive_share: float
    correct_share: float
    signal: float
    n_right: int
    n_wrong: int
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"positive_share": self.positive_share, "correct_share": self.correct_share, "signal": self.signal,
                "n_right": self.n_right, "n_wrong": self.n_wrong, "warnings": list(self.warnings)}


def diagnose(est, X, played, feedback) -> Regime:
    """The :class:`Regime` of the log (X, played, feedback) for the fitted NREst ``est``, with warnings.

    Warnings: the pooled rule used on a log whose share of right (or wrong) plays is below
    ``POOLED_SLACK`` x (1 - percentile/100); a weak signal (1 - rho0_hat - rho1_hat < ``WEAK_SIGNAL``);
    fewer than ``MIN_ANCHORS`` plays predicted right or wrong; a rate the log does not identify; fewer than
    ``MIN_ROUNDS`` rounds; the regression-oracle read-out (``OracleRates``), whose rho1 is biased low when its linear
    model underfits the log.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.noise_rates import NREst
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(10, size=4000); X = np.eye(10)[y] + 0.1 * rng.standard_normal((4000, 10))
    >>> played = rng.integers(10, size=4000)  # a uniform logger: about 10 % of plays are right
    >>> f = (played == y).astype(int)
    >>> est = NREst(hidden_layer_sizes=(16,), max_iter=10, random_state=0).fit(X, played, f)
    >>> r = diagnose(est, X, played, f)
    >>> round(r.correct_share, 1), any("pooled" in w for w in r.warnings)
    (0.1, True)
    """
    X = np.asarray(X, dtype=np.float64)
    played = np.asarray(played)
    feedback = np.asarray(feedback)
    Q = est.counterfactual_q(X)
    right = played == np.argmax(Q, axis=1)
    correct = float(np.mean(right))
    signal = 1.0 - est.rho0_ - est.rho1_
    r = Regime(positive_share=float(np.mean(feedback)), correct_share=correct, signal=float(signal),
               n_right=int(np.sum(right)), n_wrong=int(np.sum(~right)))
    if est.rule == "pooled":
        tail = 1.0 - float(est.percentile) / 100.0
        if min(correct, 1.0 - correct) < POOLED_SLACK * tail:
            which = "right" if correct < 1.0 - correct else "wrong"
            r.warnings.append(
                f"the pooled {est.percentile:g}th-percentile rule assumes well over {100 * tail:.0f} % of the plays are "
                f"{which}; in this log about {100 * min(correct, 1 - correct):.1f} % are (estimated): its estimates are "
                "biased here -- use the anchors rule (--method nrest-anchors, NREst(rule='anchors'))")
    if signal < WEAK_SIGNAL:
        r.warnings.append(
            f"weak signal: 1 - rho0_hat - rho1_hat = {signal:.2f} < {WEAK_SIGNAL}: the feedback barely depends on "
            "whether the play was right, so the rates are poorly determined (see the interval)")
    if min(r.n_right, r.n_wrong) < MIN_ANCHORS:
        r.warnings.append(
            f"only {r.n_right} plays look right and {r.n_wrong} wrong: a rate read from fewer than {MIN_ANCHORS} "
            "rounds is unreliable; log more rounds or more exploration")
    if played.shape[0] < MIN_ROUNDS:
        r.warnings.append(
            f"only {played.shape[0]} logged rounds: below {MIN_ROUNDS:,} the estimates can lie outside their own "
            "interval (on digits logs of 3,000 rounds rho1 read 0.34-0.56 for a true 0.30; at 20,000 within 0.01); "
            "log more rounds before correcting with them")
    if type(est).__name__ == "OracleRates":
        r.warnings.append(
            "the regression-oracle read-out takes 1 - rho1 from a linear model's top predictions, which sit below "
            "the truth when the model underfits: on digits logs (true rho1 0.30) it read 0.18-0.27 with intervals "
            "that missed 0.30, for uniform and non-uniform loggers alike; prefer the default nrest-anchors")
    if getattr(est, "identified_", True) is False:
        r.warnings.append("every play looks right (or every play wrong): one of the rates is not identified by "
                          "this log; the value shown for it is the pooled rule's")
    return r
