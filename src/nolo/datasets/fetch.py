"""Download a data set's files into the data directory: ``nolo data fetch NAME`` (and :func:`fetch`).

Where each data set comes from:

* ``mnist`` -- the four gzip IDX files of LeCun, Cortes & Burges, from the mirror torchvision reads
  (``https://ossci-datasets.s3.amazonaws.com/mnist/``).  The test files are checked against the SHA-256 of the
  registry (:mod:`nolo.datasets.registry`); the training files' checksums are not pinned by nolo: their SHA-256 is
  printed so that you can compare it with the publisher's.
* ``fashion-mnist`` -- Xiao, Rasul & Vollgraf's gzip IDX files from the authors' bucket
  (``http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/``); no pinned checksums.
* ``usps`` -- the HDF5 layout AM cite is published on Kaggle (``bistaumanga/usps-dataset``), which needs an account:
  nothing is downloaded, and the command says where to put ``usps.h5``.
* every other data set is built in (scikit-learn's or generated): nothing to fetch.

Downloads go through pooch (atomic writes, retries, hash checks, a progress bar): a file whose checksum does not
match is not kept, and the error names it; a file already present with the right checksum is not fetched again.
``base_url`` replaces the source's address (a mirror, or the local server of the tests) with the same file names.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from nolo._extras import require
from nolo.datasets.errors import DatasetNotFoundError
from nolo.datasets.paths import resolve_data_dir
from nolo.datasets.registry import REGISTRY, FileDataset
from nolo.exceptions import ParameterError

__all__ = ["SOURCES", "Source", "fetch"]


@dataclass(frozen=True)
class Source:
    """Where a data set's files are published: ``base_url`` + each file name (stored as ``folder/name``);
    ``sha256`` the pinned checksums by file name; ``manual`` a sentence for a data set with no public download."""

    folder: str
    base_url: str = ""
    files: tuple[str, ...] = ()
    sha256: dict = field(default_factory=dict)
    manual: str = ""


_IDX = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz")


def _pinned(name: str) -> dict:
    """The registry's SHA-256 of a data set's gzip files, by file name."""
    out = {}
    for f in REGISTRY[name].all_files():
        sha = f.sha256.get(".gz")
        if sha:
            out[Path(f.stem).name + ".gz"] = sha
    return out


SOURCES: dict[str, Source] = {
    "mnist": Source("mnist", "https://ossci-datasets.s3.amazonaws.com/mnist/", _IDX, _pinned("mnist")),
    "fashion-mnist": Source("fashion-mnist", "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/", _IDX),
    "usps": Source("usps", manual="USPS in the HDF5 layout is published on Kaggle (bistaumanga/usps-dataset), which "
                                  "needs an account: download usps.h5 there and put it at {path}"),
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(name: str, data_dir=None, *, base_url: str | None = None, progress: bool = False) -> list[dict]:
    """Download data set ``name``'s files into ``data_dir`` (resolved as every loader resolves it) and return, per
    file, ``{"file", "path", "sha256", "verified", "downloaded"}``.  Raises :class:`ParameterError` for an unknown or
    built-in data set, :class:`DatasetNotFoundError` when the source cannot be reached or a checksum does not match
    (the bad file is not kept), or when the data set has no public download (the message says where to get it)."""
    pooch = require("pooch", "fetch", "downloading data sets")

    if name not in REGISTRY:
        raise ParameterError(f"unknown dataset {name!r}; known: {', '.join(REGISTRY.names())}")
    if not isinstance(REGISTRY[name], FileDataset) or name not in SOURCES:
        raise ParameterError(f"{name} is built in (scikit-learn's or generated): there is nothing to fetch")
    src = SOURCES[name]
    root = resolve_data_dir(data_dir).path
    folder = root / src.folder
    if src.manual:
        raise DatasetNotFoundError(src.manual.format(path=folder / "usps.h5"))
    base = (base_url or src.base_url).rstrip("/") + "/"
    out = []
    for fname in src.files:
        target = folder / fname
        sha = src.sha256.get(fname)
        existed = target.exists() and (sha is None or _sha256(target) == sha)
        try:
            pooch.retrieve(base + fname, known_hash=f"sha256:{sha}" if sha else None, fname=fname, path=folder,
                           progressbar=progress)
        except ValueError as exc:  # pooch: the downloaded file's hash does not match (the file is not kept)
            raise DatasetNotFoundError(f"{name}: {fname} from {base + fname} does not have the published SHA-256 "
                                       f"{sha}; it was not kept ({exc})") from None
        except Exception as exc:  # network and HTTP errors (requests' or pooch's own types)
            raise DatasetNotFoundError(f"{name}: could not download {base + fname}: {exc}") from None
        out.append({"file": f"{src.folder}/{fname}", "path": str(target), "sha256": _sha256(target),
                    "verified": sha is not None, "downloaded": not existed})
    return out
