"""Independent reference for the re-ranked Spearman bootstrap (issue #31, item 8):
data/demo/capability.csv, planning vs browsecomp (n = 12). scipy.stats.bootstrap resamples
the 12 (x, y) rows jointly (paired=True) and recomputes spearmanr on each resample (so it
re-ranks); the percentile interval uses numpy's default (linear, type-7) quantiles, as
`stats` does. For contrast, the old fixed-rank bootstrap (Pearson's r of the full-sample
ranks on each resample).

Run: /work/venv-infer/bin/python tests/reference/spearman_bootstrap.py
"""
import csv

import numpy as np
from scipy import stats

rows = list(csv.DictReader(open("data/demo/capability.csv")))
x = np.array([float(r["planning"]) for r in rows])
y = np.array([float(r["browsecomp"]) for r in rows])
print("n =", len(x), " rho =", repr(stats.spearmanr(x, y)[0]))


def rho(a, b):
    r = stats.spearmanr(a, b)[0]
    return r


B = 200_000
rng = np.random.default_rng(31)
res = stats.bootstrap((x, y), rho, paired=True, vectorized=False, n_resamples=B,
                      method="percentile", confidence_level=0.95, random_state=rng)
print("scipy.stats.bootstrap percentile 95%:", res.confidence_interval,
      " SE", res.standard_error)
# Hand loop, same draws for both: re-ranked vs fixed full-sample ranks.
rng = np.random.default_rng(32)
idx = rng.integers(0, len(x), size=(B, len(x)))
rx, ry = stats.rankdata(x), stats.rankdata(y)
rer, fixed = [], []
for i in idx:
    with np.errstate(invalid="ignore"):
        rer.append(stats.spearmanr(x[i], y[i])[0])
        fixed.append(np.corrcoef(rx[i], ry[i])[0, 1])
rer, fixed = np.array(rer), np.array(fixed)
rer, fixed = rer[np.isfinite(rer)], fixed[np.isfinite(fixed)]
print("hand loop re-ranked  2.5/97.5%:", np.percentile(rer, [2.5, 97.5]), " SE", rer.std(ddof=1))
print("hand loop fixed rank 2.5/97.5%:", np.percentile(fixed, [2.5, 97.5]), " SE", fixed.std(ddof=1))
