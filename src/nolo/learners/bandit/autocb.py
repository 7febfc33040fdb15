"""AutoCB: nolo's default learner for noisy bandit feedback -- FastCB's exploration over three regression oracles that
learn from every round on online-normalised inputs, the policy following the one with the lowest progressive-
validation loss.

Why this shape.  Every flip-aware learner of :mod:`nolo.learners.bandit` plays from a regression of the feedback bit
(E[f_rho | x, a] = rho0 + kappa P(y = a | x), an increasing affine map of the clean reward, AM section 3), so the
choice that decides its error is the regression model.  No single model is best everywhere: a linear model learns
fastest where the classes are linearly separable, a kernel model where they are not, and on a stream that shows the
same context again (a finite data set replayed, a categorical context) a table of what each label earned there
beats both.  AutoCB keeps one of each, all fitted on every round's (context, played label, bit):

1. **linear** -- per-class ridge regression (recursive least squares, :func:`nolo.learners.bandit.oracles.ridge_update`)
   on z = [(x - mu) / sd, 1]; with more than ``ridge_max_features`` features the Frequent-Directions sketched Newton
   step (:mod:`nolo.learners.bandit.sketch_oracle`), and with more than ``dense_max_features`` the VW-style normalised
   adaptive gradient step on the raw sparse row (:func:`nolo.learners.bandit.oracles.ogd_update`, per-feature
   scale-free by construction);
2. **kernel** -- per-class ridge regression on ``n_components`` Nystroem coordinates of a Gaussian kernel (Williams &
   Seeger 2001): the first ``n_landmarks`` contexts seen are the landmarks, the bandwidth is the median heuristic on
   them, the coordinates are kernel PCA on their Gram matrix (as :class:`nolo.kernels.NystroemFeatures`, but built
   online from the stream); inputs are the normalised z clipped to [-``clip``, ``clip``], frozen when the map is
   built; only on inputs of at most ``kernel_max_features`` features;
3. **memory** -- per (exact context, label) the count n and sum S of the bits seen, predicting
   (S + beta r_base) / (n + beta), shrunk towards the better of the first two (r_base) with ``beta =
   memory_beta / kappa^2`` pseudo-observations (the bit's signal is kappa times the clean one's); an open-addressed
   table of ``memory_size`` entries keyed by a 64-bit hash of the row's non-zeros and the label.

**Selection** (champion / challenger, as Vowpal Wabbit's ``--automl`` scores its configurations): before each update
every candidate's prediction for the played label is scored against the bit -- progressive validation, so no label
is ever read and every candidate is scored on the same rounds -- in an exponentially weighted mean of the squared
error with time constant max(``select_window``, t / 4); the policy plays from the candidate whose mean is lowest.

**Exploration** is FastCB's (Foster & Krishnamurthy, NeurIPS 2021; :mod:`nolo.learners.bandit.fastcb`): inverse-gap
weighting with g_t = ``gamma_scale`` t^``gamma_exponent``, divided by the greedy label's predicted clean loss
(clipped below by ``loss_floor`` and by a confidence width), on the champion's predictions of the raw bit (the
oracles fit the bit itself, SquareCB's correction "none": rescaling by known rates would only rescale the gaps,
and it lets unknown rates be estimated from the same predictions).  In the sketched regime (below) the linear
champion's scores first get LinUCB's confidence widths, ``optimism`` x 1/2 x sqrt(z^T A_a^{-1} z) from the FD-SON
sketch (Li et al., WWW 2010, Algorithm 1; Kuzborskij, Cella & Cesa-Bianchi, AISTATS 2019), so the greedy label is
the optimistic one and the gaps are between optimistic scores, while the greedy loss that scales the exploration is
read off the label's prediction without its width (an optimistic top read as a loss near 0 would stop the
exploration the rate estimate's propensities need); the predictions themselves (``decision_function``,
``predict``) carry no width.  On sparse binary rows (the SynSep tuning draw) this more than halved the error under
noise at 10^4 rounds; on z-scored rows (the ridge regime) it explored worse on the tuning draws, so it is off there.
**Unknown rates** (``estimate_rates=True``) are
read off the champion's predictions as SquareCB reads them (:mod:`nolo.learners.bandit.rate_oracle`) and enter the
greedy loss and the memory's shrinkage.

**Scale-free inputs.**  At most ``center_max_features`` features (default 256): the linear and kernel oracles see
z = (x - mu) / sd per feature (a feature that has not varied yet is 0), mu and sd running means and standard
deviations (Welford) re-read at rows 2, 4, 8, ... and adopted when one has moved by more than ``refresh_tol``
(relative to the new sd).  Adopting them re-expresses the ridge state exactly in the new coordinates, z' = M z
with M = [[diag(a), c], [0, 1]] (a = sd_old / sd_new, c = (mu_old - mu_new) / sd_new): the data part of the
precision, A - lam I, becomes M (A - lam I) M^T, its moment vector M b, and the prior is lam I again in the new
coordinates -- so multiplying a column by 10^k, or adding a constant to it, changes nothing but rounding, and the
prior never shrinks an informative direction because of its units (O(K d^3) per adoption, a handful per run).
Above ``center_max_features`` (up to ``dense_max_features``): each feature is divided by the largest |x_j| seen so
far, as VW's normalised updates do, without centring -- sparse rows stay sparse and binary columns binary (z-scoring
up-weights rare binary features by 1/sqrt(p), which on SynSep-like rows cost a third of the accuracy under heavy
noise on the tuning draws) -- and the sketched oracle's prior is ``lam_scaled`` / kappa^2 (the bit's signal is
kappa times the clean one's); its rows are mapped by M and the prior moved when an estimated kappa moves it
(approximate: alpha I is not mapped).  Beyond ``dense_max_features`` the OGD oracle normalises per feature itself.

Cost per round (dense regime, d features, K labels, r components, M landmarks): O(d K) for the linear scores, O(d^2)
for the ridge step (O(m d) sketched), O(M d + M r + r K) for the kernel coordinates and scores, O(r^2) for its
step, O(nnz + K) for the memory; ``benchmarks/bench_default_learner.py`` measures it beside Vowpal Wabbit.

This combination is nolo's: no paper proposes it.  Cite FastCB for the exploration, SquareCB (Foster & Rakhlin, ICML
2020) for the reduction to regression, and docs/default-learner.md for the design and its measurements.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from nolo._jit import njit
from nolo._validation import check_flip_rates, check_int, check_scalar, check_state_bytes
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.learners.bandit import fastcb as F
from nolo.learners.bandit import linucb as U
from nolo.learners.bandit import oracles as O
from nolo.learners.bandit import rate_oracle as RO
from nolo.learners.bandit import squarecb as S
from nolo.learners.bandit._linear import OneBitBanditLearner, _record_arrays
from nolo.learners.bandit._simd import padded, scores_padded
from nolo.learners.bandit._stream import row_of
from nolo.learners.base import check_state_column_sqnorms, check_state_range, check_state_spd, check_state_sqnorm

__all__ = ["AutoCB", "AutoCBState", "default_learner", "CANDIDATES", "row_hash"]

# numba's internal pedantic check flags a variable of the inlined ridge step when the stream loop is compiled with this
# record; the compiled code is right (per-round == stream is tested) and the message tells a user nothing
warnings.filterwarnings("ignore", message=r"variable '.*' is not in scope", category=NumbaIRAssumptionWarning)

#: the candidate regression models, in the order of ``candidate_losses_``
CANDIDATES = ("linear", "kernel", "memory")
_LIN, _KER, _MEM = 0, 1, 2
#: probes of the memory's open addressing before the least-counted probed entry is replaced
_PROBES = 16
#: the kernel's eigenvalues below this fraction of the largest are dropped (their coordinates stay 0)
_EIG_RTOL = 1e-10


# ---------------------------------------------------------------------------------------------
# the record
# ---------------------------------------------------------------------------------------------


class NormState(NamedTuple):
    """The online normaliser (dense regime; zero-length arrays otherwise): ``stats`` (3, d) = running mean, sum of
    squared deviations (Welford) and largest |x_j|; ``coef`` (4, d) = mu, sd in use, 1/sd (0 for a feature that has not
    varied) and -mu/sd, so z = coef[3] + x * coef[2]; ``count`` (2,) = rows counted, row of the next re-read;
    ``center``: z = (x - mu) / sd, else z = x / max|x| (mu = 0, sd = the largest |x_j| so far: sparse rows stay sparse
    and binary columns as they are); ``prior`` (1,): the ridge prior now in the linear oracle -- ``lam`` when centred,
    else lam / kappa^2 (kappa = 1 - rho0 - rho1 of the rates in use; re-expressed when an estimate moves it)."""

    stats: np.ndarray
    coef: np.ndarray
    count: np.ndarray
    tol: float
    lam: float
    center: bool
    prior: np.ndarray


class KernelState(NamedTuple):
    """The Nystroem candidate: ``on`` (1,) 0 collecting landmarks, 1 built, -1 never (degenerate landmarks or
    disabled); ``buf`` (M, d) the first M raw rows; ``land`` (d, M) the landmarks in clipped z (column u is landmark
    u) and ``lnorm`` their squared norms; ``proj`` (M, r) the kernel-PCA map (transposed); ``kcoef`` (2, d) the frozen 1/sd and -mu/sd; ``inv2h2`` (1,);
    ``P`` (K, r + 1, r + 1) and ``Wt`` (r + 1, K) the per-class ridge state on [phi, 1]; scratch ``zc`` (d,),
    ``kx`` (M,), ``phi`` (r,), ``ridx`` (r,) = 0..r-1."""

    on: np.ndarray
    buf: np.ndarray
    land: np.ndarray
    lnorm: np.ndarray
    proj: np.ndarray
    kcoef: np.ndarray
    inv2h2: np.ndarray
    P: np.ndarray
    Wt: np.ndarray
    clip: float
    lam: float
    zc: np.ndarray
    kx: np.ndarray
    phi: np.ndarray
    ridx: np.ndarray


class MemoryState(NamedTuple):
    """The exact-context memory: ``keys`` (C,) 64-bit keys (0: empty), ``cnt``/``tot`` (C,) count and sum of the bits;
    ``beta`` the shrinkage multiplier; scratch ``hx`` (1,) the row's hash and ``slot`` (K,) each label's entry (-1:
    none)."""

    keys: np.ndarray
    cnt: np.ndarray
    tot: np.ndarray
    beta: float
    hx: np.ndarray
    slot: np.ndarray


@njit(cache=True, nogil=True, inline="always")
def _rates(state):
    if state.estimate:
        return state.est[0], state.est[1]
    return state.rho0, state.rho1


@njit(cache=True, nogil=True, inline="always")
def _mix(h):
    """splitmix64's finaliser (Steele, Lea & Flood 2014): a bijection of the 64-bit integers that scatters bits."""
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@njit(cache=True, nogil=True)
def row_hash(idx, val, lo, hi):
    """A 64-bit hash of a row's non-zeros (indices and the exact bits of their values), the same for a dense row and
    its canonical CSR form.  Two rows collide with probability about 2^-64."""
    h = np.uint64(0x9E3779B97F4A7C15)
    bits = val[lo:hi].view(np.uint64)
    for t in range(hi - lo):
        h = _mix(h ^ np.uint64(idx[lo + t]))
        h = _mix(h ^ bits[t])
    return h


