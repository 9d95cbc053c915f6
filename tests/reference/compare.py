"""Independent reference for `stats compare` on tests/fixtures/compare/arms4.csv (numpy,
scipy, statsmodels; nothing from ragstats):

    python3 tests/reference/compare.py tests/fixtures/compare/arms4.csv

Per arm and stratum, each question's mean over its T x R reads; a stratum's mean and SE are
those of its question means (sd with n - 1, over sqrt(Q)); strata are combined with equal
weights: estimate = mean of stratum means, SE = sqrt(sum SE^2) / D. A pair b - a is the same
on the per-question differences. p: two-sided normal; Holm and BH: statsmodels. The
simultaneous critical value: the 0.95 quantile (numpy's default, type 7) of
max over pairs |d* - d| / SE over B = 200,000 stratified bootstrap replicates of questions.
"""
import csv
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

rows = defaultdict(list)
arms = []
strata = []
with open(sys.argv[1], newline="") as f:
    for r in csv.DictReader(f):
        if r["arm"] not in arms:
            arms.append(r["arm"])
        if r["dataset"] not in strata:
            strata.append(r["dataset"])
        rows[(r["dataset"], r["arm"], r["question"])].append(float(r["f1"]))

qmeans = {}  # (stratum, arm) -> array of question means, questions in file order
for s in strata:
    qs = sorted({q for (d, a, q) in rows if d == s}, key=lambda q: q)
    for a in arms:
        qmeans[(s, a)] = np.array([np.mean(rows[(s, a, q)]) for q in qs])

def est_se(per_stratum):
    m = [x.mean() for x in per_stratum]
    se2 = [x.var(ddof=1) / len(x) for x in per_stratum]
    return float(np.mean(m)), float(np.sqrt(sum(se2)) / len(per_stratum))

for a in arms:
    e, se = est_se([qmeans[(s, a)] for s in strata])
    print(f"system {a}: estimate {e:.12f} se {se:.12f}")
pairs = [(arms[i], arms[j]) for i in range(len(arms)) for j in range(i + 1, len(arms))]
est, ses, ps = [], [], []
for a, b in pairs:
    e, se = est_se([qmeans[(s, b)] - qmeans[(s, a)] for s in strata])
    est.append(e); ses.append(se); ps.append(2 * norm.sf(abs(e / se)))
    print(f"pair {b}-{a}: estimate {e:.12f} se {se:.12f} p {ps[-1]:.12f}")
print("holm", " ".join(f"{x:.12f}" for x in multipletests(ps, method="holm")[1]))
print("bh  ", " ".join(f"{x:.12f}" for x in multipletests(ps, method="fdr_bh")[1]))

rng = np.random.default_rng(20261202)
B = 200_000
boot = np.zeros((B, len(pairs)))
for s in strata:
    diffs = np.stack([qmeans[(s, b)] - qmeans[(s, a)] for a, b in pairs], axis=1)
    q = diffs.shape[0]
    for start in range(0, B, 20_000):
        idx = rng.integers(0, q, size=(20_000, q))
        boot[start:start + 20_000] += diffs[idx].mean(axis=1) / len(strata)
t = np.abs(boot - np.array(est)) / np.array(ses)
print(f"max-|t| 0.95 quantile (B = {B}): {np.quantile(t.max(axis=1), 0.95):.4f}")
