"""Exceptions raised by the dataset loaders.

Both are subclasses of standard exceptions so that generic handlers keep
working: a missing file is a :class:`FileNotFoundError`, a malformed file a
:class:`ValueError`.
"""

from __future__ import annotations

from nolo.exceptions import NoloError

__all__ = ["DatasetNotFoundError", "DataFormatError"]


class DatasetNotFoundError(NoloError, FileNotFoundError):
    """The files of a dataset are not where they were looked for.

    The message names every expected file and the directory that was searched
    (and how that directory was chosen).
    """


class DataFormatError(NoloError, ValueError):
    """A data file exists but does not have the expected format (bad magic number, truncated, wrong shape)."""
