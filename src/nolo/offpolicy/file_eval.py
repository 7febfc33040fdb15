"""Evaluate a policy on a log file in one pass with bounded memory: the log is read chunk by chunk
(:func:`.logs.iter_log`), the target's probabilities and the progressive reward model's predictions are computed per
chunk, and only the estimators' moments (:class:`.estimators.LogMoments`) are kept, so a log of 10^7 rows costs what one
chunk costs.  ``nolo evaluate`` is this function on the command line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nolo._extras import require
from nolo.exceptions import ParameterError
from nolo.offpolicy.estimators import METHODS, Estimate, LogMoments, target_matrix
from nolo.offpolicy.logs import CHUNK_ROWS, LogChunk, iter_log
from nolo.offpolicy.reward import MAX_FEATURES, ProgressiveRidge

__all__ = ["LogEvaluation", "array_chunks", "evaluate_arrays", "evaluate_chunks", "evaluate_log", "evaluate_shards",
           "load_policy"]

#: the progressive reward model refits after REFIT_FIRST rows, then at doubling counts, then every REFIT_MAX rows
REFIT_FIRST, REFIT_MAX = 256, 65_536
#: below this effective sample size (Kish: (sum w)^2 / sum w^2) the importance-weighted estimates are called fragile
MIN_ESS = 100


@dataclass
class LogEvaluation:
    """What :func:`evaluate_log` found: ``corrected`` (flip-corrected estimates, empty without rates) and
    ``uncorrected`` (the bit taken as the reward, what VW and OBP report) ``{method: Estimate}``; ``n_rows``;
    ``ess`` the importance weights' effective sample size; ``max_weight``; ``warnings``; ``seconds``."""

    corrected: dict
    uncorrected: dict
    n_rows: int
    ess: float
    max_weight: float
    rates: tuple | None
    warnings: list = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        def est(e: Estimate) -> dict:
            return {"value": e.value, "error": e.error, "se": e.se, "ci": list(e.ci), "level": e.level,
                    "tau": None if math.isnan(e.tau) else e.tau}

        return {"n_rows": self.n_rows, "ess": self.ess, "max_weight": self.max_weight,
                "rates": None if self.rates is None else list(self.rates),
                "corrected": {m: est(e) for m, e in self.corrected.items()},
                "uncorrected": {m: est(e) for m, e in self.uncorrected.items()},
                "warnings": list(self.warnings), "seconds": self.seconds}


class _Uniform:
    def __init__(self, K):
        self.n_classes = K

    def action_probabilities(self, X):
        return np.full((X.shape[0], self.n_classes), 1.0 / self.n_classes)


def load_policy(spec, n_classes: int | None = None):
    """A target policy from ``spec``: ``"uniform"`` (needs ``n_classes``), a path to a learner saved with
    ``save()`` (its ``action_probabilities``: the distribution it plays from), or an object with
    ``action_probabilities``."""
    if callable(getattr(spec, "action_probabilities", None)):
        return spec
    if spec == "uniform":
        if n_classes is None:
            raise ParameterError("the uniform policy needs n_classes (--n-classes)")
        return _Uniform(int(n_classes))
    from nolo.learners.base import Learner

    path = Path(spec)
    if not path.exists():
        raise ParameterError(f"policy must be 'uniform' or a saved learner's file; {path} does not exist")
    model = Learner.load(path)
    if not callable(getattr(model, "action_probabilities", None)):
        raise ParameterError(f"policy {path.name} holds a {type(model).__name__}, which plays no labels (a bandit "
                             "learner saved with save() is needed)")
    return model


def _policy_probs(policy, X, K) -> np.ndarray:
    d = getattr(policy, "n_features_in_", None)
    if d is not None and X.shape[1] != d:
        raise ParameterError(f"the policy expects {d} features, the log has {X.shape[1]} feature columns")
    return target_matrix(np.asarray(policy.action_probabilities(X), dtype=np.float64), X.shape[0], K)


