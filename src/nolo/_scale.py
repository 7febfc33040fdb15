"""The one check that a learner's inputs are on a scale it can learn from (:class:`nolo.exceptions.ScaleWarning`).

A learner that is not scale-free compares its rows against a scale of its own: a ridge prior ``lam`` needs about
``lam / ||x||^2`` rounds per label before the data outweighs it, a PA-I cap ``C`` moves the weights by at most
``C ||x||`` a round, a kernel bandwidth ``h`` sees every row alike when ``||x|| << h``.  Every value stays finite
and the learner simply stays at its prior, so nothing else reports it.  The check runs once per learner on its
first rows (a whole batch's first :data:`SAMPLE` rows, or :data:`SAMPLE_ROWS` rows gathered round by round):

* rows: the median squared row norm ``s`` against the learner's reference ``ref`` (a squared norm): warn when
  ``s < ref / FACTOR`` or, for the learners hurt by large rows too, ``s > ref * FACTOR``;
* columns: the typical magnitude of each column's non-zero entries (their root mean square, so that rare features
  count at the size they have when present); warn when the largest exceeds the smallest by more than ``SPAN``,
  unless the learner normalises each feature itself.

The warned state lives in private attributes that do not end with ``_`` (not learner state: not saved, not part
of the contract checks' state comparisons).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from nolo.exceptions import ScaleWarning

FACTOR = 1e4  # the rows' squared norm this far from the learner's scale: it cannot learn in a usable horizon
SPAN = 1e4  # column magnitudes spanning more than four orders of magnitude
SAMPLE = 1000  # rows of a batch looked at
SAMPLE_ROWS = 32  # rows gathered round by round before the check


def scale_problem(X, reference: float | None, what: str, two_sided: bool = False, columns: bool = True) -> str | None:
    """The cause, in words, when rows ``X`` (dense or CSR, 2-d) are on a scale the learner cannot learn from, else
    None.  ``reference``: the learner's scale as a squared row norm (None: scale-free under a global rescaling);
    ``what`` names it (``"the ridge prior's scale (lam = 1)"``); ``columns``: check the columns' spread too."""
    X = X[:SAMPLE]
    if X.shape[0] == 0 or X.shape[1] == 0:
        return None
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        col_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
        col_n = np.diff(X.tocsc().indptr)
    else:
        X = np.asarray(X, dtype=np.float64)
        X2 = X * X
        sq = X2.sum(axis=1)
        col_sq = X2.sum(axis=0)
        col_n = np.count_nonzero(X, axis=0)
    if reference is not None and np.any(sq > 0):
        med = float(np.median(sq[sq > 0]))
        if med < reference / FACTOR or (two_sided and med > reference * FACTOR):
            side = "far below" if med < reference else "far above"
            consequence = ("the learner cannot move off its prior in any usable number of rounds"
                           if med < reference else "its prior, bias and widths are out of proportion to them")
            return (f"the rows' norms (median {np.sqrt(med):.3g}) are {side} {what}: {consequence}")
    if columns:
        used = col_n > 0
        if np.count_nonzero(used) >= 2:
            mag = np.sqrt(col_sq[used] / col_n[used])
            lo, hi = float(mag.min()), float(mag.max())
            if lo > 0 and hi / lo > SPAN:
                return (f"the columns' magnitudes span {np.log10(hi / lo):.0f} orders of magnitude "
                        f"({lo:.3g} to {hi:.3g}) and the learner is not scale-free per feature")
    return None


def warn_scale(learner, X, reference, what, two_sided=False, columns=True, stacklevel=4) -> None:
    """Run :func:`scale_problem` on ``X`` once per learner and warn (:class:`ScaleWarning`) naming the cause."""
    learner._scale_checked = True
    cause = scale_problem(X, reference, what, two_sided, columns)
    if cause is not None:
        warnings.warn(f"{type(learner).__name__}: {cause}; scale the rows to unit norm "
                      "(nolo.datasets.normalize_rows) or standardise the columns, or use "
                      "nolo.learners.bandit.default_learner, which normalises online", ScaleWarning,
                      stacklevel=stacklevel)


def gather_rows(learner, x: np.ndarray) -> np.ndarray | None:
    """Round-by-round input: keep a copy of ``x`` (1-d or a few rows); the rows gathered so far once there are
    :data:`SAMPLE_ROWS` of them (then the learner is checked and stops gathering), else None."""
    rows = learner.__dict__.setdefault("_scale_rows", [])
    rows.append(np.array(x, dtype=np.float64, ndmin=2))
    if sum(r.shape[0] for r in rows) < SAMPLE_ROWS:
        return None
    del learner._scale_rows
    return np.vstack(rows)
