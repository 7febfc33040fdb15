"""Online-to-batch: one pass of projected online gradient descent gives a batch classifier.

Projected OGD on the logistic loss over the ball ||w|| <= R, with the step R / (B sqrt(T)) of the OCO notes'
regret bound, makes a single pass over the training set.  The average of the iterates it played is a batch
predictor whose excess risk is at most the averaged regret bound; the last iterate has no such guarantee.

Usage:  python online_to_batch_ogd.py
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from nolo.datasets import normalize_rows
from nolo.learners import ProjectedOGD
from nolo.oco import L2Ball, TheoryStep, online_to_batch

X, y = load_breast_cancer(return_X_y=True)
X = normalize_rows(StandardScaler().fit_transform(X))  # ||x|| = 1, so the logistic gradients have norm <= B = 1
y = 2 * y - 1                                           # labels in {-1, +1}
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

R, B, T = 10.0, 1.0, len(y_train)
learner = ProjectedOGD(loss="logistic", step=TheoryStep(R, B, T), constraint=L2Ball(R))
w_bar = online_to_batch(learner, X_train, y_train)  # one pass; returns the average of the played iterates


def accuracy(w):
    return np.mean(np.sign(X_test @ w) == y_test)


print(f"one pass over {T} examples, step {R / (B * np.sqrt(T)):.3f}")
print(f"test accuracy, average of the iterates: {accuracy(w_bar):.3f}")
print(f"test accuracy, last iterate:            {accuracy(learner.w_):.3f}")
print(f"averaged regret bound R B / sqrt(T):    {R * B / np.sqrt(T):.3f}")
sk = LogisticRegression(fit_intercept=False).fit(X_train, y_train)
print(f"test accuracy, scikit-learn LogisticRegression (many passes): {sk.score(X_test, y_test):.3f}")
