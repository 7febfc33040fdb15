"""Model files are checked, never trusted (issue 14 items 1 and 6): reproductions of the crafted-file crashes,
malformed headers, and learners seeded with a numpy Generator."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from nolo import PersistenceError
from nolo.learners.bandit import SOBA, Banditron
from nolo.learners.base import Learner
from nolo.persistence import read_npz, write_npz_atomic


def _banditron_file(tmp_path):
    b = Banditron(n_classes=4, seed=1)
    x = np.ones(8)
    b.learn(x, b.act(x), 1)
    return b, b.save(tmp_path / "b.npz")


def _rewrite(path, edit_header=None, edit_arrays=None):
    header, arrays = read_npz(path)
    if edit_header:
        edit_header(header)
    if edit_arrays:
        edit_arrays(arrays)
    return write_npz_atomic(path, header, arrays)


def test_issue14_reproduction_does_not_crash(tmp_path):
    """The issue's reproduction ran out of bounds in the compiled kernels (exit -11); now a PersistenceError.
    Run in a subprocess so that a regression fails this test instead of killing the suite."""
    code = textwrap.dedent(f"""
        import numpy as np
        from nolo import PersistenceError
        from nolo.learners.bandit import Banditron
        from nolo.learners.base import Learner
        from nolo.persistence import read_npz, write_npz_atomic
        b = Banditron(n_classes=4, seed=1)
        b.learn(np.ones(8), b.act(np.ones(8)), 1)
        p = b.save({str(tmp_path / 'r.npz')!r})
        h, a = read_npz(p)
        h["state"]["n_features_in_"]["value"] = 100000
        write_npz_atomic(p, h, a)
        try:
            m = Learner.load(p)
            for _ in range(5):
                x = np.ones(100000)
                m.learn(x, m.act(x), 1)
        except PersistenceError as e:
            print("rejected:", e)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "rejected:" in res.stdout and "n_features_in_" in res.stdout


