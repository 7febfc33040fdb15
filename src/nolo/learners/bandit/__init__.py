"""Multiclass learners under (noisy) bandit feedback -- Agarwal & Manwani (AM) and its baselines.

One module per algorithm: :class:`Perceptron` (full information, AM eq. 2),
:class:`Banditron`, :class:`RCNBF` (AM Algorithm 1), :class:`RCINE` (AM
Algorithm 2 with :class:`nolo.noise_rates.NREst`), :class:`BPA` and
:class:`SOBA` (baselines.md); the classification-to-bandit environment and the
compiled whole-stream runner (:func:`run_stream`); the exploration rates of AM
Corollaries 4.1-4.3 and the Theorem 4 bound (:mod:`.exploration`).
"""

from nolo.learners.bandit.banditron import Banditron
from nolo.learners.bandit.bpa import BPA
from nolo.learners.bandit.environment import ClassificationBandit, StreamResult, log_checkpoints, run_stream
from nolo.learners.bandit.exploration import corollary_gamma, lemma3_constants, theorem4_bound
from nolo.learners.bandit.perceptron import Perceptron
from nolo.learners.bandit.rcine import RCINE
from nolo.learners.bandit.rcnbf import RCNBF, unbiased_feedback
from nolo.learners.bandit.soba import SOBA
from nolo.learners.bandit.squarecb import SquareCB
from nolo.learners.bandit.rate_oracle import oracle_noise_rates
from nolo.learners.bandit.bpa_corrected import BPAh
from nolo.learners.bandit.soba_corrected import SOBAh

__all__ = [
    "Perceptron",
    "Banditron",
    "RCNBF",
    "RCINE",
    "BPA",
    "SOBA",
    "ClassificationBandit",
    "StreamResult",
    "run_stream",
    "log_checkpoints",
    "corollary_gamma",
    "lemma3_constants",
    "theorem4_bound",
    "unbiased_feedback",
    "SquareCB",
    "oracle_noise_rates",
    "BPAh",
    "SOBAh",
]
