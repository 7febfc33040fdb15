"""CSS10 experiments for ``nolo reproduce css10``: unbiasedness, queries, learning, regret, one-copy.

Each submodule registers one experiment with :func:`nolo.experiments.experiment`.
"""

from nolo.papers import register_own_paper

register_own_paper("css10")  # before its experiments register

from nolo.papers.css10 import learning, one_copy, queries, regret, unbiasedness  # noqa: F401, E402

__all__ = ["unbiasedness", "queries", "learning", "regret", "one_copy"]
