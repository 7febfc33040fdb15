"""Online convex optimisation core (OCO notes, Cornell CS 6783 lecture 14; CSS10 section 2).

* :mod:`~nolo.oco.projections` -- constraint sets ``L2Ball``, ``Box``, ``Unconstrained``;
* :mod:`~nolo.oco.steps` -- step rules ``ConstantStep``, ``InverseSqrtStep``, ``TheoryStep``;
* :mod:`~nolo.oco.projected_step` -- the one compiled projected step ``w <- Pi_F(w - eta g)``
  that every OGD learner uses (the learner :class:`nolo.learners.ProjectedOGD` lives in the learners layer);
* :mod:`~nolo.oco.hindsight` -- the best fixed predictor in hindsight, solved exactly with a certificate;
* :mod:`~nolo.oco.regret` -- regret and regret curves against it;
* :mod:`~nolo.oco.online_to_batch` -- the average of the played iterates.
"""

from nolo.oco.hindsight import HindsightSolution, best_fixed_in_hindsight, best_fixed_linear, solve_hindsight
from nolo.oco.online_to_batch import average_of_iterates, online_to_batch
from nolo.oco.projections import Box, ConstraintSet, L2Ball, Unconstrained
from nolo.oco.regret import linear_regret, linear_regret_curve, ogd_regret_bound, regret, regret_curve
from nolo.oco.steps import ConstantStep, InverseSqrtStep, StepRule, TheoryStep

__all__ = [
    "Box",
    "ConstraintSet",
    "L2Ball",
    "Unconstrained",
    "StepRule",
    "ConstantStep",
    "InverseSqrtStep",
    "TheoryStep",
    "HindsightSolution",
    "solve_hindsight",
    "best_fixed_in_hindsight",
    "best_fixed_linear",
    "regret",
    "regret_curve",
    "linear_regret",
    "linear_regret_curve",
    "ogd_regret_bound",
    "online_to_batch",
    "average_of_iterates",
]