@pytest.mark.parametrize(
    "what, edit_header, edit_arrays, match",
    [
        ("n_features_in_ = 100000", lambda h: h["state"]["n_features_in_"].update(value=100000), None,
         "n_features_in_"),
        ("W_ of shape (4, 1)", None, lambda a: a.update({"state.W_": np.asfortranarray(np.zeros((4, 1)))}),
         "n_features_in_|W_"),
        ("W_ with 40 rows", None, lambda a: a.update({"state.W_": np.asfortranarray(np.ones((40, 8)))}), "W_"),
        ("W_ as float32", None, lambda a: a.update({"state.W_": np.asfortranarray(np.ones((4, 8), np.float32))}),
         "dtype"),
        ("W_ with NaN", None, lambda a: a.update({"state.W_": np.asfortranarray(np.full((4, 8), np.nan))}), "NaN"),
        ("gamma = 5", lambda h: h["config"]["params"].update(gamma=5), None, "gamma"),
        ("n_classes = 1.5", lambda h: h["config"]["params"].update(n_classes=1.5), None, "n_classes"),
        ("unknown parameter", lambda h: h["config"]["params"].update(bogus=1), None, "bogus"),
        ("t_ = -5", lambda h: h["state"]["t_"].update(value=-5), None, "t_"),
        ("t_ = 1.5", lambda h: h["state"]["t_"].update(value=1.5), None, "t_"),
        ("t_ = True", lambda h: h["state"]["t_"].update(value=True), None, "t_"),
        ("gamma_ = NaN", lambda h: h["state"]["gamma_"].update(value=float("nan")), None, "gamma_"),
        ("shadowing _validate_params", lambda h: h["state"].update(_validate_params={"value": 1}), None,
         "_validate_params"),
        ("shadowing predict_", lambda h: h["state"].update(predict_={"value": 1}), None, "predict_"),
        ("dunder key", lambda h: h["state"].update(__class___={"value": 1}), None, "__class__"),
        ("extra state key", lambda h: h["state"].update(extra_={"value": 1}), None, "extra_"),
        ("missing state key", lambda h: h["state"].pop("W_"), None, "n_features_in_|W_"),
        ("missing t_", lambda h: h["state"].pop("t_"), None, "missing.*t_"),
        ("state entry names a missing array", lambda h: h["state"].update(W_={"array": "nope"}), None, "nope"),
        ("state entry of unknown kind", lambda h: h["state"].update(W_={"pickle": "x"}), None, "W_"),
        ("state entry not an object", lambda h: h["state"].update(W_=[1, 2]), None, "W_"),
        ("bad generator state", lambda h: h["state"]["rng_"]["generator"].update(state="garbage"), None,
         "generator"),
        ("unknown bit generator", lambda h: h["state"]["rng_"]["generator"].update(bit_generator="os.system"), None,
         "bit generator"),
        ("generator state not a dict", lambda h: h["state"].update(rng_={"generator": [1]}), None, "generator"),
        ("state is a list", lambda h: h.update(state=[1]), None, "state"),
        ("config is null", lambda h: h.update(config=None), None, "config"),
        ("config without class", lambda h: h.update(config={"params": {}}), None, "class"),
        ("config of a non-learner", lambda h: h.update(config={"class": "nolo.losses.SquaredLoss", "params": {}}),
         None, "learner|unknown class"),
        ("config of a foreign class", lambda h: h.update(config={"class": "os.system", "params": {}}), None,
         "unknown class"),
        ("params is a list", lambda h: h["config"].update(params=[1]), None, "params"),
        ("missing format_version", lambda h: h.pop("format_version"), None, "format_version"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_tampered_banditron_file_is_rejected(tmp_path, what, edit_header, edit_arrays, match):
    _, path = _banditron_file(tmp_path)
    _rewrite(path, edit_header, edit_arrays)
    with pytest.raises(PersistenceError, match=match):
        Learner.load(path)


@pytest.mark.parametrize("header", [b"[1, 2]", b'"text"', b"null", b"{", b"\xff\xfe", b"1e999999", b"{}"])
def test_malformed_header_json(tmp_path, header):
    path = tmp_path / "h.npz"
    np.savez(path, __nolo__=np.frombuffer(header, dtype=np.uint8))
    with pytest.raises(PersistenceError):
        Learner.load(path)


def test_c_ordered_weights_are_made_fortran(tmp_path):
    """The bandit learners convert a C-ordered W_ on load (their kernels read W^T as C-contiguous)."""
    b, path = _banditron_file(tmp_path)
    _rewrite(path, None, lambda a: a.update({"state.W_": np.ascontiguousarray(b.W_)}))
    c = Learner.load(path)
    assert c.W_.flags.f_contiguous
    np.testing.assert_array_equal(c.W_, b.W_)


def test_header_of_wrong_dtype_and_bare_npy(tmp_path):
    path = tmp_path / "h.npz"
    np.savez(path, __nolo__=np.arange(3.0))
    with pytest.raises(PersistenceError, match="uint8"):
        Learner.load(path)
    npy = tmp_path / "a.npy"
    np.save(npy, np.arange(3))
    with pytest.raises(PersistenceError):
        Learner.load(npy)


@pytest.mark.parametrize("content", [b"", b"PK", b"PK\x03\x04" + b"\x00" * 40, b"\x93NUMPY", b"not a zip at all"])
def test_empty_and_garbage_files(tmp_path, content):
    path = tmp_path / "g.npz"
    path.write_bytes(content)
    with pytest.raises(PersistenceError):
        Learner.load(path)


def test_truncated_files(tmp_path):
    _, path = _banditron_file(tmp_path)
    data = path.read_bytes()
    for n in sorted({0, 1, 10, 100, len(data) // 3, len(data) // 2, len(data) - 30, len(data) - 1}):
        cut = tmp_path / f"cut{n}.npz"
        cut.write_bytes(data[:n])
        with pytest.raises(PersistenceError):
            Learner.load(cut)


def test_path_that_is_a_directory_or_not_a_path(tmp_path):
    with pytest.raises(PersistenceError):
        Learner.load(tmp_path)
    with pytest.raises(PersistenceError):
        Learner.load(3)


def test_loading_as_the_wrong_class(tmp_path):
    _, path = _banditron_file(tmp_path)
    with pytest.raises(PersistenceError, match="not a SOBA"):
        SOBA.load(path)
    assert type(Banditron.load(path)) is Banditron


def test_valid_file_still_loads_and_resumes(tmp_path):
    b, path = _banditron_file(tmp_path)
    c = Learner.load(path)
    for i in range(20):
        x = np.sin(np.arange(8.0) * (i + 1))
        for m in (b, c):
            m.learn(x, m.act(x), i % 2)
    np.testing.assert_array_equal(b.W_, c.W_)
    assert b.rng_.bit_generator.state == c.rng_.bit_generator.state


def test_soba_file_with_theta_still_loads(tmp_path):
    """Files written before SOBA dropped theta_ from its state (it is derived: theta = W a) still load."""
    s = SOBA(n_classes=3, seed=2)
    for i in range(10):
        x = np.cos(np.arange(5.0) * (i + 1))
        s.learn(x, s.act(x), 1)
    path = s.save(tmp_path / "s.npz")

    def add_theta(h):
        h["state"]["theta_"] = {"array": "state.theta_"}

    _rewrite(path, add_theta, lambda a: a.update({"state.theta_": np.asfortranarray(s.W_ * s.a_)}))
    t = Learner.load(path)
    np.testing.assert_array_equal(t.W_, s.W_)
    np.testing.assert_array_equal(t.a_, s.a_)


def test_unfitted_learner_file_with_state_is_rejected(tmp_path):
    path = Banditron(n_classes=3).save(tmp_path / "u.npz")
    assert not Learner.load(path).is_initialized
    _rewrite(path, lambda h: h["state"].update(W_={"value": 1}))
    with pytest.raises(PersistenceError):
        Learner.load(path)


# -- issue 14 item 6: learners seeded with a Generator ---------------------------------------------
@pytest.mark.parametrize("cls", [Banditron, SOBA])
def test_generator_seeded_learner_saves_and_resumes_bitwise(tmp_path, cls):
    a = cls(n_classes=3, seed=np.random.default_rng(7))
    b = cls(n_classes=3, seed=np.random.default_rng(7))
    X = np.random.default_rng(0).standard_normal((60, 5))
    for x in X[:30]:
        for m in (a, b):
            m.learn(x, m.act(x), int(m.act(x) == 1))
    c = Learner.load(b.save(tmp_path / "g.npz"))
    assert isinstance(c.seed, np.random.Generator) and c.seed is c.rng_  # the parameter is the learner's generator
    for x in X[30:]:
        for m in (a, c):
            m.learn(x, m.act(x), int(m.act(x) == 1))
    np.testing.assert_array_equal(a.W_, c.W_)
    assert a.rng_.bit_generator.state == c.rng_.bit_generator.state


def test_generator_seeded_unfitted_learner_roundtrips(tmp_path):
    g = np.random.default_rng(3)
    a = Banditron(n_classes=3, seed=g)
    c = Learner.load(a.save(tmp_path / "u.npz"))
    assert isinstance(c.seed, np.random.Generator) and c.seed.bit_generator.state == g.bit_generator.state
    x = np.ones(4)
    assert [a.act(x) for _ in range(20)] == [c.act(x) for _ in range(20)]


def test_mt19937_generator_state_roundtrips(tmp_path):
    g = np.random.Generator(np.random.MT19937(5))
    a = Banditron(n_classes=3, seed=g)
    a.learn(np.ones(4), a.act(np.ones(4)), 1)
    c = Learner.load(a.save(tmp_path / "m.npz"))
    assert type(c.rng_.bit_generator) is np.random.MT19937
    assert [a.act(np.ones(4)) for _ in range(20)] == [c.act(np.ones(4)) for _ in range(20)]


def test_header_is_plain_json(tmp_path):
    _, path = _banditron_file(tmp_path)
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(data["__nolo__"].tobytes().decode())
    assert header["format"] == "nolo-learner" and set(header["state"]) >= {"W_", "rng_", "t_", "n_features_in_"}
