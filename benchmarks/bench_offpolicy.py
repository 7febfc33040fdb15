"""Off-policy evaluation of a log file in bounded memory: ``nolo evaluate``'s one pass beside Vowpal Wabbit's native
``--cb_adf`` pass over the same log, in one run.

A synthetic log (``--rows`` rounds, ``--features`` float32 columns, ``--classes`` labels; a softmax logger of a weak
linear policy mixed with 10 % uniform, propensities recorded; bits flipped at (0.1, 0.2)) is written to Parquet in row
groups, and a deterministic target (a Perceptron trained on 20,000 clean rows of the same distribution) saved.  Then,
each in a fresh subprocess so that its peak RSS is its own:

Peak RSS is the process's own high-water mark (``VmHWM``, reset at exec; ``ru_maxrss`` would carry the parent's).

* ``nolo ips``: :func:`nolo.offpolicy.file_eval.evaluate_log` with IPS and SNIPS (no reward model) on the whole log
  and on its first tenth -- rows/s and peak RSS (the same RSS at both sizes is what bounded memory means);
* ``nolo dr``: the same with the progressive ridge reward model (DM, DR, SWITCH-DR);
* ``nolo learn``: ``default_learner`` (known rates) learning the whole log chunk by chunk, as ``nolo learn`` does
  (:func:`nolo.offpolicy.learn.learn_log`), plain and importance-weighted -- rows/s and peak RSS;
* ``VW native``: ``vw -d log.txt --cb_adf -q sa --cb_type dr`` on the log converted to cb_adf text (cost 1 - bit, the
  logged propensity), VW's own C++ driver (``vowpalwabbit.Workspace`` runs the file), rows/s and peak RSS.  VW learns a
  policy in its pass: beside nolo's evaluation pass and nolo's learning pass, each one pass over the same rows
  (conversion not timed).

Usage: ``python benchmarks/bench_offpolicy.py [--rows 1000000] [--features 32] [--classes 10] [--no-vw]
[--markdown FILE]``.  Prints a stamp (versions, CPU, date, command) and a markdown table with the ratios;
``--markdown FILE`` also writes the table stamped with the version, the machine, its load and the command
(``benchmarks/_markdown.py``): docs/performance.md includes ``docs/_generated/bench_offpolicy.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from _markdown import processor as cpu_name

RATES = (0.1, 0.2)
CHUNK = 100_000


def true_model(d: int, K: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(d, K))


def write_log(path: str, n: int, d: int, K: int, W: np.ndarray, target, seed: int = 0) -> float:
    """The synthetic log, written in row groups of CHUNK rows (bounded memory here too); returns the target's true
    clean value (accuracy) on the logged contexts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed + 1)
    right_target = 0.0
    weak = W + rng.normal(scale=2.0, size=(d, K))
    writer = None
    for lo in range(0, n, CHUNK):
        m = min(CHUNK, n - lo)
        X = rng.normal(size=(m, d)).astype(np.float32)
        y = np.argmax(X @ W + rng.normal(size=(m, K)), axis=1)
        right_target += float(np.sum(target.action_probabilities(X.astype(np.float64))[np.arange(m), y]))
        z = 0.5 * (X @ weak)
        P = np.exp(z - z.max(1, keepdims=True))
        P = 0.9 * P / P.sum(1, keepdims=True) + 0.1 / K
        a = np.minimum((rng.random((m, 1)) > np.cumsum(P, 1)).sum(1), K - 1)
        right = a == y
        u = rng.random(m)
        bit = np.where(right, u >= RATES[1], u < RATES[0]).astype(np.int8)
        cols = {"played": a.astype(np.int32), "propensity": P[np.arange(m), a], "bit": bit}
        cols.update({f"x{j}": X[:, j] for j in range(d)})
        table = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    return right_target / n


def train_target(path: str, d: int, K: int, W: np.ndarray):
    from nolo.learners.bandit import Perceptron, run_stream

    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, d))
    y = np.argmax(X @ W + rng.normal(size=(20_000, K)), axis=1)
    m = Perceptron(n_classes=K, seed=0)
    run_stream(m, X, y, 20_000, seed=2)
    m.save(path)
    return m


_CHILD = """
import json, resource, sys, time
from nolo.offpolicy.file_eval import evaluate_log
log, target, methods, warm = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
evaluate_log(warm, target, rho0={r0}, rho1={r1}, methods=methods, chunk_rows=1000)   # warm the imports on the small log
t0 = time.perf_counter()
res = evaluate_log(log, target, rho0={r0}, rho1={r1}, methods=methods)
dt = time.perf_counter() - t0
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
rss = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"rows": res.n_rows, "seconds": dt, "rss_mb": rss,
                  "estimates": {{m: e.value for m, e in res.corrected.items()}}}}))
"""


