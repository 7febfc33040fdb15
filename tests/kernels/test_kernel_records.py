"""The compiled kernel family dispatched on its record class: outputs pinned bit for bit, unknown records refused.

EXPECTED was produced by running the inputs below through the integer-coded evaluators that the records replaced
(``kernel_value(kind, weights, params, a, b)`` with ``GAUSSIAN, RADIAL = 0, 1``, at commit 9741266) and writing each
float with ``float.hex``; the record dispatch must reproduce every value exactly.
"""

from typing import NamedTuple

import numba as nb
import numpy as np
import pytest

from nolo.kernels import GaussianSurrogateKernel
from nolo.kernels.compiled import GaussianSpec, RadialSpec, kernel_value, weighted_sums
from nolo.kernels.radial import RadialKernelApproximation
from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression, KernelOGDRegression

D = 3
COV = np.array([[0.09, 0.02, 0.0], [0.02, 0.05, 0.01], [0.0, 0.01, 0.04]])
KERNELS = {
    "gauss_iso": lambda: GaussianSurrogateKernel(width=2.0, noise_cov=0.09),
    "gauss_full": lambda: GaussianSurrogateKernel(width=2.0, noise_cov=COV),
    "radial_noisy": lambda: RadialKernelApproximation(c=1.5, noise_variance=0.09),
    "radial_clean": lambda: RadialKernelApproximation(c=1.5),
}

EXPECTED = {
    "gauss_full.alg2.norm2": ["0x1.272ce77a2e4f5p-4"],
    "gauss_full.alg2.pred": [
        "0x0.0p+0", "0x1.63675ab866b73p-8", "0x1.c4f77608a32b5p-8",
        "0x1.00e740bc13919p-7", "0x1.13aaa274aba2cp-7", "0x1.b6e88587f3266p-5",
    ],
    "gauss_full.ogd.predict": [
        "0x1.f0a6ee21b2818p-4", "0x1.c29b0b8e33926p-5", "0x1.69a191aad6947p-3",
        "0x1.564a64638db65p-3", "-0x1.633073d190d2ap-6", "0x1.81bfad5780563p-7",
    ],
    "gauss_full.original_spec.value": ["0x1.442b90e527cfdp-1"],
    "gauss_full.spec.value": ["0x1.54ad6916c4bdep-1"],
    "gauss_iso.alg2.norm2": ["0x1.32a1b9e83a97fp-4"],
    "gauss_iso.alg2.pred": [
        "0x0.0p+0", "0x1.63675ab866b71p-8", "0x1.c4e6f01bccf8ap-8",
        "0x1.00de5289d158dp-7", "0x1.1398908dc936bp-7", "0x1.b6b59c367a818p-5",
    ],
    "gauss_iso.ogd.predict": [
        "0x1.f0a6ee21b2818p-4", "0x1.c29b0b8e33926p-5", "0x1.69a191aad6947p-3",
        "0x1.564a64638db65p-3", "-0x1.633073d190d2ap-6", "0x1.81bfad5780563p-7",
    ],
    "gauss_iso.original_spec.value": ["0x1.442b90e527cfdp-1"],
    "gauss_iso.spec.value": ["0x1.64ed5069e4886p-1"],
    "radial_clean.alg2.norm2": ["0x1.d04b714c847e1p-5"],
    "radial_clean.alg2.pred": [
        "0x0.0p+0", "0x1.9783d3d7dffc1p-8", "0x1.1cb1cdcc1a248p-7",
        "0x1.dadd3029368e6p-5", "0x1.55b81aa284057p-4", "0x1.d4b2cb47e12bap-4",
    ],
    "radial_clean.ogd.predict": [
        "0x1.2075e3a94bb2dp-3", "0x1.e06504399f02ep-4", "0x1.4c8813b715ee1p-3",
        "0x1.4803e833c9151p-3", "0x1.d75308aecc7ecp-6", "0x1.25b883bbc96d9p-4",
    ],
    "radial_clean.original_spec.value": ["0x1.50fc965efc3b0p-1"],
    "radial_clean.spec.value": ["0x1.50fc965efc3b0p-1"],
    "radial_noisy.alg2.norm2": ["0x1.e5040654f2543p-5"],
    "radial_noisy.alg2.pred": [
        "0x0.0p+0", "0x1.9783d3d7dffc1p-8", "0x1.1c2a9e1fd27acp-7",
        "0x1.dab4f1a48701ap-5", "0x1.558549a15115fp-4", "0x1.d430c4ef8a9c0p-4",
    ],
    "radial_noisy.ogd.predict": [
        "0x1.2075e3a94bb2dp-3", "0x1.e06504399f02ep-4", "0x1.4c8813b715ee1p-3",
        "0x1.4803e833c9151p-3", "0x1.d75308aecc7ecp-6", "0x1.25b883bbc96d9p-4",
    ],
    "radial_noisy.original_spec.value": ["0x1.50fc965efc3b0p-1"],
    "radial_noisy.spec.value": ["0x1.5ec0f5dc4c75fp-1"],
}


