"""NREst: noise-rate estimation from logged (x, played label, noisy feedback) -- AM Algorithm 3.

AM Theorem 5: q(x, l) = P(f_rho = 1 | x, played = l) = (1 - rho1) p(y = l | x) + rho0 (1 - p(y = l | x)),
so q = 1 - rho1 at a "perfect" pair (played label surely right) and q = rho0 at a pair whose
played label is surely wrong.  NREst fits a probabilistic classifier of the feedback bit on
u = [x / ||x||, encoding of the played label] and reads the two rates off robust extremes of
q over the logged pairs (the paper replaces the argmax of its eq. (6) by a percentile).

Two read-out rules (``rule``):

* ``"pooled"`` (default; the authors' code, docs/baselines.md, section 6.4 (A)): with q_n the fitted
  P(f=1 | u_n) on the training rows, 1 - rho1_hat is the largest q_n strictly below the
  ``percentile``-th percentile of q (numpy "higher"), and rho0_hat is 1 minus the largest
  (1 - q_n) strictly below the percentile of (1 - q) -- a robust max and a robust min
  (implemented as order statistics, :func:`percentile_extremes`).
  The row normalisation of the 2x2 matrix is a no-op for a two-class ``predict_proba``.
* ``"per_class"`` (the paper text, eq. (6) with the ambiguities resolved as docs/baselines.md,
  section 6.4 (B) suggests -- our choice): q_j(x_n) evaluated counterfactually for every
  label j; x*_j = the row at the robust percentile max of q_j; 1 - rho1_hat = mean_j q(x*_j, j)
  and rho0_hat = mean over k != l of q(x*_k, l).
* ``"anchors"`` (nolo's regime-aware rule, not in AM; for exploration logs where few plays are right,
  e.g. a uniform logger over K = 10 labels, where the pooled rule's percentile falls outside the
  right plays and fails): q(x, j) evaluated counterfactually for every label j gives a predicted
  label y_hat(x) = argmax_j q(x, j) and a margin (largest minus second largest q(x, j)).  The
  ``anchor_fraction`` of rows with the largest margins are the anchors; 1 - rho1_hat is the mean
  *observed* feedback over the anchors whose played label is y_hat(x) (plays surely right) and
  rho0_hat the mean feedback over the anchors whose played label is not (plays surely wrong).  The
  network only sorts the rows; the rates are read from the feedback bits, so a network whose q is
  shrunk towards the mean (a rare, noisy positive class) does not bias them the way it biases a
  percentile of q.  Each row is sorted by a network that did not train on it (``n_folds`` cross-fitting,
  default 2; two more fits on halves of the log): a network fitted to a row's own feedback bit would
  move a wrong play with feedback 1 among the right plays and bias both rates towards 0.
  The estimated share of right plays (``correct_share_``) is no input: the rule
  needs no percentile.  See docs/noise-rates.md for the logs each rule suits.

The classifier is by default the network of scikit-learn's MLPClassifier (ReLU hidden layers, a
logistic output, cross-entropy, Glorot-uniform initialisation, Adam; AM's network with Adam instead of
Adagrad, which scikit-learn lacks).  ``engine="numpy"`` (the default) trains it with our own NumPy loop
(:class:`AdamMLP`) that performs the same arithmetic as ``MLPClassifier(solver="adam").partial_fit``
once per epoch -- same initial draw, minibatch order, gradients and Adam steps, so the same weights
(tested to agree with ``engine="sklearn"``) -- without scikit-learn's per-call and per-minibatch input
validation, which took more than half of a small refit's time (RCINE refits on 2,000 rows).
``engine="sklearn"`` runs MLPClassifier itself, through its public API only (``partial_fit``, ``fit`` with
``warm_start=True``, ``set_params``); any estimator with ``fit``/``predict_proba`` can be passed as ``classifier``.
The paper's unused 10 % test split is not reproduced; its validation split is: the MLP trains on
90 % of the rows and keeps the epoch with the lowest validation cross-entropy (the authors' code),
which keeps a large network from over-fitting a small log.  The read-out uses all rows.

``warm_start=True`` starts the MLP from the weights of the previous ``fit`` (or from
``init_weights``) instead of a fresh initialisation -- what RCINE uses to keep refits cheap.  Both start
a fresh Adam optimiser from those weights.  With ``engine="sklearn"`` the previous fit is the fitted
``MLPClassifier`` this estimator keeps (``classifier_``), continued through scikit-learn's public
``warm_start``; scikit-learn has no public way to load saved weights into an MLPClassifier, so a warm
start from saved weights (``init_weights``, or ``weights_`` without that fitted classifier: set by hand,
from a fit with the numpy engine or a model restored from its weights) is refused there with a
ParameterError -- ``engine="numpy"`` (the default, the same arithmetic) takes them.

One scikit-learn behaviour is reproduced on purpose (so both engines agree): ``partial_fit`` re-seeds
its generator from ``random_state`` on every call, so with an integer seed every epoch after the
first visits the minibatches in the same shuffled order.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from nolo._config import Configurable
from nolo._jit import njit
from nolo._threads import thread_controller
from nolo._validation import check_array, check_choice, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.noise_rates.mlp import AdamMLP

__all__ = ["NREst", "encode_inputs", "percentile_extremes"]

_ENCODE_ROWS = 64


def encode_inputs(X, played, n_classes: int, label_encoding: str = "onehot", normalize: bool = True,
                  dtype=np.float64) -> np.ndarray:
    """The network input u = [x / ||x||_2 (zero rows stay 0), played label as one-hot or one scalar].

    Written straight into one ``dtype`` array, a block of rows at a time (no full-size float64
    copies, no ``hstack``); the values equal ``hstack([X / np.linalg.norm(X, axis=1, keepdims=True),
    labels]).astype(dtype)`` exactly (the same row sums, the division done in float64 and rounded once).
    """
    return _encode(X, played, n_classes, label_encoding, normalize, dtype)[0]


def _encode(X, played, n_classes, label_encoding, normalize, dtype) -> tuple[np.ndarray, bool]:
    """:func:`encode_inputs` and whether every row norm is finite (which implies a finite X)."""
    X = np.asarray(X, dtype=np.float64)
    played = np.asarray(played, dtype=np.int64)
    n, d = X.shape
    onehot = label_encoding == "onehot"
    if onehot and n and (played.min() < 0 or played.max() >= n_classes):
        raise ParameterError(f"played labels must lie in [0, n_classes={n_classes})")
    U = np.empty((n, d + (n_classes if onehot else 1)), dtype=dtype)
    rows = min(n, _ENCODE_ROWS)
    sq = np.empty((rows, d)) if normalize else None
    ones = np.ones(rows)
    finite = True
    for s in range(0, n, _ENCODE_ROWS):  # blocks that stay in L2 cache
        Xb = X[s:s + _ENCODE_ROWS]
        k = Xb.shape[0]
        if normalize:  # the arithmetic of np.linalg.norm(X, axis=1)
            np.multiply(Xb, Xb, out=sq[:k])
            norms = np.sqrt(np.add.reduce(sq[:k], axis=1))
            finite = finite and bool(np.isfinite(norms).all())
            norms = np.where(norms > 0, norms, 1.0)
        else:
            norms = ones[:k]  # x / 1 = x exactly
        _write_rows(Xb, norms, played[s:s + k], onehot, U[s:s + k])
    if not normalize:
        finite = bool(np.isfinite(X).all())
    return U, finite


@njit(cache=True, nogil=True, error_model="numpy")
def _write_rows(X, norms, played, onehot, out):
    """Row i of out: X[i] / norms[i] (the float64 quotient rounded once to out's dtype), then the one-hot
    encoding of played[i] (``onehot``) or played[i] itself."""
    d = X.shape[1]
    for i in range(X.shape[0]):
        s = norms[i]
        for j in range(d):
            out[i, j] = X[i, j] / s
        if onehot:
            for j in range(d, out.shape[1]):
                out[i, j] = 0.0
            out[i, d + played[i]] = 1.0
        else:
            out[i, d] = played[i]


def percentile_extremes(q: np.ndarray, percentile: float) -> tuple[float, float]:
    """(robust min, robust max) of q by the authors' rule, as order statistics.

    For eta = q (and eta = 1 - q): theta = the ``percentile``-th percentile of eta (numpy
    "higher", sorted position i = ceil(p/100 (n-1))) and the read-out is the order statistic
    just below it, sorted position i - 1 -- for distinct values exactly "the largest eta strictly
    below theta" of the authors' code, and still well defined when values tie.
    """
    q = np.asarray(q, dtype=np.float64)
    n = q.shape[0]
    i = int(np.ceil(float(percentile) / 100.0 * (n - 1)))
    pos = max(i - 1, 0)
    hi = float(np.sort(q)[pos])
    lo = 1.0 - float(np.sort(1.0 - q)[pos])
    return lo, hi


class NREst(Configurable):
    """AM Algorithm 3 (NREst) with the percentile rule of AM section 4 (see the module docstring).

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default (64,)
    max_iter : epochs of the default MLP, default 30
    learning_rate_init, batch_size, alpha : of the default MLP (Adam), defaults 1e-2 (AM's rate), 128, 1e-4
    validation_fraction : rows held out to pick the epoch with the lowest validation cross-entropy
        (the authors' checkpointing), default 0.1; 0 trains on all rows for ``max_iter`` epochs
    n_iter_no_change : None (default: all ``max_iter`` epochs) or stop once the validation
        cross-entropy has not improved for this many epochs (the best epoch is kept either way;
        scikit-learn's early-stopping patience, 10 there) -- lets AM's 70-epoch network stop when done
    percentile : in (50, 100], default 89 (AM; 94 for SynSep)
    rule : "pooled" (authors' code, the default), "per_class" (paper text, our resolution) or "anchors"
        (nolo's regime-aware per-class-anchor rule, see the module docstring).  The class is AM's algorithm, so its
        default is AM's rule, which RCINE and the AM reproduction run; for a log of unknown regime use
        ``make_estimator(DEFAULT_METHOD)`` (:mod:`nolo.noise_rates.methods`: the anchors rule), what
        ``nolo estimate-noise`` runs by default
    anchor_fraction : in (0, 1], default 0.5: the share of rows (largest margins) used as anchors by
        ``rule="anchors"``; unused by the other rules
    n_folds : int in [1, 10], default 2: ``rule="anchors"`` sorts each row with a network trained on the
        other folds (cross-fitting; 1 = the network trained on all rows); unused by the other rules
    label_encoding : "onehot" (default) or "scalar" (the authors' code)
    normalize : L2-normalise the x part, default True (as the authors' code)
    warm_start : continue from the previous fit's MLP weights, default False (``engine="sklearn"``: from the
        previous fit's ``classifier_`` only; saved weights need ``engine="numpy"``, see the module docstring)
    classifier : None (the MLP) or any estimator with fit/predict_proba (cloned per fit)
    engine : how the default MLP is trained: "numpy" (default; our loop, the same arithmetic as
        scikit-learn's, about 3x faster on RCINE's 2,000-row refits) or "sklearn" (MLPClassifier's public
        partial_fit/fit; it cannot warm-start from saved weights, ``init_weights``)
    dtype : "float32" (default; about 2x faster) or "float64", the network's arithmetic
    n_threads : BLAS threads during the fit, default 1 (on a shared 2-core machine one thread measures
        2.5x faster than two); None leaves the BLAS default
    random_state : int or None, seed of the MLP

    After :meth:`fit`: ``rho0_``, ``rho1_``, ``q_`` (fitted P(f=1|u) on the rows), ``fit_seconds_``,
    ``positive_share_`` (share of feedback bits equal to 1), with ``rule="anchors"`` also
    ``correct_share_`` (share of plays equal to the predicted label: the estimated share of right
    plays) and ``n_anchors_`` (anchors with the played label wrong, right),
    ``weights_`` (MLP coefs + intercepts, for warm starts), ``validation_loss_``, ``n_epochs_`` (epochs
    trained, < ``max_iter`` when ``n_iter_no_change`` stopped it), ``classifier_``
    (the fitted scikit-learn estimator; None with ``engine="numpy"``).

    Examples
    --------
    A uniform logger over 10 labels (10 % of the plays right), true rates 0.2 / 0.1: the pooled rule's
    89th percentile falls among the wrong plays; the anchors rule does not need one.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(10, size=6000); X = np.eye(10)[y] + 0.2 * rng.standard_normal((6000, 10))
    >>> played = rng.integers(10, size=6000); u = rng.random(6000)
    >>> f = np.where(played == y, u >= 0.1, u < 0.2).astype(int)
    >>> pooled = NREst(hidden_layer_sizes=(16,), max_iter=10, random_state=0).fit(X, played, f)
    >>> anchors = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, f)
    >>> pooled.rho1_ > 0.3, round(anchors.rho0_, 1), round(anchors.rho1_, 1)
    (True, 0.2, 0.1)
    """

    def __init__(self, hidden_layer_sizes=(64,), max_iter=30, learning_rate_init=1e-2, batch_size=128, alpha=1e-4,
                 validation_fraction=0.1, percentile=89.0, rule="pooled", label_encoding="onehot", normalize=True,
                 warm_start=False, classifier=None, engine="numpy", dtype="float32", n_threads=1, random_state=None,
                 n_iter_no_change=None, anchor_fraction=0.5, n_folds=2):
        self.anchor_fraction = anchor_fraction
        self.n_folds = n_folds
        self.hidden_layer_sizes = hidden_layer_sizes
        self.n_iter_no_change = n_iter_no_change
        self.engine = engine
        self.dtype = dtype
        self.n_threads = n_threads
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.learning_rate_init = learning_rate_init
        self.batch_size = batch_size
        self.alpha = alpha
        self.percentile = percentile
        self.rule = rule
        self.label_encoding = label_encoding
        self.normalize = normalize
        self.warm_start = warm_start
        self.classifier = classifier
        self.random_state = random_state

    def _validate_params(self) -> None:
        sizes = tuple(self.hidden_layer_sizes) if hasattr(self.hidden_layer_sizes, "__iter__") else None
        if not sizes or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes):
            raise ParameterError(f"hidden_layer_sizes must be a non-empty tuple of positive ints, got {self.hidden_layer_sizes!r}")
        check_int(self.max_iter, "max_iter", low=1)
        if self.n_iter_no_change is not None:
            check_int(self.n_iter_no_change, "n_iter_no_change", low=1)
        check_scalar(self.learning_rate_init, "learning_rate_init", low=0.0, low_inclusive=False)
        check_int(self.batch_size, "batch_size", low=1)
        check_scalar(self.alpha, "alpha", low=0.0)
        check_scalar(self.validation_fraction, "validation_fraction", low=0.0, high=0.5)
        check_scalar(self.percentile, "percentile", low=50.0, high=100.0, low_inclusive=False)
        check_choice(self.rule, "rule", ("pooled", "per_class", "anchors"))
        check_scalar(self.anchor_fraction, "anchor_fraction", low=0.0, high=1.0, low_inclusive=False)
        check_int(self.n_folds, "n_folds", low=1, high=10)
        check_choice(self.label_encoding, "label_encoding", ("onehot", "scalar"))
        for flag in ("normalize", "warm_start"):
            if not isinstance(getattr(self, flag), (bool, np.bool_)):
                raise ParameterError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        check_choice(self.engine, "engine", ("numpy", "sklearn"))
        check_choice(self.dtype, "dtype", ("float32", "float64"))
        if self.n_threads is not None:
            check_int(self.n_threads, "n_threads", low=1)
        if self.random_state is not None:
            check_int(self.random_state, "random_state", low=0, high=2**32 - 1)
        if self.classifier is not None and not (hasattr(self.classifier, "fit") and hasattr(self.classifier, "predict_proba")):
            raise ParameterError("classifier must be None or an estimator with fit and predict_proba")

    def _mlp_params(self) -> dict:
        """MLPClassifier's parameters for this estimator's network (scikit-learn's adam, our epochs loop)."""
        return dict(hidden_layer_sizes=tuple(self.hidden_layer_sizes), activation="relu", solver="adam",
                    alpha=float(self.alpha), batch_size=int(self.batch_size),
                    learning_rate_init=float(self.learning_rate_init), max_iter=int(self.max_iter), shuffle=True,
                    random_state=self.random_state, tol=1e-6, n_iter_no_change=10 ** 6)

    def _make_classifier(self, previous, U):
        """The estimator to fit: a clone of ``classifier``; or the MLP -- fresh, or (warm start) a copy of
        ``previous``, the fitted MLPClassifier of this estimator's previous fit, set to continue from its weights
        through scikit-learn's public ``warm_start`` (no attribute of the estimator is written)."""
        import copy

        from sklearn.base import clone
        from sklearn.neural_network import MLPClassifier

        if self.classifier is not None:
            return clone(self.classifier)
        if previous is None:
            return MLPClassifier(**self._mlp_params(), warm_start=False)
        clf = copy.deepcopy(previous)
        sizes = tuple(int(c.shape[1]) for c in clf.coefs_[:-1])
        if sizes != tuple(int(h) for h in self.hidden_layer_sizes) or clf.coefs_[0].shape[0] != U.shape[1]:
            raise ParameterError(f"warm_start: the previous fit's network (hidden layers {sizes}, "
                                 f"{clf.coefs_[0].shape[0]} inputs) does not match hidden_layer_sizes="
                                 f"{tuple(self.hidden_layer_sizes)} and the input width {U.shape[1]}")
        if clf.coefs_[0].dtype != U.dtype:
            raise ParameterError(f"warm_start: the previous fit's network is {clf.coefs_[0].dtype}, dtype is "
                                 f"{self.dtype!r}; engine='sklearn' continues a network in its own precision "
                                 f"(engine='numpy' casts the weights)")
        clf.set_params(**self._mlp_params(), warm_start=True)
        return clf

    def fit(self, X, played, feedback, n_classes: int | None = None, init_weights=None) -> "NREst":
        """Fit on logged rounds: X (n, d), played (n,) labels, feedback (n,) bits; sets ``rho0_``, ``rho1_``."""
        self._validate_params()
        for name, value in (("X", X), ("played", played), ("feedback", feedback)):
            if np.iscomplexobj(value):
                raise ParameterError(f"{name} must hold real numbers, got complex values")
        X = check_array(X, "X", ndim=2, finite=False)  # finiteness: checked with the encoding (row norms)
        played = np.asarray(played)
        feedback = np.asarray(feedback)
        n = X.shape[0]
        if played.shape != (n,) or feedback.shape != (n,):
            raise ParameterError(f"played and feedback must have shape ({n},), got {played.shape} and {feedback.shape}")
        if n < 10:
            raise ParameterError(f"NREst needs at least 10 logged rounds, got {n}")
        if not np.all((feedback == 0) | (feedback == 1)):
            raise ParameterError("feedback must hold 0/1 bits")
        if not np.issubdtype(played.dtype, np.integer) or played.min() < 0:
            raise ParameterError("played must hold non-negative integer labels")
        K = int(played.max()) + 1 if n_classes is None else check_int(n_classes, "n_classes", low=2)
        if played.max() >= K:
            raise ParameterError(f"played labels must be < n_classes={K}")
        feedback = feedback.astype(np.int64)
        previous = None  # engine="sklearn": the fitted MLPClassifier a warm start continues
        if self.warm_start and self.classifier is None and self.engine == "sklearn":
            previous = self._sklearn_warm_start(init_weights)
        if self.warm_start and init_weights is None:
            init_weights = getattr(self, "weights_", None)
        t0 = time.perf_counter()
        if self.n_threads is None:
            self._fit_read_out(X, played, feedback, K, n, init_weights, previous)
        else:
            with thread_controller().limit(limits=int(self.n_threads)):
                self._fit_read_out(X, played, feedback, K, n, init_weights, previous)
        self.n_classes_ = K
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _sklearn_warm_start(self, init_weights):
        """engine="sklearn" with warm_start: the fitted MLPClassifier of the previous fit to continue (None: no
        previous network, a cold start); saved weights are refused (scikit-learn cannot load them publicly)."""
        from sklearn.neural_network import MLPClassifier

        if init_weights is not None:
            raise ParameterError("engine='sklearn' cannot warm-start from saved weights (init_weights): scikit-learn's "
                                 "MLPClassifier has no public way to load weights; use engine='numpy' (the default, "
                                 "the same arithmetic), or warm_start=True without init_weights to continue this "
                                 "estimator's previous sklearn fit")
        if getattr(self, "weights_", None) is None:
            return None
        previous = getattr(self, "classifier_", None)
        if not isinstance(previous, MLPClassifier):
            raise ParameterError("engine='sklearn' cannot warm-start from saved weights (weights_ without the fitted "
                                 "MLPClassifier of a previous sklearn fit: set by hand, from engine='numpy' or from a "
                                 "restored model); use engine='numpy' (the default, the same arithmetic)")
        return previous

    def _fit_read_out(self, X, played, feedback, K, n, init_weights, previous=None) -> None:
        U, finite = _encode(X, played, K, self.label_encoding, self.normalize, self.dtype)
        if not finite and not np.isfinite(X).all():  # a non-finite norm: X has NaN/inf, or a norm overflowed
            raise ParameterError("X must contain only finite values (no NaN or inf)")
        init = init_weights if self.warm_start else None
        self.classifier_ = None
        if np.all(feedback == feedback[0]):
            # one-valued feedback: the classifier is the constant; q is that constant everywhere
            q_const = float(feedback[0])
            q = np.full(n, q_const)
            self.weights_ = None
            qfun = lambda UU: np.full(UU.shape[0], q_const)  # noqa: E731
        elif self.classifier is None and self.engine == "numpy":
            net = self._fit_numpy_checkpointed(U, feedback, init)
            qfun = net.predict
            q = qfun(U)
            self.weights_ = net.weights()
        else:
            clf = self._make_classifier(previous, U)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if self.classifier is None:
                    clf = self._fit_mlp_checkpointed(clf, U, feedback, warm=previous is not None)
                else:
                    clf.fit(U, feedback)
            col = int(np.flatnonzero(np.asarray(clf.classes_) == 1)[0])
            qfun = lambda UU: clf.predict_proba(UU)[:, col]  # noqa: E731
            q = qfun(U)
            self.weights_ = ([c.copy() for c in clf.coefs_] + [b.copy() for b in clf.intercepts_]
                             if hasattr(clf, "coefs_") else None)
            self.classifier_ = clf
        self.positive_share_ = float(np.mean(feedback))
        self.identified_ = True
        if self.rule == "pooled":
            rho0, one_minus_rho1 = percentile_extremes(q, float(self.percentile))
        elif self.rule == "per_class":
            rho0, one_minus_rho1 = self._per_class(self._counterfactual_q(X, K, qfun))
        else:
            rho0, one_minus_rho1 = self._anchors(self._cross_fitted_q(X, played, feedback, K, qfun), q, played, feedback)
        self.q_ = np.asarray(q, dtype=np.float64)
        self.rho0_ = float(np.clip(rho0, 0.0, 1.0))
        self.rho1_ = float(np.clip(1.0 - one_minus_rho1, 0.0, 1.0))

    def _split(self, n: int, f: np.ndarray):
        """Training and validation rows: the first ``validation_fraction`` of a seeded permutation is held out."""
        rng = np.random.default_rng(self.random_state)
        perm = rng.permutation(n)
        n_val = max(int(round(self.validation_fraction * n)), 1) if self.validation_fraction > 0 else 0
        val, tr = perm[:n_val], perm[n_val:]
        if n_val == 0 or np.all(f[tr] == f[tr][0]):
            tr, val = perm, perm[:0]
        return tr, val

    @staticmethod
    def _validation_loss(p: np.ndarray, f: np.ndarray) -> float:
        p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)  # float64: 1 - 1e-12 is 1 in float32
        return float(-np.mean(f * np.log(p) + (1 - f) * np.log1p(-p)))

    def _fit_numpy_checkpointed(self, U: np.ndarray, f: np.ndarray, init_weights) -> AdamMLP:
        """:meth:`_fit_mlp_checkpointed` with :class:`AdamMLP`: the same split, epochs, shuffles and
        checkpoint.  The minibatch order of an epoch is that of scikit-learn's ``partial_fit``: a
        ``RandomState(random_state)`` made afresh per epoch draws the initial weights (first epoch of a
        cold start) and then the permutation of the training rows."""
        tr, val = self._split(U.shape[0], f)
        dtype = U.dtype
        units = [U.shape[1], *[int(h) for h in self.hidden_layer_sizes], 1]
        kw = dict(learning_rate=self.learning_rate_init, alpha=self.alpha, batch_size=self.batch_size)
        seeded = self.random_state is not None
        rs = np.random.RandomState(self.random_state)
        if init_weights is None:
            net = AdamMLP.glorot(units, rs, dtype, **kw)
        else:
            nl = len(init_weights) // 2
            shapes = [np.shape(w) for w in init_weights[:nl]]
            if nl != len(units) - 1 or shapes != list(zip(units[:-1], units[1:])):
                raise ParameterError("init_weights do not match hidden_layer_sizes and the input width")
            net = AdamMLP([np.array(w, dtype=dtype) for w in init_weights[:nl]],
                           [np.array(b, dtype=dtype) for b in init_weights[nl:]], **kw)
        f_col = f.astype(dtype)[:, None]
        U_val, f_val = U[val], f[val]
        best, best_w, best_epoch = np.inf, None, 0
        reseeded = False  # U_ep holds the rows in the order of every epoch that starts from a fresh generator
        for epoch in range(int(self.max_iter)):
            if not seeded or (epoch == 0 and init_weights is None):  # rs continues after the initial draw
                order = tr[rs.permutation(tr.size)]
                U_ep, f_ep = U[order], f_col[order]
            elif not reseeded:
                order = tr[np.random.RandomState(self.random_state).permutation(tr.size)]
                U_ep, f_ep = U[order], f_col[order]
                reseeded = True
            net.epoch(U_ep, f_ep)
            if val.size == 0:
                continue
            loss = self._validation_loss(net.predict(U_val), f_val)
            if loss < best:
                best, best_epoch = loss, epoch
                best_w = net.weights()
            elif self.n_iter_no_change is not None and epoch - best_epoch >= int(self.n_iter_no_change):
                break
        self.n_epochs_ = epoch + 1
        if best_w is not None:
            for w, saved in zip(net.coefs + net.intercepts, best_w):
                w[...] = saved
        if not all(np.all(np.isfinite(w)) for w in net.coefs + net.intercepts):
            raise NumericalError("NREst: the network's weights became non-finite (lower learning_rate_init)")
        self.validation_loss_ = float(best)
        return net

    def _fit_mlp_checkpointed(self, clf, U: np.ndarray, f: np.ndarray, warm: bool = False):
        """Epochs of ``partial_fit`` on 90 % of the rows; keep the network of the epoch with the lowest
        cross-entropy on the held-out 10 % (the authors' checkpointing, docs/baselines.md, section 6.4 (A) step 3).
        Returns the kept MLPClassifier (a copy taken at that epoch).

        ``warm``: ``clf`` is a fitted network set to ``warm_start=True``; its first epoch is a ``fit`` with
        ``max_iter=1``, which keeps the weights and starts a fresh Adam optimiser (what a warm start from weights
        does in the numpy engine), the others ``partial_fit`` as in a cold start.  Only public API: no attribute
        of the estimator is written here.
        """
        import copy

        tr, val = self._split(U.shape[0], f)
        best, best_clf, best_epoch = np.inf, None, 0
        for epoch in range(int(self.max_iter)):
            if warm and epoch == 0:
                clf.set_params(max_iter=1)
                clf.fit(U[tr], f[tr])
                clf.set_params(max_iter=int(self.max_iter))
            else:
                clf.partial_fit(U[tr], f[tr], classes=np.array([0, 1]))
            if val.size == 0:
                continue
            loss = self._validation_loss(clf.predict_proba(U[val])[:, 1], f[val])
            if loss < best:
                best, best_epoch = loss, epoch
                best_clf = copy.deepcopy(clf)
            elif self.n_iter_no_change is not None and epoch - best_epoch >= int(self.n_iter_no_change):
                break
        self.n_epochs_ = epoch + 1
        self.validation_loss_ = float(best)
        return clf if best_clf is None else best_clf

    def _counterfactual_q(self, X, K, qfun) -> np.ndarray:
        """Q[n, j] = the fitted q(x_n, j) for every label j (whatever label was played)."""
        n = X.shape[0]
        Q = np.empty((n, K))
        for j in range(K):
            Q[:, j] = qfun(encode_inputs(X, np.full(n, j), K, self.label_encoding, self.normalize, dtype=self.dtype))
        return Q

    def _cross_fitted_q(self, X, played, feedback, K, qfun) -> np.ndarray:
        """Q of :meth:`_counterfactual_q`, each row's from a network that did not train on it (``n_folds`` > 1).

        The rows are split into ``n_folds`` folds by a seeded permutation; a copy of this estimator
        (cold start, pooled rule) trains on all folds but one and gives Q for the held-out fold.  Without it
        a network that fits a row's own feedback bit moves the row towards the anchor side its bit favours
        (a wrong play with feedback 1 looks right), which biases both rates towards 0.
        """
        n = X.shape[0]
        folds = int(self.n_folds)
        if folds < 2 or n < 10 * folds:
            return self._counterfactual_q(X, K, qfun)
        params = self.get_params(deep=False)
        params.update(rule="pooled", warm_start=False, n_folds=1)
        perm = np.random.default_rng(self.random_state).permutation(n)
        Q = np.empty((n, K))
        for k in range(folds):
            held = np.sort(perm[k::folds])
            train = np.sort(np.concatenate([perm[j::folds] for j in range(folds) if j != k]))
            sub = type(self)(**params).fit(X[train], played[train], feedback[train], n_classes=K)
            Q[held] = sub._counterfactual_q(X[held], K, sub._q_function())
        return Q

    def _anchors(self, Q: np.ndarray, q: np.ndarray, played: np.ndarray, feedback: np.ndarray) -> tuple[float, float]:
        """rule="anchors" (module docstring): (rho0_hat, 1 - rho1_hat) from the feedback of the anchor rows."""
        n, K = Q.shape
        pred = np.argmax(Q, axis=1)  # ties: the lowest label, deterministic
        top2 = np.partition(Q, K - 2, axis=1)[:, K - 2:]
        margin = top2[:, 1] - top2[:, 0]
        right = played == pred
        n_keep = max(int(np.ceil(float(self.anchor_fraction) * n)), 1)
        keep = np.zeros(n, dtype=bool)
        keep[np.argsort(-margin, kind="stable")[:n_keep]] = True
        self.correct_share_ = float(np.mean(right))
        rates = []
        for side in (~right, right):
            rows = side & keep
            if not rows.any():  # no confident anchor on this side: every row of the side
                rows = side
            rates.append(float(np.mean(feedback[rows])) if rows.any() else np.nan)
        self.n_anchors_ = (int(np.sum(~right & keep)), int(np.sum(right & keep)))
        low, top = rates
        self.identified_ = not (np.isnan(low) or np.isnan(top))
        if not self.identified_:  # every play right (or every play wrong): one rate is not identified by the log
            pooled_low, pooled_top = percentile_extremes(q, float(self.percentile))
            low = pooled_low if np.isnan(low) else low
            top = pooled_top if np.isnan(top) else top
        return low, top

    def _per_class(self, Q: np.ndarray) -> tuple[float, float]:
        n, K = Q.shape
        star = np.empty(K, dtype=np.int64)
        for j in range(K):
            theta = np.percentile(Q[:, j], self.percentile, method="higher")
            cand = np.flatnonzero(Q[:, j] < theta)
            star[j] = cand[np.argmax(Q[cand, j])] if cand.size else int(np.argmax(Q[:, j]))
        top = np.mean([Q[star[j], j] for j in range(K)])
        low = np.mean([Q[star[k], l] for k in range(K) for l in range(K) if k != l])
        return float(low), float(top)

    def counterfactual_q(self, X) -> np.ndarray:
        """The fitted q(x, j) = P(feedback 1 | x, played j) for every row of X and every label j, shape (n, K).

        Row n's argmax is the label the network believes right for x_n; the per-class and anchor rules
        read the rates off these values, and :func:`nolo.noise_rates.regime.diagnose` uses them to
        judge whether a log suits the pooled rule.
        """
        if not hasattr(self, "rho0_"):
            raise ParameterError("NREst is not fitted: call fit first")
        X = check_array(X, "X", ndim=2)
        return self._counterfactual_q(X, self.n_classes_, self._q_function())

    def _q_function(self):
        """q(U) of the fitted classifier, rebuilt from the stored weights (no closure kept on the estimator)."""
        if self.classifier_ is not None:
            clf = self.classifier_
            col = int(np.flatnonzero(np.asarray(clf.classes_) == 1)[0])
            return lambda UU: clf.predict_proba(UU)[:, col]
        if self.weights_ is None:  # one-valued feedback: q is that constant
            q_const = float(self.q_[0])
            return lambda UU: np.full(UU.shape[0], q_const)
        nl = len(self.weights_) // 2
        net = AdamMLP([w for w in self.weights_[:nl]], [b for b in self.weights_[nl:]],
                      learning_rate=self.learning_rate_init, alpha=self.alpha, batch_size=self.batch_size)
        return net.predict

    def estimate(self, X, played, feedback, n_classes: int | None = None) -> tuple[float, float]:
        """Fit and return (rho0_hat, rho1_hat)."""
        self.fit(X, played, feedback, n_classes=n_classes)
        return self.rho0_, self.rho1_
