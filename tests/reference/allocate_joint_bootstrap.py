"""Independent joint (paired) bootstrap of `stats allocate` on the demo panel (issues #31, #45).

Reads data/demo/panel.csv with the csv module, forms the contrast adaptive - open per cell,
and for allocations A=446:2:1, B=174:2:5, C=298:3:1 (Q split 223/223, 87/87, 149/149; the
first Q_d questions of each stratum in file order; trajectories 0..T-1 and reads 0..R-1)
bootstraps the allocations jointly, and prints, per pair, the replicate correlation of the
SEs and the central 95% percentile interval of 1 - SE_A/SE_B, and per allocation the SD of
its replicate SEs (the spread of a sub-panel's SE).

Schemes (argument 2, default `exact`):
- `exact` (issue #45, what `stats allocate` does): per replicate and stratum one sequence of
  draws uniform over the MASTER panel's questions; each allocation takes the first n_d
  draws that land in its own sub-panel (n_d its size), so every replicate's sub-panel has
  exactly n_d draws.
- `binomial` (before issue #45): the master panel's Q_d questions drawn once with
  replacement (multinomial counts); each allocation is evaluated on the drawn questions in
  its sub-panel, whose number varies (Binomial(Q_d, n_d/Q_d)), and SE^2 = sum_d s_d^2/n_d /
  D^2 with n_d that drawn count.

It also prints the Monte-Carlo SD of those statistics for a 10,000-replicate bootstrap (the
SD over 40 independent chunks of 10,000 replicates), which sizes the test's tolerance.

Run: /tmp/venv-rs/bin/python tests/reference/allocate_joint_bootstrap.py [PANEL [SCHEME]]
"""
import csv
import sys
from collections import OrderedDict

import numpy as np

path = sys.argv[1] if len(sys.argv) > 1 else "data/demo/panel.csv"
scheme = sys.argv[2] if len(sys.argv) > 2 else "exact"
assert scheme in ("exact", "binomial"), scheme
cells = {}
order = OrderedDict()  # stratum -> list of questions in file order
with open(path) as f:
    for row in csv.DictReader(f):
        d, q = row["dataset"], row["question"]
        order.setdefault(d, [])
        if q not in order[d]:
            order[d].append(q)
        key = (d, q, int(row["trajectory"]), int(row["read"]))
        cells.setdefault(key, {})[row["arm"]] = float(row["f1"])

allocs = {"A": (446, 2, 1), "B": (174, 2, 5), "C": (298, 3, 1)}
strata = list(order)


def question_means(d, qs, t, r):
    out = []
    for q in qs:
        m = [np.mean([cells[(d, q, ti, ri)]["adaptive"] - cells[(d, q, ti, ri)]["open"]
                      for ri in range(r)]) for ti in range(t)]
        out.append(np.mean(m))
    return np.array(out)


# Per stratum: per allocation the member vector (1 for its first Q_d questions) and the
# deviations of its question means from its own stratum mean (0 outside).
member = {a: [] for a in allocs}
dev = {a: [] for a in allocs}
for d in strata:
    qs = order[d]
    for a, (qa, t, r) in allocs.items():
        n = qa // len(strata)
        m = question_means(d, qs[:n], t, r)
        mem = np.zeros(len(qs))
        mem[:n] = 1
        dv = np.zeros(len(qs))
        dv[:n] = m - m.mean()
        member[a].append(mem)
        dev[a].append(dv)

point = {}
for a in allocs:
    se2 = 0
    for s in range(len(strata)):
        x = dev[a][s][member[a][s] == 1]
        se2 += x.var(ddof=1) / len(x)
    point[a] = np.sqrt(se2) / len(strata)
print("point SE", {a: round(v, 6) for a, v in point.items()})


def replicate_se(counts):
    """counts[s]: (B, Q_s) draw counts. Returns {allocation: (B,) SE}."""
    out = {}
    for a in allocs:
        se2 = 0
        for s in range(len(strata)):
            w = counts[s] * member[a][s]
            n = w.sum(axis=1)
            s1 = w @ dev[a][s]
            s2 = w @ dev[a][s] ** 2
            se2 = se2 + (s2 - s1 * s1 / n) / (n - 1) / n
        out[a] = np.sqrt(se2) / len(strata)
    return out


def exact_counts(rng, B):
    """{allocation: [per stratum (B, Q_s) draw counts]}: the first n draws of one master
    sequence per (replicate, stratum) that land in the allocation's first n questions."""
    out = {a: [] for a in allocs}
    for s, d in enumerate(strata):
        q = len(order[d])
        draws = rng.integers(0, q, size=(B, 3 * q))  # positions in file order
        for a in allocs:
            n = int(member[a][s].sum())
            land = draws < n  # the sub-panel is the first n questions
            take = land & (np.cumsum(land, axis=1) <= n)
            assert (take.sum(axis=1) == n).all(), "sequence too short"
            rows = np.nonzero(take)[0]
            counts = np.zeros((B, q))
            np.add.at(counts, (rows, draws[take]), 1)
            out[a].append(counts)
    return out


def replicate_se_exact(counts):
    out = {}
    for a in allocs:
        se2 = 0
        for s in range(len(strata)):
            w = counts[a][s]
            n = w.sum(axis=1)
            s1 = w @ dev[a][s]
            s2 = w @ dev[a][s] ** 2
            se2 = se2 + (s2 - s1 * s1 / n) / (n - 1) / n
        out[a] = np.sqrt(se2) / len(strata)
    return out


rng = np.random.default_rng(20261202)
chunks, B = 40, 10_000
stats = {}
spread = {a: [] for a in allocs}
for c in range(chunks):
    if scheme == "binomial":
        counts = [rng.multinomial(len(order[d]), np.full(len(order[d]), 1 / len(order[d])), size=B)
                  for d in strata]
        se = replicate_se(counts)
    else:
        se = replicate_se_exact(exact_counts(rng, B))
    for a in allocs:
        spread[a].append(se[a])
    for a, b in [("A", "B"), ("A", "C"), ("B", "C")]:
        red = 1 - se[a] / se[b]
        st = stats.setdefault((a, b), {"corr": [], "lo": [], "hi": [], "all": []})
        st["corr"].append(np.corrcoef(se[a], se[b])[0, 1])
        st["lo"].append(np.quantile(red, 0.025))
        st["hi"].append(np.quantile(red, 0.975))
        st["all"].append(red)
for (a, b), st in stats.items():
    red = np.concatenate(st["all"])
    print(f"{a} vs {b}: reduction {1 - point[a] / point[b]:.6f} "
          f"corr {np.mean(st['corr']):.4f} (MC SD at B=1e4 {np.std(st['corr'], ddof=1):.4f}) "
          f"CI [{np.quantile(red, 0.025):.4f}, {np.quantile(red, 0.975):.4f}] "
          f"(MC SD at B=1e4 {np.std(st['lo'], ddof=1):.4f}, {np.std(st['hi'], ddof=1):.4f})")
for a in allocs:
    v = np.concatenate(spread[a])
    print(f"{a}: SD of replicate SEs {np.std(v, ddof=1):.6f} (mean {np.mean(v):.6f}, point {point[a]:.6f})")
