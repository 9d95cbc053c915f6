"""Independent reference for crates/ragstats-core/src/sequential: the predictable plug-in
empirical-Bernstein confidence sequence (PrPl-EB) of Waudby-Smith & Ramdas (2023, JRSS-B,
Theorem 2, eqs. (13)-(15)), written vectorised over the whole stream with numpy (the Rust
code updates running sums one observation at a time), and the normal-mixture sequence of
Howard et al. (2021, eq. (14)).

PrPl-EB for X in [lo, hi], on the unit scale Z = (X - lo) / (hi - lo), two-sided at alpha:
    mu_t = (1/2 + sum_{i<=t} Z_i) / (t + 1),  s2_t = (1/4 + sum_{i<=t} (Z_i - mu_i)^2) / (t + 1)
    lambda_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))), 1/2)
    v_t = 4 (Z_t - mu_{t-1})^2,  psi(l) = (-log(1 - l) - l) / 4
    C_t = (sum lambda_i Z_i +- (log(2/alpha) + sum v_i psi(lambda_i))) / sum lambda_i,
clipped to [0, 1] and mapped back. Strata: each at alpha / D, combined by the weighted sum
of the ends.

Rounds (strata rounds): round k holds the next m_d questions of stratum d; its weighted mean
Y_k = sum_d w_d mean(round k's questions of d) is one observation of ONE sequence at alpha
(PrPl-EB on Y in the same range; with a sub-Gaussian scale sigma per question mean, the
normal mixture with sigma_Y = sigma sqrt(sum_d w_d^2 / m_d), tuned to K rounds).

Run:  python3 tests/reference/sequential_cs.py   (numpy)
Prints the numbers recorded in sequential::tests.
"""
import numpy as np


def prpl_eb(xs, lo, hi, alpha):
    z = (np.asarray(xs, float) - lo) / (hi - lo)
    t = np.arange(1, len(z) + 1)
    mu = (0.5 + np.cumsum(z)) / (t + 1)
    s2 = (0.25 + np.cumsum((z - mu) ** 2)) / (t + 1)
    mu_prev = np.concatenate([[0.5], mu[:-1]])
    s2_prev = np.concatenate([[0.25], s2[:-1]])
    lam = np.minimum(np.sqrt(2 * np.log(2 / alpha) / (s2_prev * t * np.log(1 + t))), 0.5)
    v = 4 * (z - mu_prev) ** 2
    psi = (-np.log(1 - lam) - lam) / 4
    centre = np.cumsum(lam * z) / np.cumsum(lam)
    radius = (np.log(2 / alpha) + np.cumsum(v * psi)) / np.cumsum(lam)
    lower = lo + (hi - lo) * np.clip(centre - radius, 0, 1)
    upper = lo + (hi - lo) * np.clip(centre + radius, 0, 1)
    return np.cumsum(xs) / t, lower, upper


def normal_mixture(xs, sigma, horizon, alpha):
    t = np.arange(1, len(xs) + 1)
    ell = np.log(1 / alpha)
    rho = sigma**2 * horizon / (2 * ell + np.log(1 + 2 * ell))
    v = t * sigma**2 + rho
    r = np.sqrt(v * np.log(v / (rho * alpha**2))) / t
    m = np.cumsum(xs) / t
    return m, m - r, m + r


XS = [0.5, -0.25, 1.0, 0.0, 0.75, 0.25, -0.5, 1.0, 0.5, 0.0] * 4

# The rounds panel: stratum a (weight 1/4) has XS (40 questions), stratum b (weight 3/4)
# XS then XS reversed, halved (80); m = (1, 2), K = 40 rounds.
ROUND_A = XS
ROUND_B = [x / 2 for x in XS + XS[::-1]]
ROUND_W = (0.25, 0.75)


def round_means(a, b, w):
    a = np.asarray(a, float)
    b = np.asarray(b, float).reshape(-1, 2).mean(axis=1)
    return w[0] * a + w[1] * b

if __name__ == "__main__":
    m, l, u = prpl_eb(XS, -1.0, 1.0, 0.05)
    for t in (1, 10, 40):
        print("one stratum, t=%d: mean %.15g, [%.15g, %.15g]" % (t, m[t - 1], l[t - 1], u[t - 1]))
    # Two strata, equal weights: the first 20 to stratum a, the next 20 (halved) to b, alpha/2 each.
    a = [s[-1] for s in prpl_eb(XS[:20], -1.0, 1.0, 0.025)]
    b = [s[-1] for s in prpl_eb([x / 2 for x in XS[20:]], -1.0, 1.0, 0.025)]
    print("two strata: estimate %.15g, [%.15g, %.15g]" % tuple((a[i] + b[i]) / 2 for i in range(3)))
    m, l, u = normal_mixture([x * 3 for x in XS], 2.0, 100, 0.05)
    print("sub-Gaussian sigma 2 horizon 100, t=40: mean %.15g, [%.15g, %.15g]" % (m[-1], l[-1], u[-1]))
    y = round_means(ROUND_A, ROUND_B, ROUND_W)
    m, l, u = prpl_eb(y, -1.0, 1.0, 0.05)
    for k in (20, 30, 40):
        print("rounds, k=%d: mean %.15g, [%.15g, %.15g]" % (k, m[k - 1], l[k - 1], u[k - 1]))
    sigma_y = 2.0 * np.sqrt(ROUND_W[0] ** 2 / 1 + ROUND_W[1] ** 2 / 2)
    m, l, u = normal_mixture(3 * y, sigma_y, 40, 0.05)
    print("rounds, sub-Gaussian sigma 2 (per question), 3x, k=40: sigma_Y %.15g, mean %.15g, [%.15g, %.15g]"
          % (sigma_y, m[-1], l[-1], u[-1]))
