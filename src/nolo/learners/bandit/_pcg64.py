"""numpy's PCG64 ``Generator.random()``, inlined into the compiled stream loops.

numba draws ``Generator.random()`` through the bit generator's function pointer: an indirect call
per uniform that also makes the loop spill its registers around it.  The stream loops draw three
uniforms per round, so on small rounds (the 64-d digits, ~100 ns a round) the calls cost about a
tenth of the time.  For a ``Generator`` over numpy's ``PCG64`` -- what ``np.random.default_rng``
and :func:`nolo.random.as_generator` give -- the loops instead take its 128-bit state as a
``uint64[4]`` array (state high/low, increment high/low), step it inline and write it back after
the call: the same numbers in the same order, so the results are bit-identical (tested against
numpy).  Any other bit generator keeps the generic path.

PCG64 (O'Neill 2014; numpy's ``pcg64.h``): ``state = state * M + inc`` (mod 2^128), output
``rotr64(hi(state) ^ lo(state), state >> 122)``; a double is ``(output >> 11) * 2^-53``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["uniform", "lookahead_copy", "pcg64_state", "store_pcg64_state"]

#: PCG_DEFAULT_MULTIPLIER_128 of numpy's pcg64.h
MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341
_MASK64 = (1 << 64) - 1


@intrinsic
def _pcg64_next_double(typingctx, st):
    """Advance the PCG64 state ``st`` (uint64[4]: state hi, lo, inc hi, lo) one step; its next double in [0, 1)."""
    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        i64, i128 = ir.IntType(64), ir.IntType(128)
        ptr = [builder.gep(a.data, [ir.Constant(i64, k)]) for k in range(4)]

        def wide(hi, lo):
            return builder.or_(builder.shl(builder.zext(builder.load(hi), i128), ir.Constant(i128, 64)),
                               builder.zext(builder.load(lo), i128))

        state = builder.add(builder.mul(wide(ptr[0], ptr[1]), ir.Constant(i128, MULTIPLIER)), wide(ptr[2], ptr[3]))
        hi = builder.trunc(builder.lshr(state, ir.Constant(i128, 64)), i64)
        lo = builder.trunc(state, i64)
        builder.store(hi, ptr[0])
        builder.store(lo, ptr[1])
        x = builder.xor(hi, lo)
        rot = builder.lshr(hi, ir.Constant(i64, 58))  # state >> 122
        fshr = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64, i64]), "llvm.fshr.i64")
        out = builder.call(fshr, [x, x, rot])  # rotate right
        d = builder.uitofp(builder.lshr(out, ir.Constant(i64, 11)), ir.DoubleType())
        return builder.fmul(d, ir.Constant(ir.DoubleType(), 1.0 / 9007199254740992.0))
    return types.float64(st), codegen


def uniform(rng):
    """One ``Generator.random()`` draw from ``rng``: a numpy Generator, or a PCG64 state array (compiled code only)."""
    return rng.random()


@overload(uniform, inline="always")
def _uniform(rng):
    if isinstance(rng, types.Array):
        if rng.dtype != types.uint64 or rng.ndim != 1:
            return None
        return lambda rng: _pcg64_next_double(rng)
    return lambda rng: rng.random()


def lookahead_copy(rng):
    """(a copy of the PCG64 state ``rng`` to peek at its future draws, True), or (a dummy, False) for a Generator.

    The stream loops step the copy ahead of the real draws to learn which examples the next rounds
    will visit, and prefetch them; the real state is untouched (compiled code only).
    """
    return np.zeros(4, dtype=np.uint64), False


@overload(lookahead_copy, inline="always")
def _lookahead_copy(rng):
    if isinstance(rng, types.Array):
        return lambda rng: (rng.copy(), True)
    return lambda rng: (np.zeros(4, dtype=np.uint64), False)


def pcg64_state(gen: np.random.Generator) -> np.ndarray | None:
    """The 128-bit state of ``gen`` as uint64[4] for the compiled loops, or None if its bit generator is not PCG64."""
    bg = gen.bit_generator
    if type(bg) is not np.random.PCG64:
        return None
    st = bg.state["state"]
    s, inc = int(st["state"]), int(st["inc"])
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64], dtype=np.uint64)


def store_pcg64_state(gen: np.random.Generator, st: np.ndarray) -> None:
    """Write the state advanced by the compiled loops back into ``gen`` (its buffered uint32, if any, is kept)."""
    bg = gen.bit_generator
    full = bg.state
    full["state"]["state"] = (int(st[0]) << 64) | int(st[1])
    bg.state = full
