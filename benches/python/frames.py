"""The frame path against the CLI (issue #33's benchmark): `ragstats.variance` and
`ragstats.bootstrap` on a 10-million-row pandas panel, `stats` on the same panel as CSV and
as Parquet (pandas' `to_parquet`: pyarrow, snappy), and the overhead of one call on the demo
panel. Time and peak memory of each.

    python benches/python/frames.py [--rows 10000000] [--replicates 1000] [--stats PATH]

Needs a release build of the package (`pip install .` or `maturin develop --release`) and of
the binary (`cargo build --release`). Results: docs/BENCHMARKS.md.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def rss_peak_mb(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss / 1024


def status_mb(key):
    """VmRSS (now) or VmHWM (peak since the last reset) of this process, in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(key)


def reset_peak():
    """Resets VmHWM to the current RSS (Linux >= 4.0), so the next peak is the call's own."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def panel(rows):
    import numpy as np
    import pandas as pd

    per_q = 15  # 3 trajectories x 5 reads
    q = rows // per_q // 2  # questions per stratum, two strata
    n = 2 * q * per_q
    rng = np.random.default_rng(1)
    question = np.repeat(np.arange(2 * q), per_q)
    return pd.DataFrame(
        {
            "dataset": pd.Categorical(np.where(question < q, "hotpotqa", "musique")),
            "question": question,
            "trajectory": np.tile(np.repeat(np.arange(3), 5), 2 * q),
            "read": np.tile(np.arange(5), 3 * 2 * q),
            "f1": rng.random(n),
        }
    )


def child(kind, rows, replicates):
    """One measurement in a fresh process: its time and its peak RSS above the frame's."""
    import ragstats

    df = panel(rows)
    reset_peak()
    base = status_mb("VmRSS")
    t = time.perf_counter()
    if kind == "variance":
        r = ragstats.variance(df)
    else:
        r = ragstats.bootstrap(df, replicates=replicates, backend="cpu")
    dt = time.perf_counter() - t
    print(json.dumps({"seconds": dt, "peak_mb": status_mb("VmHWM"), "frame_mb": base,
                      "estimate": r.to_dict()["estimate"]}))


CLI_CHILD = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
out = subprocess.run(sys.argv[1:] + ["--format", "json"], capture_output=True, text=True, check=True)
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "estimate": json.loads(out.stdout)["estimate"]}))
"""


def measure(argv):
    """Runs `argv` (a measuring child) and returns what it printed."""
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--stats", default="target/release/stats")
    ap.add_argument("--child", choices=["variance", "bootstrap"])
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.rows, a.replicates)
    df = panel(a.rows)
    print(f"panel: {len(df):,} rows, {df['question'].nunique():,} questions")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "panel.csv")
        parquet = os.path.join(tmp, "panel.parquet")
        df.to_csv(csv, index=False)
        df.to_parquet(parquet, index=False)
        del df
        print(f"CSV: {os.path.getsize(csv) / 1e6:.0f} MB, Parquet: {os.path.getsize(parquet) / 1e6:.0f} MB")
        for kind, args in [
            ("variance", ["variance"]),
            ("bootstrap", ["bootstrap", "--replicates", str(a.replicates), "--backend", "cpu"]),
        ]:
            # Each measurement in its own process, so that peaks do not mix.
            py = measure([sys.executable, __file__, "--child", kind, "--rows", str(a.rows),
                          "--replicates", str(a.replicates)])
            c = measure([sys.executable, "-c", CLI_CHILD, a.stats, args[0], csv, *args[1:]])
            pq = measure([sys.executable, "-c", CLI_CHILD, a.stats, args[0], parquet, *args[1:]])
            assert py["estimate"] == c["estimate"] == pq["estimate"], (py, c, pq)
            print(f"{kind}: frame {py['seconds']:.2f} s, peak {py['peak_mb']:.0f} MB "
                  f"(the process with the frame {py['frame_mb']:.0f} MB before the call, +{py['peak_mb'] - py['frame_mb']:.0f} MB during it); "
                  f"CLI on CSV {c['seconds']:.2f} s, peak {c['peak_mb']:.0f} MB; "
                  f"CLI on Parquet {pq['seconds']:.2f} s, peak {pq['peak_mb']:.0f} MB; same estimate")
    import ragstats

    demo = "data/demo/panel.csv"
    ragstats.variance(demo, contrast="adaptive-open")
    n = 20
    t = time.perf_counter()
    for _ in range(n):
        ragstats.variance(demo, contrast="adaptive-open")
    py = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        subprocess.run([a.stats, "variance", demo, "--contrast", "adaptive-open", "--format", "json"],
                       capture_output=True, check=True)
    c = (time.perf_counter() - t) / n
    print(f"demo panel, one call: ragstats.variance {py * 1000:.1f} ms, `stats variance` process {c * 1000:.1f} ms")


if __name__ == "__main__":
    main()