def nolo_run(log: str, target: str, methods: str, warm: str) -> dict:
    code = _CHILD.format(r0=RATES[0], r1=RATES[1])
    out = subprocess.run([sys.executable, "-c", code, log, target, methods, warm], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


_LEARN_CHILD = """
import json, resource, sys, time
from nolo.learners.bandit import default_learner
from nolo.offpolicy.learn import learn_log
from nolo.offpolicy.logs import iter_log
log, warm, K, weighting = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def run(path):
    m, n = default_learner(K, rho0={r0}, rho1={r1}, seed=0), 0
    for c in iter_log(path, n_classes=K):   # what `nolo learn` does, chunk by chunk
        learn_log(m, c.X, c.played, c.bit, c.propensity, weighting=weighting, seed=0)
        n += c.played.shape[0]
    return n
run(warm)   # compile on the small log
t0 = time.perf_counter()
n = run(log)
dt = time.perf_counter() - t0
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
rss = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"rows": n, "seconds": dt, "rss_mb": rss}}))
"""


def nolo_learn_run(log: str, warm: str, K: int, weighting: str) -> dict:
    code = _LEARN_CHILD.format(r0=RATES[0], r1=RATES[1])
    out = subprocess.run([sys.executable, "-c", code, log, warm, str(K), weighting], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def head(path: str, out: str, n: int) -> None:
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(path).slice(0, n), out)


def write_adf(log: str, out: str, K: int) -> int:
    import pyarrow.parquet as pq

    f = pq.ParquetFile(log)
    acts = [f"|a a{k}\n" for k in range(K)]
    n = 0
    with open(out, "w") as fh:
        for batch in f.iter_batches(batch_size=CHUNK):
            df = batch.to_pandas()
            feats = df[[c for c in df.columns if c.startswith("x")]].to_numpy()
            for a, p, b, x in zip(df.played.to_numpy(), df.propensity.to_numpy(), df.bit.to_numpy(), feats):
                fh.write("shared |s " + " ".join(f"{j}:{v:.5g}" for j, v in enumerate(x)) + "\n")
                for k in range(K):
                    fh.write((f"0:{1 - int(b)}:{p:.6g} " if k == a else "") + acts[k])
                fh.write("\n")
                n += 1
    return n


_VW_CHILD = """
import json, resource, sys, time, vowpalwabbit
t0 = time.perf_counter()
ws = vowpalwabbit.Workspace(f"-d {sys.argv[1]} --cb_adf -q sa --cb_type dr --quiet")
dt = time.perf_counter() - t0
n = ws.get_weighted_examples()
ws.finish()
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
rss = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rows": n, "seconds": dt, "rss_mb": rss}))
"""


def vw_run(adf: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _VW_CHILD, adf], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=32)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--no-vw", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="also write the table as a stamped Markdown file")
    args = p.parse_args(argv)
    if args.markdown:
        from _markdown import start

        start()
    import nolo

    vw_version = "absent"
    if not args.no_vw:
        try:
            import vowpalwabbit

            vw_version = getattr(vowpalwabbit, "__version__", "?")
        except ImportError:
            args.no_vw = True
    print(f"nolo {nolo.__version__}, VW {vw_version}, {cpu_name()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print("command: python benchmarks/bench_offpolicy.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        log, small, target = (os.path.join(tmp, n) for n in ("log.parquet", "small.parquet", "target.npz"))
        t0 = time.perf_counter()
        W = true_model(args.features, args.classes)
        model = train_target(target, args.features, args.classes, W)
        truth = write_log(log, args.rows, args.features, args.classes, W, model)
        tenth = max(args.rows // 10, 1000)
        head(log, small, tenth)
        about = (f"The log: {args.rows:,} rows x {args.features} features, {os.path.getsize(log) / 2**20:.0f} MiB Parquet "
                 f"(written in {time.perf_counter() - t0:.0f} s); the target's true clean value on it {truth:.4f}.")
        print(about + "\n")
        rows = []
        for name, methods in (("nolo ips+snips", "ips,snips"), ("nolo dm+dr+switch-dr", "dm,dr,switch-dr")):
            for path, n in ((small, tenth), (log, args.rows)):
                r = nolo_run(path, target, methods, small)
                rows.append((name, n, r["rows"] / r["seconds"], r["rss_mb"], r["estimates"]))
        for weighting in ("none", "importance"):
            r = nolo_learn_run(log, small, args.classes, weighting)
            rows.append((f"nolo learn (default_learner, weighting {weighting})", args.rows, r["rows"] / r["seconds"],
                         r["rss_mb"], {}))
        vw = None
        if not args.no_vw:
            adf = os.path.join(tmp, "log.adf")
            write_adf(log, adf, args.classes)
            vw = vw_run(adf)
            rows.append(("VW native --cb_adf dr", args.rows, vw["rows"] / vw["seconds"], vw["rss_mb"], {}))
        header = ["pass", "rows", "rows/s", "peak RSS (MiB)", "x VW native", "estimates (clean value)"]
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---:|---:|---:|---|")
        cells = []
        for name, n, rate, rss, est in rows:
            ratio = f"{rate / (vw['rows'] / vw['seconds']):.2f}" if vw else "-"
            e = ", ".join(f"{m} {v:.4f}" for m, v in est.items())
            cells.append([name, f"{n:,}", f"{rate:,.0f}", f"{rss:.0f}", ratio, e])
            print("| " + " | ".join(cells[-1]) + " |")
    if args.markdown:
        from _markdown import package_versions, write_markdown

        path = write_markdown(args.markdown, header, cells, align="lrrrrl", intro=[about],
                              versions=package_versions("numpy", "pyarrow", "vowpalwabbit"))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
