"""Compiled (numba, ``cache=True``) per-round pieces and whole-stream loops of the bandit learners.

Everything random is one uniform ``Generator.random()`` per decision, drawn
from the *same* numpy Generator objects the Python API uses (numba shares
the bit generator's state), in the same order:

* environment generator: ``u_index`` (only for ``order="replace"``; a new
  permutation for ``order="permute"`` draws ``n - 1`` uniforms at the start of
  each pass), then ``u_flip`` for the feedback channel -- every round, also
  when the flip rates are 0, so noise settings share their random numbers;
* learner generator: ``u_play`` for the played label (not for the Perceptron).

The stream loops take each generator either as the numpy Generator itself or, for numpy's
PCG64, as its state array stepped inline (:mod:`nolo.learners.bandit._pcg64`): the same draws.

The per-round Python API (``act``/``learn``) calls the same compiled updates and
the same arithmetic for the scores, so the whole-stream path and the per-round
path give bit-identical weights for the same seeds.  Every class's score is the
sum of two partial sums, over the non-zero coordinates at even and at odd
positions, each accumulated in increasing order by fused multiply-adds (one
rounding per term; no fast-math reassociation), which makes the result
independent of the calling context and of the representation (dense or CSR;
explicit zeros are dropped from CSR input so that positions agree).  The
Banditron/RCNBF update adds ``c x_j`` to a weight by a fused multiply-add too.

Weights are held as ``Wt`` of shape ``(d, K)`` (the transpose view of the
learner's Fortran-ordered ``W_`` of shape ``(K, d)``): a score update
``s += Wt[j] * x_j`` is a contiguous K-vector operation per non-zero ``x_j``.

Speed (docs/benchmarks-am.md): the stream loops copy the weights once per call
into a zero-padded (d, 16m) array and accumulate 16 classes in LLVM vector
registers (:func:`_accumulate_block`); the greedy label is a vector maximum
(:func:`argmax_padded`); the Banditron/RCNBF update is straight-line code
(:func:`_add_sub_columns`) with its step looked up (:func:`exp_h_coefficients`);
the loops work on borrowed views, free of numba's
atomic reference counting (:func:`_borrowed`); and the next example's index is drawn
right after this round's feedback (the per-round order) so that its row can be
prefetched (:func:`_prefetch`) while this round's update runs; on data larger
than the L2 cache with a PCG64 environment, a copy of its state peeks LOOKAHEAD
rounds ahead and rows are prefetched ROW_AHEAD rounds ahead
(:func:`_lookahead_start`; SynSep 2.9M -> 7.8M rounds/s).

Algorithm codes: 0 Perceptron (AM eq. 2), 1 exploration with an unbiased
feedback estimate (Banditron = RCNBF with rates 0; RCNBF AM eq. 5), 2 BPA,
3 diagonal SOBA.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic
from llvmlite import ir

from nolo.learners.bandit._pcg64 import lookahead_copy, uniform

PERCEPTRON, EXP_H, BPA, SOBA = 0, 1, 2, 3
ORDER_REPLACE, ORDER_PERMUTE, ORDER_CYCLE = 0, 1, 2

# status codes returned by the stream loops
OK, NONFINITE = 0, 1


@njit(cache=True, nogil=True, inline="always")
def gather_dense(X, i, idx, val):
    """Write the non-zero coordinates of the dense row ``X[i]`` into ``idx``/``val``; return their number.

    Branch-free (every coordinate is written, the count advances only on a non-zero), so
    sparse binary rows such as SynSep's do not pay a mispredicted branch per non-zero.  Reads
    ``X[i, j]`` directly: a row view per round would cost two atomic reference-count updates.
    """
    n = 0
    for j in range(X.shape[1]):
        v = X[i, j]
        idx[n] = j
        val[n] = v
        n += v != 0.0
    return n


@njit(cache=True, nogil=True, inline="always")
def scores(Wt, idx, val, lo, hi, s):
    """s[k] = a0 + a1 with a0 (a1) the sum of Wt[idx[t], k] * val[t] over the non-zeros t in [lo, hi) at even (odd)
    offsets t - lo, each accumulated in increasing t by fused multiply-adds: a = fma(Wt[idx[t], k], val[t], a).

    The per-round API's scores; the stream loops and ``predict`` use :func:`scores_padded`, which
    rounds identically (two interleaved sums halve the chain of dependent additions there).
    """
    K = Wt.shape[1]
    odd = np.zeros(K, dtype=s.dtype)
    for k in range(K):
        s[k] = 0.0
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        if (t - lo) % 2 == 0:
            for k in range(K):
                s[k] = fma(Wt[j, k], v, s[k])
        else:
            for k in range(K):
                odd[k] = fma(Wt[j, k], v, odd[k])
    for k in range(K):
        s[k] += odd[k]


def _fma_function(builder, ty):
    """llvm.fma for the float or vector type ``ty``: a * b + c with one rounding (the CPU's fused multiply-add)."""
    elt = ty.element if isinstance(ty, ir.VectorType) else ty
    name = "f64" if elt == ir.DoubleType() else "f32"
    if isinstance(ty, ir.VectorType):
        name = f"v{ty.count}{name}"
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty, ty, ty]), f"llvm.fma.{name}")


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once, in c's float type (the fused multiply-add of the SIMD score blocks, for scalars)."""
    def codegen(context, builder, sig, args):
        ty = context.get_value_type(sig.return_type)
        x, y, z = (context.cast(builder, v, t, sig.return_type) for v, t in zip(args, sig.args))
        return builder.call(_fma_function(builder, ty), [x, y, z])
    return c(a, b, c), codegen


