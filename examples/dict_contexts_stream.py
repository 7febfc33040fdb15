"""A live loop the River way: contexts as dicts, one at a time, feedback that arrives late and may be flipped.

Each event is a dict of numbers and strings (categorical attributes).  The learner plays one of four offers and
logs the probability it played it with; whether the offer suited the user comes back 200 rounds later as a bit
that a noisy channel flips (a wrong offer reported right with probability rho0, a right one reported wrong with
probability rho1).

Usage:  python dict_contexts_stream.py
"""

from collections import deque

import numpy as np

from nolo.learners.bandit import default_learner
from nolo.learners.bandit.dict_features import DictContexts

RHO0, RHO1, DELAY, ROUNDS = 0.1, 0.1, 200, 6_000
rng = np.random.default_rng(0)
DEVICES, COUNTRIES = ["mobile", "desktop", "tablet"], ["fr", "de", "it", "es", "nl"]


def event():
    """One user: the offer that suits them (hidden from the learner) and what the learner sees."""
    device, country, hour = rng.choice(DEVICES), rng.choice(COUNTRIES), int(rng.integers(24))
    best = (DEVICES.index(device) + (hour >= 18) + 2 * (country in ("fr", "it"))) % 4
    return {"device": device, "country": country, "hour": hour / 23, "evening": float(hour >= 18)}, best


model = DictContexts(default_learner(n_classes=4, rho0=RHO0, rho1=RHO1, seed=0), n_features=256)
pending = deque()  # (context, played, bit) waiting for their feedback to arrive
right = []
for t in range(ROUNDS):
    x, best = event()
    played, propensity = model.act_one(x)  # log (x, played, propensity) in a real system
    right.append(played == best)
    flip = rng.random() < (RHO1 if played == best else RHO0)
    pending.append((x, played, int((played == best) != flip)))
    if len(pending) > DELAY:
        model.learn_one(*pending.popleft())  # the bit of round t - DELAY arrives now

held_out = [event() for _ in range(2_000)]
accuracy = np.mean([model.predict_one(x) == best for x, best in held_out])
print(f"share of right offers, first 500 rounds: {np.mean(right[:500]):.3f}, last 500: {np.mean(right[-500:]):.3f}")
print(f"held-out accuracy of the greedy offer: {accuracy:.3f}")
