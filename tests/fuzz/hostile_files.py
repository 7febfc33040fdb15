"""Hostile model files for one learner class: truncations, bit flips, tampered headers and arrays, unnamed entries
and bombs (entries declaring far more bytes than the file holds).

Run as ``python tests/fuzz/hostile_files.py ClassName [ClassName ...] [n_bitflips]`` (tests/fuzz/test_hostile_files.py
runs it in a subprocess, so a segfault fails the class's test instead of killing the suite).  Prints one JSON line
per case: ``{"cls": ..., "case": ..., "outcome": ...}`` with outcome

* ``"rejected"`` -- ``Learner.load`` raised PersistenceError (the expected answer for a damaged file);
* ``"accepted"`` -- the file loaded and the learner then predicted and learned (or refused with a
  ValueError/NumericalError) without a non-finite output;
* ``"FAIL: ..."`` -- anything else (another exception type from load or from using the loaded learner,
  or a silent non-finite prediction).

Before each case it prints ``{"cls": ..., "try": case}`` so that the parent can name the case that crashed the
process, and ``{"cls": ..., "done": true}`` after a class's last case.
"""

from __future__ import annotations

import io
import json
import math
import struct
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from nolo.checks import _build, _Game, registered_learners, test_params
from nolo.exceptions import NumericalError, PersistenceError
from nolo.learners.base import Learner
from nolo.persistence import read_npz, write_npz_atomic

SCALAR_VARIANTS = [-5, 0, 10**30, 2**70, 1e300, -1e300, float("nan"), float("inf"), 1.5, "s", None, [], {}, True,
                   [1, 2]]
PARAM_VARIANTS = [-1, 0, 5, 1e300, float("nan"), "bogus", None, [], {"x": 1}, True, 1.5, 2**64]


def _array_variants(a: np.ndarray):
    yield "float32" if a.dtype != np.float32 else "float64", a.astype(np.float32 if a.dtype != np.float32 else np.float64)
    yield "int64", a.astype(np.int64) if a.dtype.kind != "c" else a.real.astype(np.int64)
    yield "complex", a.astype(np.complex128)
    yield "bool", a.astype(bool)
    if a.ndim >= 1:
        yield "one more row", np.concatenate([a, a[:1]]) if a.shape[0] else np.zeros((1,) + a.shape[1:], a.dtype)
        yield "one row fewer", a[:-1] if a.shape[0] else a
        yield "40x rows", np.repeat(a, 40, axis=0) if a.shape[0] else np.zeros((40,) + a.shape[1:], a.dtype)
        yield "empty", a[:0]
        yield "extra axis", a[..., None]
        yield "flattened", a.reshape(-1)
    if a.ndim >= 2:
        yield "transposed", a.T.copy()
        yield "other order", np.asfortranarray(a) if a.flags.c_contiguous else np.ascontiguousarray(a)
        yield "one more column", np.concatenate([a, a[:, :1]], axis=1) if a.shape[1] else a
        yield "one column fewer", a[:, :-1]
    yield "scalar", np.asarray(1.0)
    if a.dtype.kind == "f" and a.size:
        b = a.copy()
        b.flat[0] = np.nan
        yield "NaN", b
        b = a.copy()
        b.flat[0] = np.inf
        yield "inf", b
        b = a.copy()
        b.flat[-1] = 1e300
        yield "1e300", b
        b = a.copy()
        b.flat[-1] = -1e300
        yield "-1e300", b
    if a.dtype.kind in "iu" and a.size:
        # index-like entries (fill counts, labels, bits): just past every size a compiled loop may trust, and huge
        sizes = sorted({1, 2, 5, 17, 40, *(int(x) + 1 for x in a.flat[:8])})
        for pos in sorted({0, a.size - 1}):
            for v in (-1, *sizes, 2**31, 2**40, np.iinfo(a.dtype).max):
                b = a.copy()
                b.flat[pos] = v
                yield f"int {v} at {pos}", b


@np.errstate(all="ignore")
def _variants(a):
    return list(_array_variants(a))


def _scalar_neighbours(v) -> list:
    """Values near a scalar state entry's own: counts and pointers just past a buffer (v + 1, 2 v + 17), at the
    limits of int32/int64 arithmetic; rates, scales and norms out of their range (negative, above 1, huge)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return []
    if isinstance(v, int):
        return [v + 1, v + 2, 2 * v + 17, 1000, 2**31, 2**62, 2**63 - 1, -1, -(2**63)]
    return [-v if v else -0.5, v + 1.0, 2.0, 0.999999, -1e-9, 1e10, -1e10, 700.0, -700.0, 1e308]


def _zip(members: list[tuple[str, int, int, int, bytes]]) -> bytes:
    """A zip archive of ``members`` (name, method, CRC-32, uncompressed size, payload as stored), written by hand:
    zipfile cannot store a payload compressed elsewhere, nor declare a size its payload does not have."""
    body, central = bytearray(), bytearray()
    for name, method, crc, size, payload in members:
        n = name.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, len(payload), size,
                               len(n), 0, 0, 0, 0, 0, len(body)) + n
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(payload), size, len(n), 0)
        body += n + payload
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(body), 0)
    return bytes(body + central + end)


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _members(raw: bytes) -> list[tuple[str, int, int, int, bytes]]:
    """The entries of the saved file ``raw``, stored uncompressed."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return [(i.filename, zipfile.ZIP_STORED, i.CRC, i.file_size, zf.read(i)) for i in zf.infolist()]


