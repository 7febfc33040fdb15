"""Compiled calls of a function chosen from the argument types, with no wrapper compiled in between.

The stream loop and the per-round entry points call each learner's rules through plug-in points: ``update(state,
...)`` calls the ``update`` that the state record's class names, at compile time.  Written as an ``@overload(point,
inline="always")`` whose implementation is ``lambda *a: fn(*a)``, each such point cost a whole compile of the lambda
per record type and argument layout in every process that compiles: numba types an overload's implementation by
compiling it, which links ``fn``'s code and runs LLVM's full module passes over all of it once more, and then discards
the result, since the lambda is inlined.

:func:`forwarder` makes the point an intrinsic instead: it types the call as numba types a call of the chosen jitted
function, and emits the call numba emits for any jitted function (a rule marked ``inline="always"`` gets LLVM's
``alwaysinline`` at the call, so it is still inlined).  The generated code computes the same bits; the discarded
compiles are gone.  Measured on the default learner (docs/performance.md, "The first call"): its cold first
``act`` + ``learn`` on digits compiled in 32 s instead of 42 s, and the contract check ``stream_equals_rounds`` on
AutoCB's four test configurations ran in 138 s instead of 263 s.
"""

from __future__ import annotations

import inspect

from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

__all__ = ["forwarder", "rule_of"]

_REQUIRED = object()


def rule_of(record, name: str, default=_REQUIRED):
    """The compiled function that the class of the record type ``record`` (a numba type, at typing time) names
    ``name``; ``default`` where it names none (None: no call), a TypeError where there is no default."""
    fn = getattr(getattr(record, "instance_class", None), name, None)
    if fn is not None:
        return fn
    if default is _REQUIRED:
        raise TypeError(f"{record} is not a bandit state record: its class must name a compiled `{name}` "
                        "(see nolo.learners.bandit)")
    return default


def forwarder(choose, name: str, params: str, doc: str = ""):
    """A plug-in point ``name(params...)`` for compiled code that calls ``choose(*arg_types)`` -- a jitted function --
    with the same arguments and returns what it returns; where ``choose`` returns None the call does nothing and
    returns None.

    ``choose`` runs at typing time, on numba types (for example ``lambda state, *rest:
    state.instance_class.update``).  ``params`` names the point's positional parameters, space-separated: numba folds
    a call's arguments by the intrinsic's Python signature, so it must be explicit (``*args`` would pack them into
    one tuple)."""

    def typer(typingctx, *argtys):
        fn = choose(*argtys)
        if fn is None:
            def nothing(context, builder, signature, args):
                return context.get_dummy_value()
            return types.none(*argtys), nothing
        fnty = typingctx.resolve_value_type(fn)
        sig = typingctx.resolve_function_type(fnty, argtys, {})
        if sig is None:
            raise TypingError(f"{name}: {fn} cannot be called with {argtys}")
        # a rule written to be inlined (``inline="always"``) is inlined by LLVM at the call instead of by numba
        attrs = ("alwaysinline",) if getattr(fn, "targetoptions", {}).get("inline") == "always" else ()

        def codegen(context, builder, signature, args):
            # what numba emits for a call of a jitted function (numba.core.imputils.user_function), with ``attrs``
            cres = fn.overloads[sig.args]
            context.add_linking_libs([cres.library])
            callee = context.declare_function(builder.module, cres.fndesc)
            status, value = context.call_conv.call_function(builder, callee, cres.fndesc.restype,
                                                            cres.fndesc.argtypes, args, attrs=attrs)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return value
        return sig, codegen

    typer.__name__ = typer.__qualname__ = name
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    typer.__signature__ = inspect.Signature([inspect.Parameter(p, positional)
                                             for p in ("typingctx", *params.split())])
    typer.__doc__ = doc
    return intrinsic(typer)
