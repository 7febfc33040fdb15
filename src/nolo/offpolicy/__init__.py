"""Off-policy evaluation from logs of noisy bandit feedback: flip-corrected DM, IPS, SNIPS, DR and SWITCH-DR estimates
of a target policy's clean reward with intervals (:mod:`.estimators`), and the logs nolo's learners write
(:mod:`.logs`)."""

from nolo.offpolicy.estimators import METHODS, Estimate, LogMoments, evaluate, flip_corrected, target_matrix
from nolo.offpolicy.logs import log_frame, policy_probabilities, read_log, write_log

__all__ = ["METHODS", "Estimate", "LogMoments", "evaluate", "flip_corrected", "target_matrix", "log_frame", "write_log", "read_log",
           "policy_probabilities"]