def zip_bomb(raw: bytes, entry: str, mib: int = 1024) -> bytes:
    """The saved file ``raw`` with the array entry ``entry`` (``state.W_``) replaced by a deflated .npy of ``mib``
    MiB of float64 zeros: about 1 KB of file per MiB it inflates to (1 MB of file for 1 GiB), a valid zip."""
    header = _npy_header((mib * 2**17,))
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(2**20)
    head = comp.compress(header) + comp.flush(zlib.Z_FULL_FLUSH)
    chunk = comp.compress(zeros) + comp.flush(zlib.Z_FULL_FLUSH)  # a full flush resets the compressor: every
    payload = head + chunk * mib + comp.flush()  # MiB of zeros compresses to these same bytes
    crc = zlib.crc32(header)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    name = entry + ".npy"
    return _zip([(n, m, c, s, p) if n != name else (name, zipfile.ZIP_DEFLATED, crc, len(header) + mib * 2**20, payload)
                 for n, m, c, s, p in _members(raw)])


def oversized_npy(raw: bytes, entry: str, shape: tuple[int, ...] = (2**30,)) -> bytes:
    """The saved file ``raw`` with the array entry ``entry`` replaced by a stored .npy whose header declares
    ``shape`` float64 over 8 bytes of data (numpy allocates the declared size before reading)."""
    data = _npy_header(shape) + bytes(8)
    name = entry + ".npy"
    return _zip([(n, m, c, s, p) if n != name else (name, zipfile.ZIP_STORED, zlib.crc32(data), len(data), data)
                 for n, m, c, s, p in _members(raw)])


