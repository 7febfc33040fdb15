"""nolo: noisy online learning.

Online learners for data that arrive corrupted -- noisy feature vectors
(Cesa-Bianchi, Shalev-Shwartz & Shamir, COLT 2010 and ICML 2011) and noisy
bandit feedback (Agarwal & Manwani) -- with the online-convex-optimisation
core they stand on, and one-command reproductions of the papers' results.
"""

from __future__ import annotations

__version__ = "0.1.0"

from nolo.exceptions import (  # noqa: E402
    CopiesExhausted,
    MissingExtraError,
    NoloError,
    NumericalError,
    ParameterError,
    PersistenceError,
    ScaleWarning,
    FeedbackLawWarning,
)

__all__ = [
    "__version__",
    "CopiesExhausted",
    "MissingExtraError",
    "NoloError",
    "NumericalError",
    "ParameterError",
    "PersistenceError",
    "ScaleWarning",
    "FeedbackLawWarning",
]
