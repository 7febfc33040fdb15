"""Batch references: errors-in-variables corrected least squares and total least squares."""

from nolo.batch.eiv import (
    CorrectedLeastSquares,
    TotalLeastSquares,
    average_replicates,
    ball_constrained_quadratic,
    corrected_least_squares,
    replicate_covariance,
    total_least_squares,
)

__all__ = [
    "CorrectedLeastSquares",
    "TotalLeastSquares",
    "average_replicates",
    "ball_constrained_quadratic",
    "corrected_least_squares",
    "replicate_covariance",
    "total_least_squares",
]
