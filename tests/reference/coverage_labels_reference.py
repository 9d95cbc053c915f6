"""The human model `stats coverage --labels` fits to the demo's judged panel and labels
(docs/coverage.md, "With human labels"), computed independently with numpy, and the exact
coverage of the labels-only interval at 15 Gaussian labels with scipy.

    /tmp/venv-main/bin/python tests/reference/coverage_labels_reference.py

(numpy 2.4.6, scipy 1.16; tests/it/labels.rs's `coverage_with_labels_on_the_demo` checks
the numbers printed.)
"""
import csv
from collections import defaultdict

import numpy as np
from scipy import stats

panel = defaultdict(list)
with open("data/demo/judged.csv") as f:
    for row in csv.DictReader(f):
        panel[row["question"]].append(float(row["judge_score"]))
labels = defaultdict(list)
with open("data/demo/judged-labels.csv") as f:
    for row in csv.DictReader(f):
        labels[row["question"]].append(float(row["correct"]))

# Question means (T = 4 trajectories, R = 1; every cell of a labelled question labelled).
judge = {q: np.mean(v) for q, v in panel.items()}
lab = sorted(labels)
y = np.array([np.mean(labels[q]) for q in lab])
yhat = np.array([judge[q] for q in lab])
n = len(y)
slope, intercept = np.polyfit(yhat, y, 1)
resid = y - intercept - slope * yhat
residual_variance = resid @ resid / (n - 2)
r = np.corrcoef(y, yhat)[0, 1]
# The judge model's mean: the balanced stratum's mean of all question means.
m = np.mean(list(judge.values()))
tau = intercept + slope * m
print(f"n {n}")
print(f"intercept {intercept!r}")
print(f"slope {slope!r}")
print(f"residual_variance {residual_variance!r}")
print(f"correlation {r!r}")
print(f"judge_mean {m!r}")
print(f"human_mean {tau!r}")
print(f"bias {m - tau!r}")
# The labels-only interval (lambda = 0) ybar +- z sqrt(var0/n) of n Gaussian labels covers
# P(|t_{n-1}| < z sqrt((n-1)/n)).
z = stats.norm.ppf(0.975)
print(f"labels-only coverage at n={n}: {1 - 2 * stats.t.sf(z * np.sqrt((n - 1) / n), n - 1)!r}")