def evaluate_log(path, policy, *, n_classes: int | None = None, rho0: float | None = None,
                 rho1: float | None = None, rate_se=None, methods=METHODS, reward_model: str = "ridge",
                 level: float = 0.95, chunk_rows: int = CHUNK_ROWS, progress: bool = False) -> LogEvaluation:
    """Off-policy estimates of ``policy``'s clean reward (and error) on the log at ``path``, in one pass.

    ``policy``: see :func:`load_policy`.  ``rho0``, ``rho1``: the flip rates (None: only the uncorrected estimates);
    ``rate_se``: their standard errors when estimated (widens the intervals).  ``reward_model``: ``"ridge"``
    (:class:`.reward.ProgressiveRidge`, for "dm", "dr", "switch-dr"; logs of more than ``MAX_FEATURES`` features
    fall back to IPS/SNIPS with a warning) or ``"none"``.  ``progress``: a tqdm bar on stderr.
    """
    policy = load_policy(policy, n_classes)
    K = _n_classes(policy, n_classes)
    total = _row_count(Path(path)) if progress else None
    return evaluate_chunks(iter_log(path, n_classes=K, chunk_rows=chunk_rows), policy, n_classes=K, rho0=rho0,
                           rho1=rho1, rate_se=rate_se, methods=methods, reward_model=reward_model, level=level,
                           progress=progress, total=total)