#: classes per SIMD block of the stream loops' score accumulation; their weights are padded to a multiple of it
LANES = 16


@intrinsic
def _accumulate_block(typingctx, Wp, idx, val, lo, hi, kb, s):
    """s[kb:kb+LANES] = the :func:`scores` of classes kb..kb+LANES-1 on the padded weights ``Wp``.

    The LANES running sums live in LLVM vector registers (numba runs no SLP vectoriser, and its
    loop vectoriser leaves a K = 9 or 10 class loop scalar), two of them: the non-zeros at even
    offsets t - lo go into one, those at odd offsets into the other, and the two are added at the
    end -- the additions of consecutive non-zeros no longer wait for each other (the add latency
    bounded the old single sum; 1.07x on USPS).  Per non-zero one vector load and one fused
    multiply-add (1.07x over a multiply and an add), element-wise: each lane rounds exactly as the
    scalar :func:`scores`, so the bits are equal.  ``Wp`` is C-contiguous with a multiple of LANES
    columns (and cache-line aligned, :func:`_aligned_zeros`).
    """
    def codegen(context, builder, sig, args):
        W = context.make_array(sig.args[0])(context, builder, args[0])
        ix = context.make_array(sig.args[1])(context, builder, args[1])
        vl = context.make_array(sig.args[2])(context, builder, args[2])
        lo_, hi_, kb_ = (context.cast(builder, args[k], sig.args[k], types.intp) for k in (3, 4, 5))
        sa = context.make_array(sig.args[6])(context, builder, args[6])
        elt = context.get_value_type(sig.args[0].dtype)
        align = context.get_abi_sizeof(elt)
        vty = ir.VectorType(elt, LANES)
        intp = context.get_value_type(types.intp)
        acc0 = cgutils.alloca_once_value(builder, ir.Constant(vty, None))
        acc1 = cgutils.alloca_once_value(builder, ir.Constant(vty, None))
        row_stride = cgutils.unpack_tuple(builder, W.strides, 2)[0]
        base = builder.add(builder.ptrtoint(W.data, intp), builder.mul(kb_, context.get_constant(types.intp, align)))

        def term(t):
            j = builder.load(builder.gep(ix.data, [t]))
            if j.type.width < intp.width:
                j = builder.sext(j, intp)
            v = builder.load(builder.gep(vl.data, [t]))
            w = builder.load(builder.inttoptr(builder.add(base, builder.mul(j, row_stride)), vty.as_pointer()),
                             align=align)
            return w, _splat(builder, vty, v)

        fma = _fma_function(builder, vty)

        def add_term(acc, t):  # acc = fma(w, x, acc): one rounding
            builder.store(builder.call(fma, [*term(t), builder.load(acc)]), acc)

        n = builder.sub(hi_, lo_)
        two = ir.Constant(intp, 2)
        with cgutils.for_range(builder, builder.sdiv(n, two)) as loop:
            t = builder.add(lo_, builder.mul(loop.index, two))
            add_term(acc0, t)
            add_term(acc1, builder.add(t, ir.Constant(intp, 1)))
        with builder.if_then(builder.icmp_signed("!=", builder.srem(n, two), ir.Constant(intp, 0))):
            add_term(acc0, builder.sub(hi_, ir.Constant(intp, 1)))
        builder.store(builder.fadd(builder.load(acc0), builder.load(acc1)),
                      builder.bitcast(builder.gep(sa.data, [kb_]), vty.as_pointer()), align=align)
        return context.get_dummy_value()
    return types.none(Wp, idx, val, lo, hi, kb, s), codegen


