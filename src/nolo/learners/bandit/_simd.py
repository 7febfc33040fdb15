"""SIMD and LLVM-intrinsic helpers of the compiled bandit loops: scores, argmax, the two-row update, prefetch.

Every class's score is the sum of two partial sums, over the non-zero coordinates at even and at
odd positions, each accumulated in increasing order by fused multiply-adds (one rounding per term;
no fast-math reassociation), which makes the result independent of the calling context and of the
representation (dense or CSR; explicit zeros are dropped from CSR input so that positions agree).
:func:`scores` is the scalar form (per-round API), :func:`scores_padded` the SIMD form (stream
loops, ``predict``): the same bits.

Weights are held as ``Wt`` of shape ``(d, K)`` (the transpose view of the learner's Fortran-ordered
``W_`` of shape ``(K, d)``): a score update ``s += Wt[j] * x_j`` is a contiguous K-vector operation
per non-zero ``x_j``.  The stream loops copy the weights once per call into a zero-padded,
cache-line-aligned (d, 16m) array (:func:`padded`) and accumulate 16 classes in LLVM vector registers
(:func:`_accumulate_block`); the greedy label is a vector maximum (:func:`argmax_padded`); the loops
work on borrowed views free of numba's atomic reference counting (:func:`borrowed`).
Speed figures: docs/benchmarks-am.md.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from nolo._jit import njit

__all__ = ["LANES", "fma", "scores", "scores_padded", "argmax_padded", "argmax_first", "add_sub_columns",
           "prefetch", "borrowed", "aligned_zeros", "padded", "gather_dense"]


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
    end -- the additions of consecutive non-zeros do not wait for each other (a single sum is bounded
    by the add latency; two sums measure 1.07x on USPS).  Per non-zero one vector load and one fused
    multiply-add (1.07x over a multiply and an add), element-wise: each lane rounds exactly as the
    scalar :func:`scores`, so the bits are equal.  ``Wp`` is C-contiguous with a multiple of LANES
    columns (and cache-line aligned, :func:`aligned_zeros`).
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
def add_sub_columns(typingctx, Wt, idx, val, lo, hi, a, ca, b):
    """For t in [lo, hi): Wt[idx[t], a] = fma(ca, val[t], Wt[idx[t], a]), then Wt[idx[t], b] -= val[t] -- the
    two-row update (w + ca x_j rounded once).  (Written values are not checked here: a compare per store cost
    12 % of Banditron's rounds on digits; the callers check the state once per call instead.)

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
def prefetch(typingctx, arr, byte_lo, byte_hi):
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


@intrinsic
def borrowed(typingctx, obj):
    """``obj`` without its reference-count owners: arrays (and numpy Generators) get their meminfo and parent
    set to NULL; tuples and typed records are borrowed member by member; scalars pass through.

    numba increments and decrements the owner's reference count, atomically, each time an array
    enters an inlined helper -- dozens of atomic operations per round, more than the arithmetic
    of a small round.  The stream loops therefore work on borrowed views of their arguments, whose
    owners the calling frame holds until the loop returns.
    """
    def borrow(context, builder, ty, val):
        if isinstance(ty, types.BaseTuple):
            for k, t in enumerate(ty):
                val = builder.insert_value(val, borrow(context, builder, t, builder.extract_value(val, k)), k)
            return val
        if isinstance(ty, types.Array) or type(ty).__name__ == "NumPyRandomGeneratorType":
            proxy = cgutils.create_struct_proxy(ty)(context, builder, value=val)
            proxy.meminfo = cgutils.get_null_value(proxy.meminfo.type)
            proxy.parent = cgutils.get_null_value(proxy.parent.type)
            return proxy._getvalue()
        return val

    def codegen(context, builder, sig, args):
        return borrow(context, builder, sig.args[0], args[0])
    return obj(obj), codegen


@njit(cache=True, nogil=True)
def aligned_zeros(n, dtype):
    """A zeroed 1-d array of n elements starting on a 64-byte boundary (a cache line, one zmm register).

    numpy's buffers are only 16-byte aligned: a 64-byte row load from them then straddles two cache
    lines three times out of four, which costs the score accumulation ~1.3x (docs/benchmarks-am.md).
    """
    buf = np.zeros(n + 16, dtype=dtype)  # 16 elements of >= 4 bytes cover any offset to the next line
    off = ((-buf.ctypes.data) % 64) // buf.itemsize
    return buf[off:off + n]


@njit(cache=True, nogil=True)
def padded(Wt):
    """A zero-padded, cache-line-aligned copy (d, Kp) of the weights, Kp the multiple of LANES >= K, and
    scores of length Kp (also aligned)."""
    d, K = Wt.shape
    Kp = LANES * ((K + LANES - 1) // LANES)
    Wp = aligned_zeros(d * Kp, Wt.dtype).reshape((d, Kp))
    Wp[:, :K] = Wt
    return Wp, aligned_zeros(Kp, Wt.dtype)
