"""``load_dataset``: one entry point from a dataset name to ``(X float64, y int64)``."""

from __future__ import annotations

import os
import warnings

import numpy as np

from nolo._validation import check_choice, check_int
from nolo.datasets._checks import check_flag
from nolo.datasets.bandit_suite import SUITE, SUITE_OPTIONS
from nolo.datasets.bandit_suite import build as build_suite_dataset
from nolo.datasets.builtin import load_digits_arrays, load_iris_arrays
from nolo.datasets.checksums import sha256_file
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.datasets.features import pca_features
from nolo.datasets.normalize import normalize_rows
from nolo.datasets.paths import ENV_VAR, DataDir, resolve_data_dir
from nolo.datasets.registry import SPLIT_ORDER, BuiltinDataset, FileDataset, get_spec
from nolo.datasets.synsep import make_synnonsep, make_synsep
from nolo.exceptions import ParameterError

__all__ = ["load_dataset", "PartialDatasetWarning", "DATASET_OPTIONS"]

#: dataset -> its extra keyword options and their defaults
DATASET_OPTIONS: dict[str, dict[str, object]] = {
    "synsep": {"n_samples": 100_000, "seed": None},
    "synnonsep": {"n_samples": 100_000, "seed": None, "label_noise": 0.05},
    "fashion-mnist": {"features": "pca", "n_components": 100},
    **{name: dict(opts) for name, opts in SUITE_OPTIONS.items()},  # bandit suite: n_samples, seed (2026)
}


class PartialDatasetWarning(UserWarning):
    """``split="all"`` was asked for but only some splits' files are present.

    Issued once per process for each dataset, data directory and set of missing splits (a loop that
    loads MNIST a hundred times warns once).
    """


#: (dataset, data directory, missing splits) already warned about in this process
_WARNED: set[tuple[str, str, tuple[str, ...]]] = set()


def _options(name: str, given: dict) -> dict:
    allowed = DATASET_OPTIONS.get(name, {})
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        names = ", ".join(allowed) if allowed else "none"
        raise ParameterError(f"unknown option(s) {', '.join(unknown)} for dataset {name!r}; its options are: {names}")
    return {**allowed, **given}


def _missing_message(spec: FileDataset, splits, where: DataDir) -> str:
    """Names the expected files (full paths, every accepted variant), the directory searched and how it was
    chosen, and how to point nolo at the files."""
    missing = [f for s in splits for f in spec.splits[s] if f.find(where.path) is None]
    missing = list({f.stem: f for f in missing}.values())
    expected = "; ".join(" or ".join(str(p) for p in f.candidates(where.path)) for f in missing)
    return (
        f"{spec.name} split(s) {', '.join(map(repr, splits))}: missing file(s) {expected}. "
        f"Searched the data directory {where.describe()}; no other directory is searched once one is chosen "
        f"(order: the data_dir argument > ${ENV_VAR} > ~/.cache/nolo/data). "
        f"To use files elsewhere pass data_dir=DIR (CLI: --data-dir DIR) or set {ENV_VAR}=DIR, where DIR holds "
        f"{spec.name}/...; `nolo data list {spec.name}` shows the expected files."
    )


def _read_split(spec: FileDataset, split: str, where: DataDir, verify: bool):
    paths = [f.find(where.path) for f in spec.splits[split]]
    if verify:
        for f, p in zip(spec.splits[split], paths):
            expected = f.expected_sha256(p)
            if expected is not None and sha256_file(p) != expected:
                raise DataFormatError(f"{p}: SHA-256 mismatch (expected {expected}); the file is corrupt or another version")
    return spec.reader(paths, split)


def _resolve_splits(spec: FileDataset, split: str, where: DataDir) -> list[str]:
    present = spec.present_splits(where.path)
    if split == "all":
        if not present:
            raise DatasetNotFoundError(_missing_message(spec, [s for s in SPLIT_ORDER if s in spec.splits], where))
        absent = [s for s in SPLIT_ORDER if s in spec.splits and s not in present]
        key = (spec.name, str(where.path), tuple(absent))
        if absent and key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(
                f"{spec.name}: split='all' uses only the present split(s) {present}; "
                + _missing_message(spec, absent, where),
                PartialDatasetWarning,
                stacklevel=4,
            )
        return present
    if split not in present:
        msg = _missing_message(spec, [split], where)
        if present:
            msg += f" Only the split(s) {present} are present; use split={present[0]!r} or split='all'."
        raise DatasetNotFoundError(msg)
    return [split]


