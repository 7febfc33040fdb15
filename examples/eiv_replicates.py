"""Regression on inputs measured with noise, several readings per item, with confidence intervals.

Each item's true inputs are hidden; we only see three noisy readings of them (an instrument read three times).
Least squares on the item means is biased towards zero (attenuation); nolo's errors-in-variables estimators use the
spread between readings to remove that bias, and report standard errors and intervals.

Usage:  python eiv_replicates.py
"""

import numpy as np
from sklearn.linear_model import LinearRegression

from nolo.sklearn_api import CorrectedLeastSquaresRegressor, EIVRegressor

rng = np.random.default_rng(0)
n, m, d = 1_000, 3, 3
true_coef, true_intercept = np.array([1.0, -2.0, 0.5]), 3.0
clean = rng.normal(size=(n, d))                                # never observed
y = clean @ true_coef + true_intercept + 0.1 * rng.normal(size=n)
readings = clean[:, None, :] + 1.0 * rng.normal(size=(n, m, d))  # (items, readings, features), noise sd 1

print(f"true coefficients:              {true_coef}, intercept {true_intercept}")
ols = LinearRegression().fit(readings.mean(axis=1), y)
print(f"least squares on the means:     {ols.coef_.round(3)}  (attenuated)")

batch = CorrectedLeastSquaresRegressor().fit(readings, y)      # noise covariance estimated from the readings
print(f"CorrectedLeastSquaresRegressor: {batch.coef_.round(3)}, intercept {batch.intercept_:.3f}")
print(batch.summary())                                         # coef, std err, z, P>|z|, 95 % interval

online = EIVRegressor(noise="repeated")                        # online: one pass, partial_fit for new batches
online.fit(readings, y)
lo, hi = online.conf_int(0.05).T
print(f"EIVRegressor (online):          {online.coef_.round(3)}")
for j in range(d):
    print(f"  x{j}: 95 % interval [{lo[j]:.3f}, {hi[j]:.3f}] covers {true_coef[j]}: {lo[j] <= true_coef[j] <= hi[j]}")