@intrinsic
def _add_sub_columns(typingctx, Wt, idx, val, lo, hi, a, ca, b):
    """For t in [lo, hi): Wt[idx[t], a] = fma(ca, val[t], Wt[idx[t], a]), then Wt[idx[t], b] -= val[t] -- the
    two-row update (w + ca x_j rounded once).

    Straight-line code without numba's negative-index wrap-around per access (it doubled the update's
    cost), and for a == b (most rounds) one load and one store per coordinate.  All arithmetic is in
    Wt's dtype: a float32 learner rounds ``ca`` to float32 once and updates in float32 (float32 end to
    end; no conversions per coordinate).
    """
    def codegen(context, builder, sig, args):
        W = context.make_array(sig.args[0])(context, builder, args[0])
        ix = context.make_array(sig.args[1])(context, builder, args[1])
        vl = context.make_array(sig.args[2])(context, builder, args[2])
        lo_, hi_ = (context.cast(builder, args[k], sig.args[k], types.intp) for k in (3, 4))
        a_, ca_, b_ = args[5:]
        elt = context.get_value_type(sig.args[0].dtype)
        f64 = ir.DoubleType()
        intp = context.get_value_type(types.intp)
        s0, s1 = cgutils.unpack_tuple(builder, W.strides, 2)
        base = builder.ptrtoint(W.data, intp)
        col_a = builder.add(base, builder.mul(a_, s1))
        col_b = builder.add(base, builder.mul(b_, s1))

        def row(t):  # (index, value) of non-zero t
            j = builder.load(builder.gep(ix.data, [t]))
            if j.type.width < intp.width:
                j = builder.sext(j, intp)
            return j, builder.load(builder.gep(vl.data, [t]))

        ca_elt = ca_ if elt == f64 else builder.fptrunc(ca_, elt)

        fma = _fma_function(builder, elt)

        def plus(w, v):  # fma(ca, v, w) in Wt's dtype: w + ca * v rounded once
            return builder.call(fma, [ca_elt, v, w])

        same = builder.icmp_signed("==", a_, b_)
        with builder.if_else(same) as (one_row, two_rows):
            with one_row:  # a == b (the played label is the greedy one): both steps in a register, one store
                with cgutils.for_range(builder, builder.sub(hi_, lo_)) as loop:
                    j, v = row(builder.add(lo_, loop.index))
                    pa = builder.inttoptr(builder.add(col_a, builder.mul(j, s0)), elt.as_pointer())
                    builder.store(builder.fsub(plus(builder.load(pa), v), v), pa)
            with two_rows:
                with cgutils.for_range(builder, builder.sub(hi_, lo_)) as loop:
                    j, v = row(builder.add(lo_, loop.index))
                    off = builder.mul(j, s0)
                    pa = builder.inttoptr(builder.add(col_a, off), elt.as_pointer())
                    builder.store(plus(builder.load(pa), v), pa)
                    pb = builder.inttoptr(builder.add(col_b, off), elt.as_pointer())
                    builder.store(builder.fsub(builder.load(pb), v), pb)
        return context.get_dummy_value()
    return types.none(Wt, idx, val, lo, hi, types.intp, types.float64, types.intp), codegen


@intrinsic
def _prefetch(typingctx, arr, byte_lo, byte_hi):
    """Ask the CPU to fetch bytes [byte_lo, byte_hi) of ``arr``'s buffer into cache (one hint per 64-byte line).

    The stream loops know the next example one round ahead (the environment's next index draw
    comes right after this round's feedback draw, so drawing it early keeps the draw order) and
    prefetch its row while the current round's update runs: random rows of data sets larger than
    the cache otherwise stall the score accumulation on memory.
    """
    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        lo_, hi_ = args[1], args[2]
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        intp = context.get_value_type(types.intp)
        base = builder.ptrtoint(a.data, intp)
        nlines = builder.udiv(builder.add(builder.sub(hi_, lo_), ir.Constant(intp, 63)), ir.Constant(intp, 64))
        with cgutils.for_range(builder, nlines) as loop:
            off = builder.add(lo_, builder.mul(loop.index, ir.Constant(intp, 64)))
            ptr = builder.inttoptr(builder.add(base, off), i8p)
            builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.none(arr, types.intp, types.intp), codegen


@njit(cache=True, nogil=True, inline="always")
def scores_padded(Wp, idx, val, lo, hi, s):
    """:func:`scores` (the same bits) on the LANES-padded weights ``Wp`` (d, Kp) into ``s`` of length Kp."""
    for kb in range(0, Wp.shape[1], LANES):
        _accumulate_block(Wp, idx, val, lo, hi, kb, s)


