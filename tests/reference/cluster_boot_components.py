"""Bootstrap expectation of the four-level ANOVA components under the cluster draw, for
tests/it/cluster_bootstrap_components.rs (refitted_components_average_to_their_bootstrap_expectation).

Run from the repository root:
    python tests/reference/cluster_boot_components.py
Reads tests/fixtures/cluster/balanced.csv (2 strata x 24 clusters x 4 questions x T = R = 2,
written by cluster_anova.py), and per stratum prints the data's components, the closed-form
bootstrap expectation (sigma2_c - MS_c/(G M T R) for the cluster level, the data's
components below it) and the mean over B = 20000 numpy cluster-bootstrap replicates (each
drawn cluster a new cluster, its questions distinct), with the Monte Carlo SE.
"""

import csv
import os

import numpy as np

G, M, T, R = 24, 4, 2, 2
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "cluster")
rows = list(csv.DictReader(open(os.path.join(here, "balanced.csv"))))


def anova(y):
    g = y.shape[0]
    grand = y.mean()
    yg = y.mean(axis=(1, 2, 3))
    yq = y.mean(axis=(2, 3))
    yt = y.mean(axis=3)
    ms_c = M * T * R * ((yg - grand) ** 2).sum() / (g - 1)
    ms_q = T * R * ((yq - yg[:, None]) ** 2).sum() / (g * (M - 1))
    ms_t = R * ((yt - yq[:, :, None]) ** 2).sum() / (g * M * (T - 1))
    ms_r = ((y - yt[..., None]) ** 2).sum() / (g * M * T * (R - 1))
    comp = np.array([(ms_c - ms_q) / (M * T * R), (ms_q - ms_t) / (T * R), (ms_t - ms_r) / R, ms_r])
    return ms_c, comp


rng = np.random.default_rng(48)
for name in ["hotpotqa", "musique"]:
    y = np.array([float(r["f1"]) for r in rows if r["dataset"] == name]).reshape(G, M, T, R)
    ms_c, comp = anova(y)
    expect = comp.copy()
    expect[0] -= ms_c / (G * M * T * R)
    B = 20000
    reps = np.array([anova(y[rng.integers(0, G, G)])[1] for _ in range(B)])
    print(f"{name}: components {np.array2string(comp, precision=12)}")
    print(f"{name}: bootstrap expectation {np.array2string(expect, precision=12)}")
    print(
        f"{name}: numpy mean of {B} {np.array2string(reps.mean(axis=0), precision=6)}"
        f" MC SE {np.array2string(reps.std(axis=0, ddof=1) / np.sqrt(B), precision=6)}"
    )
