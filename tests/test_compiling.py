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


class _CachedFake:
    """A stand-in for a disk-cached numba dispatcher in one process: ``compile`` loads a version another "process"
    wrote to the shared ``disk`` (numba reads its cache index again at each compile), else compiles for ``compile_s``
    and writes it."""

    _cache = object()  # anything but numba's NullCache: a disk cache

    @staticmethod
    def py_func(x):  # the Python function every process's dispatcher compiles: what names the lock
        return 2 * x

    def __init__(self, disk, log, compile_s):
        self.disk, self.log, self.compile_s, self.overloads = disk, log, compile_s, {}

    def typeof_pyval(self, a):
        return type(a).__name__

    def compile(self, sig):
        if sig in self.disk:
            self.log.append("loaded")
        else:
            time.sleep(self.compile_s)
            self.disk[sig] = True
            self.log.append("compiled")
        self.overloads[sig] = True

    def __call__(self, x):
        if (type(x).__name__,) not in self.overloads:  # a call that was not compiled first compiles itself
            self.compile((type(x).__name__,))
        return 2 * x


@pytest.mark.parametrize("note", ["on", "silenced", "no lock"])
def test_processes_starting_together_compile_a_loop_once(fast_note, tmp_path, monkeypatch, note):
    import threading

    if note == "silenced":  # as the command line sets it for its workers
        monkeypatch.setenv("NOLO_COMPILE_NOTE", "0")
    if note == "no lock":
        monkeypatch.setenv("NOLO_COMPILE_LOCK", "0")

    monkeypatch.setattr(C.tempfile, "gettempdir", lambda: str(tmp_path))
    disk, log = {}, []
    workers = [_CachedFake(disk, log, compile_s=0.5) for _ in range(3)]  # three processes' dispatchers
    start = threading.Barrier(3)
    out = []

    def run(fn):
        start.wait()
        out.append(C.call_compiled(fn, FakeState, "stream loop", 21))

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [42, 42, 42]
    if note == "no lock":  # each "process" compiles for itself, as numba alone does
        assert log == ["compiled"] * 3
        return
    assert sorted(log) == ["compiled", "loaded", "loaded"]
    assert list(tmp_path.glob("nolo-compile-locks/*.lock"))


def test_a_lock_held_too_long_is_given_up(fast_note, tmp_path, monkeypatch):
    fcntl = pytest.importorskip("fcntl")
    import os

    monkeypatch.setattr(C.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(C, "LOCK_WAIT", 0.3)
    fn = _CachedFake({}, [], compile_s=0.0)
    name = f"{C._qualname(fn)}|{C._qualname(FakeState)}|{('int',)}"
    with C._machine_lock(name):  # another process compiling and stuck
        folder = tmp_path / "nolo-compile-locks"
        (path,) = folder.glob("*.lock")
        fd = os.open(path, os.O_RDWR)
        with pytest.raises(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
        t0 = time.monotonic()
        assert C.call_compiled(fn, FakeState, "act", 2) == 4  # waits LOCK_WAIT, then compiles itself
        assert 0.25 < time.monotonic() - t0 < 5
    assert fn.log == ["compiled"]
