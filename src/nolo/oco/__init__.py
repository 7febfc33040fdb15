"""Online convex optimisation core (OCO notes, Cornell CS 6783 lecture 14; CSS10 section 2).

* :mod:`~nolo.oco.projections` -- constraint sets ``L2Ball``, ``L1Ball``, ``Box``, ``Unconstrained`` and the
  projections of the notes' examples (L1 ball, simplex, trace-norm ball, max-entry box, soft-threshold);
* :mod:`~nolo.oco.steps` -- step rules ``ConstantStep``, ``InverseSqrtStep``, ``TheoryStep``;
* :mod:`~nolo.oco.projected_step` -- the one compiled projected (composite) step ``w <- Pi_F(S(w - eta g))``
  that every OGD learner uses (the learner :class:`nolo.learners.ProjectedOGD` lives in the learners layer);
* :mod:`~nolo.oco.hindsight` -- the best fixed predictor in hindsight, solved exactly with a certificate
  (also composite/L1, trace-norm and max-entry problems);
* :mod:`~nolo.oco.regret` -- regret and regret curves against it, the notes' regret bounds;
* :mod:`~nolo.oco.online_to_batch` -- the average of the played iterates.
"""

from nolo.oco.hindsight import (
    HindsightSolution,
    best_fixed_in_hindsight,
    best_fixed_linear,
    composite_hindsight,
    max_entry_hindsight,
    solve_hindsight,
    trace_norm_hindsight,
)
from nolo.oco.online_to_batch import average_of_iterates, online_to_batch
from nolo.oco.projections import (
    Box,
    ConstraintSet,
    L1Ball,
    L2Ball,
    Unconstrained,
    project_l1_ball,
    project_max_entry,
    project_simplex,
    project_trace_norm_ball,
    soft_threshold,
)
from nolo.oco.regret import (
    linear_regret,
    linear_regret_curve,
    notes_regret_bound,
    ogd_regret_bound,
    regret,
    regret_curve,
)
from nolo.oco.steps import ConstantStep, InverseSqrtStep, StepRule, TheoryStep

__all__ = [
    "Box",
    "ConstraintSet",
    "L2Ball",
    "L1Ball",
    "Unconstrained",
    "project_l1_ball",
    "project_simplex",
    "soft_threshold",
    "project_trace_norm_ball",
    "project_max_entry",
    "StepRule",
    "ConstantStep",
    "InverseSqrtStep",
    "TheoryStep",
    "HindsightSolution",
    "solve_hindsight",
    "composite_hindsight",
    "trace_norm_hindsight",
    "max_entry_hindsight",
    "best_fixed_in_hindsight",
    "best_fixed_linear",
    "regret",
    "regret_curve",
    "linear_regret",
    "linear_regret_curve",
    "ogd_regret_bound",
    "notes_regret_bound",
    "online_to_batch",
    "average_of_iterates",
]
