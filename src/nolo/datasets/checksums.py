"""SHA-256 of data files (compared with the registry's known checksums by ``registry.file_status``)."""

from __future__ import annotations

import hashlib
import os

__all__ = ["sha256_file"]

_BLOCK = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (as stored, i.e. of the ``.gz`` file itself when compressed)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
