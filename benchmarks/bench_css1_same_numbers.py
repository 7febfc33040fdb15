"""Same-numbers check for the core learners: hash every core learner's outputs on fixed data.

A change that must not alter results (a refactoring, a faster loop) leaves every hash equal.  Run it against
two trees and diff the output, e.g. the last commit against the working tree::

    git archive HEAD src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python benchmarks/bench_css1_same_numbers.py > old.txt
    PYTHONPATH=src python benchmarks/bench_css1_same_numbers.py > new.txt
    diff old.txt new.txt

Covers ProjectedOGD (every path, three constraint sets, two losses), the CSS11 linear learners
(stream and per-round), Algorithm 2 and kernel OGD with both surrogate kernels, the CSS10 kernel
learners and every sklearn_api estimator.
"""
import hashlib, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
try:
    from nolo.learners.ogd import ProjectedOGD
except ImportError:
    from nolo.oco import ProjectedOGD
from nolo.oco import L2Ball, Box, TheoryStep, InverseSqrtStep
from nolo.learners.linear import TwoCopyLinearRegression, KnownCovarianceLinearRegression, NaiveOGDRegression
from nolo.learners.kernel import NoisyKernelLearner, NaiveKernelOGD, CleanKernelOGD
from nolo.kernels import GaussianSurrogateKernel, RadialKernelApproximation, PolynomialKernel, GaussianKernel
try:
    from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression, KernelOGDRegression
except ImportError:
    from nolo.learners.kernel import GaussianNoiseKernelRegression, KernelOGDRegression
from nolo.noise import Oracle, GaussianNoise
from nolo.sklearn_api import NoisyKernelRegressor, NoisyKernelClassifier, TwoCopyRegressor, KnownCovarianceRegressor, GaussianNoiseKernelRegressor

out = {}
def H(name, *arrs):
    h = hashlib.sha256()
    for a in arrs:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    out[name] = h.hexdigest()[:16]

rng = np.random.default_rng(0)
d, T = 5, 300
X = rng.normal(size=(T, d)); wstar = rng.normal(size=d) / 3
y = X @ wstar + 0.1 * rng.normal(size=T)
C = X[:, None, :] + 0.3 * rng.normal(size=(T, 2, d))
ycls = np.where(y >= 0, 1.0, -1.0)

for cname, con in [("ball", L2Ball(0.3)), ("box", Box(-0.3, 0.3)), ("none", None)]:
    for loss in ["squared", "logistic"]:
        L = ProjectedOGD(loss=loss, step=InverseSqrtStep(0.1), constraint=con)
        yy = y if loss == "squared" else ycls
        p = L.learn_many(X[:150], yy[:150])
        for i in range(150, 200): L.learn(X[i], yy[i])
        L.gradient_step(X[0])
        G = L.play_linear(X[200:])
        H(f"ProjectedOGD-{cname}-{loss}", p, G, L.w_, L.average_, L.predict(X[:10]))

Sig = np.array([[0.09, 0.02, 0, 0, 0], [0.02, 0.09, 0, 0, 0], [0, 0, 0.05, 0, 0], [0, 0, 0, 0.04, 0.01], [0, 0, 0, 0.01, 0.06]])
mk = dict(radius=2.0, x_bound=3.0, y_bound=2.0, horizon=T)
for name, L, cp in [("TwoCopy", TwoCopyLinearRegression(**mk), C),
                    ("Naive", NaiveOGDRegression(**mk), C[:, :1]),
                    ("KCdiag", KnownCovarianceLinearRegression(noise_cov=0.09, **mk), C[:, :1]),
                    ("KCfull", KnownCovarianceLinearRegression(noise_cov=Sig, sigma_bound=0.2, **mk), C[:, :1]),
                    ("KCseq", KnownCovarianceLinearRegression(noise_cov=np.broadcast_to(Sig, (T, d, d)).copy(), sigma_bound=0.2, **mk), C[:, :1])]:
    p1 = L.learn_stream(cp[:200], y[:200], clean=X[:200])
    H(f"{name}-stream200", p1, L.w_, L.average_)
    p2 = L.learn_stream(cp[200:], y[200:], clean=X[200:])
    H(f"{name}-stream", p2, L.w_, L.average_, L.predict(X[:10]))

