#!/usr/bin/env python3
"""Reference numbers of the PPI estimates ragstats computes with labels (tests/it/judges.rs,
tests/python/test_judges.py), from ppi_py 0.2.3 (`pip install ppi-python==0.2.3`).

Builds (with --write) the committed fixture tests/fixtures/judges/: a one-level judged panel
(T = R = 1, one stratum, arms a and b; the judge's score in column `judge`) and the human
labels of 40 of its 200 questions (both arms; column `human`), then prints ppi_py's point
estimate and 95% interval (alpha=0.05) for arm b's mean and for the paired difference b − a,
power-tuned, lam=1 and lam=0, and the pair's two-sided Wald p (scipy). The labelled questions are the rectifier's (Y, Yhat); the
judge on the other 160 questions is Yhat_unlabeled (ppi_py's convention).

    python3 tests/reference/ppi_reference.py [--write]
"""

import csv
import pathlib
import sys

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

DIR = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "judges"
Q, N_LABELLED = 200, 40


def build():
    rng = np.random.default_rng(20261205)
    ease = rng.uniform(0, 1, Q)
    human = {
        "a": (rng.uniform(0, 1, Q) < 0.8 * ease).astype(float),
        "b": (rng.uniform(0, 1, Q) < 0.8 * ease + 0.15).astype(float),
    }
    # A biased judge on a 0-1 scale: lenient (+0.3), weakly tied to the human score, noisy.
    judge = {
        arm: np.clip(0.3 * human[arm] + 0.2 * ease + 0.3 + rng.normal(0, 0.3, Q), 0, 1).round(4)
        for arm in "ab"
    }
    labelled = np.sort(rng.choice(Q, N_LABELLED, replace=False))
    return human, judge, labelled


def write(human, judge, labelled):
    DIR.mkdir(parents=True, exist_ok=True)
    with open(DIR / "panel.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["dataset", "question", "trajectory", "read", "arm", "judge"])
        for q in range(Q):
            for arm in "ab":
                w.writerow(["all", f"q{q:03d}", 0, 0, arm, judge[arm][q]])
    with open(DIR / "labels.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["question", "arm", "human"])
        for q in labelled:
            for arm in "ab":
                w.writerow([f"q{q:03d}", arm, int(human[arm][q])])


def read():
    judge = {"a": np.zeros(Q), "b": np.zeros(Q)}
    with open(DIR / "panel.csv", newline="") as f:
        for r in csv.DictReader(f):
            judge[r["arm"]][int(r["question"][1:])] = float(r["judge"])
    human = {"a": {}, "b": {}}
    with open(DIR / "labels.csv", newline="") as f:
        for r in csv.DictReader(f):
            human[r["arm"]][int(r["question"][1:])] = float(r["human"])
    labelled = np.array(sorted(human["a"]))
    return judge, human, labelled


def main():
    if "--write" in sys.argv:
        write(*build())
    judge, human, labelled = read()
    mask = np.zeros(Q, bool)
    mask[labelled] = True
    cases = {
        "b": (np.array([human["b"][q] for q in labelled]), judge["b"]),
        "b-a": (
            np.array([human["b"][q] - human["a"][q] for q in labelled]),
            judge["b"] - judge["a"],
        ),
    }
    for name, (y, yhat_all) in cases.items():
        yhat, yhat_u = yhat_all[mask], yhat_all[~mask]
        for lam in (None, 1.0, 0.0):
            est = float(np.asarray(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)).ravel()[0])
            lo, hi = (float(np.asarray(v).ravel()[0]) for v in ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam))
            print(f"{name} lam={lam}: estimate {est!r} ci [{lo!r}, {hi!r}]")
            if name == "b-a" and lam is None:
                # compare's Wald test of the pair: p = 2 Φ(−|θ̂/SE|), SE from the interval.
                se = (hi - lo) / (2 * norm.ppf(0.975))
                print(f"b-a p {float(2 * norm.sf(abs(est / se)))!r}")


if __name__ == "__main__":
    main()
