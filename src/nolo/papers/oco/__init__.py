"""The OCO notes' worked examples (Cornell CS 6783, lecture 14, section 2), registered for ``nolo reproduce oco``.

* ``svm`` -- online linear SVM (hinge over an L2 ball; logistic over an L1 ball): regret against the best
  fixed predictor in hindsight grows like sqrt(T) and stays below the notes' bound ``R B sqrt(T)`` (Claim 1);
* ``regularised`` -- online ridge and the online lasso (proximal step; L1-ball projection): regret against
  the certified hindsight optimum of the regularised loss, and sparsity of the lasso iterate;
* ``matrix`` -- online matrix prediction over the trace-norm ball (regret against a Frank-Wolfe-certified
  hindsight optimum) and the max-entry box (exact hindsight); held-out error against the per-user mean.
"""

from nolo.papers import register_own_paper

register_own_paper("oco")  # before its experiments register

from nolo.papers.oco import svm  # noqa: F401, E402, I001  (registration, in report order)
from nolo.papers.oco import regularised  # noqa: F401, E402, I001
from nolo.papers.oco import matrix  # noqa: F401, E402, I001
