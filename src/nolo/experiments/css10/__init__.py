"""CSS10 experiments for ``nolo reproduce css10``: unbiasedness, queries, learning, regret, one-copy.

Each submodule registers one experiment with :func:`nolo.experiments.experiment`.
"""

from nolo.experiments.css10 import learning, one_copy, queries, regret, unbiasedness  # noqa: F401

__all__ = ["unbiasedness", "queries", "learning", "regret", "one_copy"]
