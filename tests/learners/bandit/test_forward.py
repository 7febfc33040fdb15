"""The compiled plug-in points through which the bandit loops call a record's rules
(:func:`nolo.learners.bandit._forward.forwarder`): the rule chosen by the argument types is called with the arguments
as given, its result and its exceptions come back, no rule means no call, and no wrapper is compiled between the caller
and the rule."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from numba.core import event

from nolo.learners.bandit._forward import forwarder, rule_of


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


rule = forwarder(lambda r, *_: rule_of(r, "rule", None), "rule", "r x out", "The record's rule (compiled code only).")


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


def test_a_type_the_chooser_refuses_fails_to_compile_with_the_choosers_error():
    strict_rule = forwarder(lambda r, *_: rule_of(r, "rule"), "strict_rule", "r x out")  # no default: required

    @njit
    def caller(r, x, out):
        return strict_rule(r, x, out)

    with pytest.raises(TypeError, match="its class must name a compiled `rule`"):  # the chooser's error, unwrapped
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


def test_a_user_record_leaves_no_cache_entry_another_process_cannot_load(tmp_path):
    """The plug-in points' fallbacks (``probs`` of a record that names none) are compiled for any record type; cached
    on disk, numba's index would pickle a user's record class by reference, and a later process that cannot import the
    user's module would fail (ModuleNotFoundError) on its first compile of that fallback."""
    import os
    import subprocess
    import sys
    import textwrap

    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "user_records.py").write_text(
        "from typing import NamedTuple\n\nclass UserRecord(NamedTuple):\n    a: float\n")
    script = textwrap.dedent("""
        import sys
        from typing import NamedTuple
        import numpy as np
        from numba import njit
        from nolo.learners.bandit import _stream
        if sys.argv[1] == "user":
            from user_records import UserRecord as R
        else:
            class R(NamedTuple):
                b: float
        @njit
        def f(s, out):
            _stream.probs(s, np.zeros(4), 3, out)
        out = np.zeros(3)
        f(R(1.0), out)
        print(np.isnan(out).all())
    """)
    (tmp_path / "run.py").write_text(script)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NOLO_COMPILE_NOTE": "0"}
    first = subprocess.run([sys.executable, str(tmp_path / "run.py"), "user"], capture_output=True, text=True,
                           env={**env, "PYTHONPATH": str(tmp_path / "mod")})
    assert first.returncode == 0 and first.stdout.strip() == "True", first.stderr[-2000:]
    later = subprocess.run([sys.executable, str(tmp_path / "run.py"), "other"], capture_output=True, text=True,
                           env=env)
    assert later.returncode == 0 and later.stdout.strip() == "True", later.stderr[-2000:]
