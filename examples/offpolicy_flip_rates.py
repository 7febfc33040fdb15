"""A log of noisy bandit feedback: estimate its flip rates, then evaluate a new policy off-policy.

A deployed policy (here a Banditron that explores half the time) logged, for each round, the context, the label it
showed, the probability it showed it with (the propensity) and a feedback bit that a noisy channel flipped.  We
estimate the flip rates (rho0, rho1) from the log alone, then estimate how often a different policy would err on
those contexts -- flip-corrected, and uncorrected as tools that read the bit as the reward report it.

Usage:  python offpolicy_flip_rates.py [OUT_DIR]     (default: $NOLO_EXAMPLES_OUT, else a temp dir)
"""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from nolo.datasets import normalize_rows
from nolo.learners.bandit import Banditron, default_learner, run_stream
from nolo.noise_rates import NREst
from nolo.offpolicy import evaluate, log_frame, write_log

RHO0, RHO1 = 0.1, 0.2  # the channel's true rates: only the simulation knows them
out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NOLO_EXAMPLES_OUT") or tempfile.mkdtemp())
out_dir.mkdir(parents=True, exist_ok=True)

X, y = load_digits(return_X_y=True)
X = normalize_rows(X)

# 1. The log: 20,000 rounds of a logger that plays uniformly half the time.
logger = Banditron(n_classes=10, gamma=0.5, seed=0)
result = run_stream(logger, X, y, 20_000, rho0=RHO0, rho1=RHO1, seed=1, log=True)
log = log_frame(result, X)  # round, row, played, propensity, bit, x0, x1, ...
path = write_log(out_dir / "log.parquet", log)
print(f"log: {len(log):,} rows -> {path}")

# 2. The flip rates, from the log alone (`nolo estimate-noise`'s default rule: a network of the bit, read at anchors).
contexts = X[log["row"]]
rates = NREst(rule="anchors", random_state=0).fit(contexts, log["played"].to_numpy(), log["bit"].to_numpy())
print(f"estimated rates: rho0 = {rates.rho0_:.3f}, rho1 = {rates.rho1_:.3f} (true {RHO0}, {RHO1})")

# 3. The policy to evaluate: a default learner trained on another stream.
policy = default_learner(n_classes=10, seed=2)
run_stream(policy, X, y, 5_000, rho0=RHO0, rho1=RHO1, seed=3)
target = policy.action_probabilities(contexts)  # (n, 10): what it would play on each logged context
truth = 1.0 - target[np.arange(len(log)), y[log["row"]]].mean()  # known here only because the data are labelled

corrected = evaluate(log["played"], log["propensity"], log["bit"], target, rho0=rates.rho0_, rho1=rates.rho1_,
                     methods=("ips", "snips"))
raw = evaluate(log["played"], log["propensity"], log["bit"], target, correct=False, methods=("snips",))
print(f"true error of the policy on the logged contexts: {truth:.3f}")
for name, est in corrected.items():
    lo, hi = est.error_ci
    print(f"{name:5s} flip-corrected error estimate: {est.error:.3f}  [{lo:.3f}, {hi:.3f}]")
print(f"snips uncorrected (the bit read as the reward): {raw['snips'].error:.3f}")
