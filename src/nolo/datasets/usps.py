"""The USPS HDF5 layout (Kaggle ``bistaumanga/usps-dataset``, cited by AM).

One file ``usps.h5`` with groups ``train`` and ``test``; each holds ``data``
(float32, n x 256, 16 x 16 grey levels in [0, 1]) and ``target`` (int32 digit 0..9).
"""

from __future__ import annotations

import os

import numpy as np

from nolo._extras import require
from nolo._validation import check_choice
from nolo.datasets._checks import check_path
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError

__all__ = ["USPS_SPLITS", "load_usps_h5"]

USPS_SPLITS = ("train", "test")


def load_usps_h5(path: str | os.PathLike, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Read split ``"train"`` or ``"test"`` of a USPS HDF5 file as ``(X float64 (n, 256), y int64)``."""
    h5py = require("h5py", "hdf5", "reading USPS's HDF5 file")

    check_choice(split, "split", USPS_SPLITS)
    path = check_path(path, "path")
    if not path.is_file():
        raise DatasetNotFoundError(f"USPS HDF5 file not found: expected {path}")
    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
        raise DataFormatError(f"{path}: not a readable HDF5 file: {exc}") from None
    with fh:
        if split not in fh or not isinstance(fh[split], h5py.Group):
            raise DataFormatError(f"{path}: no group {split!r}; the USPS layout has groups 'train' and 'test', found {sorted(fh)}")
        group = fh[split]
        for key in ("data", "target"):
            if key not in group:
                raise DataFormatError(f"{path}: group {split!r} lacks dataset {key!r} (expected 'data' and 'target')")
        data = np.asarray(group["data"][()])
        target = np.asarray(group["target"][()])
    if data.ndim != 2 or target.ndim != 1 or data.shape[0] != target.shape[0]:
        raise DataFormatError(
            f"{path}: {split}/data must be (n, d) and {split}/target (n,), got {data.shape} and {target.shape}"
        )
    if target.dtype.kind not in "iu":
        raise DataFormatError(f"{path}: {split}/target must be integers, got {target.dtype}")
    return data.astype(np.float64), target.astype(np.int64)