@njit(cache=True, nogil=True, inline="always")
def _key(hx, k):
    key = _mix(hx ^ (np.uint64(k) * np.uint64(0xD6E8FEB86659FD93) + np.uint64(1)))
    return np.int64(key) if key != np.uint64(0) else np.int64(1)


@njit(cache=True, nogil=True)
def memory_find(mem, key):
    """The entry holding ``key``, or -1."""
    mask = np.int64(mem.keys.shape[0] - 1)
    s = key & mask
    for _ in range(_PROBES):
        kk = mem.keys[s]
        if kk == key:
            return s
        if kk == 0:
            return -1
        s = (s + 1) & mask
    return np.int64(-1)


@njit(cache=True, nogil=True)
def memory_add(mem, key, slot, bit):
    """Count the bit under ``key`` (at ``slot`` when it is already stored): the first empty probed entry, or the
    least-counted one of the probes when all are taken."""
    if slot < 0:
        mask = np.int64(mem.keys.shape[0] - 1)
        s = key & mask
        best, least = s, np.inf
        for _ in range(_PROBES):
            if mem.keys[s] == 0:
                best = s
                break
            if mem.cnt[s] < least:
                best, least = s, mem.cnt[s]
            s = (s + 1) & mask
        slot = best
        mem.keys[slot] = key
        mem.cnt[slot] = 0.0
        mem.tot[slot] = 0.0
    mem.cnt[slot] += 1.0
    mem.tot[slot] += bit


@njit(cache=True, nogil=True)
def memory_probe_start(idx, val, nnz, k, capacity):
    """The first entry :func:`memory_add` probes for label ``k`` of the row (non-zeros ``idx/val[:nnz]``); it writes
    only within the ``_PROBES`` entries from there (wrapping), which is what a round's undo must save."""
    return _key(row_hash(idx, val, 0, nnz), k) & np.int64(capacity - 1)


