"""Unbalanced clustered panel of tests (components::cluster): 2 strata of 10 clusters of
1 to 5 questions, 1 to 3 trajectories per question, 1 to 3 reads per trajectory.

Run from the repository root:
    python tests/reference/cluster_unbalanced.py
It writes tests/fixtures/cluster/unbalanced.csv; tests/reference/cluster_lme4.R fits it.
"""

import os

import numpy as np

rng = np.random.RandomState(4848)
rows = []
for d, name in enumerate(["a", "b"]):
    for g in range(10):
        c = rng.normal(0, 0.5)
        for m in range(1 + (g * 3 + d) % 5):
            q = rng.normal(0, 0.4)
            for t in range(1 + (g + m + d) % 3):
                b = rng.normal(0, 0.3)
                for r in range(1 + (g * m + t + d) % 3):
                    y = round(d + c + q + b + rng.normal(0, 0.25), 4)
                    rows.append(f"{name},{name}{g}_{m},{t + 1},{r + 1},{name}c{g},{y:.4f}")
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "cluster")
with open(os.path.join(here, "unbalanced.csv"), "w") as f:
    f.write("dataset,question,trajectory,read,cluster,y\n")
    f.write("\n".join(rows) + "\n")
print(len(rows), "rows")