def _splat(builder, vty, x):
    """The LANES-vector of type ``vty`` with every lane ``x``."""
    v = builder.insert_element(ir.Constant(vty, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, ir.Constant(vty, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))


def _lane_mask(builder, n):
    """<LANES x i1>: lane < n."""
    iota = ir.Constant(ir.VectorType(n.type, LANES), list(range(LANES)))
    return builder.icmp_signed("<", iota, _splat(builder, iota.type, n))


def _score_block(context, builder, sig, args):
    """(sp[kb:kb+LANES] as one vector, its type, n) for the block intrinsics called as (sp, kb, n, ...)."""
    a = context.make_array(sig.args[0])(context, builder, args[0])
    kb_, n_ = (context.cast(builder, args[k], sig.args[k], types.intp) for k in (1, 2))
    elt = context.get_value_type(sig.args[0].dtype)
    vty = ir.VectorType(elt, LANES)
    v = builder.load(builder.bitcast(builder.gep(a.data, [kb_]), vty.as_pointer()), align=context.get_abi_sizeof(elt))
    return v, vty, n_


@intrinsic
def _block_max(typingctx, sp, kb, n):
    """max(sp[kb:kb+n]) over the values that are not NaN (-inf when none), n <= LANES; one vector reduction."""
    def codegen(context, builder, sig, args):
        v, vty, n_ = _score_block(context, builder, sig, args)
        keep = builder.and_(_lane_mask(builder, n_), builder.fcmp_ordered("ord", v, v))  # NaN lanes drop out
        v = builder.select(keep, v, _splat(builder, vty, ir.Constant(vty.element, float("-inf"))))
        width = LANES
        while width > 1:  # halving tree of (a > b ? a : b) -- vmaxpd, exact without NaNs
            width //= 2
            a_ = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), width), list(range(width))))
            b_ = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), width),
                                                          list(range(width, 2 * width))))
            v = builder.select(builder.fcmp_ordered(">", a_, b_), a_, b_)
        return builder.extract_element(v, ir.Constant(ir.IntType(32), 0))
    return sp.dtype(sp, kb, n), codegen


@intrinsic
def _block_first_equal(typingctx, sp, kb, n, m):
    """The first lane i < n with sp[kb + i] == m, or LANES when there is none; one vector comparison."""
    def codegen(context, builder, sig, args):
        v, vty, n_ = _score_block(context, builder, sig, args)
        m_ = context.cast(builder, args[3], sig.args[3], sig.args[0].dtype)
        hit = builder.and_(builder.fcmp_ordered("==", v, _splat(builder, vty, m_)), _lane_mask(builder, n_))
        bits = builder.zext(builder.bitcast(hit, ir.IntType(LANES)), ir.IntType(64))
        bits = builder.or_(bits, ir.Constant(ir.IntType(64), 1 << LANES))  # LANES when no lane matches
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64),
                                                                                           ir.IntType(1)]),
                                            "llvm.cttz.i64")
        return builder.call(fn, [bits, ir.Constant(ir.IntType(1), 0)])
    return types.intp(sp, kb, n, m), codegen


@njit(cache=True, nogil=True, inline="always")
def argmax_padded(sp, K):
    """:func:`argmax_first` of ``sp[:K]`` (the same index, NaN included) for LANES-padded scores, in vector steps.

    ``argmax_first`` returns 0 when s[0] is NaN, else the first index of the largest non-NaN
    score: one NaN-ignoring vector maximum per LANES block, then the first lane equal to it.
    """
    top = sp[0]
    if top != top:
        return 0
    m = top
    for kb in range(0, K, LANES):
        b = _block_max(sp, kb, min(LANES, K - kb))
        if b > m:
            m = b
    for kb in range(0, K, LANES):
        i = _block_first_equal(sp, kb, min(LANES, K - kb), m)
        if i < LANES:
            return kb + i
    return 0


@njit(cache=True, nogil=True, inline="always")
def argmax_first(s):
    """Index of the largest score, ties to the smallest index (as numpy/MATLAB argmax)."""
    best = 0
    top = s[0]  # in a register: re-reading s[best] chains a load into every comparison
    for k in range(1, s.shape[0]):
        v = s[k]
        if v > top:
            best = k
            top = v
    return best


@njit(cache=True, nogil=True, inline="always")
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


@njit(cache=True, nogil=True, inline="always")
def play_probability(r, yhat, gamma, K):
    """P(r) of AM eq. (3)."""
    p = gamma / K
    if r == yhat:
        p += 1.0 - gamma
    return p


@njit(cache=True, nogil=True, inline="always")
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
        j = int(uniform(rng) * (i + 1))
        if j > i:
            j = i
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(cache=True, nogil=True, inline="always")
def next_index(order, n, perm, pos, rng):
    """The next example index of the stream; ``pos`` is a one-element position counter."""
    if order == ORDER_REPLACE:
        i = int(uniform(rng) * n)
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


@njit(cache=True, nogil=True, inline="always")
def update_perceptron(Wt, idx, val, lo, hi, y, yhat):
    """AM eq. (2): on a mistake, row y += x and row yhat -= x."""
    if y == yhat:
        return True
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        Wt[j, y] += v
        Wt[j, yhat] -= v
    return True


@njit(cache=True, nogil=True, inline="always")
def update_exp_h(Wt, idx, val, lo, hi, yhat, played, feedback, gamma, rho0a, beta_a):
    """AM eq. (5): row played += x h(f)/P(played), row yhat -= x, with h(f) = (f - rho0)/beta (math-notes item 11).

    With rho0a = 0 and beta_a = 1 this is exactly the Banditron update (h(f) = f).
    """
    K = Wt.shape[1]
    h = (feedback - rho0a) / beta_a
    c = h / play_probability(played, yhat, gamma, K)
    if not np.isfinite(c):
        return False
    _add_sub_columns(Wt, idx, val, lo, hi, played, c, yhat)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def exp_h_coefficients(gamma, rho0a, beta_a, K):
    """The four step coefficients h(f)/P(played) of :func:`update_exp_h`, indexed ``2 f + (played == yhat)``.

    Computed with :func:`update_exp_h`'s arithmetic, so the stream loops look the coefficient up
    instead of paying two dependent divisions per round, with the same bits.  A division by zero
    (gamma = 0, the Perceptron's table, never used) gives inf, which the loops report as
    non-finite if a round ever needs it.
    """
    c = np.empty(4)
    for f in range(2):
        h = (f - rho0a) / beta_a
        c[2 * f] = h / play_probability(1, 0, gamma, K)
        c[2 * f + 1] = h / play_probability(0, 0, gamma, K)
    return c