@njit(cache=True, nogil=True)
def memory_windows(rows, played, capacity, out):
    """out[i * _PROBES + j] = the j-th entry :func:`memory_add` may write for row ``i`` of ``rows`` playing
    ``played[i]``: the entries of the memory a ``learn_many`` of those rows can write."""
    mask = np.int64(capacity - 1)
    for i in range(played.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        s = memory_probe_start(idx[lo:hi], val[lo:hi], hi - lo, played[i], capacity)
        for j in range(_PROBES):
            out[i * _PROBES + j] = (s + j) & mask


# ---------------------------------------------------------------------------------------------
# the candidates' predictions (the core's ``adjust``)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _fill_z(coef, idx, val, lo, hi, z):
    """z = (x - mu) / sd for the row (dense): coef[3] + x * coef[2]."""
    inv, base = coef[2], coef[3]
    for j in range(z.shape[0]):
        z[j] = base[j]
    for t in range(lo, hi):
        j = idx[t]
        z[j] += val[t] * inv[j]


@njit(cache=True, nogil=True)
def _kernel_coords(kern, idx, val, lo, hi):
    """phi = proj k(x, landmarks) for the row, on its clipped z under the map's frozen normalisation.  Both products
    run as sums of scaled rows (``land`` stored (d, M), ``proj`` (M, r)): vector operations with no reduction, which
    the compiler vectorises without reordering any sum."""
    zc, kinv, kbase, c = kern.zc, kern.kcoef[0], kern.kcoef[1], kern.clip
    for j in range(zc.shape[0]):
        zc[j] = kbase[j]
    for t in range(lo, hi):
        j = idx[t]
        zc[j] += val[t] * kinv[j]
    zz = 0.0
    for j in range(zc.shape[0]):
        v = zc[j]
        if v > c:
            v = c
        elif v < -c:
            v = -c
        zc[j] = v
        zz += v * v
    land, lnorm, kx, g = kern.land, kern.lnorm, kern.kx, kern.inv2h2[0]
    M, d = kx.shape[0], zc.shape[0]
    for u in range(M):
        kx[u] = 0.0
    j = 0
    while j + 4 <= d:  # four rows per pass: a quarter of the loads and stores of kx
        l0, l1, l2, l3 = land[j], land[j + 1], land[j + 2], land[j + 3]
        v0, v1, v2, v3 = zc[j], zc[j + 1], zc[j + 2], zc[j + 3]
        for u in range(M):
            kx[u] += ((l0[u] * v0 + l1[u] * v1) + (l2[u] * v2 + l3[u] * v3))
        j += 4
    while j < d:
        lj, v = land[j], zc[j]
        for u in range(M):
            kx[u] += lj[u] * v
        j += 1
    for u in range(M):
        d2 = zz + lnorm[u] - 2.0 * kx[u]
        if d2 < 0.0:
            d2 = 0.0
        kx[u] = math.exp(-d2 * g)
    proj, phi = kern.proj, kern.phi
    r = phi.shape[0]
    for c in range(r):
        phi[c] = 0.0
    u = 0
    while u + 4 <= M:
        p0, p1, p2, p3 = proj[u], proj[u + 1], proj[u + 2], proj[u + 3]
        k0, k1, k2, k3 = kx[u], kx[u + 1], kx[u + 2], kx[u + 3]
        for c in range(r):
            phi[c] += ((p0[c] * k0 + p1[c] * k1) + (p2[c] * k2 + p3[c] * k3))
        u += 4
    while u < M:
        pu, v = proj[u], kx[u]
        for c in range(r):
            phi[c] += pu[c] * v
        u += 1


@njit(cache=True, nogil=True)
def autocb_adjust(state, Wt, idx, val, lo, hi, s, K):
    """Every candidate's predictions of the bit for the row into ``state.preds``, the champion into ``state.champ``,
    and the champion's predictions into the core's scores ``s`` (in the sparse regime ``s`` holds W x on entry)."""
    P = state.preds
    d = Wt.shape[0] - 1
    if state.dense:
        z = state.z
        _fill_z(state.norm.coef, idx, val, lo, hi, z)
        for k in range(K):
            P[_LIN, k] = Wt[d, k]
        for j in range(d):
            zj = z[j]
            if zj != 0.0:
                row = Wt[j]
                for k in range(K):
                    P[_LIN, k] += row[k] * zj
    else:
        for k in range(K):
            P[_LIN, k] = s[k] + Wt[d, k]
    kern = state.kern
    ker_on = kern.on[0] > 0.0
    if ker_on:
        _kernel_coords(kern, idx, val, lo, hi)
        r = kern.phi.shape[0]
        Wk, phi = kern.Wt, kern.phi
        for k in range(K):
            P[_KER, k] = Wk[r, k]
        for c in range(r):
            v = phi[c]
            row = Wk[c]
            for k in range(K):
                P[_KER, k] += row[k] * v
    loss = state.loss
    base = _KER if (ker_on and loss[_KER] < loss[_LIN]) else _LIN
    mem = state.mem
    r0, r1 = _rates(state)
    kappa = 1.0 - r0 - r1
    beta = mem.beta / (kappa * kappa)
    hx = row_hash(idx, val, lo, hi)
    mem.hx[0] = np.int64(hx)
    for k in range(K):
        slot = memory_find(mem, _key(hx, k))
        mem.slot[k] = slot
        b = P[base, k]
        if slot >= 0:
            P[_MEM, k] = (mem.tot[slot] + beta * b) / (mem.cnt[slot] + beta)
        else:
            P[_MEM, k] = b
    champ = _LIN
    if ker_on and loss[_KER] < loss[champ]:
        champ = _KER
    if loss[_MEM] < loss[champ]:
        champ = _MEM
    state.champ[0] = champ
    for k in range(K):
        s[k] = P[champ, k]
    if state.optimism > 0.0:
        if champ == _LIN:  # (widths on the memory's unseen pairs too erred more on the MNIST tuning draws)
            _add_widths(state, idx, val, lo, hi, s, K)
        else:
            for k in range(K):
                state.width[k] = 0.0


@njit(cache=True, nogil=True, inline="always")
def autocb_weight(state, s, K, ahat, t):
    """FastCB's gap weight g_t / l_hat (:func:`nolo.learners.bandit.fastcb.first_order_weight`), the greedy loss
    read off the greedy label's prediction *without* its confidence width: the widths choose the label and widen
    the gaps, but an optimistic top score read as a loss near 0 would stop the exploration the rate estimate's
    propensities need (on the MNIST tuning draws it then read rho0 at its cap)."""
    return S.gap_weight(state, t) / F.greedy_loss(state, s[ahat] - state.width[ahat], K, t)


# not inline="always": numba 0.68 has dropped writes of inlined helpers inside the compiled stream loop (above)
@njit(cache=True, nogil=True)
def _scaled_nonzeros(state, idx, val, lo, hi):
    """The row's non-zeros scaled by 1 / max |x_j| (the scale-only regime's z, sparse) into ``state.zi``,
    ``state.zv``; returns their count (a column not seen non-zero yet is dropped)."""
    inv = state.norm.coef[2]
    n = 0
    for tt in range(lo, hi):
        j = idx[tt]
        if inv[j] != 0.0:
            state.zi[n] = j
            state.zv[n] = val[tt] * inv[j]
            n += 1
    return n


@njit(cache=True, nogil=True)
def _add_widths(state, idx, val, lo, hi, s, K):
    """s[k] += optimism * sigma * sqrt(z^T A_k^{-1} z) from the linear oracle's inverse (ridge) or sketch (FD-SON) on
    the row as that oracle sees it (z-scored, or scaled by max |x_j|), sigma = 1/2 the raw bit's largest standard
    deviation: LinUCB's width (Li et al. 2010, Algorithm 1; from the sketch, Kuzborskij et al. 2019), kept in
    ``state.width``.  Nothing where the oracle keeps no inverse (the sparse regime's OGD)."""
    if not state.dense:
        return
    d = state.z.shape[0]
    c = 0.5 * state.optimism
    if state.norm.center:
        ii, vv, n = state.allidx, state.z, d
    else:
        ii, vv, n = state.zi, state.zv, _scaled_nonzeros(state, idx, val, lo, hi)
    for k in range(K):
        w2 = oracle_width2(state.oracle, k, ii, vv, 0, n, state.zbuf)
        w = c * math.sqrt(w2) if w2 > 0.0 else 0.0
        state.width[k] = w
        s[k] += w


# ---------------------------------------------------------------------------------------------
# re-expressing the linear state in new coordinates, building the kernel map
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def ridge_reparam(Pa, Wt, a, c, lam, lam_new):
    """The ridge state (Pa (K, D, D) inverses, Wt (D, K) weights) of z re-expressed for z' = M z, M = [[diag(a), c],
    [0, 1]], with the prior lam I replaced by lam_new I: A' = M (A - lam I) M^T + lam_new I, b' = M b (A = Pa^-1,
    b = A w), w' = A'^-1 b'."""
    K, D = Pa.shape[0], Pa.shape[1]
    d = D - 1
    M = np.eye(D)
    for j in range(d):
        M[j, j] = a[j]
        M[j, d] = c[j]
    for k in range(K):
        A = np.linalg.inv(Pa[k])
        A = 0.5 * (A + A.T)
        w = np.ascontiguousarray(Wt[:, k])
        b = A @ w
        for i in range(D):
            A[i, i] -= lam
        A2 = M @ A @ M.T
        for i in range(D):
            A2[i, i] += lam_new
        A2 = 0.5 * (A2 + A2.T)
        Pn = np.linalg.inv(A2)
        Pn = 0.5 * (Pn + Pn.T)
        Pa[k, :, :] = Pn
        wn = Pn @ (M @ b)
        for i in range(D):
            Wt[i, k] = wn[i]


@njit(cache=True, nogil=True)
def fdson_reparam(o, Wt, a, c, lam, lam_new):
    """The sketched oracle of z re-expressed for z' = M z: each sketch row (a z-vector) mapped by M, the weights by
    M^-T (the function kept), alpha_a moved by lam_new - lam (what the robust sketch added is kept) and the Gram and
    M_a recomputed; the alpha I part is not mapped by M (approximate)."""
    K, D = o.sketch.shape[0], o.sketch.shape[2]
    d = D - 1
    for k in range(K):
        o.sketch_alpha[k] += lam_new - lam
        L = int(o.sketch_rows[k])
        Sk = o.sketch[k]
        for i in range(L):
            row = Sk[i]
            rd = row[d]
            for j in range(d):
                row[j] = a[j] * row[j] + c[j] * rd
        bias = Wt[d, k]
        for j in range(d):
            bias -= c[j] / a[j] * Wt[j, k]
            Wt[j, k] = Wt[j, k] / a[j]
        Wt[d, k] = bias
        if L == 0:
            continue
        G = Sk[:L] @ Sk[:L].T
        o.sketch_gram[k, :L, :L] = G
        A = G.copy()
        for i in range(L):
            A[i, i] += o.sketch_alpha[k]
        o.sketch_inv[k, :L, :L] = np.linalg.inv(A)


def oracle_reparam(o, Wt, a, c, lam, lam_new):
    """Re-express the linear oracle's state for z' = M z, prior lam -> lam_new (compiled code only; dispatches on the
    oracle's type)."""
    raise NotImplementedError("compiled code only")



@overload(oracle_reparam)
def _ov_reparam(o, Wt, a, c, lam, lam_new):
    kind = getattr(o, "instance_class", None)
    if kind is O.RidgeOracle:
        return lambda o, Wt, a, c, lam, lam_new: ridge_reparam(o.P, Wt, a, c, lam, lam_new)
    if kind is O.FDSONOracle:
        return lambda o, Wt, a, c, lam, lam_new: fdson_reparam(o, Wt, a, c, lam, lam_new)
    return lambda o, Wt, a, c, lam, lam_new: None  # the sparse regime's OGD sees raw rows: nothing to re-express


def oracle_width2(o, a, idx, val, lo, hi, buf):
    """z^T A_a^{-1} z of the linear oracle (compiled code only; dispatches on its type): LinUCB's
    (:func:`nolo.learners.bandit.linucb.oracle_width2`), 0 for the sparse regime's OGD (it keeps no inverse)."""
    raise NotImplementedError("compiled code only")


@overload(oracle_width2, inline="always")
def _ov_width2(o, a, idx, val, lo, hi, buf):
    if getattr(o, "instance_class", None) is O.OGDOracle:
        return lambda o, a, idx, val, lo, hi, buf: 0.0
    return lambda o, a, idx, val, lo, hi, buf: U.oracle_width2(o, a, idx, val, lo, hi, buf)


@njit(cache=True, nogil=True)
def _reread(state, Wt):
    """Re-read mu and sd from the running statistics; adopt them (re-expressing the linear state) when it is the
    first read or one of them has moved by more than ``tol`` relative to the new sd."""
    norm = state.norm
    stats, coef = norm.stats, norm.coef
    n = norm.count[0]
    d = stats.shape[1]
    a = np.ones(d)
    c = np.zeros(d)
    mu_new = np.empty(d)
    sd_new = np.empty(d)
    moved = False
    for j in range(d):
        var = stats[1, j] / n
        if norm.center:
            sd = math.sqrt(var) if var > 0.0 else 0.0
            if sd <= 1e-9 * stats[2, j]:  # no variation yet beyond rounding (a constant column stays dead)
                sd = 0.0
            mu_new[j] = stats[0, j]
        else:  # scale only: the largest |x_j| so far, as VW's normalised updates (0 for a column 0 on every row)
            sd = stats[2, j]
            mu_new[j] = 0.0
        sd_new[j] = sd
        if sd == 0.0:
            continue
        if coef[1, j] == 0.0:  # came alive: z_j was 0 on every row so far (no data to re-express)
            moved = True
            continue
        a[j] = coef[1, j] / sd
        c[j] = (coef[0, j] - mu_new[j]) / sd
        if abs(a[j] - 1.0) > norm.tol or abs(c[j]) > norm.tol:
            moved = True
    lam_now = norm.prior[0]
    lam_new = norm.lam
    if not norm.center:
        r0, r1 = _rates(state)
        lam_new = norm.lam / ((1.0 - r0 - r1) * (1.0 - r0 - r1))
    if abs(lam_new / lam_now - 1.0) > norm.tol:
        moved = True
    else:
        lam_new = lam_now
    if not moved:
        return
    oracle_reparam(state.oracle, Wt, a, c, lam_now, lam_new)
    norm.prior[0] = lam_new
    for j in range(d):
        sd = sd_new[j]
        if sd == 0.0 and coef[1, j] > 0.0:  # (a variation below rounding after all: keep the coordinates in use)
            continue
        coef[0, j] = mu_new[j] if sd > 0.0 else 0.0
        coef[1, j] = sd
        coef[2, j] = 1.0 / sd if sd > 0.0 else 0.0
        coef[3, j] = -mu_new[j] / sd if sd > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _build_kernel(state):
    """The Nystroem map from the collected rows: landmarks in clipped z under the current normalisation (frozen),
    bandwidth 2 h^2 = the median squared distance between landmarks, kernel PCA on their Gram matrix (the top
    ``r`` eigenvectors scaled by eigenvalue^-1/2); the candidate's loss starts at the linear one's."""
    kern = state.kern
    coef = state.norm.coef
    M, d = kern.buf.shape[0], kern.buf.shape[1]
    r = kern.proj.shape[1]
    cl = kern.clip
    for j in range(d):
        kern.kcoef[0, j] = coef[2, j]
        kern.kcoef[1, j] = coef[3, j]
    for u in range(M):
        nn = 0.0
        for j in range(d):
            v = coef[3, j] + kern.buf[u, j] * coef[2, j]
            if v > cl:
                v = cl
            elif v < -cl:
                v = -cl
            kern.land[j, u] = v
            nn += v * v
        kern.lnorm[u] = nn
    D2 = np.empty((M, M))
    pairs = np.empty(M * (M - 1) // 2)
    q = 0
    for u in range(M):
        D2[u, u] = 0.0
        for v in range(u):
            dot = 0.0
            for j in range(d):
                dot += kern.land[j, u] * kern.land[j, v]
            e = kern.lnorm[u] + kern.lnorm[v] - 2.0 * dot
            if e < 0.0:
                e = 0.0
            D2[u, v] = e
            D2[v, u] = e
            pairs[q] = e
            q += 1
    med = np.median(pairs) if q > 0 else 0.0
    if not (med > 0.0 and np.isfinite(med)):
        kern.on[0] = -1.0  # the landmarks do not spread: no kernel
        return
    g = 1.0 / med
    kern.inv2h2[0] = g
    Kmm = np.exp(-D2 * g)
    ev, U = np.linalg.eigh(Kmm)  # ascending
    top = ev[M - 1]
    for c in range(r):
        col = M - 1 - c
        lam = ev[col] if col >= 0 else 0.0
        if col < 0 or not lam > _EIG_RTOL * top:
            for u in range(M):
                kern.proj[u, c] = 0.0
            continue
        s = 1.0 / math.sqrt(lam)
        for u in range(M):
            kern.proj[u, c] = U[u, col] * s
    kern.on[0] = 1.0
    state.loss[_KER] = state.loss[_LIN]


# ---------------------------------------------------------------------------------------------
# the round's update
# ---------------------------------------------------------------------------------------------


# not inline="always": numba 0.68 has dropped writes of inlined updates inside the compiled stream loop (see
# kernel_ts.py, linucb.py); the contract check stream_equals_rounds would catch it
@njit(cache=True, nogil=True)
def autocb_update(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Round t = clock + 1: score every candidate on the played label (progressive validation), update the three
    on the bit, count the row for the rate estimate, the normaliser and the landmarks.  False (nothing written)
    when a prediction or the normalised row is not finite."""
    P = state.preds
    K = s.shape[0]
    target = float(feedback)
    kern = state.kern
    ker_on = kern.on[0] > 0.0
    for c in range(3):
        if not np.isfinite(P[c, played]):
            return False
    if state.dense:
        zs = 0.0
        for j in range(state.z.shape[0]):
            zs += state.z[j]
        if not np.isfinite(zs):
            return False
    t = state.clock[0] + 1
    state.clock[0] = t
    w = 1.0 / max(state.window, 0.25 * t)
    loss = state.loss
    for c in range(3):
        if c == _KER and not ker_on:
            continue
        e = P[c, played] - target
        loss[c] += w * (e * e - loss[c])
    d = Wt.shape[0] - 1
    if state.dense and state.norm.center:
        ok = O.oracle_update(state.oracle, Wt, state.allidx, state.z, 0, d, played, P[_LIN, played], target)
    elif state.dense:  # scale only: the row's non-zeros, scaled (no dense pass in the oracle)
        nz = _scaled_nonzeros(state, idx, val, lo, hi)
        ok = O.oracle_update(state.oracle, Wt, state.zi, state.zv, 0, nz, played, P[_LIN, played], target)
    else:
        ok = O.oracle_update(state.oracle, Wt, idx, val, lo, hi, played, P[_LIN, played], target)
    if not ok:
        return False
    if ker_on:
        r = kern.phi.shape[0]
        O.ridge_update(O.RidgeOracle(kern.P), kern.Wt, kern.ridx, kern.phi, 0, r, played, P[_KER, played], target)
    mem = state.mem
    memory_add(mem, _key(np.uint64(mem.hx[0]), played), mem.slot[played], target)
    if state.estimate:
        est = state.est
        p = S.igw_prob(s, K, yhat, S.explore_weight(state, s, K, yhat, float(t)), played)
        c = state.champ[0]
        top = P[c, 0]  # the champion's top prediction (without the confidence widths s may carry)
        for k in range(1, K):
            top = max(top, P[c, k])
        RO.record_round(state.hist, est, top, feedback, p)
        est[2] += 1.0
        if est[2] >= state.rate_block[0]:
            RO.refresh_rates(state.hist, est, state.pct_top, state.rho_max, K)
            est[2] = 0.0
            state.rate_block[0] = min(state.rate_every, max(state.rate_first, float(t)))
    if state.dense:
        norm = state.norm
        stats = norm.stats
        xd = state.xd
        for j in range(d):
            xd[j] = 0.0
        for tt in range(lo, hi):
            xd[idx[tt]] = val[tt]
        n = norm.count[0] + 1.0
        norm.count[0] = n
        inv_n = 1.0 / n
        for j in range(d):
            x = xd[j]
            dl = x - stats[0, j]
            stats[0, j] += dl * inv_n
            stats[1, j] += dl * (x - stats[0, j])
            ax = abs(x)
            if ax > stats[2, j]:
                stats[2, j] = ax
        if kern.on[0] == 0.0:
            M = kern.buf.shape[0]
            if n <= M:
                for j in range(d):
                    kern.buf[int(n) - 1, j] = xd[j]
        if n >= norm.count[1]:
            norm.count[1] = 2.0 * norm.count[1]
            _reread(state, Wt)
        if kern.on[0] == 0.0 and n == kern.buf.shape[0]:
            _build_kernel(state)
    return True


class AutoCBState(NamedTuple):
    """AutoCB's record: FastCB's exploration fields (read by :func:`nolo.learners.bandit.squarecb.igw_act` and
    :func:`nolo.learners.bandit.fastcb.first_order_weight`; ``mode`` 0: the oracles fit the raw bit), the rate
    estimate's arrays and its current block length ``rate_block`` (1,), the round ``clock``; ``dense`` (the normalised regime), the linear ``oracle``'s record on the
    core's ``Wt`` (d + 1, K), ``allidx`` (d,) = 0..d-1 and the scratch ``z``, ``xd``, ``zi``, ``zv`` (d,); the normaliser, the
    kernel and the memory (:class:`NormState`, :class:`KernelState`, :class:`MemoryState`); the candidates'
    progressive-validation ``loss`` (3,), the selection's ``window``, the scratch ``preds`` (3, K) and
    ``champ`` (1,); the confidence widths' multiple ``optimism`` (0 outside the sketched regime), their scratch
    ``width`` (K,) and ``zbuf`` (d + 1,)."""

    gamma_scale: float
    gamma_exponent: float
    mode: int
    rho0: float
    rho1: float
    estimate: bool
    rate_every: float
    pct_top: float
    rho_max: float
    est: np.ndarray
    hist: np.ndarray
    clock: np.ndarray
    loss_floor: float
    observed: bool
    confidence: float
    rate_first: float
    rate_block: np.ndarray
    dense: bool
    oracle: tuple
    allidx: np.ndarray
    z: np.ndarray
    xd: np.ndarray
    zi: np.ndarray
    zv: np.ndarray
    norm: NormState
    kern: KernelState
    mem: MemoryState
    loss: np.ndarray
    window: float
    preds: np.ndarray
    champ: np.ndarray
    optimism: float
    width: np.ndarray
    zbuf: np.ndarray
    act = S.igw_act
    update = autocb_update
    adjust = autocb_adjust
    weight = autocb_weight
    probs = S.igw_probs


@njit(cache=True, nogil=True)
def autocb_rows(state, Wt, rows, R, C):
    """R[i] = the champion's predictions for every row (the stream's arithmetic, without the confidence widths the
    policy adds), C[i] = every candidate's (3, K)."""
    Wp, sp = padded(Wt)
    K = Wt.shape[1]
    for i in range(R.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        scores_padded(Wp, idx, val, lo, hi, sp)
        autocb_adjust(state, Wt, idx, val, lo, hi, sp, K)
        c = state.champ[0]
        for k in range(K):
            R[i, k] = state.preds[c, k]
        C[i] = state.preds


# ---------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------


class AutoCB(OneBitBanditLearner):
    """AutoCB: FastCB exploration (Foster & Krishnamurthy, NeurIPS 2021) over a linear, a kernel and an
    exact-context regression oracle fitted on online-normalised inputs, the policy following the one with the lowest
    progressive-validation loss -- nolo's default learner for noisy bandit feedback (:func:`default_learner`).

    The module docstring gives the design; docs/default-learner.md its measurements against Vowpal Wabbit.  In short:
    every round, each candidate predicts the bit of every label; the champion (lowest exponentially weighted squared
    error on the played labels so far) decides the greedy label and FastCB's inverse-gap weights; after the bit comes
    back, all three learn from it.  Scale-free in the dense regime (features z-scored online, the ridge state
    re-expressed exactly when the statistics move).  Under class-conditional flips with rates (rho0, rho1), known or
    estimated online, the regression of the bit keeps the clean argmax (AM section 3).

    Regimes, by the number of features d (rules of the learner, decided from the data it is given):

    * d <= ``ridge_max_features`` (default 256): z-scored, ridge linear oracle, the kernel candidate (d <=
      ``kernel_max_features``);
    * ``ridge_max_features`` < d <= ``dense_max_features`` (1,024): scaled by max ``|x_j|`` (d > ``center_max_features``),
      the FD-SON sketched linear oracle (``sketch_size``) with prior ``lam_scaled`` / kappa^2, the kernel candidate
      only if d <= ``kernel_max_features``;
    * d > ``dense_max_features``: raw sparse rows, the VW-style normalised adaptive linear oracle (scale-free per
      feature by construction), no kernel.

    The memory candidate runs in every regime.

    Feedback laws: the flip correction (known or online-estimated ``rho0``/``rho1``) assumes
    class-conditional flips with constant rates (:class:`nolo.noise.FlipChannel`) and is unbiased only
    there; under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    rho0, rho1 : known flip rates (rho0 + rho1 < 1), default 0; with ``estimate_rates`` the starting values
    estimate_rates : bool, default False -- estimate the rates online from the champion's predictions
        (:mod:`nolo.learners.bandit.rate_oracle`) at the end of blocks of ``rate_first`` rounds, then as long as the
        rounds so far (doubling), at most ``rate_every`` (defaults 250 and 5,000: the first estimate comes after 250
        rounds rather than 5,000); ``pct_top`` as SquareCB's; ``rho_max`` (default 0.4) caps each estimate, so kappa_hat
        >= 0.2: while the model is still immature its top predictions sit low and read as a large rho1 (on the tuning
        draws 0.47-0.49 for a true 0.4, and 0.49 for a true 0), which would otherwise inflate the priors and the
        memory's shrinkage that divide by kappa^2.  In the sketched regime the rates before the first estimate are
        ``rho_max`` each, whatever ``rho0`` and ``rho1`` say (its prior is re-expressed only approximately when kappa
        moves; with the rates estimated on the SynSep, digits-784 and MNIST tuning draws, a start at rates 0 erred
        0.101, 0.286 and 0.438 on average, this start 0.074, 0.231 and 0.419)
    gamma_scale, gamma_exponent : FastCB's g_t = gamma_scale t^gamma_exponent, default 10 and 0.5 (VW's)
    loss_floor, confidence : FastCB's greedy-loss floor and confidence multiple, default 0.01 and 1
    lam : ridge prior of the linear and kernel oracles on z-scored rows, default 1
    lam_scaled : on rows scaled by max ``|x_j|`` (more than ``center_max_features`` features) the linear oracle's prior
        (FD-SON's starting alpha) is lam_scaled / kappa^2, default 2: the bit's signal is kappa times the clean one's
        and those rows keep their own geometry (binary columns stay binary)
    n_landmarks : int >= 2, the kernel's landmarks (the first rows seen), default 128
    n_components : int >= 1, kernel-PCA coordinates kept, default 50 (at most ``n_landmarks``)
    clip : float > 0, the kernel's inputs are z clipped to [-clip, clip], default 5
    memory_beta : float > 0, the memory's shrinkage in pseudo-observations at kappa = 1, default 1
    memory_size : power of two >= 64, entries of the memory table, default 2^18 (6 MiB)
    select_window : float >= 1, the selection's least time constant in rounds, default 200
    refresh_tol : float > 0, relative move of mu or sd that triggers re-expressing the linear state, default 0.1
    ridge_max_features, dense_max_features, kernel_max_features, center_max_features : the regimes' thresholds (256,
        1024, 256, 256)
    sketch_size : FD-SON's m, default 20
    optimism : float >= 0, in the sketched regime the multiple of the linear champion's confidence width
        1/2 sqrt(z^T A_a^{-1} z) added to its scores before the inverse-gap weighting (LinUCB's beta), default 1;
        0 turns it off.  No effect in the other regimes
    seed : seed of the learner's generator (one uniform per played label)

    Defaults were chosen on tuning data only (generated data sets and stream seeds the experiments never decide
    on; docs/default-learner.md#tuning).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from nolo.learners.bandit import AutoCB, run_stream
    >>> X, y = load_wine(return_X_y=True)                      # raw features, scales from 0.1 to 1,680
    >>> m = AutoCB(n_classes=3, rho0=0.1, rho1=0.1, seed=0)
    >>> res = run_stream(m, X, y, 5_000, rho0=0.1, rho1=0.1, seed=1)
    >>> bool(res.error_rate[-1] < 0.15), bool(np.mean(m.predict(X) == y) > 0.9)
    (True, True)
    >>> m.champion_ in ("linear", "kernel", "memory")
    True
    """

    #: AutoCB works in float64; not a parameter
    dtype = "float64"

    @property
    def learns_off_policy(self) -> bool:
        """True with known rates: the update regresses the bit on (context, label), whoever chose the label
        (:mod:`nolo.offpolicy.learn`)."""
        return not bool(self.estimate_rates)

    def __init__(self, n_classes=2, rho0=0.0, rho1=0.0, estimate_rates=False, gamma_scale=10.0, gamma_exponent=0.5,
                 loss_floor=0.01, confidence=1.0, lam=1.0, lam_scaled=2.0, n_landmarks=128, n_components=50, clip=5.0,
                 memory_beta=1.0, memory_size=2 ** 18, select_window=200.0, refresh_tol=0.1, rate_first=250, rate_every=5_000,
                 pct_top=RO.DEFAULT_PCT_TOP, rho_max=0.4, ridge_max_features=256, dense_max_features=1024,
                 kernel_max_features=256, center_max_features=256, sketch_size=20, optimism=1.0,
                 seed=None):
        self.n_classes = n_classes
        self.rho0 = rho0
        self.rho1 = rho1
        self.estimate_rates = estimate_rates
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.loss_floor = loss_floor
        self.confidence = confidence
        self.lam = lam
        self.lam_scaled = lam_scaled
        self.n_landmarks = n_landmarks
        self.n_components = n_components
        self.clip = clip
        self.memory_beta = memory_beta
        self.memory_size = memory_size
        self.select_window = select_window
        self.refresh_tol = refresh_tol
        self.rate_first = rate_first
        self.rate_every = rate_every
        self.pct_top = pct_top
        self.rho_max = rho_max
        self.ridge_max_features = ridge_max_features
        self.dense_max_features = dense_max_features
        self.kernel_max_features = kernel_max_features
        self.center_max_features = center_max_features
        self.sketch_size = sketch_size
        self.optimism = optimism
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """Small configurations that reach every branch within the contract's 30 rounds: the ridge regime with the
        kernel built after 6 rows; unknown rates with short blocks; the sketched regime; the sparse regime; the
        sketched regime on max-scaled rows with its confidence widths and unknown rates."""
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2, "n_landmarks": 6, "n_components": 3, "memory_size": 64},
                {"n_classes": 3, "estimate_rates": True, "rate_first": 10, "rate_every": 12, "n_landmarks": 5, "n_components": 2,
                 "memory_size": 64},
                {"n_classes": 3, "rho0": 0.1, "rho1": 0.1, "ridge_max_features": 2, "sketch_size": 2,
                 "n_landmarks": 4, "n_components": 2, "memory_size": 64},
                {"n_classes": 3, "rho0": 0.1, "rho1": 0.1, "dense_max_features": 2, "ridge_max_features": 2,
                 "memory_size": 64},
                {"n_classes": 3, "estimate_rates": True, "rate_first": 10, "rate_every": 12, "ridge_max_features": 2,
                 "center_max_features": 2, "sketch_size": 2, "n_landmarks": 4, "n_components": 2, "memory_size": 64}]

    # -- parameters and state --------------------------------------------------------------------
    #: AutoCB normalises every feature online: scale-free per feature and overall (no ScaleWarning)
    _scale_free_columns = True
    #: the one state array that grows (a row per rate block); every other shape is fixed by the parameters and the
    #: regime: the normaliser's and the kernel's arrays are empty when the regime switches them off, and a file whose
    #: arrays of a switched-off part are not empty is refused by ``Learner.load``'s shape check
    _growing_state = {"rate_estimates_": (0,)}
    _bias_column = True  # W_ is (K, d + 1): the weights on z = [x, 1]

    def _validate_params(self) -> None:
        check_int(self.n_classes, "n_classes", low=2)
        check_flip_rates(self.rho0, self.rho1)
        if not isinstance(self.estimate_rates, (bool, np.bool_)):
            raise ParameterError(f"estimate_rates must be True or False, got {self.estimate_rates!r}")
        check_scalar(self.gamma_scale, "gamma_scale", low=0.0)
        check_scalar(self.gamma_exponent, "gamma_exponent", low=0.0, high=1.0)
        check_scalar(self.loss_floor, "loss_floor", low=0.0, high=1.0, low_inclusive=False)
        check_scalar(self.confidence, "confidence", low=0.0)
        check_scalar(self.lam, "lam", low=0.0, low_inclusive=False)
        check_scalar(self.lam_scaled, "lam_scaled", low=0.0, low_inclusive=False)
        check_int(self.n_landmarks, "n_landmarks", low=2)
        check_int(self.n_components, "n_components", low=1)
        if int(self.n_components) > int(self.n_landmarks):
            raise ParameterError(f"n_components must be at most n_landmarks={self.n_landmarks}, got "
                                 f"{self.n_components}")
        check_scalar(self.clip, "clip", low=0.0, low_inclusive=False)
        check_scalar(self.memory_beta, "memory_beta", low=0.0, low_inclusive=False)
        size = check_int(self.memory_size, "memory_size", low=64)
        if size & (size - 1):
            raise ParameterError(f"memory_size must be a power of two >= 64, got {self.memory_size}")
        check_scalar(self.select_window, "select_window", low=1.0)
        check_scalar(self.refresh_tol, "refresh_tol", low=0.0, low_inclusive=False)
        check_int(self.rate_first, "rate_first", low=10)
        check_int(self.rate_every, "rate_every", low=10)
        if int(self.rate_first) > int(self.rate_every):
            raise ParameterError(f"rate_first must be at most rate_every={self.rate_every}, got {self.rate_first}")
        check_scalar(self.pct_top, "pct_top", low=0.0, high=100.0, low_inclusive=False, high_inclusive=False)
        check_scalar(self.rho_max, "rho_max", low=0.0, high=0.5, high_inclusive=False)
        check_int(self.ridge_max_features, "ridge_max_features", low=1)
        check_int(self.dense_max_features, "dense_max_features", low=1)
        check_int(self.kernel_max_features, "kernel_max_features", low=0)
        check_int(self.center_max_features, "center_max_features", low=0)
        check_int(self.sketch_size, "sketch_size", low=2)
        check_scalar(self.optimism, "optimism", low=0.0)

    def _regime(self, d: int) -> tuple[bool, str, bool]:
        """(dense, linear oracle, kernel) for inputs of d features."""
        dense = d <= int(self.dense_max_features)
        oracle = ("ridge" if d <= int(self.ridge_max_features) else "fdson") if dense else "ogd"
        return dense, oracle, dense and d <= int(self.kernel_max_features)

    def _start_rates(self, d: int) -> tuple[float, float]:
        """The rates before the first estimate: ``rho0``, ``rho1``; with ``estimate_rates`` in the sketched regime
        ``rho_max`` each, the noisiest channel the estimate allows.  That regime's prior lam_scaled / kappa^2 is
        re-expressed only approximately when kappa moves, and one that is too weak while the rates are unread fits the
        noise into the sketch for good (docs/default-learner.md#tuning)."""
        if self.estimate_rates and self._regime(d)[1] == "fdson":
            return float(self.rho_max), float(self.rho_max)
        return float(self.rho0), float(self.rho1)

    def _optimistic(self, d: int) -> bool:
        """Whether the linear champion's scores carry confidence widths for inputs of d features: only from the FD-SON
        sketch (the ridge regime's z-scored rows explored worse with them on the tuning draws)."""
        return self._regime(d)[1] == "fdson" and float(self.optimism) > 0.0

    def initialize(self, n_features: int) -> "AutoCB":
        """As :meth:`Learner.initialize`, refusing (ParameterError, nothing allocated) a state larger than this
        machine's memory: the linear oracle, the normaliser, the kernel's landmarks and inverses, the memory."""
        self._validate_params()
        if not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)) and n_features >= 1:
            K, d = int(self.n_classes), int(n_features)
            dense, oracle, kernel = self._regime(d)
            M, r, dk = (int(self.n_landmarks), int(self.n_components), d) if kernel else (0, 0, 0)
            kernel_floats = 2 * M * dk + M + M * r + 2 * dk + K * (r + 1) * (r + 2)
            need = (O.oracle_bytes(oracle, K, d, int(self.sketch_size)) + 8 * (7 * d * dense + kernel_floats)
                    + 24 * int(self.memory_size))
            check_state_bytes(need, f"AutoCB keeps a linear oracle ({oracle!r}) per class, the kernel's landmarks and "
                              f"inverses and the memory: n_classes={K}, n_features={d}, n_landmarks={M}, "
                              f"n_components={r}, memory_size={int(self.memory_size)}",
                              hint="lower n_classes, memory_size or n_landmarks, or the rows' dimension")
        return super().initialize(n_features)

    def _init_state(self, n_features: int) -> None:
        K, d = int(self.n_classes), int(n_features)
        dense, oracle, kernel = self._regime(d)
        self.W_ = np.zeros((K, d + 1), order="F")  # the linear oracle's weights on [z, 1] (sparse regime: [x, 1])
        lam0 = float(self.lam)
        start = self._start_rates(d)
        if dense and d > int(self.center_max_features):  # lam_scaled / kappa^2 on max-abs scaled rows (NormState)
            lam0 = float(self.lam_scaled) / (1.0 - start[0] - start[1]) ** 2  # the rates at the start
        self.norm_prior_ = np.array([lam0])
        if oracle == "ridge":
            self.P_ = O.ridge_oracle(K, d, lam0).P
        elif oracle == "fdson":
            o = O.fdson_oracle(K, d, lam0, int(self.sketch_size), True)
            self.sketch_, self.sketch_inv_, self.sketch_gram_ = o.sketch, o.sketch_inv, o.sketch_gram
            self.sketch_rows_, self.sketch_alpha_ = o.sketch_rows, o.sketch_alpha
        else:
            o = O.ogd_oracle(K, d, 0.5)
            self.G_, self.S_, self.N_, self.n_ = o.G, o.S, o.N, o.n
        dn = d if dense else 0
        self.norm_stats_ = np.zeros((3, dn))
        self.norm_coef_ = np.zeros((4, dn))
        self.norm_coef_[2] = 0.0  # no feature has varied yet: z = 0 until the first re-read (row 2)
        self.norm_count_ = np.array([0.0, 2.0])
        M = int(self.n_landmarks) if kernel else 0
        r = int(self.n_components) if kernel else 0
        dk = d if kernel else 0
        self.kernel_on_ = np.array([0.0 if kernel else -1.0])
        self.kernel_buf_ = np.zeros((M, dk))
        self.kernel_land_ = np.zeros((dk, M))
        self.kernel_lnorm_ = np.zeros(M)
        self.kernel_proj_ = np.zeros((M, r))
        self.kernel_coef_ = np.zeros((2, dk))
        self.kernel_bandwidth_ = np.zeros(1)
        self.kernel_P_ = np.zeros((K, r + 1, r + 1))
        for k in range(K):
            np.fill_diagonal(self.kernel_P_[k], 1.0 / float(self.lam))
        self.kernel_W_ = np.zeros((r + 1, K))
        C = int(self.memory_size)
        self.memory_keys_ = np.zeros(C, dtype=np.int64)
        self.memory_cnt_ = np.zeros(C)
        self.memory_tot_ = np.zeros(C)
        self.candidate_losses_ = np.zeros(3)
        self.hist_ = np.zeros(RO.HIST_BINS)
        self.est_ = np.zeros(RO.EST_SIZE)
        self.est_[:2] = start
        self.rate_block_ = np.array([float(self.rate_first)])
        self.rate_estimates_ = np.zeros((0, 3))

    @property
    def _oracle_kind(self) -> str:
        return self._regime(int(self.n_features_in_))[1]

    def _oracle_record(self):
        kind = self._oracle_kind
        if kind == "ridge":
            return O.RidgeOracle(self.P_)
        if kind == "fdson":
            return O.FDSONOracle(self.sketch_, self.sketch_inv_, self.sketch_gram_, self.sketch_rows_,
                                 self.sketch_alpha_, int(self.sketch_size), True,
                                 O.fdson_buffer(int(self.sketch_size), self.W_.shape[1]))
        return O.OGDOracle(self.G_, self.S_, self.N_, self.n_, O.ogd_buffer(self.W_.shape[1]), 0.5)

    def _state_record(self) -> AutoCBState:
        K, d = int(self.n_classes), int(self.n_features_in_)
        dense = self._regime(d)[0]
        dk, M, r = self.kernel_coef_.shape[1], self.kernel_proj_.shape[0], self.kernel_proj_.shape[1]
        center = d <= int(self.center_max_features)
        norm = NormState(self.norm_stats_, self.norm_coef_, self.norm_count_, float(self.refresh_tol),
                         float(self.lam if center else self.lam_scaled), center, self.norm_prior_)
        kern = KernelState(self.kernel_on_, self.kernel_buf_, self.kernel_land_, self.kernel_lnorm_, self.kernel_proj_,
                           self.kernel_coef_, self.kernel_bandwidth_, self.kernel_P_, self.kernel_W_, float(self.clip),
                           float(self.lam), np.zeros(dk), np.zeros(M), np.zeros(r), np.arange(r, dtype=np.int64))
        mem = MemoryState(self.memory_keys_, self.memory_cnt_, self.memory_tot_, float(self.memory_beta),
                          np.zeros(1, dtype=np.int64), np.full(K, -1, dtype=np.int64))
        dn = d if dense else 0
        return AutoCBState(float(self.gamma_scale), float(self.gamma_exponent), 0, float(self.rho0), float(self.rho1),
                           bool(self.estimate_rates), float(self.rate_every), float(self.pct_top), float(self.rho_max),
                           self.est_, self.hist_, np.array([self.t_], dtype=np.int64), float(self.loss_floor), False,
                           float(self.confidence), float(self.rate_first), self.rate_block_, dense, self._oracle_record(), np.arange(dn, dtype=np.int64),
                           np.zeros(dn), np.zeros(dn), np.zeros(dn, dtype=np.int64), np.zeros(dn), norm, kern, mem, self.candidate_losses_,
                           float(self.select_window), np.zeros((3, K)), np.zeros(1, dtype=np.int64),
                           float(self.optimism) if self._optimistic(d) else 0.0, np.zeros(K),
                           np.zeros(d + 1 if dense else 0))

    def _round_record(self) -> AutoCBState:
        """:meth:`_state_record`, reused while every attribute but ``t_`` is the same object as when it was built
        (building it costs more than a round).  Its scratch arrays are written before they are read by every compiled
        call, as in the stream loop, which reuses one record for a whole segment; ``clock`` is set to ``t_``."""
        attrs = vars(self)
        keys = tuple(attrs)
        ids = list(map(id, attrs.values()))
        cache = attrs.get("_round_cache")
        if cache is not None and cache[0] == keys:
            for i in cache[3]:  # the positions of t_ and of the cache itself
                ids[i] = 0
        if cache is None or cache[0] != keys or cache[1] != ids:
            self._round_cache = None
            keys = tuple(attrs)
            skip = (keys.index("t_"), keys.index("_round_cache"))
            ids = list(map(id, attrs.values()))
            for i in skip:
                ids[i] = 0
            # the attributes are kept alive with their ids, so that an id is never reused by another object
            cache = self._round_cache = (keys, ids, self._state_record(), skip, list(attrs.values()), {})
        record = cache[2]
        record.clock[0] = self.t_
        return record

    def _round_entries(self, state):
        """The compiled entry points of the per-round calls on ``state`` while it is the reused record."""
        cache = self.__dict__.get("_round_cache")
        return cache[5] if cache is not None and cache[2] is state else None

    def __getstate__(self) -> dict:
        """The instance dict without the per-round record cache (rebuilt on demand; it holds compiled entry points,
        which do not pickle)."""
        out = super().__getstate__()
        out.pop("_round_cache", None)
        return out

    def _journal(self, rows, played):
        """The memory table (3 x ``memory_size`` entries, most of the state) by the probe windows of the rows' plays:
        the only entries of it any round writes, in every regime (:func:`memory_add`)."""
        at = np.empty(played.shape[0] * _PROBES, dtype=np.int64)
        memory_windows(rows, played, self.memory_keys_.shape[0], at)
        return {id(m): (m, at) for m in (self.memory_keys_, self.memory_cnt_, self.memory_tot_)}

    def _round_writes(self, idx, val, nnz, played):
        """What one round of :func:`autocb_update` writes, in the dense regime with the ridge oracle (the default
        below 257 features): the played label's ridge inverse and weights in both oracles, the memory's probe window
        for (row, label), and the small arrays (normaliser moments, losses, rate estimate); while the kernel's
        landmarks are gathered (its first ``n_landmarks`` rounds), also the row of the landmark buffer this round
        fills.  A round that re-expresses the state (a doubling of the normaliser's count) or builds the kernel (the
        round that fills the buffer) may rewrite any array but the memory, of which it too writes only the probe
        window (the memory, 3 x ``memory_size`` entries, is most of the state).  The other regimes may write
        anywhere: None."""
        dense, oracle, _ = self._regime(int(self.n_features_in_))
        if not dense or oracle != "ridge":
            return None
        C = self.memory_keys_.shape[0]
        window = (int(memory_probe_start(idx, val, nnz, played, C)) + np.arange(_PROBES)) & (C - 1)
        memory = (self.memory_keys_, self.memory_cnt_, self.memory_tot_)
        n = self.norm_count_[0] + 1.0  # the normaliser's count after this round
        gathering = self.kernel_on_[0] == 0.0
        if n >= self.norm_count_[1] or (gathering and n >= self.kernel_buf_.shape[0]):
            rest = [a for a in (self.W_, *_record_arrays(self._round_record())) if not any(a is m for m in memory)]
            return [(a, Ellipsis) for a in rest] + [(m, window) for m in memory]
        writes = [(self.W_, played), (self.P_, played), *((m, window) for m in memory)]
        if self.kernel_on_[0] > 0.0:
            writes += [(self.kernel_P_, played), (self.kernel_W_, (slice(None), played))]
        elif gathering:
            writes.append((self.kernel_buf_, int(n) - 1))
        small = (self.norm_stats_, self.norm_count_, self.candidate_losses_, self.est_, self.hist_, self.rate_block_)
        return writes + [(a, Ellipsis) for a in small]

    def _check_state(self) -> None:
        """A loaded state must be one the compiled code can run and learn from: rates in [0, 1) summing below 1,
        the rate block count in [0, rate_block_) and the block in [rate_first, rate_every], counts >= 0, the kernel
        flag in {-1, 0, 1}; the linear oracle as :func:`nolo.learners.bandit.squarecb.check_oracle_state` says, the
        kernel oracle's inverses ``kernel_P_`` symmetric positive definite and its weights of finite squared norm,
        the kernel PCA map ``kernel_proj_`` within ``_EIG_RTOL^-1/2`` (eigenvectors over the square roots of
        eigenvalues >= ``_EIG_RTOL`` times the largest, itself >= 1), the landmarks' squared norms ``kernel_lnorm_``
        those of the columns of ``kernel_land_``; the normaliser's running means within the
        largest |x_j| seen, whose squares are finite, the sd row >= 0 with the 1/sd and -mu/sd rows its reciprocal
        and the centring it implies (0 where sd is 0); the selection's losses >= 0."""
        super()._check_state()
        if not self.is_initialized:
            return
        e = self.est_
        if not (0.0 <= e[0] < 1.0 and 0.0 <= e[1] < 1.0 and e[0] + e[1] < 1.0):
            raise PersistenceError(f"est_[:2] (the flip rates in use) must lie in [0, 1) with a sum < 1, got {e[:2]}")
        b = self.rate_block_[0]
        if not (b == int(b) and int(self.rate_first) <= b <= int(self.rate_every)):
            raise PersistenceError(f"rate_block_ must be a whole number in [rate_first, rate_every], got {b!r}")
        if not (e[2] == int(e[2]) and 0 <= e[2] < b):
            raise PersistenceError(f"est_[2] must be a whole number in [0, rate_block_={b:g}), got {e[2]!r}")
        if not (e[4] >= 0 and np.all(self.hist_ >= 0)):
            raise PersistenceError("est_[4] and hist_ (counts of the rate estimate) must be >= 0")
        if self.kernel_on_[0] not in (-1.0, 0.0, 1.0):
            raise PersistenceError(f"kernel_on_ must be -1, 0 or 1, got {self.kernel_on_[0]!r}")
        if not self.norm_prior_[0] > 0:
            raise PersistenceError(f"norm_prior_ (the linear oracle's ridge prior) must be > 0, got {self.norm_prior_[0]!r}")
        if not (np.all(self.memory_cnt_ >= 0) and np.all(self.candidate_losses_ >= 0)
                and np.all(self.norm_count_ >= 0) and np.all(self.norm_stats_[1:] >= 0)):
            raise PersistenceError("memory_cnt_, candidate_losses_, norm_count_ and norm_stats_[1:] must be >= 0")
        st = self.norm_stats_
        check_state_sqnorm("norm_stats_", st[2], "the largest |x_j| seen: the normaliser squares deviations")
        if not np.all(np.abs(st[0]) <= st[2] * (1.0 + 1e-9)):
            raise PersistenceError("norm_stats_: the running means (row 0) must lie within the largest |x_j| seen "
                                   "(row 2)")
        c = self.norm_coef_
        live = c[1] > 0
        with np.errstate(over="ignore", invalid="ignore"):
            inverse = np.all(np.abs(c[2][live] * c[1][live] - 1.0) <= 1e-12)
            centring = np.all(np.abs(c[3][live] + c[0][live] * c[2][live]) <= 1e-12 * np.abs(c[3][live]))
        if c.size and not (np.all(c[1] >= 0) and np.all(live | ((c[2] == 0) & (c[3] == 0))) and inverse and centring):
            raise PersistenceError("norm_coef_: the sd row must be >= 0, the 1/sd row its reciprocal and the -mu/sd "
                                   "row the centring (both 0 where sd is 0)")
        S.check_oracle_state(self, self._oracle_kind)
        check_state_spd("kernel_P_", self.kernel_P_, "the kernel oracle's inverses (lam I + sum phi phi^T)^-1")
        check_state_sqnorm("kernel_W_", self.kernel_W_, "the kernel oracle's weights")
        check_state_range("kernel_proj_", self.kernel_proj_, -_EIG_RTOL ** -0.5, _EIG_RTOL ** -0.5,
                          "the kernel PCA map: eigenvectors over the square roots of eigenvalues")
        check_state_column_sqnorms("kernel_lnorm_", self.kernel_lnorm_, "kernel_land_", self.kernel_land_)

    # -- figures --------------------------------------------------------------------------------------
    @property
    def rates_(self) -> tuple[float, float]:
        """The flip rates in use: the known ones, or the current estimates."""
        self._require_initialized("rates_")
        if self.estimate_rates:
            return float(self.est_[0]), float(self.est_[1])
        return float(self.rho0), float(self.rho1)

    @property
    def champion_(self) -> str:
        """The candidate the policy follows now (the lowest progressive-validation loss among those running)."""
        self._require_initialized("champion_")
        L = self.candidate_losses_
        best = 0
        if self.kernel_on_[0] > 0 and L[1] < L[best]:
            best = 1
        if L[2] < L[best]:
            best = 2
        return CANDIDATES[best]

    # -- the rate trajectory (as SquareCB's) -----------------------------------------------------------
    def _segment_length(self, remaining: int) -> int:
        if not self.estimate_rates:
            return remaining
        return min(remaining, int(self.rate_block_[0]) - int(self.est_[2]))

    def _note_refresh(self) -> None:
        if self.estimate_rates and self.est_[2] == 0.0 and self.t_ > 0:
            self.rate_estimates_ = np.vstack([self.rate_estimates_, [[self.t_, self.est_[0], self.est_[1]]]])

    def _after_segment(self, X, log_index, log_played, log_feedback) -> None:
        self._note_refresh()

    def _after_round(self, x, played: int, feedback: int) -> None:
        self._note_refresh()

    def _run_extras(self) -> dict:
        return {"rate_estimates": len(self.rate_estimates_)} if self.estimate_rates else {}

    def _finish_extras(self, extra: dict, seconds: float) -> dict:
        extra["champion"] = self.champion_
        if "rate_estimates" in extra:
            n = int(extra["rate_estimates"])
            extra["rate_estimates"] = self.rate_estimates_[len(self.rate_estimates_) - n:].copy()
        return extra

    # -- prediction ------------------------------------------------------------------------------------
    def _champion_rows(self, X):
        self._require_initialized("decision_function")
        rows, n = self._rows(X)
        K = int(self.n_classes)
        R = np.empty((n, K))
        C = np.empty((n, 3, K))
        autocb_rows(self._state_record(), self.W_.T, rows, R, C)
        if not np.all(np.isfinite(R)):
            raise NumericalError("AutoCB.decision_function: a prediction overflows float64 (rows near the largest "
                                 "float); rescale X")
        if self.kernel_on_[0] <= 0:
            C[:, _KER] = np.nan
        return R, C

    def decision_function(self, X) -> np.ndarray:
        """The champion's predicted bit E[f_rho | x, a] for every label, shape (n, K) (the stream's arithmetic)."""
        return self._champion_rows(X)[0]

    def candidate_predictions(self, X) -> np.ndarray:
        """Every candidate's predicted bit for every label, shape (n, 3, K) in the order of :data:`CANDIDATES`
        (NaN for the kernel before its map is built or where it does not run); never changes state."""
        return self._champion_rows(X)[1]

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_a of the champion's predictions (ties to the smallest label); never changes state."""
        self._require_initialized()
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)


def default_learner(n_classes: int, rho0: float | None = None, rho1: float | None = None, seed=None) -> AutoCB:
    """The learner nolo recommends for noisy bandit feedback: :class:`AutoCB` with its defaults.

    ``rho0``/``rho1``: the flip rates of the feedback bit (P(1 | wrong label), P(0 | right label)) when known; both
    None (the default) estimates them online from the learner's own predictions.  One configuration for every data
    set: the learner's rules (which oracles run for how many features, when the normaliser re-expresses its state,
    which candidate the policy follows) are decided from the data it sees.

    >>> from nolo.learners.bandit import default_learner
    >>> default_learner(10).estimate_rates, default_learner(10, rho0=0.1, rho1=0.2).estimate_rates
    (True, False)
    """
    if (rho0 is None) != (rho1 is None):
        raise ParameterError(f"rho0 and rho1 must both be given or both be None (estimated online), got rho0={rho0!r}, "
                             f"rho1={rho1!r}")
    if rho0 is None:
        return AutoCB(n_classes=n_classes, estimate_rates=True, seed=seed)
    return AutoCB(n_classes=n_classes, rho0=rho0, rho1=rho1, seed=seed)
