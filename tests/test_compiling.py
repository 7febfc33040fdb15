"""The console note of a first call that waits on numba's compiler (nolo._compiling)."""

import logging
import time

import pytest

from nolo import _compiling as C


class _Fake:
    """A stand-in for a numba dispatcher: ``signatures`` grows when ``compile_s`` has passed, then the call runs on
    for ``run_s``."""

    def __init__(self, compile_s, run_s=0.0):
        self.signatures, self.compile_s, self.run_s = [], compile_s, run_s

    def __call__(self, x):
        time.sleep(self.compile_s)
        self.signatures.append("sig")
        time.sleep(self.run_s)
        return 2 * x


class FakeState:
    pass


@pytest.fixture
def fast_note(monkeypatch):
    # the command line silences the note in its own process (and its workers) through the environment; a CLI test
    # run in this process before would leave it set
    monkeypatch.delenv("NOLO_COMPILE_NOTE", raising=False)
    monkeypatch.setattr(C, "NOTE_AFTER", 0.05)
    monkeypatch.setattr(C, "_called", set())


def test_a_first_call_waiting_on_the_compiler_says_so_once(fast_note, caplog):
    fn = _Fake(compile_s=0.4)
    with caplog.at_level(logging.WARNING, logger="nolo.compiling"):
        assert C.call_compiled(fn, FakeState, "learn", 3) == 6
        assert C.call_compiled(fn, FakeState, "learn", 4) == 8  # the second call: no note
    notes = [r.getMessage() for r in caplog.records if r.name == "nolo.compiling"]
    assert notes == ["compiling Fake's learn for this machine, once (later processes load it from numba's cache) ..."]


def test_a_long_run_of_a_compiled_loop_says_nothing(fast_note, caplog):
    fn = _Fake(compile_s=0.0, run_s=0.4)  # compiled at once (loaded from the cache), then a long run
    with caplog.at_level(logging.WARNING, logger="nolo.compiling"):
        C.call_compiled(fn, FakeState, "stream loop", 1)
    assert not [r for r in caplog.records if r.name == "nolo.compiling"]


def test_a_quick_first_call_says_nothing(fast_note, caplog):
    C.NOTE_AFTER = 5.0
    with caplog.at_level(logging.WARNING, logger="nolo.compiling"):
        C.call_compiled(_Fake(compile_s=0.0), FakeState, "act", 1)
    assert not [r for r in caplog.records if r.name == "nolo.compiling"]


def test_the_environment_variable_silences_it(fast_note, caplog, monkeypatch):
    monkeypatch.setenv("NOLO_COMPILE_NOTE", "0")
    with caplog.at_level(logging.WARNING, logger="nolo.compiling"):
        C.call_compiled(_Fake(compile_s=0.3), FakeState, "act", 1)
    assert not [r for r in caplog.records if r.name == "nolo.compiling"]
