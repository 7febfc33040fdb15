"""Compiled (numba, ``cache=True``) per-round pieces and whole-stream loops of the bandit learners.

Everything random is one uniform ``Generator.random()`` per decision, drawn
from the *same* numpy Generator objects the Python API uses (numba shares
the bit generator's state), in the same order:

* environment generator: ``u_index`` (only for ``order="replace"``; a new
  permutation for ``order="permute"`` draws ``n - 1`` uniforms at the start of
  each pass), then ``u_flip`` for the feedback channel -- every round, also
  when the flip rates are 0, so noise settings share their random numbers;
* learner generator: ``u_play`` for the played label (not for the Perceptron).

The per-round Python API (``act``/``learn``) calls the very same compiled
functions, so the whole-stream path and the per-round path give bit-identical
weights for the same seeds.  Scores are accumulated in a fixed order over the
non-zero coordinates (no fast-math reassociation), which makes the result
independent of the calling context.

Weights are held as ``Wt`` of shape ``(d, K)`` (the transpose view of the
learner's Fortran-ordered ``W_`` of shape ``(K, d)``): a score update
``s += Wt[j] * x_j`` is a contiguous K-vector operation per non-zero ``x_j``.

Algorithm codes: 0 Perceptron (AM eq. 2), 1 exploration with an unbiased
feedback estimate (Banditron = RCNBF with rates 0; RCNBF AM eq. 5), 2 BPA,
3 diagonal SOBA.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PERCEPTRON, EXP_H, BPA, SOBA = 0, 1, 2, 3
ORDER_REPLACE, ORDER_PERMUTE, ORDER_CYCLE = 0, 1, 2

# status codes returned by the stream loops
OK, NONFINITE = 0, 1


@njit(cache=True, nogil=True)
def gather_dense(x, idx, val):
    """Write the non-zero coordinates of the dense row ``x`` into ``idx``/``val``; return their number.

    Branch-free (every coordinate is written, the count advances only on a non-zero), so
    sparse binary rows such as SynSep's do not pay a mispredicted branch per non-zero.
    """
    n = 0
    for j in range(x.shape[0]):
        v = x[j]
        idx[n] = j
        val[n] = v
        n += v != 0.0
    return n


@njit(cache=True, nogil=True)
def scores(Wt, idx, val, nnz, s):
    """s[k] = sum over non-zeros of Wt[j, k] * x_j, accumulated in increasing j."""
    K = Wt.shape[1]
    for k in range(K):
        s[k] = 0.0
    for t in range(nnz):
        j = idx[t]
        v = val[t]
        for k in range(K):
            s[k] += Wt[j, k] * v


@njit(cache=True, nogil=True)
def argmax_first(s):
    """Index of the largest score, ties to the smallest index (as numpy/MATLAB argmax)."""
    best = 0
    for k in range(1, s.shape[0]):
        if s[k] > s[best]:
            best = k
    return best


@njit(cache=True, nogil=True)
def draw_label(u, yhat, gamma, K):
    """Play from P(r) = (1 - gamma) 1[r = yhat] + gamma / K with the single uniform ``u`` (AM eq. 3).

    ``u < 1 - gamma`` plays ``yhat``; otherwise the label ``floor((u - (1 - gamma)) / gamma * K)``,
    uniform over all K labels.
    """
    keep = 1.0 - gamma
    if u < keep:
        return yhat
    r = int((u - keep) / gamma * K)
    if r >= K:
        r = K - 1
    return r


@njit(cache=True, nogil=True)
def play_probability(r, yhat, gamma, K):
    """P(r) of AM eq. (3)."""
    p = gamma / K
    if r == yhat:
        p += 1.0 - gamma
    return p


@njit(cache=True, nogil=True)
def flip(bit, u, rho0, rho1):
    """Noisy feedback: a true 1 becomes 0 when u < rho1, a true 0 becomes 1 when u < rho0 (AM section 3)."""
    if bit == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


@njit(cache=True, nogil=True)
def shuffle(perm, rng):
    """Fisher-Yates with one uniform per position (n - 1 draws), from the environment generator."""
    n = perm.shape[0]
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        if j > i:
            j = i
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(cache=True, nogil=True, inline="always")
def next_index(order, n, perm, pos, rng):
    """The next example index of the stream; ``pos`` is a one-element position counter."""
    if order == ORDER_REPLACE:
        i = int(rng.random() * n)
        if i >= n:
            i = n - 1
        return i
    p = pos[0]
    if p % n == 0 and order == ORDER_PERMUTE:
        shuffle(perm, rng)
    pos[0] = p + 1
    if order == ORDER_PERMUTE:
        return perm[p % n]
    return p % n


# ---------------------------------------------------------------------------------------------
# updates (each returns False when a coefficient is not finite; nothing is written then)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def update_perceptron(Wt, idx, val, nnz, y, yhat):
    """AM eq. (2): on a mistake, row y += x and row yhat -= x."""
    if y == yhat:
        return True
    for t in range(nnz):
        j = idx[t]
        v = val[t]
        Wt[j, y] += v
        Wt[j, yhat] -= v
    return True


@njit(cache=True, nogil=True)
def update_exp_h(Wt, idx, val, nnz, yhat, played, feedback, gamma, rho0a, beta_a):
    """AM eq. (5): row played += x h(f)/P(played), row yhat -= x, with h(f) = (f - rho0)/beta (math-notes item 11).

    With rho0a = 0 and beta_a = 1 this is exactly the Banditron update (h(f) = f).
    """
    K = Wt.shape[1]
    h = (feedback - rho0a) / beta_a
    c = h / play_probability(played, yhat, gamma, K)
    if not np.isfinite(c):
        return False
    for t in range(nnz):
        j = idx[t]
        v = val[t]
        Wt[j, played] += c * v
        Wt[j, yhat] -= v
    return True


@njit(cache=True, nogil=True)
def update_bpa(Wt, idx, val, nnz, s, played, feedback):
    """BPA (baselines.md section 3): binary PA step on row ``played`` with sigma = 2f - 1."""
    sigma = 2.0 * feedback - 1.0
    loss = 1.0 - sigma * s[played]
    if loss <= 0.0:
        return True
    nrm2 = 0.0
    for t in range(nnz):
        nrm2 += val[t] * val[t]
    if nrm2 == 0.0:
        return True
    tau = loss / nrm2
    if not np.isfinite(tau):
        return False
    c = tau * sigma
    for t in range(nnz):
        Wt[idx[t], played] += c * val[t]
    return True


@njit(cache=True, nogil=True)
def update_soba(Wt, Tht, At, budget, idx, val, nnz, s, yhat, played, feedback, gamma):
    """Diagonal SOBA (baselines.md section 4.2, paper rule): learn only from confirmed labels.

    ybar = best competitor of ``played``; p = P(played); Delta = s[ybar] - s[played];
    q = (1/p) sum x_j^2 (1/a[ybar,j] + 1/a[played,j]); m = ((Delta^2 + 2 Delta)/p) / (1 + q);
    update when budget + m >= 0: a rows += x^2/p, theta[ybar] -= x/p, theta[played] += x/p,
    W = theta / a on the two rows, budget += m.
    """
    if feedback != 1:
        return True
    K = Wt.shape[1]
    ybar = -1
    for k in range(K):
        if k != played and (ybar < 0 or s[k] > s[ybar]):
            ybar = k
    p = play_probability(played, yhat, gamma, K)
    delta = s[ybar] - s[played]
    q = 0.0
    for t in range(nnz):
        j = idx[t]
        v = val[t]
        q += v * v * (1.0 / At[j, ybar] + 1.0 / At[j, played])
    q /= p
    m = (delta * delta + 2.0 * delta) / p / (1.0 + q)
    if not np.isfinite(m):
        return False
    if budget[0] + m < 0.0:
        return True
    inv_p = 1.0 / p
    for t in range(nnz):
        j = idx[t]
        v = val[t]
        v2 = v * v * inv_p
        At[j, ybar] += v2
        At[j, played] += v2
        Tht[j, ybar] -= v * inv_p
        Tht[j, played] += v * inv_p
        Wt[j, ybar] = Tht[j, ybar] / At[j, ybar]
        Wt[j, played] = Tht[j, played] / At[j, played]
    budget[0] += m
    return True


@njit(cache=True, nogil=True, inline="always")
def update(algo, Wt, Tht, At, budget, idx, val, nnz, s, y, yhat, played, feedback, gamma, rho0a, beta_a):
    """Dispatch one round's update; ``y`` is used by the Perceptron only (full information)."""
    if algo == PERCEPTRON:
        return update_perceptron(Wt, idx, val, nnz, y, yhat)
    if algo == EXP_H:
        return update_exp_h(Wt, idx, val, nnz, yhat, played, feedback, gamma, rho0a, beta_a)
    if algo == BPA:
        return update_bpa(Wt, idx, val, nnz, s, played, feedback)
    return update_soba(Wt, Tht, At, budget, idx, val, nnz, s, yhat, played, feedback, gamma)