@njit(cache=True, nogil=True, inline="always")
def update_bpa(Wt, idx, val, lo, hi, s, played, feedback):
    """BPA (baselines.md section 3): binary PA step on row ``played`` with sigma = 2f - 1."""
    sigma = 2.0 * feedback - 1.0
    loss = 1.0 - sigma * s[played]
    if loss <= 0.0:
        return True
    nrm2 = 0.0
    for t in range(lo, hi):
        nrm2 += val[t] * val[t]
    if nrm2 == 0.0:
        return True
    tau = loss / nrm2
    if not np.isfinite(tau):
        return False
    c = tau * sigma
    for t in range(lo, hi):
        Wt[idx[t], played] += c * val[t]
    return True


@njit(cache=True, nogil=True, inline="always")
def update_soba(Wt, At, budget, idx, val, lo, hi, s, yhat, played, feedback, gamma):
    """Diagonal SOBA (baselines.md section 4.2, paper rule): learn only from confirmed labels.

    ybar = best competitor of ``played``; p = P(played); Delta = s[ybar] - s[played];
    q = (1/p) sum x_j^2 (1/a[ybar,j] + 1/a[played,j]); m = ((Delta^2 + 2 Delta)/p) / (1 + q);
    update when budget + m >= 0: a rows += x^2/p, theta[ybar] -= x/p, theta[played] += x/p,
    W = theta / a on the two rows, budget += m.

    The state is (W, a): theta = W a is not stored but rebuilt for the two updated entries of each
    coordinate (theta' = W a -+ x/p), which saves a third array's loads and stores (SOBA 1.24x
    faster on MNIST) at a few roundings per update (W a equals theta to ~2 ulp; tested against a
    reference that keeps theta).  Two divisions per coordinate instead of four:
    1/a_ybar + 1/a_played = (a_ybar + a_played) / (a_ybar a_played) in q, and with
    r = 1/(a_ybar a_played), W = theta a_other r on the two updated rows (SOBA's ``a >= 1e-100``
    keeps the products normal floats).
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
    for t in range(lo, hi):
        j = np.uintp(idx[t])  # unsigned: no negative-index wrap-around per access
        v = val[t]
        ay, ap = At[j, ybar], At[j, played]
        q += v * v * ((ay + ap) / (ay * ap))
    q /= p
    m = (delta * delta + 2.0 * delta) / p / (1.0 + q)
    if not np.isfinite(m):
        return False
    if budget[0] + m < 0.0:
        return True
    inv_p = 1.0 / p
    for t in range(lo, hi):
        j = np.uintp(idx[t])
        v = val[t]
        v2 = v * v * inv_p
        ay0, ap0 = At[j, ybar], At[j, played]
        ay = ay0 + v2
        ap = ap0 + v2
        At[j, ybar] = ay
        At[j, played] = ap
        ty = Wt[j, ybar] * ay0 - v * inv_p  # theta rebuilt from W a
        tp = Wt[j, played] * ap0 + v * inv_p
        r = 1.0 / (ay * ap)
        Wt[j, ybar] = ty * ap * r
        Wt[j, played] = tp * ay * r
    budget[0] += m
    return True


@njit(cache=True, nogil=True, inline="always")
def update(algo, Wt, At, budget, idx, val, lo, hi, s, y, yhat, played, feedback, gamma, rho0a, beta_a):
    """Dispatch one round's update; ``y`` is used by the Perceptron only (full information)."""
    if algo == PERCEPTRON:
        return update_perceptron(Wt, idx, val, lo, hi, y, yhat)
    if algo == EXP_H:
        return update_exp_h(Wt, idx, val, lo, hi, yhat, played, feedback, gamma, rho0a, beta_a)
    if algo == BPA:
        return update_bpa(Wt, idx, val, lo, hi, s, played, feedback)
    return update_soba(Wt, At, budget, idx, val, lo, hi, s, yhat, played, feedback, gamma)