def _load_files(spec: FileDataset, split: str, where: DataDir, verify: bool, opts: dict):
    splits = _resolve_splits(spec, split, where)
    parts = [_read_split(spec, s, where, verify) for s in splits]
    X = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    y = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    if spec.name == "fashion-mnist":
        if opts["features"] == "pca":
            if "train" not in spec.present_splits(where.path):
                raise DatasetNotFoundError(
                    "fashion-mnist PCA features are fitted on the training split; "
                    + _missing_message(spec, ["train"], where)
                    + " Pass features='raw' for the 784 pixels."
                )
            X_train = parts[splits.index("train")][0] if "train" in splits else _read_split(spec, "train", where, verify)[0]
            X = pca_features(X_train, X, n_components=opts["n_components"])
    return X, y


def _load_builtin(spec: BuiltinDataset, opts: dict):
    if spec.name == "iris":
        return load_iris_arrays()
    if spec.name == "digits":
        return load_digits_arrays()
    if spec.name in SUITE:
        return build_suite_dataset(spec.name, **opts)
    if spec.name == "synsep":
        return make_synsep(opts["n_samples"], opts["seed"])
    return make_synnonsep(opts["n_samples"], opts["seed"], label_noise=opts["label_noise"])


def load_dataset(
    name: str,
    split: str = "all",
    *,
    data_dir: str | os.PathLike | None = None,
    normalize: str | None = "unit",
    verify: bool = False,
    **options,
) -> tuple:
    """Load a registered dataset as ``(X float64 (n, d), y int64 (n,))``, labels 0..K-1.

    ``X`` is a NumPy array, except for the sparse sets of the bandit suite
    (``text``, ``categorical``): a :class:`scipy.sparse.csr_matrix` in canonical form.

    Parameters
    ----------
    name : one of ``mnist``, ``fashion-mnist``, ``usps`` (files), ``iris``,
        ``digits`` (scikit-learn), ``synsep``, ``synnonsep`` (generated), or a
        set of the bandit suite (:mod:`nolo.datasets.bandit_suite`, raw
        scales): ``wine``, ``breast-cancer`` (scikit-learn), ``mixed-scales``,
        ``many-classes``, ``rings``, ``moons``, ``imbalanced``, ``text``,
        ``categorical`` (generated, seeded).
    split : ``"train"``, ``"test"`` or ``"all"`` for file datasets; ``"all"``
        (the default) concatenates, train then test, the splits whose files
        are present and warns (:class:`PartialDatasetWarning`) if some are
        missing -- e.g. only the MNIST test set was downloaded.
        Built-in and generated datasets have only ``"all"``.
    data_dir : the data directory; default resolution
        (:func:`nolo.datasets.paths.resolve_data_dir`): this argument >
        ``$NOLO_DATA_DIR`` > ``~/.cache/nolo/data``.
    normalize : ``"unit"`` (default; every nonzero row scaled to l2 norm 1 as in
        AM, so ||x|| <= 1; CSR rows too) or ``None`` (raw values: 0..255 pixels
        for MNIST, [0, 1] for USPS, binary for SynSep, the bandit suite's raw
        scales -- pass ``None`` to evaluate scale-free learners on them).
    verify : check the SHA-256 of the files read, where known
        (:class:`DataFormatError` on a mismatch).
    options : per dataset (:data:`DATASET_OPTIONS`): ``synsep``: ``n_samples``
        (100000), ``seed``; ``synnonsep``: also ``label_noise`` (0.05);
        ``fashion-mnist``: ``features`` (``"pca"``: PCA fitted on the training
        split, our substitute for AM's CNN features, or ``"raw"``) and
        ``n_components`` (100); the generated sets of the bandit suite:
        ``n_samples`` (their documented n) and ``seed`` (2026).

    Raises
    ------
    DatasetNotFoundError (a FileNotFoundError) naming the missing files, the
    directory searched and how to point nolo at the files (``data_dir`` /
    ``--data-dir`` / ``$NOLO_DATA_DIR``); DataFormatError for malformed files;
    ParameterError naming the parameter for bad arguments.
    """
    spec = get_spec(name)
    check_choice(normalize, "normalize", ("unit", None))
    verify = check_flag(verify, "verify")
    opts = _options(name, options)
    if spec.name == "fashion-mnist":  # checked before any file is read, also when unused (features="raw")
        check_choice(opts["features"], "features", ("pca", "raw"))
        check_int(opts["n_components"], "n_components", low=1)
    if isinstance(spec, BuiltinDataset):
        check_choice(split, "split", ("all",))
        X, y = _load_builtin(spec, opts)
    else:
        check_choice(split, "split", (*SPLIT_ORDER, "all"))
        X, y = _load_files(spec, split, resolve_data_dir(data_dir), verify, opts)
    return normalize_rows(X, normalize, copy=False), np.asarray(y, dtype=np.int64)
