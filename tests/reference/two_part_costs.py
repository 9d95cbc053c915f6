"""Independent check of `stats efficiency --currency usd` with two-part read costs (issue #31,
item 2) on the demo: numpy only, written from the formulas in docs/METHODS.md, not from the
Rust code.

    /work/venv-cost/bin/python tests/reference/two_part_costs.py \
        data/demo/panel.csv data/demo/ledger.jsonl

Prints per stratum c_T, c_R1, c_R+ (USD, search at $0.5 per 1,000 requests), the fixed-Q loss
(brute force over every integer R with T(R) >= 1), the combined fixed-T J_T(1)/J_T(2), the
direct check over all C(R, 2) read pairs, and the billed total of the panel's questions
against Q T (c_T + c_R1 + (R - 1) c_R+).
"""

import csv
import json
import sys
from collections import defaultdict
from itertools import combinations

import numpy as np

PRICE_IN, PRICE_CACHED, PRICE_OUT = 0.27, 0.07, 1.10  # USD per 1M tokens (prices.toml)
SEARCH = 0.5  # USD per 1,000 unique search requests


def load_panel(path):
    """y[d][q][t][r] = adaptive - open."""
    cells = defaultdict(dict)
    for row in csv.DictReader(open(path)):
        key = (row["dataset"], row["question"], int(row["trajectory"]), int(row["read"]))
        cells[key][row["arm"]] = float(row["f1"])
    strata = defaultdict(lambda: defaultdict(dict))
    for (d, q, t, r), arms in cells.items():
        strata[d][q].setdefault(t, {})[r] = arms["adaptive"] - arms["open"]
    out = {}
    for d, qs in strata.items():
        names = sorted(qs)
        T = len(qs[names[0]])
        R = len(qs[names[0]][0])
        out[d] = (names, np.array([[[qs[q][t][r] for r in range(R)] for t in range(T)] for q in names]))
    return out


def load_costs(path):
    """USD per (d, q, t) of planner+search rows and per (d, q, t, r) of reader rows; a keyed
    call is billed once, split equally over the distinct cells its rows name."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    fee = []
    for e in rows:
        if e["kind"] == "search":
            fee.append(SEARCH / 1000.0)
        else:
            inp, cached, out = e.get("input_tokens", 0), e.get("cached_input_tokens", 0), e.get("output_tokens", 0)
            fee.append(((inp - cached) * PRICE_IN + cached * PRICE_CACHED + out * PRICE_OUT) / 1e6)
    cell = lambda e: (e["dataset"], e["question"], e["trajectory"], e.get("read") if e["kind"] == "reader" else None)
    by_key = defaultdict(list)
    for e in rows:
        if e.get("key") is not None:
            c = cell(e)
            if c not in by_key[e["key"]]:
                by_key[e["key"]].append(c)
    cost = defaultdict(float)
    seen = set()
    for e, f in zip(rows, fee):
        k = e.get("key")
        if k is None:
            cost[cell(e)] += f
        elif k not in seen:
            seen.add(k)
            for c in by_key[k]:
                cost[c] += f / len(by_key[k])
    return cost


def anova(y):
    Q, T, R = y.shape
    yq = y.mean(axis=(1, 2))
    yqt = y.mean(axis=2)
    ms_q = T * R * ((yq - yq.mean()) ** 2).sum() / (Q - 1)
    ms_t = R * ((yqt - yq[:, None]) ** 2).sum() / (Q * (T - 1))
    ms_r = ((y - yqt[:, :, None]) ** 2).sum() / (Q * T * (R - 1))
    s_r = ms_r
    s_t = (ms_t - ms_r) / R
    s_q = (ms_q - ms_t) / (T * R)
    return [max(0.0, v) for v in (s_q, s_t, s_r)]


def main(panel_path, ledger_path):
    panel = load_panel(panel_path)
    cost = load_costs(ledger_path)
    parts = []
    total_q = sum(len(n) for n, _ in panel.values())
    billed = 0.0
    modelled = 0.0
    for d in sorted(panel):
        names, y = panel[d]
        Q, T, R = y.shape
        tc = sum(cost[(d, q, t, None)] for q in names for t in range(T))
        r1 = sum(cost[(d, q, t, 0)] for q in names for t in range(T))
        rp = sum(cost[(d, q, t, r)] for q in names for t in range(T) for r in range(1, R))
        c_t, c_r1, c_rp = tc / (Q * T), r1 / (Q * T), rp / (Q * T * (R - 1))
        billed += sum(v for k, v in cost.items() if k[0] == d and k[1] in set(names))
        modelled += Q * T * (c_t + c_r1 + (R - 1) * c_rp)
        s_q, s_t, s_r = anova(y)
        c0 = c_t + c_r1 - c_rp
        B = Q * T * (c_t + c_r1 + (R - 1) * c_rp)
        J = {}
        for r in range(1, 1000):
            traj = B / Q / (c0 + r * c_rp)
            if traj < 1:
                break
            J[r] = s_q / Q + (s_t + s_r / r) / (Q * traj)
        best = min(J, key=J.get)
        print(f"{d}: c_T {c_t:.6f} c_R1 {c_r1:.6f} c_R+ {c_rp:.6f}; fixed-Q best R {best}, "
              f"loss {100 * (J[1] / J[best] - 1):.6f}%")
        parts.append((s_q, s_t, s_r, T, Q / total_q, c0, c_rp))
    D = len(parts)
    def j_t(r):
        a = sum((s_q + s_t / T) / pi for s_q, s_t, _, T, pi, _, _ in parts) / D**2
        b = sum(s_r / (T * pi) for _, _, s_r, T, pi, _, _ in parts) / D**2
        c = sum(pi * T * c0 for _, _, _, T, pi, c0, _ in parts)
        dd = sum(pi * T * crp for _, _, _, T, pi, _, crp in parts)
        return (a + b / r) * (c + dd * r)
    print(f"combined fixed-T J_T(1)/J_T(2) = {j_t(1) / j_t(2):.6f}")
    # Direct check over all pairs: SE² of the equal-weight mean of question means.
    R = min(y.shape[2] for _, y in panel.values())
    def se2(reads):
        v = 0.0
        for names, y in panel.values():
            m = y[:, :, reads].mean(axis=(1, 2))
            v += m.var(ddof=1) / len(m)
        return v / D**2
    c1 = sum(cost[(d, q, t, None)] + cost[(d, q, t, 0)] for d, (n, y) in panel.items() for q in n for t in range(y.shape[1]))
    c2 = c1 + sum(cost[(d, q, t, 1)] for d, (n, y) in panel.items() for q in n for t in range(y.shape[1]))
    ratios = [((se2([a]) + se2([b])) / 2 * c1) / (se2([a, b]) * c2) for a, b in combinations(range(R), 2)]
    print(f"direct check over {len(ratios)} pairs: {np.mean(ratios):.6f}")
    print(f"billed total of the panel's questions {billed:.6f} vs Q T (c_T + c_R1 + (R-1) c_R+) {modelled:.6f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
