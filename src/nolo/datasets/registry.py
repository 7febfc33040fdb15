"""The dataset registry: name -> files per split, checksums, and how to read them.

File layout inside the data directory (see :mod:`nolo.datasets.paths`):

============== ===================================================================== ==============
dataset        files (``.gz`` or uncompressed for IDX)                                splits
============== ===================================================================== ==============
mnist          ``mnist/train-images-idx3-ubyte``, ``mnist/train-labels-idx1-ubyte``,  train, test
               ``mnist/t10k-images-idx3-ubyte``, ``mnist/t10k-labels-idx1-ubyte``
fashion-mnist  the same four names under ``fashion-mnist/``                          train, test
usps           ``usps/usps.h5`` (groups ``train`` and ``test``)                      train, test
============== ===================================================================== ==============

Built-in datasets need no file: ``iris`` and ``digits`` (scikit-learn), the
generators ``synsep`` and ``synnonsep``, and the nine sets of the bandit suite
(:mod:`nolo.datasets.bandit_suite`: ``wine``, ``breast-cancer``,
``mixed-scales``, ``many-classes``, ``rings``, ``moons``, ``imbalanced``,
``text``, ``categorical``; raw feature scales, seeded).  Every dataset also accepts
``split="all"``: the concatenation (train then test) of the splits whose
files are present.

Known SHA-256 checksums are those of the files as published (MNIST
test set, gzip; USPS).  Other files are reported as present but unverified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from nolo._registry import Registry
from nolo.datasets.checksums import sha256_file

__all__ = ["FileSpec", "FileStatus", "FileDataset", "BuiltinDataset", "REGISTRY", "get_spec", "dataset_names", "file_status"]

SPLIT_ORDER = ("train", "test")


@dataclass(frozen=True)
class FileSpec:
    """One expected file: ``stem`` relative to the data directory, tried with each suffix in ``suffixes``."""

    stem: str
    suffixes: tuple[str, ...] = ("",)
    sha256: dict[str, str] = field(default_factory=dict)  # suffix -> hex digest, where known

    def display(self) -> str:
        opt = [s for s in self.suffixes if s]
        return self.stem + "".join(f"({s})" for s in opt) if "" in self.suffixes else self.stem + self.suffixes[0]

    def candidates(self, root: Path) -> list[Path]:
        return [root / (self.stem + s) for s in self.suffixes]

    def find(self, root: Path) -> Path | None:
        """The first candidate that exists under ``root``, or None."""
        for p in self.candidates(root):
            if p.is_file():
                return p
        return None

    def known_checksums(self) -> list[tuple[str, str]]:
        """``(file name, sha256)`` for each variant whose checksum is known."""
        return [(self.stem + s, self.sha256[s]) for s in self.suffixes if s in self.sha256]

    def expected_sha256(self, path: Path) -> str | None:
        for s in self.suffixes:
            if path.name == Path(self.stem + s).name:
                return self.sha256.get(s)
        return None


@dataclass(frozen=True)
class FileStatus:
    """The state of one expected file of a dataset.

    ``status`` is ``"ok"`` (checksum matches), ``"mismatch"``, ``"unverified"``
    (present; no checksum known or not checked) or ``"missing"``.
    """

    dataset: str
    file: FileSpec
    path: Path | None
    status: str
    sha256_expected: str | None = None
    sha256_actual: str | None = None

    @property
    def expected(self) -> str:
        return self.file.display()


@dataclass(frozen=True)
class FileDataset:
    """A dataset read from files: ``splits[split]`` are its files, ``reader(paths, split)`` returns (X, y)."""

    name: str
    description: str
    splits: dict[str, tuple[FileSpec, ...]]
    reader: Callable[[list[Path], str], tuple[np.ndarray, np.ndarray]]

    def all_files(self) -> list[FileSpec]:
        seen: dict[str, FileSpec] = {}
        for files in self.splits.values():
            for f in files:
                seen.setdefault(f.stem, f)
        return list(seen.values())

    def present_splits(self, root: Path) -> list[str]:
        return [s for s in SPLIT_ORDER if s in self.splits and all(f.find(root) for f in self.splits[s])]


@dataclass(frozen=True)
class BuiltinDataset:
    """A dataset that needs no file (scikit-learn built-in or generator)."""

    name: str
    description: str


def _idx_reader(paths, split):
    from nolo.datasets.idx import load_idx_pair

    return load_idx_pair(paths[0], paths[1])


def _usps_reader(paths, split):
    from nolo.datasets.usps import load_usps_h5

    return load_usps_h5(paths[0], split)


def _idx_splits(folder: str, checksums: dict[str, str] | None = None) -> dict[str, tuple[FileSpec, ...]]:
    checksums = checksums or {}

    def spec(name):
        sha = {".gz": checksums[name]} if name in checksums else {}
        return FileSpec(f"{folder}/{name}", (".gz", ""), sha)

    return {
        "train": (spec("train-images-idx3-ubyte"), spec("train-labels-idx1-ubyte")),
        "test": (spec("t10k-images-idx3-ubyte"), spec("t10k-labels-idx1-ubyte")),
    }


_MNIST_SHA = {
    "t10k-images-idx3-ubyte": "ba05d2d6e06f59dd97d2d5378250478bb5c9b64296a5c2681700569121e3a2d7",
    "t10k-labels-idx1-ubyte": "94088eab8a64f51a9b34cc9716f54b6548ef8b2fd16ada6d1575091b933dbf4b",
}
_USPS = FileSpec("usps/usps.h5", ("",), {"": "734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36"})

#: dataset name -> :class:`FileDataset` / :class:`BuiltinDataset` (a :class:`nolo._registry.Registry`, the one
#: name -> object mechanism of nolo: ``REGISTRY.register(name, FileDataset(...))`` adds a dataset)
REGISTRY = Registry("dataset")
for _ds in (
    FileDataset(
        "mnist", "MNIST 28x28 handwritten digits (LeCun et al.), IDX format, d=784, K=10",
        _idx_splits("mnist", _MNIST_SHA), _idx_reader,
    ),
    FileDataset(
        "fashion-mnist",
        "Fashion-MNIST (Xiao et al. 2017), IDX format; PCA-100 features by default (substitute for AM's CNN-100)",
        _idx_splits("fashion-mnist"), _idx_reader,
    ),
    FileDataset(
        "usps", "USPS 16x16 digits, HDF5 layout of the Kaggle set AM cite, d=256, K=10",
        {"train": (_USPS,), "test": (_USPS,)}, _usps_reader,
    ),
    BuiltinDataset("iris", "Iris (scikit-learn), n=150, d=4, K=3"),
    BuiltinDataset("digits", "UCI optical digits 8x8 (scikit-learn load_digits), n=1797, d=64, K=10; AM's 'MNIST'"),
    BuiltinDataset("synsep", "SynSep generator (Banditron paper; docs/math.md, item 12), d=400, K=9, separable"),
    BuiltinDataset("synnonsep", "SynNonSep generator: SynSep with 5% label noise (reconstruction)"),
    # the bandit suite (nolo.datasets.bandit_suite): raw feature scales; generated ones seeded (default seed 2026)
    BuiltinDataset("wine", "UCI Wine (scikit-learn load_wine), raw scales ~0.1..1680, n=178, d=13, K=3"),
    BuiltinDataset("breast-cancer",
                   "UCI Breast Cancer Wisconsin (scikit-learn), raw scales ~1e-3..4e3, n=569, d=30, K=2"),
    BuiltinDataset("mixed-scales", "make_classification, column scales 10^U(-3,3) + 2 duplicated + 1 constant column, "
                                   "n=5000, d=23, K=5"),
    BuiltinDataset("many-classes", "make_classification, 50 classes, offsets 10^U(0,4), scales 10^U(-2,2), "
                                   "n=10000, d=40, K=50"),
    BuiltinDataset("rings",
                   "make_gaussian_quantiles (concentric) + 5 noise columns, scales 10^U(-3,3), n=5000, d=10, K=3"),
    BuiltinDataset("moons", "make_moons + 6 noise columns, offsets and scales, n=4000, d=8, K=2"),
    BuiltinDataset("imbalanced", "make_classification, class shares 50%..2%, scales 10^U(-3,3), n=8000, d=30, K=6"),
    BuiltinDataset("text",
                   "synthetic bag of words, raw counts (sparse CSR), Zipf topic priors, n=10000, d=20000, K=20"),
    BuiltinDataset("categorical", "8 Zipf categorical attributes one-hot (sparse CSR), interaction labels, "
                                  "n=20000, d=1488, K=4"),
):
    REGISTRY.register(_ds.name, _ds)


def dataset_names() -> list[str]:
    """The registered dataset names, in registration order."""
    return list(REGISTRY.names())


def get_spec(name: str) -> FileDataset | BuiltinDataset:
    """The registered dataset ``name``; ParameterError naming ``name`` and the known datasets otherwise."""
    return REGISTRY.get(name, param="name")


def file_status(spec: FileDataset, root: Path, *, verify: bool = True) -> list[FileStatus]:
    """Status of every file of ``spec`` under ``root``; with ``verify`` the SHA-256 of present files is checked."""
    out = []
    for f in spec.all_files():
        path = f.find(root)
        if path is None:
            out.append(FileStatus(spec.name, f, None, "missing"))
            continue
        expected = f.expected_sha256(path)
        if not verify or expected is None:
            out.append(FileStatus(spec.name, f, path, "unverified", expected))
            continue
        actual = sha256_file(path)
        out.append(FileStatus(spec.name, f, path, "ok" if actual == expected else "mismatch", expected, actual))
    return out