@njit(cache=True, nogil=True, inline="always")
def act(algo, Wt, idx, val, nnz, s, gamma, rng):
    """Greedy label and played label of one round (the Perceptron plays greedily, drawing nothing)."""
    scores(Wt, idx, val, nnz, s)
    yhat = argmax_first(s)
    if algo == PERCEPTRON:
        return yhat, yhat
    return yhat, draw_label(rng.random(), yhat, gamma, Wt.shape[1])


# ---------------------------------------------------------------------------------------------
# whole streams
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _round(algo, Wt, Tht, At, budget, idx, val, nnz, s, yi, gamma, rho0a, beta_a, rho0, rho1, env_rng, lrn_rng, counters):
    yhat, played = act(algo, Wt, idx, val, nnz, s, gamma, lrn_rng)
    u = env_rng.random()
    truth = 1 if played == yi else 0
    fb = flip(truth, u, rho0, rho1)
    ok = update(algo, Wt, Tht, At, budget, idx, val, nnz, s, yi, yhat, played, fb, gamma, rho0a, beta_a)
    if played != yi:
        counters[1] += 1
    if yhat != yi:
        counters[2] += 1
    return ok, played, fb


@njit(cache=True, nogil=True, inline="always")
def _record(counters, checkpoints, out_played, out_greedy):
    c = counters[3]
    while c < checkpoints.shape[0] and checkpoints[c] == counters[0]:
        out_played[c] = counters[1]
        out_greedy[c] = counters[2]
        c += 1
    counters[3] = c


