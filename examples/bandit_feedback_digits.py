"""Noisy bandit feedback on digits: the default learner against the Banditron.

Each round a learner sees an 8x8 digit, plays a label, and gets back one bit, "was I right?",
flipped with probability rho0 (a wrong label reported right) or rho1 (a right label reported wrong).
The default learner estimates the rates online; the Banditron (AM's baseline) reads the bit as given.

Usage:  python bandit_feedback_digits.py [OUT_DIR]     (default: $NOLO_EXAMPLES_OUT, else a temp dir)
"""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

from nolo.datasets import normalize_rows
from nolo.learners.bandit import Banditron, default_learner, run_stream

ROUNDS, RHO0, RHO1 = 20_000, 0.1, 0.2
out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NOLO_EXAMPLES_OUT") or tempfile.mkdtemp())
out_dir.mkdir(parents=True, exist_ok=True)

X, y = load_digits(return_X_y=True)
checkpoints = np.linspace(1_000, ROUNDS, 20).astype(int)
learners = {
    "default_learner (rates unknown)": (default_learner(n_classes=10, seed=0), X),  # raw pixels: it scales itself
    "Banditron": (Banditron(n_classes=10, gamma=0.05, seed=0), normalize_rows(X)),  # unit-norm rows, as AM
}
curves = {}
for name, (learner, data) in learners.items():
    result = run_stream(learner, data, y, ROUNDS, rho0=RHO0, rho1=RHO1, seed=1, checkpoints=checkpoints)
    curves[name] = result
    print(f"{name:32s} error rate of the played labels after {ROUNDS:,} rounds: {result.error_rate[-1]:.3f}")

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(6, 4))
for name, result in curves.items():
    ax.plot(result.checkpoints, result.error_rate, label=name)
ax.set(xlabel="round", ylabel="cumulative error rate", ylim=(0, 1),
       title=f"digits, feedback flipped (rho0={RHO0}, rho1={RHO1})")
ax.legend()
figure = out_dir / "bandit_feedback_digits.png"
fig.savefig(figure, dpi=100, bbox_inches="tight")
print(f"figure: {figure}")
