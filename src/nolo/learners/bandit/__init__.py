"""Multiclass learners under (noisy) bandit feedback -- Agarwal & Manwani (AM) and its baselines.

One module per algorithm: :class:`Perceptron` (full information, AM eq. 2),
:class:`Banditron`, :class:`RCNBF` (AM Algorithm 1), :class:`RCINE` (AM
Algorithm 2 with :class:`nolo.noise_rates.NREst`), :class:`BPA` and
:class:`SOBA` (docs/baselines.md); the classification-to-bandit environment and the
compiled whole-stream runner (:func:`run_stream`); the exploration rates of AM
Corollaries 4.1-4.3 and the Theorem 4 bound (:mod:`.exploration`).  Beyond the paper, the flip-aware learners
on per-class regression oracles (:mod:`.oracles`, :mod:`.sketch_oracle`): :class:`SquareCB` (Foster & Rakhlin
2020), :class:`FastCB` (Foster & Krishnamurthy 2021) and :class:`LinUCB` (Li et al. 2010, Algorithm 1), nolo's
nonparametric :class:`KernelLabelTS` (Thompson sampling on the label under a kernel-smoothed flip likelihood), and the
flip-corrected baselines :class:`BPAh` and :class:`SOBAh`.

The core (one job per module): ``_simd`` (score blocks, argmax, the two-row update, prefetch,
borrowed views), ``_stream`` (the one compiled stream loop, its dense/CSR row accessor, the
environment's draws, the plug-in points), ``_explore`` (greedy and AM eq. (3) play rules),
``_predict`` (compiled ``predict``), ``_pcg64`` (numpy's PCG64 inlined), ``_linear`` (the base
classes: weights, prediction, per-round protocol, stream driver and hooks).

Plug-in contract -- a new bandit learner is ONE file (worked example: docs/bandit-core.md):

1. Its state record: a ``typing.NamedTuple`` subclass holding what its rule reads (floats, ints,
   arrays; arrays are views of the learner's trailing-underscore attributes, so they are updated in
   place and ``save``/``load`` keep working), whose class names two compiled functions
   (``@njit(cache=True, nogil=True, inline="always")``)::

       act(state, sp, K, rng) -> (greedy label, played label)
       update(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback) -> bool

   ``sp``: the K scores (W x)_k already computed by the shared SIMD kernel, padded to a multiple of
   16 (use them or compute your own, e.g. add a bias from ``state``); ``rng``: the learner's
   generator -- draw with ``_pcg64.uniform(rng)``, one call per uniform.  ``Wt`` is W as (d, K);
   the row's non-zeros are ``idx[t], val[t]`` for t in [lo, hi); ``s`` = ``sp[:K]``; ``y`` is the
   true label under full information, else -1.  ``update`` returns False (writing nothing) when
   a coefficient is not finite; the caller also checks the state for inf/NaN after each call and
   undoes the whole call if it finds any (no per-store checks in the hot loop).
2. Its class: subclass ``_linear.ExploringBanditLearner`` (bandit protocol; or
   ``LinearMulticlassMixin`` + a protocol base), store the parameters in ``__init__``, create
   extra state in ``_init_state`` and return the record from ``_state_record()``.
   Optional hooks, with defaults on the base: ``_segment_length(remaining)`` and
   ``_after_segment(X, log_index, log_played, log_feedback)`` (with ``_logs_rounds = True``: RCINE's
   block refits), ``_after_round`` (per-round API), ``_run_extras()``/``_finish_extras`` (figures
   reported in ``StreamResult.extra``).

:func:`run_stream` then compiles ONE loop for the record type (cached, ``cache=True``) with the
rule inlined; the per-round ``act``/``learn`` call the same rule (bit-identical results).  There
are no algorithm codes: a record whose class names no ``act``/``update`` does not compile.
"""

from nolo.learners.bandit.banditron import Banditron
from nolo.learners.bandit.bpa import BPA
from nolo.learners.bandit.simulator import ClassificationBandit, StreamResult, log_checkpoints, run_stream
from nolo.learners.bandit.exploration import corollary_gamma, lemma3_constants, theorem4_bound
from nolo.learners.bandit.perceptron import Perceptron
from nolo.learners.bandit.rcine import RCINE
from nolo.learners.bandit.rcnbf import RCNBF, unbiased_feedback
from nolo.learners.bandit.soba import SOBA
from nolo.learners.bandit.squarecb import SquareCB
from nolo.learners.bandit.fastcb import FastCB
from nolo.learners.bandit.linucb import LinUCB
from nolo.learners.bandit.kernel_ts import KernelLabelTS
from nolo.learners.bandit.autocb import AutoCB, default_learner
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
    "FastCB",
    "LinUCB",
    "KernelLabelTS",
    "AutoCB",
    "default_learner",
    "oracle_noise_rates",
    "BPAh",
    "SOBAh",
]