def array_chunks(X, played, propensity, bit, chunk_rows: int = CHUNK_ROWS):
    """A log held in memory as :class:`.logs.LogChunk` pieces of ``chunk_rows`` rows, for :func:`evaluate_chunks`
    (the rows are checked there, row numbers counted from 0)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    cols = tuple(f"x{j}" for j in range(X.shape[1]))
    for lo in range(0, n, int(chunk_rows)):
        hi = min(n, lo + int(chunk_rows))
        yield LogChunk(lo, np.asarray(played[lo:hi]), np.asarray(propensity[lo:hi], dtype=np.float64),
                       np.asarray(bit[lo:hi]), X[lo:hi], cols)


def evaluate_arrays(X, played, propensity, bit, policy, **options) -> LogEvaluation:
    """:func:`evaluate_log` on a log held in memory: ``X`` (n, d) contexts, the logged ``played`` labels, their
    ``propensity`` and the (flipped) ``bit``; ``options`` as :func:`evaluate_chunks` takes them."""
    chunk_rows = options.pop("chunk_rows", CHUNK_ROWS)
    return evaluate_chunks(array_chunks(X, played, propensity, bit, chunk_rows), policy, **options)


def _n_classes(policy, n_classes) -> int:
    K = getattr(policy, "n_classes", None) if n_classes is None else n_classes
    if K is None:
        raise ParameterError("n_classes is needed: the policy does not say how many labels it plays")
    K = int(K)
    if getattr(policy, "n_classes", K) != K:
        raise ParameterError(f"n_classes = {K} but the policy plays {policy.n_classes} labels")
    return K


def evaluate_chunks(chunks, policy, *, n_classes: int | None = None, rho0: float | None = None,
                    rho1: float | None = None, rate_se=None, methods=METHODS, reward_model: str = "ridge",
                    level: float = 0.95, progress: bool = False, total: int | None = None) -> LogEvaluation:
    """The one pass of :func:`evaluate_log` over any iterable of :class:`.logs.LogChunk` (a file's, a shard's, or
    :func:`array_chunks` of arrays in memory); ``total``: the rows the progress bar counts to."""
    import time

    t0 = time.perf_counter()
    policy, K, methods = _check_options(policy, n_classes, rho0, rho1, methods, reward_model)
    bar = None
    if progress:
        tqdm = require("tqdm", "cli", "the progress bar").tqdm

        bar = tqdm(total=total, unit=" rows", unit_scale=True, desc="evaluate", leave=False)
    try:
        acc = _accumulate(chunks, policy, K, methods, reward_model, bar)
    finally:
        if bar is not None:
            bar.close()
    return _finish(acc, methods, reward_model, rho0, rho1, rate_se, level, time.perf_counter() - t0)


def _check_options(policy, n_classes, rho0, rho1, methods, reward_model):
    if reward_model not in ("ridge", "none"):
        raise ParameterError(f"reward_model must be 'ridge' or 'none', got {reward_model!r}")
    if (rho0 is None) != (rho1 is None):
        raise ParameterError("give both rho0 and rho1, or neither")
    policy = load_policy(policy, n_classes)
    K = _n_classes(policy, n_classes)
    methods = tuple(methods)
    for m in methods:
        if m not in METHODS:
            raise ParameterError(f"methods must be among {', '.join(METHODS)}, got {m!r}")
    return policy, K, methods


@dataclass
class _Pass:
    """What one pass over a log (or a shard) keeps: the moments, the largest importance weight, warnings, and
    whether a reward model ran."""

    mom: LogMoments | None
    max_w: float
    warnings: list
    want_model: bool


def _accumulate(chunks, policy, K: int, methods, reward_model: str, bar=None) -> _Pass:
    warnings: list[str] = []
    want_model = reward_model == "ridge" and any(m in ("dm", "dr", "switch-dr") for m in methods)
    mom = model = None
    max_w, next_fit = 0.0, REFIT_FIRST
    for chunk in chunks:
        if mom is None:
            d = chunk.X.shape[1]
            if want_model and not 1 <= d <= MAX_FEATURES:
                warnings.append(f"no reward model on {d} features (the ridge model takes 1 to {MAX_FEATURES}): "
                                "DM, DR and SWITCH-DR skipped")
                want_model = False
            model = ProgressiveRidge(K, d) if want_model else None
            mom = LogMoments(K, with_model=want_model)
        pos, n_chunk = 0, chunk.played.shape[0]
        while pos < n_chunk:  # pieces end where the reward model refits (rows 256, 512, ..., then every 65,536)
            end = n_chunk if model is None else min(n_chunk, next_fit - chunk.row0)
            sl = slice(pos, end)
            X, a, p, f = chunk.X[sl], chunk.played[sl], chunk.propensity[sl], chunk.bit[sl]
            pi = _policy_probs(policy, X, K)
            q = model.predict(X) if model is not None else None
            mom.update(a, p, f, pi, q, row0=chunk.row0 + pos)
            if model is not None:
                model.update(X, a, f)
                if chunk.row0 + end >= next_fit:
                    model.refit()
                    next_fit += min(next_fit, REFIT_MAX)
            max_w = max(max_w, float((pi[np.arange(a.shape[0]), a] / p).max()))
            pos = end
        if bar is not None:
            bar.update(chunk.played.shape[0])
    return _Pass(mom, max_w, warnings, want_model)


def _finish(acc: _Pass, methods, reward_model, rho0, rho1, rate_se, level, seconds) -> LogEvaluation:
    mom, warnings = acc.mom, list(acc.warnings)
    if mom is None:
        raise ParameterError("the log is empty")
    if not acc.want_model:
        dropped = [m for m in methods if m in ("dm", "dr", "switch-dr")]
        methods = tuple(m for m in methods if m not in dropped)
        if dropped and reward_model == "none":
            warnings.append(f"{', '.join(dropped)} skipped: they need a reward model (reward_model='ridge')")
    n = mom.n
    sw = mom.mean[0] * n
    sw2 = mom.C[0, 0] + n * mom.mean[0] ** 2
    ess = float(sw * sw / sw2) if sw2 > 0 else 0.0
    if ess < MIN_ESS:
        warnings.append(f"effective sample size {ess:.0f} of {n} rows: the policy rarely plays what the logger played; "
                        "importance-weighted estimates are fragile")
    uncorrected = mom.estimates(correct=False, methods=methods, level=level)
    corrected = {}
    if rho0 is not None:
        corrected = mom.estimates(rho0, rho1, methods=methods, level=level, rate_se=rate_se)
    else:
        warnings.append("no flip rates given: the estimates take the logged bit as the reward, biased by "
                        "rho0 - (rho0 + rho1) x value under flips (estimate them: nolo estimate-noise)")
    return LogEvaluation(corrected, uncorrected, n, ess, acc.max_w,
                         None if rho0 is None else (float(rho0), float(rho1)), warnings, seconds)


def _shard_pass(shard: str, policy, K: int, methods, reward_model: str, chunk_rows: int) -> _Pass:
    """One shard's pass (a task on a Dask worker, or a loop iteration locally): its own progressive reward model."""
    return _accumulate(iter_log(shard, n_classes=K, chunk_rows=chunk_rows), load_policy(policy, K), K, methods,
                       reward_model)


