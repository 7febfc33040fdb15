"""The IDX format of MNIST and Fashion-MNIST (``*-idx3-ubyte`` images, ``*-idx1-ubyte`` labels).

Layout (LeCun et al., http://yann.lecun.com/exdb/mnist/): a 4-byte magic
number ``0x00 0x00 <type> <ndim>``, then ``ndim`` big-endian uint32 sizes, then
the data in big-endian row-major order.  Type codes: 0x08 uint8, 0x09 int8,
0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64.  Files may be gzip
compressed (detected from the content, not the file name).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

from nolo.datasets._checks import check_flag, check_path
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError

__all__ = ["IDX_TYPES", "read_idx", "write_idx", "load_idx_pair"]

#: IDX type code -> big-endian numpy dtype
IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise DatasetNotFoundError(f"IDX file not found: expected {path}")
    with open(path, "rb") as fh:
        head = fh.read(2)
    try:
        if head == _GZIP_MAGIC:
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError) as exc:  # truncated or corrupt gzip stream
        raise DataFormatError(f"{path}: cannot decompress gzip IDX file: {exc}") from None


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (plain or gzip) into a native-endian array of its stored shape.

    Raises :class:`DatasetNotFoundError` if the file is missing and
    :class:`DataFormatError` if the magic number is wrong or the data size does
    not match the header.
    """
    path = check_path(path, "path")
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise DataFormatError(f"{path}: too short for an IDX header ({len(raw)} bytes, need at least 4)")
    zero0, zero1, code, ndim = raw[0], raw[1], raw[2], raw[3]
    magic = int.from_bytes(raw[:4], "big")
    if zero0 != 0 or zero1 != 0 or code not in IDX_TYPES or ndim == 0:
        raise DataFormatError(
            f"{path}: bad IDX magic number 0x{magic:08X}; expected 0x0000TTNN with type TT in "
            f"{{{', '.join(f'0x{c:02X}' for c in IDX_TYPES)}}} and ndim NN >= 1 "
            "(e.g. 0x00000803 for images, 0x00000801 for labels)"
        )
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise DataFormatError(f"{path}: truncated IDX header: {ndim} dimensions need {header_len} bytes, got {len(raw)}")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = IDX_TYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    got = len(raw) - header_len
    if got != expected:
        raise DataFormatError(
            f"{path}: IDX size mismatch: header says shape {shape} of {dtype.name} = {expected} data bytes, "
            f"file has {got} ({'truncated' if got < expected else 'trailing bytes'})"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header_len).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike, array, *, compress: bool | None = None) -> Path:
    """Write ``array`` as an IDX file (gzip if ``compress`` or, by default, if the name ends in ``.gz``)."""
    path = check_path(path, "path")
    if compress is not None:
        check_flag(compress, "compress")
    arr = np.asarray(array)
    codes = {dt.str[1:]: c for c, dt in IDX_TYPES.items()}
    key = arr.dtype.str[1:]
    if key not in codes:
        raise DataFormatError(f"write_idx: dtype {arr.dtype} has no IDX type code (allowed: uint8, int8, int16, int32, float32, float64)")
    code = codes[key]
    payload = bytes([0, 0, code, arr.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    payload += np.ascontiguousarray(arr, dtype=IDX_TYPES[code]).tobytes()
    if compress is None:
        compress = path.suffix == ".gz"
    if compress:
        with gzip.open(path, "wb") as fh:
            fh.write(payload)
    else:
        path.write_bytes(payload)
    return path


def load_idx_pair(images_path: str | os.PathLike, labels_path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Load an IDX images file and its labels file as ``(X float64 (n, pixels), y int64 (n,))``.

    Images are flattened row-major (28 x 28 -> 784) and kept in their stored
    scale (0..255 for MNIST); normalise afterwards.
    """
    images = read_idx(check_path(images_path, "images_path"))
    labels = read_idx(check_path(labels_path, "labels_path"))
    if images.ndim < 2:
        raise DataFormatError(f"{images_path}: an images file must have >= 2 dimensions, got shape {images.shape}")
    if labels.ndim != 1:
        raise DataFormatError(f"{labels_path}: a labels file must have 1 dimension, got shape {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise DataFormatError(f"{labels_path}: labels must be integers, got {labels.dtype}")
    if images.shape[0] != labels.shape[0]:
        raise DataFormatError(
            f"{images_path} has {images.shape[0]} images but {labels_path} has {labels.shape[0]} labels"
        )
    X = images.reshape(images.shape[0], -1).astype(np.float64)
    return X, labels.astype(np.int64)
