"""Datasets as plain NumPy arrays: file loaders, a registry with a data-directory setting, generators.

- :func:`load_dataset` (name -> ``(X float64, y int64)``), :data:`REGISTRY`,
  :func:`resolve_data_dir` (argument > ``$NOLO_DATA_DIR``
  > ``~/.cache/nolo/data``);
- format readers taking a path: :func:`read_idx` / :func:`load_idx_pair` (MNIST,
  Fashion-MNIST), :func:`load_usps_h5`, :func:`load_svmlight`, :func:`load_csv`;
- generators: :func:`make_synsep`, :func:`make_synnonsep` (docs/math.md, item 12);
- the bandit suite (:mod:`nolo.datasets.bandit_suite`): nine built-in sets with
  raw scales for evaluating bandit learners, names in :data:`SUITE`, summary
  table :func:`suite_info`;
- :func:`normalize_rows` (AM's unit-norm rows), :func:`pca_features`.

The order in which an experiment visits a dataset's examples is the bandit
environment's (:class:`nolo.learners.bandit.ClassificationBandit`).
"""

from nolo.datasets.bandit_suite import SUITE, suite_info
from nolo.datasets.builtin import load_digits_arrays, load_iris_arrays
from nolo.datasets.checksums import sha256_file
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.datasets.features import pca_features
from nolo.datasets.idx import load_idx_pair, read_idx, write_idx
from nolo.datasets.labels import relabel
from nolo.datasets.load import DATASET_OPTIONS, PartialDatasetWarning, load_dataset
from nolo.datasets.normalize import normalize_rows
from nolo.datasets.paths import ENV_VAR, DataDir, resolve_data_dir
from nolo.datasets.ratings import Ratings, load_ratings, make_low_rank_ratings
from nolo.datasets.registry import REGISTRY, FileStatus, dataset_names, file_status, get_spec
from nolo.datasets.synsep import (
    SynSepPrototypes,
    draw_synsep_prototypes,
    make_synnonsep,
    make_synsep,
    multiclass_margins,
)
from nolo.datasets.svmlight import load_svmlight
from nolo.datasets.tabular import load_csv
from nolo.datasets.usps import load_usps_h5

__all__ = [
    "Ratings",
    "load_ratings",
    "make_low_rank_ratings",
    "DATASET_OPTIONS",
    "ENV_VAR",
    "REGISTRY",
    "DataDir",
    "DataFormatError",
    "DatasetNotFoundError",
    "FileStatus",
    "PartialDatasetWarning",
    "SUITE",
    "SynSepPrototypes",
    "dataset_names",
    "draw_synsep_prototypes",
    "file_status",
    "get_spec",
    "load_csv",
    "load_dataset",
    "load_digits_arrays",
    "load_idx_pair",
    "load_iris_arrays",
    "load_svmlight",
    "load_usps_h5",
    "make_synnonsep",
    "make_synsep",
    "multiclass_margins",
    "normalize_rows",
    "pca_features",
    "read_idx",
    "relabel",
    "resolve_data_dir",
    "sha256_file",
    "suite_info",
    "write_idx",
]
