"""Practice -- experiments for practitioners (not a paper), registered for ``nolo reproduce practice``.

* ``eiv`` -- clean-input R^2 and coefficient error of scikit-learn OLS on the mean of the readings and on one
  reading, ``nolo.batch.CorrectedLeastSquares``, the online ``BiasCompensatedRLS`` (one pass and converged) and
  the CSS11 OGD learners, over readings per item x noise-to-signal x d x n x target scale, and on a simulated
  replicate design on scikit-learn's diabetes data (docs/practice.md).
* ``eiv-inference`` -- coverage of corrected least squares' 95 % intervals, and the slope on an unbalanced replicate
  design where a fifth of the items are read once (docs/eiv.md).
* ``offline`` -- logged noisy bandit feedback: flip-corrected off-policy estimates and their coverage, the flip rates
  read from the log, and a policy learned from the log against Vowpal Wabbit ``--cb_adf`` (docs/offpolicy.md).
"""

from nolo.papers import register_own_paper

register_own_paper("practice")  # before its experiments register

from nolo.papers.practice import eiv, eiv_inference, offline  # noqa: F401, E402  (registration)
