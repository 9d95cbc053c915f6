#!/usr/bin/env python3
"""Reference values of the cluster-adjusted McNemar test (Obuchowski 1998, "On the
comparison of correlated proportions for clustered data", Stat Med 17:1495-1507) for the
hand-made case of crates/ragstats-core/src/mcq/cluster.rs and tests/it/mcq_cluster.rs.

Computed from pair-level 0/1 vectors with numpy and scipy, independently of the Rust code
(which works on per-cluster counts): per cluster i, n_i pairs, x_i = A right, y_i = B right;
p_A = sum x / N, p_B = sum y / N; var_A = I/(I-1) sum (x_i - n_i p_A)^2 / N^2 (likewise B),
cov = I/(I-1) sum (x_i - n_i p_A)(y_i - n_i p_B) / N^2;
X2 = (p_A - p_B)^2 / (var_A + var_B - 2 cov), p = chi2(1).sf(X2).
Also the exact McNemar p on the discordant counts with scipy.stats.binomtest.

    /work/venv-mcq/bin/python tests/reference/mcq_cluster.py
"""

import numpy as np
from scipy import stats

# (cluster, A right, B right) per (item, run) pair: 6 clusters of 1 to 4 pairs.
PAIRS = [
    ("c1", 1, 1), ("c1", 1, 0), ("c1", 1, 0),
    ("c2", 1, 0), ("c2", 0, 0),
    ("c3", 1, 1), ("c3", 0, 1), ("c3", 1, 0), ("c3", 0, 0),
    ("c4", 1, 0),
    ("c5", 0, 1), ("c5", 1, 1), ("c5", 0, 0),
    ("c6", 1, 0), ("c6", 1, 0),
]


def obuchowski(pairs):
    lab = np.array([p[0] for p in pairs])
    a = np.array([p[1] for p in pairs], dtype=float)
    b = np.array([p[2] for p in pairs], dtype=float)
    ids = list(dict.fromkeys(lab))
    n = np.array([np.sum(lab == c) for c in ids], dtype=float)
    x = np.array([a[lab == c].sum() for c in ids])
    y = np.array([b[lab == c].sum() for c in ids])
    k, big_n = len(ids), n.sum()
    pa, pb = x.sum() / big_n, y.sum() / big_n
    f = k / (k - 1) / big_n**2
    va = f * np.sum((x - n * pa) ** 2)
    vb = f * np.sum((y - n * pb) ** 2)
    cov = f * np.sum((x - n * pa) * (y - n * pb))
    chi2 = (pa - pb) ** 2 / (va + vb - 2 * cov)
    return list(zip(n, x, y)), chi2, stats.chi2.sf(chi2, 1)


if __name__ == "__main__":
    cells, chi2, p = obuchowski(PAIRS)
    print("cells (n, x, y):", [tuple(int(v) for v in c) for c in cells])
    print(f"chi2 = {chi2!r}")
    print(f"p = {p!r}")
    a_only = sum(1 for _, x, y in PAIRS if x == 1 and y == 0)
    b_only = sum(1 for _, x, y in PAIRS if x == 0 and y == 1)
    exact = stats.binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
    print(f"a_only = {a_only}, b_only = {b_only}, binomtest p = {exact!r}")
    # The same pairs 4 times over, each copy its own 6 clusters (24 clusters).
    many = [(f"{c}-{r}", x, y) for r in range(4) for c, x, y in PAIRS]
    _, chi2, p = obuchowski(many)
    print(f"x4 (24 clusters): chi2 = {chi2!r}, p = {p!r}")