@njit(cache=True, nogil=True, inline="always")
def update_stream(algo, Wt, At, budget, idx, val, lo, hi, s, y, yhat, played, feedback, gamma, rho0a,
                  beta_a, coef):
    """:func:`update` inside the stream loops; Banditron/RCNBF take their step from ``coef`` (:func:`exp_h_coefficients`)."""
    if algo == EXP_H:
        c = coef[2 * feedback + (played == yhat)]
        if not np.isfinite(c):
            return False
        _add_sub_columns(Wt, idx, val, lo, hi, played, c, yhat)
        return True
    return update(algo, Wt, At, budget, idx, val, lo, hi, s, y, yhat, played, feedback, gamma, rho0a, beta_a)


@njit(cache=True, nogil=True, inline="always")
def act(algo, Wp, Wt, idx, val, lo, hi, sp, s, gamma, rng):
    """Greedy label and played label of one round (the Perceptron plays greedily, drawing nothing).

    ``Wp``/``sp`` are the padded weights and scores, ``Wt``/``s`` their first K columns/entries.
    """
    scores_padded(Wp, idx, val, lo, hi, sp)
    yhat = argmax_padded(sp, Wt.shape[1])
    if algo == PERCEPTRON:
        return yhat, yhat
    return yhat, draw_label(uniform(rng), yhat, gamma, Wt.shape[1])


# ---------------------------------------------------------------------------------------------
# whole streams
# ---------------------------------------------------------------------------------------------


@intrinsic
def _borrowed(typingctx, obj):
    """The array (or Generator) ``obj`` without its reference-count owner (meminfo and parent set to NULL).

    numba increments and decrements the owner's reference count, atomically, each time an array
    enters an inlined helper -- dozens of atomic operations per round, more than the arithmetic
    of a small round.  The stream loops therefore work on borrowed views of their arguments, whose
    owners the calling frame holds until the loop returns.
    """
    def codegen(context, builder, sig, args):
        proxy = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        proxy.meminfo = cgutils.get_null_value(proxy.meminfo.type)
        proxy.parent = cgutils.get_null_value(proxy.parent.type)
        return proxy._getvalue()
    return obj(obj), codegen


#: ring of upcoming example indices peeked from a copy of the environment's PCG64 state (power of two)
LOOKAHEAD = 8
#: rows are prefetched this many rounds ahead (their index-pointer entries LOOKAHEAD - 1 rounds ahead)
ROW_AHEAD = 2
#: peek only when the data outgrow the L2 cache; smaller data sets stay cached and would only pay the peeking
PEEK_MIN_BYTES = 1 << 21


@njit(cache=True, nogil=True, inline="always")
def _peek_index(shadow, n):
    """The example index of the round after the next, from the lookahead copy of the environment state.

    With ``order="replace"`` the environment's draws alternate index, flip, index, flip, ...: skip the
    flip, take the index (the same arithmetic as :func:`next_index`).
    """
    uniform(shadow)
    i = int(uniform(shadow) * n)
    if i >= n:
        i = n - 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _lookahead_start(env_rng, order, n, nbytes, ahead):
    """Fill ``ahead[r]`` with the index of rounds r = 1..LOOKAHEAD-1 (round 0's is drawn); return (shadow, on).

    On only for a PCG64 environment state (a numpy Generator cannot be copied in compiled code),
    ``order="replace"`` (the paper's) and data larger than PEEK_MIN_BYTES: random rows of a large
    data set come from memory, ~100 ns away, and a row prefetched only one round ahead arrives late
    (SynSep 10^5 x 400: 3.1M rounds/s drawn at random vs 9.0M visited in order).
    """
    shadow, on = lookahead_copy(env_rng)
    on = on and order == ORDER_REPLACE and nbytes > PEEK_MIN_BYTES
    if on:
        for k in range(1, LOOKAHEAD):
            ahead[k] = _peek_index(shadow, n)
    return shadow, on


@njit(cache=True, nogil=True, inline="always")
def _play(algo, Wp, Wt, idx, val, lo, hi, sp, s, yi, gamma, rho0, rho1, env_rng, lrn_rng):
    """One round up to the feedback: (greedy label, played label, noisy feedback bit)."""
    yhat, played = act(algo, Wp, Wt, idx, val, lo, hi, sp, s, gamma, lrn_rng)
    u = uniform(env_rng)
    fb = flip(1 if played == yi else 0, u, rho0, rho1)
    return yhat, played, fb


@njit(cache=True, nogil=True, inline="always")
def _record(done, n_played, n_greedy, slot, checkpoints, out_played, out_greedy):
    """Write the cumulative mistakes into every checkpoint slot equal to ``done``; return the next slot."""
    while slot < checkpoints.shape[0] and checkpoints[slot] == done:
        out_played[slot] = n_played
        out_greedy[slot] = n_greedy
        slot += 1
    return slot


@njit(cache=True, nogil=True)
def _aligned_zeros(n, dtype):
    """A zeroed 1-d array of n elements starting on a 64-byte boundary (a cache line, one zmm register).

    numpy's buffers are only 16-byte aligned: a 64-byte row load from them then straddles two cache
    lines three times out of four, which cost the score accumulation ~1.3x (docs/benchmarks-am.md).
    """
    buf = np.zeros(n + 16, dtype=dtype)  # 16 elements of >= 4 bytes cover any offset to the next line
    off = ((-buf.ctypes.data) % 64) // buf.itemsize
    return buf[off:off + n]