@njit(cache=True, nogil=True)
def stream_dense(algo, Wt, Tht, At, budget, X, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
                 gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
                 log_index, log_played, log_feedback):
    """Run ``n_rounds`` rounds over the dense rows of X.

    ``counters`` = [rounds done, played mistakes, greedy mistakes, next checkpoint slot].  When
    ``log_index`` has length >= n_rounds, round r's (example index, played label, noisy
    feedback) is written to slot r (RCINE's block log).  Returns (status, rounds done in this call).
    """
    n, d = X.shape
    K = Wt.shape[1]
    idx = np.empty(d, dtype=np.int64)
    val = np.empty(d, dtype=X.dtype)
    s = np.empty(K, dtype=Wt.dtype)
    do_log = log_index.shape[0] >= n_rounds
    for r in range(n_rounds):
        i = next_index(order, n, perm, pos, env_rng)
        nnz = gather_dense(X[i], idx, val)
        ok, played, fb = _round(algo, Wt, Tht, At, budget, idx, val, nnz, s, y[i], gamma, rho0a, beta_a,
                                rho0, rho1, env_rng, lrn_rng, counters)
        if not ok:
            return NONFINITE, r
        counters[0] += 1
        if do_log:
            log_index[r] = i
            log_played[r] = played
            log_feedback[r] = fb
        _record(counters, checkpoints, out_played, out_greedy)
    return OK, n_rounds


@njit(cache=True, nogil=True)
def stream_csr(algo, Wt, Tht, At, budget, indptr, indices, data, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
               gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
               log_index, log_played, log_feedback):
    """As :func:`stream_dense` for a CSR matrix with sorted indices (no per-round gather)."""
    n = indptr.shape[0] - 1
    K = Wt.shape[1]
    s = np.empty(K, dtype=Wt.dtype)
    do_log = log_index.shape[0] >= n_rounds
    for r in range(n_rounds):
        i = next_index(order, n, perm, pos, env_rng)
        a, b = indptr[i], indptr[i + 1]
        ok, played, fb = _round(algo, Wt, Tht, At, budget, indices[a:b], data[a:b], b - a, s, y[i], gamma, rho0a,
                                beta_a, rho0, rho1, env_rng, lrn_rng, counters)
        if not ok:
            return NONFINITE, r
        counters[0] += 1
        if do_log:
            log_index[r] = i
            log_played[r] = played
            log_feedback[r] = fb
        _record(counters, checkpoints, out_played, out_greedy)
    return OK, n_rounds


@njit(cache=True, nogil=True)
def predict_dense(Wt, X, out):
    """Greedy labels argmax_k (W x)_k of every row, with the same score arithmetic as the learners."""
    n, d = X.shape
    idx = np.empty(d, dtype=np.int64)
    val = np.empty(d, dtype=X.dtype)
    s = np.empty(Wt.shape[1], dtype=Wt.dtype)
    for i in range(n):
        nnz = gather_dense(X[i], idx, val)
        scores(Wt, idx, val, nnz, s)
        out[i] = argmax_first(s)


@njit(cache=True, nogil=True)
def predict_csr(Wt, indptr, indices, data, out):
    s = np.empty(Wt.shape[1], dtype=Wt.dtype)
    for i in range(indptr.shape[0] - 1):
        a, b = indptr[i], indptr[i + 1]
        scores(Wt, indices[a:b], data[a:b], b - a, s)
        out[i] = argmax_first(s)