def evaluate_shards(path, policy, *, n_classes: int | None = None, rho0: float | None = None,
                    rho1: float | None = None, rate_se=None, methods=METHODS, reward_model: str = "ridge",
                    level: float = 0.95, chunk_rows: int = CHUNK_ROWS, scheduler: str | None = None) -> LogEvaluation:
    """A directory of Parquet shards evaluated shard by shard and merged (:meth:`.estimators.LogMoments.merge`), in
    the shards' sorted order: locally one after the other (``scheduler=None``), or as one task per shard on the
    ``dask.distributed`` scheduler at ``scheduler`` (the backend ``nolo reproduce --backend dask`` uses) -- the same
    estimate either way, to the last bit.

    Each shard has its own progressive reward model, so DM, DR and SWITCH-DR differ from :func:`evaluate_log` on the
    same directory (one model over all rows, in order) by the models' fit only -- DR stays unbiased either way; IPS
    and SNIPS equal it up to rounding.  ``policy``: a saved learner's path (what a remote worker can load),
    ``"uniform"``, or any picklable object with ``action_probabilities``.
    """
    import time

    t0 = time.perf_counter()
    path = Path(path)
    if not path.is_dir():
        raise ParameterError(f"evaluate_shards needs a directory of Parquet shards; {path} is not a directory")
    shards = sorted(str(f) for f in path.iterdir() if f.suffix in (".parquet", ".pq"))
    if not shards:
        raise ParameterError(f"{path} holds no .parquet shards")
    loaded, K, methods = _check_options(policy, n_classes, rho0, rho1, methods, reward_model)
    spec = policy if isinstance(policy, (str, Path)) else loaded
    spec = str(spec) if isinstance(spec, Path) else spec
    if scheduler is None:
        parts = [_shard_pass(s, spec, K, methods, reward_model, int(chunk_rows)) for s in shards]
    else:
        Client = require("dask.distributed", "dask", "evaluating shards on a Dask scheduler").Client

        with Client(scheduler, set_as_default=False) as client:
            parts = client.gather(client.map(_shard_pass, shards, policy=spec, K=K, methods=methods,
                                             reward_model=reward_model, chunk_rows=int(chunk_rows), pure=False))
    if len({p.want_model for p in parts}) > 1:
        raise ParameterError("the shards hold different feature columns")
    acc = _Pass(None, 0.0, [], parts[0].want_model)
    for part in parts:
        if part.mom is None:
            continue
        acc.mom = part.mom if acc.mom is None else acc.mom.merge(part.mom)
        acc.max_w = max(acc.max_w, part.max_w)
        acc.warnings += [w for w in part.warnings if w not in acc.warnings]
    return _finish(acc, methods, reward_model, rho0, rho1, rate_se, level, time.perf_counter() - t0)


def _row_count(path: Path):
    """Rows of a Parquet file or directory from its metadata (None for CSV: the bar counts without a total)."""
    try:
        if path.is_dir():
            ds = require("pyarrow.dataset", "parquet", "reading Parquet logs")

            return ds.dataset(path, format="parquet").count_rows()
        if path.suffix in (".parquet", ".pq"):
            pq = require("pyarrow.parquet", "parquet", "reading Parquet logs")

            return pq.ParquetFile(path).metadata.num_rows
    except Exception:  # the reader reports a bad file itself
        return None
    return None