def _inputs():
    rng = np.random.default_rng(20261128)
    X = rng.normal(size=(6, D))
    y = np.sin(X[:, 0]) + X[:, 1]
    copies = X[:, None, :] + 0.3 * rng.normal(size=(6, 2, D))
    return X, y, copies


def _hex(values):
    return [float(v).hex() for v in np.atleast_1d(values)]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_records_reproduce_the_coded_evaluators_bit_for_bit(name):
    X, y, copies = _inputs()
    k = KERNELS[name]()
    for which in ("spec", "original_spec"):
        assert _hex(kernel_value(getattr(k, which)(D), X[0], X[1])) == EXPECTED[f"{name}.{which}.value"], which
    alg2 = GaussianNoiseKernelRegression(kernel=k, W=2.0, step=0.1)
    assert _hex(alg2.learn_stream(copies, y, clean=X)) == EXPECTED[f"{name}.alg2.pred"]
    assert _hex(alg2.norm2_) == EXPECTED[f"{name}.alg2.norm2"]
    ogd = KernelOGDRegression(kernel=k, W=2.0, step=0.1)
    ogd.learn_stream(X, y)
    assert _hex(ogd.predict(X)) == EXPECTED[f"{name}.ogd.predict"]


def test_records_match_numpy_evaluations():
    """The compiled records agree with the kernel classes' own (NumPy) evaluations (records act in the noise's
    eigenframe, where the original kernel is unchanged)."""
    X, _, _ = _inputs()
    alpha = np.linspace(-1.0, 1.0, X.shape[0])
    for make in KERNELS.values():
        k = make()
        S = np.ascontiguousarray(k.frame(X))
        for spec, gram in ((k.spec(D), k.surrogate), (k.original_spec(D), k.original)):
            out = np.empty(X.shape[0])
            weighted_sums(spec, S, alpha, X.shape[0], S, out)
            np.testing.assert_allclose(out, gram(X, X) @ alpha, rtol=1e-10, atol=1e-12)


def test_record_fields_name_the_kernel_scalars():
    g = GaussianSurrogateKernel(width=2.0).original_spec(2)
    assert isinstance(g, GaussianSpec) and g.log_scale == 0.0 and np.all(g.weights == 0.5)
    r = RadialKernelApproximation(c=1.5, noise_variance=0.1).spec(2)
    assert isinstance(r, RadialSpec) and (r.d, r.c, r.variance) == (2.0, 1.5, 0.1)


class _NotAKernel(NamedTuple):
    weights: np.ndarray
    log_scale: float


def test_a_record_without_a_formula_is_refused_at_compile_time():
    with pytest.raises((TypeError, nb.errors.TypingError), match="not a kernel record"):
        kernel_value(_NotAKernel(np.ones(2), 0.0), np.zeros(2), np.ones(2))
