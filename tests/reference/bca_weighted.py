"""Independent reference for the stratum-weighted BCa acceleration (issue #31, item 7).

Two strata of 15 and 120 question means; the statistic is the equal-weight mean of the
stratum means. Prints the stratified-jackknife acceleration unweighted (pooled U, as R's
boot does) and stratum-weighted (l = U / n_d, Davison & Hinkley 1997 §3.7), and the
skewness/6 of a large numpy stratified bootstrap of the same statistic.

Run: /work/venv-infer/bin/python tests/reference/bca_weighted.py
"""
import numpy as np

small = np.array([0.0] * 10 + [0.25, 0.25, 0.5, 1.0, 1.0])
large = np.array([(i % 5) / 4 for i in range(120)])
strata = [small, large]


def theta(groups):
    return np.mean([g.mean() for g in groups])


u_all, l_all = [], []
for d, g in enumerate(strata):
    n = len(g)
    loo = []
    for i in range(n):
        rest = [s if e != d else np.delete(g, i) for e, s in enumerate(strata)]
        loo.append(theta(rest))
    loo = np.array(loo)
    u = (n - 1) * (loo.mean() - loo)
    u_all.extend(u)
    l_all.extend(u / n)
u_all, l_all = np.array(u_all), np.array(l_all)
acc = lambda v: (v ** 3).sum() / (6 * ((v ** 2).sum()) ** 1.5)
print(f"unweighted a = {acc(u_all):.15g}")
print(f"weighted   a = {acc(l_all):.15g}")

rng = np.random.default_rng(20261202)
B = 400_000
reps = np.zeros(B)
for g in strata:
    idx = rng.integers(0, len(g), size=(B, len(g)))
    reps += g[idx].mean(axis=1) / len(strata)
c = reps - reps.mean()
skew = (c ** 3).mean() / (c ** 2).mean() ** 1.5
print(f"bootstrap skewness / 6 = {skew / 6:.4f} (B = {B})")
