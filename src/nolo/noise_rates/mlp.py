"""The network NREst trains by default: a binary MLP classifier trained by minibatch Adam.

One job: the arithmetic of scikit-learn's ``MLPClassifier(solver="adam")`` (ReLU hidden layers, a
logistic output, L2-penalised cross-entropy, Glorot-uniform initialisation, Adam) without its
per-call and per-minibatch input validation, which took more than half of the time of RCINE's small
refits.  :class:`nolo.noise_rates.NREst` (``engine="numpy"``) drives it one epoch per call, as
scikit-learn's ``partial_fit``; tests/noise_rates/test_am_nrest_engine.py checks that both engines give the same
weights and estimates.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from nolo._jit import njit

__all__ = ["AdamMLP"]


@njit(cache=True, nogil=True, error_model="numpy")
def _adam_update(p, m, v, g, decay, alpha, nb, b1, c1, b2, c2, eps, neg_lr):
    """In place, element by element: with ``decay``, g <- (g + alpha p) / nb (the L2 term and the
    minibatch mean of a weight matrix's gradient); m <- b1 m + c1 g, v <- b2 v + c2 g^2 (in the arrays'
    dtype); p <- p + neg_lr m / (sqrt(v) + eps) (the step in float64, rounded once into p's dtype) --
    the roundings of NumPy's whole-array expressions in scikit-learn's gradient and AdamOptimizer, in
    one pass.  ``error_model="numpy"``: IEEE division as NumPy's (no zero check), so the loop vectorises."""
    for i in range(p.shape[0]):
        gi = g[i]
        if decay:
            gi = (gi + alpha * p[i]) / nb
        mi = b1 * m[i] + c1 * gi
        vi = b2 * v[i] + c2 * (gi * gi)
        m[i] = mi
        v[i] = vi
        p[i] = p[i] + (neg_lr * mi) / (np.sqrt(vi) + eps)


class AdamMLP:
    """A binary MLP classifier (ReLU hidden layers, logistic output, L2-penalised cross-entropy)
    trained by minibatch Adam (Kingma & Ba 2015, Algorithm 1 with the bias correction folded into
    the step size) -- the arithmetic of scikit-learn's ``MLPClassifier(solver="adam")``, one epoch
    per :meth:`epoch` call as its ``partial_fit``.

    Gradient of a minibatch B (|B| = b) for layer i: (a_i^T delta_i + alpha W_i) / b and
    sum(delta_i) / b, with delta_out = sigmoid(z_out) - f and delta_{i-1} = (delta_i W_i^T) * 1[a_i > 0];
    Adam: m <- beta1 m + (1 - beta1) g, v <- beta2 v + (1 - beta2) g^2,
    W <- W - lr sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(v) + eps).
    Initialisation (Glorot uniform): W_i, b_i ~ U(+-sqrt(6 / (fan_in + fan_out))), drawn in float64
    from a ``numpy.random.RandomState`` and rounded to the network's dtype.
    """

    beta1, beta2, eps = 0.9, 0.999, 1e-8

    def __init__(self, coefs, intercepts, learning_rate: float, alpha: float, batch_size: int):
        self.coefs = coefs
        self.intercepts = intercepts
        self.learning_rate = float(learning_rate)
        self.alpha = float(alpha)
        self.batch_size = int(batch_size)
        params = coefs + intercepts
        self.t = 0
        self.ms = [np.zeros_like(p) for p in params]
        self.vs = [np.zeros_like(p) for p in params]
        c = coefs[0].dtype.type
        self._consts = (c(self.beta1), c(1 - self.beta1), c(self.beta2), c(1 - self.beta2), c(self.eps))
        self._alpha = c(self.alpha)
        # flat views of the parameters (updated in place) and of their Adam moments
        self._flat = [(p.reshape(-1), m.reshape(-1), v.reshape(-1), k < len(coefs))
                      for k, (p, m, v) in enumerate(zip(params, self.ms, self.vs))]

    @classmethod
    def glorot(cls, layer_units, rs: np.random.RandomState, dtype, **kw) -> "AdamMLP":
        coefs, intercepts = [], []
        for fan_in, fan_out in zip(layer_units[:-1], layer_units[1:]):
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            coefs.append(rs.uniform(-bound, bound, (fan_in, fan_out)).astype(dtype, copy=False))
            intercepts.append(rs.uniform(-bound, bound, fan_out).astype(dtype, copy=False))
        return cls(coefs, intercepts, **kw)

    def predict(self, U: np.ndarray) -> np.ndarray:
        """P(f = 1 | u) for every row of U (in the network's dtype)."""
        a = U
        last = len(self.coefs) - 1
        for i, (W, b) in enumerate(zip(self.coefs, self.intercepts)):
            a = a @ W
            a += b
            if i < last:
                np.maximum(a, 0, out=a)
        expit(a, out=a)
        return a.ravel()

    def epoch(self, U: np.ndarray, f: np.ndarray) -> None:
        """One pass over the rows of U in order (the caller shuffles), minibatches of ``batch_size``;
        ``f`` is the (n, 1) target column in U's dtype."""
        n, bs, L = U.shape[0], self.batch_size, len(self.coefs)
        for start in range(0, n, bs):
            Xb, fb = U[start:start + bs], f[start:start + bs]
            nb = Xb.shape[0]
            acts = [Xb]
            for i in range(L):
                a = acts[i] @ self.coefs[i]
                a += self.intercepts[i]
                if i < L - 1:
                    np.maximum(a, 0, out=a)
                else:
                    expit(a, out=a)
                acts.append(a)
            delta = acts[L] - fb
            gc, gb = [None] * L, [None] * L
            for i in range(L - 1, -1, -1):
                gc[i] = acts[i].T @ delta  # + alpha W and / nb inside _adam_update
                gb[i] = np.sum(delta, axis=0) / nb
                if i > 0:
                    delta = delta @ self.coefs[i].T
                    delta[acts[i] == 0] = 0
            self._adam_step(gc, gb, nb)

    def _adam_step(self, coef_grads, intercept_grads, nb: int) -> None:
        b1, b2 = self.beta1, self.beta2
        self.t += 1
        neg_lr = -float(self.learning_rate * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t))
        nb = self._alpha.dtype.type(nb)
        for (p, m, v, decay), g in zip(self._flat, coef_grads + intercept_grads):
            _adam_update(p, m, v, g.reshape(-1), decay, self._alpha, nb, *self._consts, neg_lr)

    def weights(self) -> list:
        return [c.copy() for c in self.coefs] + [b.copy() for b in self.intercepts]
