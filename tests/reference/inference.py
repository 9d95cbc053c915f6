"""Reference values of crates/ragstats-core/src/inference (scipy 1.17.1, statsmodels 0.15.0;
nothing from ragstats):

    python3 tests/reference/inference.py
"""
import numpy as np
from scipy import stats
from scipy.stats import binom, studentized_range
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

print("t.ppf(0.975, df):", [repr(stats.t.ppf(0.975, d)) for d in (1, 4, 9.5, 19, 118)])
print("studentized_range.ppf(0.95, k, df) / sqrt(2):",
      [repr(studentized_range.ppf(0.95, k, df) / np.sqrt(2)) for k, df in ((5, 118), (5, 10), (3, 19), (10, 40))])
for x in (0, 20, 1, 18):
    print(f"wilson {x}/20:", [repr(v) for v in proportion_confint(x, 20, method="wilson")])
print("mcnemar exact [[12, 8], [0, 0]]:", mcnemar([[12, 8], [0, 0]], exact=True).pvalue)
print("mcnemar exact [[5, 3], [9, 3]]:", mcnemar([[5, 3], [9, 3]], exact=True).pvalue)
print("mid-p (3 of 12):", repr(2 * binom.cdf(3, 12, 0.5) - binom.pmf(3, 12, 0.5)))
print("exact 600 of 1300:", repr(2 * binom.cdf(600, 1300, 0.5)))

from scipy.stats import beta, binomtest
for k, n in ((0, 20), (20, 20), (1, 20), (18, 20), (7, 20), (0, 5), (5, 5), (3, 10), (45, 100)):
    c = binomtest(k, n).proportion_ci(method="exact")
    print(f"clopper-pearson {k}/{n}:", repr(c.low), repr(c.high))
c = binomtest(7, 20).proportion_ci(confidence_level=0.9, method="exact")
print("clopper-pearson 7/20 at 90%:", repr(c.low), repr(c.high))
print("clopper-pearson x = 7.3 of n = 19.6:", repr(beta.ppf(0.025, 7.3, 13.3)), repr(beta.ppf(0.975, 8.3, 12.3)))
