"""Balanced clustered panel of tests (components::cluster): 2 strata x 24 clusters x 4
questions x T = 2 x R = 2, and its four-level ANOVA computed independently with numpy.

Run from the repository root:
    python tests/reference/cluster_anova.py
It writes tests/fixtures/cluster/balanced.csv (values to 4 decimals, so the file is exact)
and prints, per stratum, the mean squares, the components and the SE of the stratum mean
as the SD of the cluster means over sqrt(G), which the Rust test records.
"""

import os

import numpy as np

G, M, T, R = 24, 4, 2, 2
rng = np.random.RandomState(48)
rows = []
data = {}
for d, name in enumerate(["hotpotqa", "musique"]):
    y = np.empty((G, M, T, R))
    for g in range(G):
        c = rng.normal(0, 0.6)
        for m in range(M):
            a = rng.normal(0, 0.4)
            for t in range(T):
                b = rng.normal(0, 0.3)
                for r in range(R):
                    y[g, m, t, r] = round(0.5 + d + c + a + b + rng.normal(0, 0.2), 4)
                    rows.append(
                        f"{name},{name[0]}q{g}_{m},{t + 1},{r + 1},{name[0]}art{g},{y[g, m, t, r]:.4f}"
                    )
    data[name] = y

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "cluster")
with open(os.path.join(here, "balanced.csv"), "w") as f:
    f.write("dataset,question,trajectory,read,article,f1\n")
    f.write("\n".join(rows) + "\n")

for name, y in data.items():
    grand = y.mean()
    yg = y.mean(axis=(1, 2, 3))
    yq = y.mean(axis=(2, 3))
    yt = y.mean(axis=3)
    ss_c = M * T * R * ((yg - grand) ** 2).sum()
    ss_q = T * R * ((yq - yg[:, None]) ** 2).sum()
    ss_t = R * ((yt - yq[:, :, None]) ** 2).sum()
    ss_r = ((y - yt[..., None]) ** 2).sum()
    ms_c = ss_c / (G - 1)
    ms_q = ss_q / (G * (M - 1))
    ms_t = ss_t / (G * M * (T - 1))
    ms_r = ss_r / (G * M * T * (R - 1))
    s_r = ms_r
    s_t = (ms_t - ms_r) / R
    s_q = (ms_q - ms_t) / (T * R)
    s_c = (ms_c - ms_q) / (M * T * R)
    se = yg.std(ddof=1) / np.sqrt(G)
    print(name, "mean", repr(grand), "se", repr(se))
    print("  ms", [repr(v) for v in (ms_c, ms_q, ms_t, ms_r)])
    print("  components", [repr(v) for v in (s_c, s_q, s_t, s_r)])
    # The question-level SE (clusters ignored): SD of question means over sqrt(Q).
    print("  se_unclustered", repr(yq.std(ddof=1) / np.sqrt(G * M)))
