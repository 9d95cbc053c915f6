"""Independent reference for `stats compare` on tests/fixtures/compare/arms4.csv (numpy,
scipy, statsmodels; nothing from ragstats):

    python3 tests/reference/compare.py tests/fixtures/compare/arms4.csv

Per arm and stratum, each question's mean over its T x R reads; a stratum's mean and SE are
those of its question means (sd with n - 1, over sqrt(Q)); strata are combined with equal
weights: estimate = mean of stratum means, SE = sqrt(sum SE^2) / D, with Welch-Satterthwaite
df = (sum a)^2 / sum(a^2 / (Q - 1)), a = SE_s^2 / D^2. A pair b - a is the same on the
per-question differences. p: two-sided Student t on that df (scipy); Holm and BH:
statsmodels. The bootstrap: B = 200,000 stratified replicates of questions; the max-|t|
critical value is the 0.95 quantile of max over pairs |Z| / S with Z ~ N(0, R), R the
correlation matrix of the pairs' bootstrap replicates, S = sqrt(chi2_df / df) on the
family's smallest df (2,000,000 draws); Tukey's value for 4 independent arms on that df is
scipy's studentized_range.ppf(0.95, 4, df) / sqrt(2). (Before the degrees of freedom were
added, p was normal and the critical value the bootstrap quantile of
max |d* - d| / SE: 2.5073.)
"""
import csv
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import norm, t as student, studentized_range
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
    d = len(per_stratum)
    a = [v / d**2 for v in se2]
    df = sum(a) ** 2 / sum(ai**2 / (len(x) - 1) for ai, x in zip(a, per_stratum))
    return float(np.mean(m)), float(np.sqrt(sum(se2)) / d), float(df)

for a in arms:
    e, se, df = est_se([qmeans[(s, a)] for s in strata])
    lo, hi = e - student.ppf(0.975, df) * se, e + student.ppf(0.975, df) * se
    print(f"system {a}: estimate {e:.12f} se {se:.12f} df {df:.9f} ci [{lo:.12f}, {hi:.12f}]")
pairs = [(arms[i], arms[j]) for i in range(len(arms)) for j in range(i + 1, len(arms))]
est, ses, ps, dfs = [], [], [], []
for a, b in pairs:
    e, se, df = est_se([qmeans[(s, b)] - qmeans[(s, a)] for s in strata])
    est.append(e); ses.append(se); dfs.append(df); ps.append(2 * student.sf(abs(e / se), df))
    print(f"pair {b}-{a}: estimate {e:.12f} se {se:.12f} df {df:.9f} p {ps[-1]:.12g}")
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
r = np.corrcoef(boot, rowvar=False)
nu = min(dfs)
z = rng.multivariate_normal(np.zeros(len(pairs)), r, size=2_000_000, method="eigh")
sc = np.sqrt(rng.chisquare(nu, size=z.shape[0]) / nu)
print(f"family df {nu:.9f}")
print(f"max-|t| 0.95 quantile (multivariate t): {np.quantile(np.abs(z).max(axis=1) / sc, 0.95):.4f}")
print(f"Tukey / sqrt(2): {studentized_range.ppf(0.95, len(arms), nu) / np.sqrt(2):.6f}")
print(f"marginal t {student.ppf(0.975, nu):.15f} Bonferroni t {student.ppf(1 - 0.025 / len(pairs), nu):.15f}")
