"""SHA-256 of data files and their verification against the registry."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["sha256_file", "FileStatus"]

_BLOCK = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (as stored, i.e. of the ``.gz`` file itself when compressed)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileStatus:
    """The state of one expected file.

    ``status`` is ``"ok"`` (checksum matches), ``"mismatch"``, ``"unverified"``
    (present, no checksum known, or not checked) or ``"missing"``.
    """

    dataset: str
    expected: str  # display name, e.g. "mnist/t10k-images-idx3-ubyte(.gz)"
    path: Path | None
    status: str
    sha256_expected: str | None = None
    sha256_actual: str | None = None
