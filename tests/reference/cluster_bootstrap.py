"""Fixture and independent reference for the cluster bootstrap (issue #48, item 3).

Writes tests/fixtures/cluster_boot/balanced.csv: 2 strata x 24 clusters x 4 questions x T = 2
trajectories x R = 2 reads, y = mu_d + a_c + b_q + c_t + e (normal effects, SDs 0.15,
0.10, 0.08, 0.05; numpy RandomState(48)), printed to 6 decimals, with a `cluster` column;
tests/fixtures/cluster_boot/copied.csv: the same panel with every question copied 3 times
inside its cluster (new question ids, same outcomes); and tests/fixtures/cluster_boot/arms.csv:
3 arms on 2 strata x 10 clusters x 4 questions x T = R = 1 (a shared cluster effect, SD
0.15, question SD 0.10, arm shifts 0, 0.03, 0.06 and arm noise SD 0.05), with a `cluster`
column and a `qcluster` column naming each question its own cluster (for `compare`).

Prints the numpy reference the tests record: per stratum the mean and the cluster-level
SE of the mean, sqrt(var(cluster means, ddof=0) / G) (the exact SD of the mean of G
clusters drawn with replacement, which the cluster bootstrap SE estimates), the same with
ddof=1 (the analytic cluster SE, inspect's clustered stderr for equal sizes, T = R = 1),
and for the equal-weight estimate (1/2)(m_1 + m_2) the combined SEs; and the
question-level ddof=0 SE of each panel (which copying shrinks by sqrt(3)).

Run: python3 tests/reference/cluster_bootstrap.py
"""
import csv
import os

import numpy as np

rng = np.random.RandomState(48)
D, G, M, T, R = 2, 24, 4, 2, 2
here = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cluster_boot")
rows = []
for d, name in enumerate(["hotpot", "musique"]):
    mu = [0.55, 0.40][d]
    for c in range(G):
        a = rng.normal(0, 0.15)
        for m in range(M):
            b = rng.normal(0, 0.10)
            for t in range(T):
                ct = rng.normal(0, 0.08)
                for r in range(R):
                    e = rng.normal(0, 0.05)
                    y = round(mu + a + b + ct + e, 6)
                    rows.append((name, f"{name}-c{c:02d}", f"{name}-c{c:02d}-q{m}", t, r, y))


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["dataset", "cluster", "question", "trajectory", "read", "score"])
        for row in rows:
            w.writerow([row[0], row[1], row[2], row[3], row[4], f"{row[5]:.6f}"])


write(os.path.join(here, "balanced.csv"), rows)
copied = [
    (d, c, f"{q}-copy{k}", t, r, y) for k in range(3) for (d, c, q, t, r, y) in rows
]
write(os.path.join(here, "copied.csv"), copied)


def report(rows, label):
    arr = {}
    for d, c, q, t, r, y in rows:
        arr.setdefault(d, {}).setdefault(c, {}).setdefault(q, []).append(y)
    v0, v1, vq = [], [], []
    for d, clusters in arr.items():
        qmeans = {c: [np.mean(ys) for ys in qs.values()] for c, qs in clusters.items()}
        cm = np.array([np.mean(v) for v in qmeans.values()])
        allq = np.concatenate([np.array(v) for v in qmeans.values()])
        g = len(cm)
        s0 = np.sqrt(cm.var(ddof=0) / g)
        s1 = np.sqrt(cm.var(ddof=1) / g)
        sq = np.sqrt(allq.var(ddof=0) / len(allq))
        print(f"{label} {d}: mean {allq.mean():.12f} cluster se ddof0 {s0:.12f} ddof1 {s1:.12f} question se ddof0 {sq:.12f}")
        v0.append(s0**2)
        v1.append(s1**2)
        vq.append(sq**2)
    print(f"{label} estimate: cluster se ddof0 {np.sqrt(sum(v0)) / 2:.12f} ddof1 {np.sqrt(sum(v1)) / 2:.12f} question se ddof0 {np.sqrt(sum(vq)) / 2:.12f}")


arms = []
for d, name in enumerate(["hotpot", "musique"]):
    for c in range(10):
        a = rng.normal(0, 0.15)
        for m in range(4):
            b = rng.normal(0, 0.10)
            q = f"{name}-c{c}-q{m}"
            for k, arm in enumerate(["base", "mid", "top"]):
                y = round(0.5 + 0.03 * k + a + b + rng.normal(0, 0.05), 6)
                arms.append((name, f"{name}-c{c}", q, arm, y))
with open(os.path.join(here, "arms.csv"), "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["dataset", "cluster", "qcluster", "question", "trajectory", "read", "arm", "score"])
    for d, c, q, arm, y in arms:
        w.writerow([d, c, q, q, 0, 0, arm, f"{y:.6f}"])

report(rows, "balanced")
report(copied, "copied")


def acceleration(rows):
    """BCa acceleration of the equal-weight estimate by the stratified delete-one-cluster
    jackknife: theta_(dc) with cluster c of stratum d left out (ratio mean of the rest),
    U_dc = (G_d - 1)(mean_c theta_(dc) - theta_(dc)), l = U / G_d,
    a = sum l^3 / (6 (sum l^2)^1.5)."""
    arr = {}
    for d, c, q, t, r, y in rows:
        arr.setdefault(d, {}).setdefault(c, {}).setdefault(q, []).append(y)
    strata = list(arr)
    qm = {d: {c: [np.mean(v) for v in qs.values()] for c, qs in arr[d].items()} for d in strata}
    means = {d: np.mean(np.concatenate([np.array(v) for v in qm[d].values()])) for d in strata}
    ls = []
    for d in strata:
        thetas = []
        for c in qm[d]:
            rest = np.concatenate([np.array(v) for k, v in qm[d].items() if k != c])
            m = dict(means)
            m[d] = rest.mean()
            thetas.append(np.mean([m[s] for s in strata]))
        thetas = np.array(thetas)
        g = len(thetas)
        ls.extend((g - 1) * (thetas.mean() - thetas) / g)
    ls = np.array(ls)
    return (ls**3).sum() / (6 * (ls**2).sum() ** 1.5)


print(f"balanced estimate: BCa acceleration (delete-one-cluster jackknife) {acceleration(rows):.12f}")
