"""Feature pipelines applied after loading.

AM (section 4, "Feature Extraction for Fashion-MNIST") use the 100 outputs of
the FC-100 layer of a small CNN trained on 35,000 images.  We do not train a
CNN here; our documented substitute is a 100-component PCA fitted on the
training split (centred, not whitened), after which rows are unit-normalised
by the caller.  The dimension matches the paper's (d=100); the features are not
the paper's.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_int
from nolo.datasets._checks import check_real

__all__ = ["pca_features"]


def pca_features(X_fit, X_apply=None, *, n_components: int = 100) -> np.ndarray:
    """Fit PCA with ``n_components`` on ``X_fit`` and return the projection of ``X_apply`` (default ``X_fit``).

    Deterministic (full SVD).  ``n_components`` must be at most
    ``min(n_fit, d)``.
    """
    from sklearn.decomposition import PCA

    X_fit = check_array(check_real(X_fit, "X_fit"), "X_fit", ndim=2)
    n_components = check_int(n_components, "n_components", low=1, high=min(X_fit.shape))
    X_apply = X_fit if X_apply is None else check_array(check_real(X_apply, "X_apply"), "X_apply",
                                                             shape=(None, X_fit.shape[1]))
    pca = PCA(n_components=n_components, svd_solver="full").fit(X_fit)
    return np.asarray(pca.transform(X_apply), dtype=np.float64)