@njit(cache=True, nogil=True)
def _padded(Wt):
    """A zero-padded, cache-line-aligned copy (d, Kp) of the weights, Kp the multiple of LANES >= K, and
    scores of length Kp (also aligned)."""
    d, K = Wt.shape
    Kp = LANES * ((K + LANES - 1) // LANES)
    Wp = _aligned_zeros(d * Kp, Wt.dtype).reshape((d, Kp))
    Wp[:, :K] = Wt
    return Wp, _aligned_zeros(Kp, Wt.dtype)


@njit(cache=True, nogil=True)
def stream_dense(algo, Wt, At, budget, X, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
                 gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
                 log_index, log_played, log_feedback):
    """Run ``n_rounds`` rounds over the dense rows of X.

    ``counters`` = [rounds done, played mistakes, greedy mistakes, next checkpoint slot] (read at
    the start, written back at the end).  When ``log_index`` has length >= n_rounds, round r's
    (example index, played label, noisy feedback) is written to slot r (RCINE's block log).
    Returns (status, rounds done in this call).

    The loops compile with numba's numpy error model (no per-division zero check and branch): no
    divisor in them can be zero (SOBA's a >= 1e-100 entries only grow, BPA checks its norm, the
    Perceptron never draws a label, indices are taken modulo n >= 1).
    """
    idx = np.empty(X.shape[1], dtype=np.int64)
    val = np.empty(X.shape[1], dtype=X.dtype)
    Wp, sp = _padded(Wt)
    status, r = _dense_loop(algo, Wp, At, budget, X, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
                            gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
                            log_index, log_played, log_feedback, idx, val, sp, Wt.shape[1])
    Wt[:, :] = Wp[:, :Wt.shape[1]]
    return status, r


@njit(cache=True, nogil=True, error_model="numpy")  # no zero-divisor checks (see stream_dense)
def _dense_loop(algo, Wp, At, budget, X, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
                gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
                log_index, log_played, log_feedback, idx, val, sp, K):
    b = _borrowed  # the callers hold the owners for the whole call (see _borrowed)
    Wp, At, budget, y, perm, pos, env_rng, lrn_rng = (b(Wp), b(At), b(budget), b(y), b(perm), b(pos),
                                                     b(env_rng), b(lrn_rng))
    checkpoints, out_played, out_greedy, counters = b(checkpoints), b(out_played), b(out_greedy), b(counters)
    log_index, log_played, log_feedback, sp = b(log_index), b(log_played), b(log_feedback), b(sp)
    X, idx, val = b(X), b(idx), b(val)
    n = X.shape[0]
    Wt, s = Wp[:, :K], sp[:K]
    coef = exp_h_coefficients(gamma, rho0a, beta_a, K)
    row_bytes = X.shape[1] * X.itemsize
    do_log = log_index.shape[0] >= n_rounds
    done, n_played, n_greedy, slot = counters[0], counters[1], counters[2], counters[3]
    status, r = OK, 0
    i = next_index(order, n, perm, pos, env_rng) if n_rounds > 0 else 0
    ahead = np.zeros(LOOKAHEAD, dtype=np.int64)
    shadow, peek = _lookahead_start(env_rng, order, n, X.nbytes, ahead)
    while r < n_rounds:
        nnz = gather_dense(X, i, idx, val)
        yi = y[i]
        yhat, played, fb = _play(algo, Wp, Wt, idx, val, 0, nnz, sp, s, yi, gamma, rho0, rho1, env_rng, lrn_rng)
        i_next = i
        if r + 1 < n_rounds:  # the next index draw follows this round's feedback draw, as in the per-round API
            i_next = next_index(order, n, perm, pos, env_rng)
            row = i_next
            if peek:  # the row of round r + ROW_AHEAD
                ahead[r % LOOKAHEAD] = _peek_index(shadow, n)
                row = ahead[(r + ROW_AHEAD) % LOOKAHEAD]
            _prefetch(X, row * X.strides[0], row * X.strides[0] + row_bytes)
        if not update_stream(algo, Wt, At, budget, idx, val, 0, nnz, s, yi, yhat, played, fb, gamma, rho0a,
                             beta_a, coef):
            status = NONFINITE
            break
        n_played += played != yi
        n_greedy += yhat != yi
        done += 1
        if do_log:
            log_index[r] = i
            log_played[r] = played
            log_feedback[r] = fb
        slot = _record(done, n_played, n_greedy, slot, checkpoints, out_played, out_greedy)
        r += 1
        i = i_next
    counters[0], counters[1], counters[2], counters[3] = done, n_played, n_greedy, slot
    return status, r


@njit(cache=True, nogil=True)
def stream_csr(algo, Wt, At, budget, indptr, indices, data, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
               gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
               log_index, log_played, log_feedback):
    """As :func:`stream_dense` for a CSR matrix with sorted indices (no per-round gather, no row views)."""
    Wp, sp = _padded(Wt)
    status, r = _csr_loop(algo, Wp, At, budget, indptr, indices, data, y, n_rounds, order, perm, pos, env_rng,
                          lrn_rng, gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
                          log_index, log_played, log_feedback, sp, Wt.shape[1])
    Wt[:, :] = Wp[:, :Wt.shape[1]]
    return status, r


@njit(cache=True, nogil=True, error_model="numpy")  # no zero-divisor checks (see stream_dense)
def _csr_loop(algo, Wp, At, budget, indptr, indices, data, y, n_rounds, order, perm, pos, env_rng, lrn_rng,
              gamma, rho0a, beta_a, rho0, rho1, checkpoints, out_played, out_greedy, counters,
              log_index, log_played, log_feedback, sp, K):
    b = _borrowed  # the callers hold the owners for the whole call (see _borrowed)
    Wp, At, budget, y, perm, pos, env_rng, lrn_rng = (b(Wp), b(At), b(budget), b(y), b(perm), b(pos),
                                                     b(env_rng), b(lrn_rng))
    checkpoints, out_played, out_greedy, counters = b(checkpoints), b(out_played), b(out_greedy), b(counters)
    log_index, log_played, log_feedback, sp = b(log_index), b(log_played), b(log_feedback), b(sp)
    indptr, indices, data = b(indptr), b(indices), b(data)
    n = indptr.shape[0] - 1
    Wt, s = Wp[:, :K], sp[:K]
    coef = exp_h_coefficients(gamma, rho0a, beta_a, K)
    isz, vsz = indices.itemsize, data.itemsize
    do_log = log_index.shape[0] >= n_rounds
    done, n_played, n_greedy, slot = counters[0], counters[1], counters[2], counters[3]
    status, r = OK, 0
    i = next_index(order, n, perm, pos, env_rng) if n_rounds > 0 else 0
    ahead = np.zeros(LOOKAHEAD, dtype=np.int64)
    shadow, peek = _lookahead_start(env_rng, order, n, data.nbytes + indices.nbytes, ahead)
    while r < n_rounds:
        lo, hi = indptr[i], indptr[i + 1]
        yi = y[i]
        yhat, played, fb = _play(algo, Wp, Wt, indices, data, lo, hi, sp, s, yi, gamma, rho0, rho1, env_rng, lrn_rng)
        i_next = i
        if r + 1 < n_rounds:  # the next index draw follows this round's feedback draw, as in the per-round API
            i_next = next_index(order, n, perm, pos, env_rng)
            if peek:  # pointers of round r + LOOKAHEAD, row of round r + ROW_AHEAD (its pointers fetched earlier)
                far = _peek_index(shadow, n)
                ahead[r % LOOKAHEAD] = far
                _prefetch(indptr, far * indptr.itemsize, (far + 2) * indptr.itemsize)
                _prefetch(y, far * y.itemsize, (far + 1) * y.itemsize)
                near = ahead[(r + ROW_AHEAD) % LOOKAHEAD]
                a, b = indptr[near], indptr[near + 1]
            else:
                a, b = indptr[i_next], indptr[i_next + 1]
            _prefetch(indices, a * isz, b * isz)
            _prefetch(data, a * vsz, b * vsz)
        if not update_stream(algo, Wt, At, budget, indices, data, lo, hi, s, yi, yhat, played, fb, gamma,
                             rho0a, beta_a, coef):
            status = NONFINITE
            break
        n_played += played != yi
        n_greedy += yhat != yi
        done += 1
        if do_log:
            log_index[r] = i
            log_played[r] = played
            log_feedback[r] = fb
        slot = _record(done, n_played, n_greedy, slot, checkpoints, out_played, out_greedy)
        r += 1
        i = i_next
    counters[0], counters[1], counters[2], counters[3] = done, n_played, n_greedy, slot
    return status, r


@njit(cache=True, nogil=True)
def predict_dense(Wt, X, out):
    """Greedy labels argmax_k (W x)_k of every row, with the same score arithmetic as the learners."""
    idx = np.empty(X.shape[1], dtype=np.int64)
    val = np.empty(X.shape[1], dtype=X.dtype)
    Wp, sp = _padded(Wt)
    for i in range(X.shape[0]):
        nnz = gather_dense(X, i, idx, val)
        scores_padded(Wp, idx, val, 0, nnz, sp)
        out[i] = argmax_padded(sp, Wt.shape[1])


@njit(cache=True, nogil=True)
def predict_csr(Wt, indptr, indices, data, out):
    """:func:`predict_dense` for the rows of a CSR matrix with sorted indices and no explicit zeros."""
    Wp, sp = _padded(Wt)
    for i in range(indptr.shape[0] - 1):
        scores_padded(Wp, indices, data, indptr[i], indptr[i + 1], sp)
        out[i] = argmax_padded(sp, Wt.shape[1])