for kname, k in [("gauss", GaussianSurrogateKernel(width=4.0, noise_cov=0.09)),
                 ("gaussfull", GaussianSurrogateKernel(width=4.0, noise_cov=Sig)),
                 ("radial", RadialKernelApproximation(c=2.0, noise_variance=0.09))]:
    L = GaussianNoiseKernelRegression(kernel=k, W=3.0, step=0.05)
    p = L.learn_stream(C[:120], y[:120], clean=X[:120])
    H(f"Alg2-{kname}", p, L.alpha_, L.support_, L.norm2_, L.predict(X[:10]), L.surrogate_norm2())
    B = KernelOGDRegression(kernel=k, W=3.0, step=0.05)
    p = B.learn_stream(C[:120, 0], y[:120], clean=X[:120])
    for i in range(120, 130): B.learn(X[i], y[i])
    H(f"KOGD-{kname}", p, B.alpha_, B.support_, B.norm2_, B.predict(X[:10]))

for kname, k in [("poly", PolynomialKernel(2)), ("gauss", GaussianKernel(2.0))]:
    for cls in (NoisyKernelLearner,):
        L = cls(kernel=k, loss="squared", p=2.0, B_w=5.0, step="sqrt", eta=0.05, seed=7)
        for i in range(60):
            L.learn(Oracle(X[i], GaussianNoise(0.3), np.random.default_rng(i)), y[i])
        H(f"Alg1-{kname}", L.decision_function(X[:10]))
    N = NaiveKernelOGD(kernel=k, loss="squared", B_w=5.0, eta=0.05)
    Cl = CleanKernelOGD(kernel=k, loss="logistic", B_w=5.0, eta=0.05)
    for i in range(60):
        N.learn(Oracle(X[i], GaussianNoise(0.3), np.random.default_rng(i)), y[i])
        Cl.learn(X[i], ycls[i])
    H(f"NaiveK-{kname}", N.decision_function(X[:10]))
    H(f"CleanK-{kname}", Cl.decision_function(X[:10]))

class FO:
    def __init__(self, c): self.c, self.d = c, c.shape[1]
    def query(self, k): return self.c[:k].copy()
for name, L, cp in [("TwoCopyPR", TwoCopyLinearRegression(**mk), C), ("KCfullPR", KnownCovarianceLinearRegression(noise_cov=Sig, sigma_bound=0.2, **mk), C[:, :1]), ("NaivePR", NaiveOGDRegression(**mk), C[:, :1])]:
    for i in range(100): L.learn(FO(cp[i]), y[i])
    H(name, L.w_, L.average_)
Xm = X[:80, None, :] + 0.3 * rng.normal(size=(80, 3, d))
r = NoisyKernelRegressor(kernel="linear", seed=0).fit(Xm, y[:80]); H("skNKR", r.predict(X[:10]))
c = NoisyKernelClassifier(kernel="linear", seed=0).fit(Xm, ycls[:80] > 0); H("skNKC", c.predict(X[:10]), c.decision_function(X[:10]))
H("skTwo", TwoCopyRegressor(seed=0).fit(Xm, y[:80]).predict(X[:10]))
H("skKC", KnownCovarianceRegressor(noise_cov=0.09, seed=0).fit(Xm[:, :1], y[:80]).predict(X[:10]))
H("skGNK", GaussianNoiseKernelRegressor(width=4.0, noise_cov=0.09, seed=0).fit(Xm, y[:80]).predict(X[:10]))
H("skGNKr", GaussianNoiseKernelRegressor(kernel="radial", noise_cov=0.09, seed=0).fit(Xm, y[:80]).predict(X[:10]))
for k, v in sorted(out.items()):
    print(k, v)