def with_extra_entry(raw: bytes, name: str = "state.extra") -> bytes:
    """The saved file ``raw`` with one more array entry, which its state does not name."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.arange(3.0))
    data = buf.getvalue()
    return _zip(_members(raw) + [(name + ".npy", zipfile.ZIP_STORED, zlib.crc32(data), len(data), data)])


def cases(header: dict, arrays: dict, raw: bytes, n_bitflips: int, seed: int = 0):
    """(name, kind, payload): kind "raw" (bytes) or "npz" ((header, arrays))."""
    rng = np.random.default_rng(seed)
    yield "empty file", "raw", b""
    for frac in (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        n = int(len(raw) * frac)
        yield f"truncated to {n} bytes", "raw", raw[:n]
    yield "truncated by 1 byte", "raw", raw[:-1]
    yield "appended garbage", "raw", raw + b"\x00garbage"
    yield "an entry its state does not name", "raw", with_extra_entry(raw)
    first = next((e["array"] for e in header["state"].values() if isinstance(e, dict) and "array" in e), None)
    if first is not None:
        yield f"array entry {first} a 1 MB deflate bomb of 1 GiB", "raw", zip_bomb(raw, first)
        yield f"array entry {first} declaring 2**30 floats over 8 bytes", "raw", oversized_npy(raw, first)
    for pos in rng.integers(0, len(raw) * 8, n_bitflips):
        b = bytearray(raw)
        b[pos // 8] ^= 1 << (pos % 8)
        yield f"bit flip at bit {pos}", "raw", bytes(b)

    def edited(fn):
        h = json.loads(json.dumps(header))
        a = dict(arrays)
        fn(h, a)
        return h, a

    # header structure
    for name, fn in [
        ("header is a list", lambda h, a: h.clear() or h.update({"__list__": True})),
        ("no config", lambda h, a: h.pop("config")),
        ("no state", lambda h, a: h.pop("state")),
        ("config is a string", lambda h, a: h.update(config="x")),
        ("state is null", lambda h, a: h.update(state=None)),
        ("format_version 2", lambda h, a: h.update(format_version=2)),
        ("class of a non-learner", lambda h, a: h["config"].update({"class": "nolo.noise.models.GaussianNoise"})),
        ("class of the abstract base", lambda h, a: h["config"].update({"class": "nolo.learners.base.Learner"})),
        ("class outside nolo", lambda h, a: h["config"].update({"class": "subprocess.Popen"})),
        ("params null", lambda h, a: h["config"].update(params=None)),
    ]:
        yield name, "npz", edited(fn)
    # parameters
    for p in header["config"].get("params", {}):
        for v in PARAM_VARIANTS:
            yield f"param {p} = {v!r}", "npz", edited(lambda h, a, p=p, v=v: h["config"]["params"].update({p: v}))
    yield "unknown param", "npz", edited(lambda h, a: h["config"]["params"].update(bogus_param=1))
    # state entries
    for key, entry in header["state"].items():
        yield f"state {key} removed", "npz", edited(lambda h, a, k=key: h["state"].pop(k))
        kind = next(iter(entry)) if isinstance(entry, dict) and entry else None
        if kind == "array":
            arr = arrays[entry["array"]]
            for desc, new in _variants(arr):
                yield f"array {key}: {desc}", "npz", edited(lambda h, a, n=entry["array"], v=new: a.update({n: v}))
            yield f"array {key}: missing entry", "npz", edited(lambda h, a, n=entry["array"]: a.pop(n))
        elif kind == "arrays":
            for i, name in enumerate(entry["arrays"]):
                for desc, new in _variants(arrays[name]):
                    yield f"array {key}[{i}]: {desc}", "npz", edited(lambda h, a, n=name, v=new: a.update({n: v}))
            yield f"arrays {key}: empty list", "npz", edited(lambda h, a, k=key: h["state"].update({k: {"arrays": []}}))
        elif kind == "generator":
            yield f"generator {key}: garbage state", "npz", edited(
                lambda h, a, k=key: h["state"][k]["generator"].update(state={"state": -1, "inc": "x"}))
            yield f"generator {key}: MT19937 name", "npz", edited(
                lambda h, a, k=key: h["state"][k]["generator"].update(bit_generator="MT19937"))
        for v in SCALAR_VARIANTS + _scalar_neighbours(entry.get("value") if kind == "value" else None):
            yield f"state {key} = {v!r}", "npz", edited(lambda h, a, k=key, v=v: h["state"].update({k: {"value": v}}))
        yield f"state {key} -> missing array", "npz", edited(lambda h, a, k=key: h["state"].update({k: {"array": "x"}}))
    for extra in ("extra_", "_validate_params", "predict", "__class__", "learn_", "rng"):
        yield f"added state key {extra}", "npz", edited(lambda h, a, k=extra: h["state"].update({k: {"value": 1}}))


def exercise(learner, game) -> str:
    """Use a loaded learner: predict, then a few rounds; return "" or a failure description."""
    try:
        if learner.is_initialized:
            p = np.asarray(game.predict(learner))
            if p.dtype.kind in "fc" and not np.all(np.isfinite(p)):
                return "FAIL: predict returned a non-finite value"
            if game.n_classes is not None and p.dtype.kind in "iu" and (p.min() < 0 or p.max() >= game.n_classes):
                return f"FAIL: predict returned a label outside [0, {game.n_classes})"
        game.play(learner, 0, 3)
        p = np.asarray(game.predict(learner))
        if p.dtype.kind in "fc" and not np.all(np.isfinite(p)):
            return "FAIL: predict returned a non-finite value after learning"
    except (ValueError, NumericalError):
        return ""
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        return f"FAIL: using the loaded learner raised {type(exc).__name__}: {str(exc)[:200]}"
    return ""


def run_class(class_name: str, n_bitflips: int) -> None:
    cls = {c.__name__: c for c in registered_learners()}[class_name]
    params = test_params(cls)[0]
    learner = _build(cls, params)
    game = _Game(learner, n_rounds=30)
    game.play(learner, 0, 25)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = learner.save(tmp / "model")
        raw = path.read_bytes()
        header, arrays = read_npz(path)
        for i, (name, kind, payload) in enumerate(cases(header, arrays, raw, n_bitflips)):
            print(json.dumps({"cls": class_name, "try": name}), flush=True)
            f = tmp / f"case{i}.npz"
            if kind == "raw":
                f.write_bytes(payload)
            else:
                h, a = payload
                if h.get("__list__"):
                    f.write_bytes(b"")
                    np.savez(f, __nolo__=np.frombuffer(b"[1, 2, 3]", dtype=np.uint8))
                else:
                    write_npz_atomic(f, h, a)
            try:
                loaded = Learner.load(f)
            except PersistenceError:
                outcome = "rejected"
            except Exception as exc:  # noqa: BLE001
                outcome = f"FAIL: load raised {type(exc).__name__}: {str(exc)[:200]}"
            else:
                outcome = exercise(loaded, _Game(loaded, n_rounds=30)) or "accepted"
            print(json.dumps({"cls": class_name, "case": name, "outcome": outcome}), flush=True)
            f.unlink()
    print(json.dumps({"cls": class_name, "done": True}), flush=True)


def main(argv: list[str]) -> int:
    """``hostile_files.py CLASS [CLASS ...] [N_BITFLIPS]``: the classes one after another in this process (the
    parent restarts a process after the class that crashed one, see test_hostile_files.run_corpora)."""
    n_bitflips = int(argv[-1]) if argv and argv[-1].isdigit() else 60
    for name in [a for a in argv if not a.isdigit()]:
        run_class(name, n_bitflips)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
