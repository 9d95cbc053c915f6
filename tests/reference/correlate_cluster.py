"""Independent reference for `correlate --cluster` (issue #31, item 9): the delete-one-cluster
jackknife of Fisher's z on 60 rows, each its own cluster, and on the same rows copied 4
times within their cluster (identical by construction); and the ordinary t test of the 60
rows and of the 240 copied rows.

Run: /work/venv-infer/bin/python tests/reference/correlate_cluster.py
"""
import numpy as np
from scipy import stats

n = 60
x = np.array([((i * 37) % 61) / 61 for i in range(n)])
y = np.array([0.058 * x[i] + ((i * 53 + 7) % 59) / 59 for i in range(n)])


def jackknife(x, y, cl, f):
    g = np.unique(cl)
    r = f(x, y)
    z = np.array([np.arctanh(f(x[cl != c], y[cl != c])) for c in g])
    G = len(g)
    se = np.sqrt((G - 1) / G * ((z - z.mean()) ** 2).sum())
    t = np.arctanh(r) / se
    p = 2 * stats.t.sf(abs(t), G - 2)
    q = stats.t.ppf(0.975, G - 2)
    return r, t, p, np.tanh(np.arctanh(r) - q * se), np.tanh(np.arctanh(r) + q * se)


methods = {
    "pearson": lambda a, b: stats.pearsonr(a, b)[0],
    "spearman": lambda a, b: stats.spearmanr(a, b)[0],
    "kendall": lambda a, b: stats.kendalltau(a, b)[0],
}
cl = np.arange(n)
xd, yd, cld = np.repeat(x, 4), np.repeat(y, 4), np.repeat(cl, 4)
print("t test, 60 rows:   p =", repr(stats.pearsonr(x, y)[1]))
print("t test, 240 rows:  p =", repr(stats.pearsonr(xd, yd)[1]))
for name, f in methods.items():
    print(name, "jackknife 60 rows :", [repr(v) for v in jackknife(x, y, cl, f)])
    print(name, "jackknife 240 rows:", [repr(v) for v in jackknife(xd, yd, cld, f)])
