"""The compiled stubs through which the bandit loops call a record's rules
(:func:`nolo.learners.bandit._forward.forwarder`): the rule chosen by the argument types is called with the arguments
as given, its result and its exceptions come back, no rule means no call, and no wrapper is compiled between the caller
and the rule."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from numba.core import event

from nolo.learners.bandit._forward import forwarder


@njit
def _scaled(r, x, out):
    out[0] += r.a * x
    return 2.0 * r.a * x


@njit(inline="always")
def _scaled_inline(r, x, out):
    out[0] -= r.a * x
    return 3.0 * r.a * x


@njit
def _refuse(r, x, out):
    raise ValueError("rule refused the round")


class Plain(NamedTuple):
    a: float
    rule = _scaled


class Inlined(NamedTuple):
    a: float
    rule = _scaled_inline


class Refusing(NamedTuple):
    a: float
    rule = _refuse


class NoRule(NamedTuple):
    a: float


def _choose(r, *_):
    return getattr(getattr(r, "instance_class", None), "rule", None)


rule = forwarder(_choose, "rule", "r x out", "The record's rule (compiled code only).")


@njit
def _caller(r, x, out):
    return rule(r, x, out)


def test_the_rule_of_each_record_type_is_called_with_the_arguments_as_given():
    out = np.zeros(1)
    assert _caller(Plain(1.5), 2.0, out) == 6.0 and out[0] == 3.0  # result back, in-place write seen
    assert _caller(Inlined(1.5), 2.0, out) == 9.0 and out[0] == 0.0  # a rule marked inline="always"
    assert _caller(NoRule(1.5), 2.0, out) is None and out[0] == 0.0  # no rule: nothing is called
    assert rule.__doc__ == "The record's rule (compiled code only)."


def test_an_exception_in_the_rule_reaches_the_caller():
    with pytest.raises(ValueError, match="rule refused the round"):
        _caller(Refusing(1.0), 1.0, np.zeros(1))


def test_a_type_the_chooser_refuses_is_a_typing_error_naming_why():
    def strict(r, *_):
        fn = _choose(r)
        if fn is None:
            raise TypeError(f"{r} names no rule")
        return fn

    strict_rule = forwarder(strict, "strict_rule", "r x out")

    @njit
    def caller(r, x, out):
        return strict_rule(r, x, out)

    with pytest.raises(Exception, match="names no rule"):
        caller(NoRule(1.0), 1.0, np.zeros(1))


def test_no_wrapper_is_compiled_between_the_caller_and_the_rule():
    """What an ``@overload`` returning ``lambda *a: fn(*a)`` would compile (and discard) besides the caller and the
    rule: the forwarder compiles only those two."""

    class Fresh(NamedTuple):  # a record type no earlier test compiled
        a: float
        rule = _scaled

    @njit
    def caller(r, x, out):
        return rule(r, x, out)

    with event.install_recorder("numba:compile") as rec:
        assert caller(Fresh(1.0), 1.0, np.zeros(1)) == 2.0
    compiled = {e.data["dispatcher"].py_func.__qualname__ for _, e in rec.buffer if e.is_start}
    assert compiled <= {caller.py_func.__qualname__, _scaled.py_func.__qualname__}, compiled
    assert caller.py_func.__qualname__ in compiled
