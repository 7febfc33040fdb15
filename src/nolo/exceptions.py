"""Exceptions raised by nolo.

Every public check raises one of these (or a plain :class:`ValueError`
subclass) with a message that names the offending parameter and what is
allowed.
"""

from __future__ import annotations


class NoloError(Exception):
    """Base class of nolo's own exceptions."""


class ParameterError(NoloError, ValueError):
    """A parameter or an input is outside its allowed domain.

    It is a :class:`ValueError`, so ``except ValueError`` catches it as
    scikit-learn users expect.
    """


class NumericalError(NoloError, ArithmeticError):
    """A quantity is not representable in float64 (overflow, NaN, a diverging step).

    Raised instead of returning ``inf`` or ``nan`` silently.  The learner that
    raised it has not changed its state.
    """


class CopiesExhausted(NoloError, LookupError):
    """A finite pool of noisy copies cannot supply the copies an estimator asked for.

    Raised by :class:`nolo.noise.PoolOracle` under ``on_exhausted="raise"``.
    """


class PersistenceError(NoloError, ValueError):
    """A saved learner file is malformed, of an unknown format version, or of an unknown class."""


class ScaleWarning(UserWarning):
    """The inputs' scale keeps a learner from learning (rows far below or above its regularisation or step scale,
    or columns spanning many orders of magnitude) although every value stays finite.

    Issued once per learner, from the first rows it learns from (:mod:`nolo._scale`).
    """


class FeedbackLawWarning(UserWarning):
    """A learner whose flip correction assumes class-conditional flips with constant rates (its ``rho0``/``rho1``)
    plays under a feedback law whose rates vary by label pair or by row: its correction is biased there.

    Issued once per run, by :meth:`nolo.learners.bandit.ClassificationBandit.run` (and :func:`run_stream`).
    """


class MissingExtraError(NoloError, ImportError):
    """A feature needs a package that the core install leaves out; the message names the pip command that adds it.

    It is an :class:`ImportError`, so code that already treats a missing package as optional keeps working.
    """
