#!/usr/bin/env python3
"""End-to-end speed of `stats bootstrap` against the numpy reference, measured in alternation.

For each workload it simulates a panel with `stats simulate` (two strata, T = 2, R = 1,
arms open and adaptive), runs each command once to warm the page cache and the binaries,
then runs PAIRS pairs, alternating which command goes first in a pair, and times every run
as a whole process (start, CSV parsing, resampling, printing: what a user waits for).
It reports per pair both wall times and their ratio, and the medians, with the numpy and
Python versions, the CPU, and the 1-minute load average before and after (other processes
on the machine slow both commands; alternation spreads that load over both alike).

  stats:  stats bootstrap PANEL --contrast adaptive-open --replicates B [--backend X]
  numpy:  PY benches/reference/bootstrap_numpy.py PANEL --replicates B

Workloads: paper = 2 x 223 questions (the audit panel's shape), 20k = 2 x 20,000 questions.

usage: compare.py [--stats PATH] [--python PY] [--workload paper|20k|all] [--pairs 7]
                  [--replicates 10000] [--backend auto|cpu|gpu] [--threads N]

--threads N runs stats on N threads (RAYON_NUM_THREADS); the numpy reference uses one core
whatever N, so --threads 1 gives the speed-up per core, which does not grow with the core
count the way the default (all cores) does.
PY must import numpy (e.g. a venv: python3 -m venv V && V/bin/pip install numpy).
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = {"paper": 223, "20k": 20_000}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load1():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def timed(cmd, env=None):
    """Wall seconds of one run of cmd (its output is kept for the sanity check)."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stderr}")
    return wall, out.stdout


def se_of(text, prefix):
    """The SE a command printed (stats: 'estimate ... SE x'; numpy: 'SE       x')."""
    for line in text.splitlines():
        words = line.split()
        if prefix == "stats" and line.startswith("estimate") and "SE" in words:
            return float(words[words.index("SE") + 1])
        if prefix == "numpy" and words[:1] == ["SE"]:
            return float(words[1])
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_stats = os.path.join(ROOT, "target", "release", "stats")
    ap.add_argument("--stats", default=default_stats if os.path.exists(default_stats) else "stats")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--workload", choices=[*WORKLOADS, "all"], default="all")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--replicates", type=int, default=10_000)
    ap.add_argument("--backend", default=None, help="passed to stats bootstrap (default: its own, auto)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for stats (RAYON_NUM_THREADS; default: all logical CPUs)")
    a = ap.parse_args()
    s_env = dict(os.environ)
    if a.threads is not None:
        if a.threads < 1:
            sys.exit("--threads: at least 1")
        s_env["RAYON_NUM_THREADS"] = str(a.threads)
    if a.pairs < 5:
        sys.exit("--pairs: at least 5")
    stats = shutil.which(a.stats) or a.stats
    ver = subprocess.run(
        [a.python, "-c", "import numpy, sys; print(numpy.__version__, sys.version.split()[0])"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if ver.returncode != 0:
        sys.exit(f"{a.python} cannot import numpy; pass --python with one that can\n{ver.stderr}")
    numpy_version, python_version = ver.stdout.split()
    stats_version = subprocess.run([stats, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"machine: {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}")
    print(f"stats: {stats} ({stats_version}); numpy {numpy_version} on Python {python_version}")
    print(f"pairs: {a.pairs} after one warm-up run of each; B = {a.replicates}; stats threads: "
          f"{a.threads or 'all'}")

    names = list(WORKLOADS) if a.workload == "all" else [a.workload]
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            q = WORKLOADS[name]
            panel = os.path.join(tmp, f"{name}.csv")
            subprocess.run(
                [stats, "simulate", "--out", panel, "--datasets", f"hotpotqa={q},musique={q}",
                 "--trajectories", "2", "--reads", "1", "--seed", "4"],
                check=True, stdout=subprocess.DEVNULL,
            )
            s_cmd = [stats, "bootstrap", panel, "--contrast", "adaptive-open",
                     "--replicates", str(a.replicates)]
            if a.backend:
                s_cmd += ["--backend", a.backend]
            n_cmd = [a.python, os.path.join(HERE, "bootstrap_numpy.py"), panel,
                     "--replicates", str(a.replicates)]
            before = load1()
            _, s_out = timed(s_cmd, s_env)
            _, n_out = timed(n_cmd)
            rows = []
            for i in range(a.pairs):
                if i % 2 == 0:
                    ts, _ = timed(s_cmd, s_env)
                    tn, _ = timed(n_cmd)
                else:
                    tn, _ = timed(n_cmd)
                    ts, _ = timed(s_cmd, s_env)
                rows.append((ts, tn))
            after = load1()
            ratios = [tn / ts for ts, tn in rows]
            print()
            print(f"workload {name}: 2 x {q} questions, T = 2, R = 1 ({2 * q * a.replicates:,} draws); "
                  f"load average (1 min) {before:.2f} before, {after:.2f} after")
            print(f"  stats: {' '.join(s_cmd)}")
            print(f"  numpy: {' '.join(n_cmd)}")
            print(f"  SE: stats {se_of(s_out, 'stats'):.6f}, numpy {se_of(n_out, 'numpy'):.6f} "
                  "(different generators: equal to Monte Carlo error)")
            print(f"  {'pair':>4} {'stats s':>9} {'numpy s':>9} {'ratio':>7}")
            for i, ((ts, tn), r) in enumerate(zip(rows, ratios), 1):
                print(f"  {i:>4} {ts:9.4f} {tn:9.4f} {r:7.1f}")
            print(f"  median: stats {statistics.median(r[0] for r in rows):.4f} s, "
                  f"numpy {statistics.median(r[1] for r in rows):.4f} s, "
                  f"ratio {statistics.median(ratios):.1f}x (min {min(ratios):.1f}, max {max(ratios):.1f}); "
                  f"numpy {numpy_version}")


if __name__ == "__main__":
    main()
