#!/usr/bin/env python3
"""Reference values of the cluster-adjusted McNemar test (Obuchowski 1998, "On the
comparison of correlated proportions for clustered data", Stat Med 17:1495-1507) for the
hand-made case of crates/ragstats-core/src/mcq/cluster.rs and tests/it/mcq_cluster.rs.

Computed from pair-level 0/1 vectors with numpy and scipy, independently of the Rust code
(which works on per-cluster counts): per cluster i, n_i pairs, x_i = A right, y_i = B right;
p_A = sum x / N, p_B = sum y / N; var_A = I/(I-1) sum (x_i - n_i p_A)^2 / N^2 (likewise B),
cov = I/(I-1) sum (x_i - n_i p_A)(y_i - n_i p_B) / N^2;
X2 = (p_A - p_B)^2 / (var_A + var_B - 2 cov), p = chi2(1).sf(X2).
Also the exact McNemar p on the discordant counts with scipy.stats.binomtest.

Second, the joint cluster bootstrap of `stats mcq score --items` (clusters drawn once per
replicate across every group): the case COVARIANCE_CASE of tests/it/mcq_cluster.rs, 200
source questions with items in up to six groups whose scores share the question's
ability, generated here by the same 31-bit LCG as in the Rust test. Its bootstrap SE of
`overall` should match the cluster-robust linearised SE: overall = sum_g w_g c_g (w_g the
group's weight in the mean of the four tasks, c_g = S_g / n_g), the influence of cluster i
is sum_g w_g (S_ig - n_ig c_g) / n_g, and the bootstrap variance of a sum over I clusters
drawn with replacement is sum_i (infl_i - mean infl)^2. The per-group scheme of before
(clusters resampled independently in each group) has variance sum_g w_g^2 sum_i
(S_ig - n_ig c_g)^2 / n_g^2: the covariance between groups of one question left out.

    /work/venv-mcq/bin/python tests/reference/mcq_cluster.py
    /work/venv-mcq/bin/python tests/reference/mcq_cluster.py --write DIR   # also the files
"""

import sys

import numpy as np
from scipy import stats

# (cluster, A right, B right) per (item, run) pair: 6 clusters of 1 to 4 pairs.
PAIRS = [
    ("c1", 1, 1), ("c1", 1, 0), ("c1", 1, 0),
    ("c2", 1, 0), ("c2", 0, 0),
    ("c3", 1, 1), ("c3", 0, 1), ("c3", 1, 0), ("c3", 0, 0),
    ("c4", 1, 0),
    ("c5", 0, 1), ("c5", 1, 1), ("c5", 0, 0),
    ("c6", 1, 0), ("c6", 1, 0),
]


def obuchowski(pairs):
    lab = np.array([p[0] for p in pairs])
    a = np.array([p[1] for p in pairs], dtype=float)
    b = np.array([p[2] for p in pairs], dtype=float)
    ids = list(dict.fromkeys(lab))
    n = np.array([np.sum(lab == c) for c in ids], dtype=float)
    x = np.array([a[lab == c].sum() for c in ids])
    y = np.array([b[lab == c].sum() for c in ids])
    k, big_n = len(ids), n.sum()
    pa, pb = x.sum() / big_n, y.sum() / big_n
    f = k / (k - 1) / big_n**2
    va = f * np.sum((x - n * pa) ** 2)
    vb = f * np.sum((y - n * pb) ** 2)
    cov = f * np.sum((x - n * pa) * (y - n * pb))
    chi2 = (pa - pb) ** 2 / (va + vb - 2 * cov)
    return list(zip(n, x, y)), chi2, stats.chi2.sf(chi2, 1)


# (group, weight in overall): overall = mean of the 4 tasks, a task = mean of its groups.
GROUPS = [
    ("evidence_extraction", 1 / 4),
    ("planning-convergent", 1 / 8),
    ("planning-divergent", 1 / 8),
    ("noise-abstain", 1 / 8),
    ("noise-reliability", 1 / 8),
    ("grounded_reasoning", 1 / 4),
]
N_QUESTIONS = 200


def covariance_case():
    """[(question, group index, item id, EM, F1)] of COVARIANCE_CASE: per question an
    ability u; per group 0-3 items; an item is right (EM 1, F1 1) when its draw is below
    0.85 u + 0.05, half right (answer A,B against gold A: EM 0, F1 2/3) below 0.85 u + 0.2,
    else wrong (EM 0, F1 0). LCG x -> (1103515245 x + 12345) mod 2^31 from 20240601,
    uniforms x / 2^31 (exact in both languages)."""
    state = 20240601

    def rnd():
        nonlocal state
        state = (1103515245 * state + 12345) % 2**31
        return state / 2**31

    out = []
    for i in range(N_QUESTIONS):
        ability = rnd()
        for g in range(len(GROUPS)):
            for j in range(int(rnd() * 4)):
                u = rnd()
                right = 0.85 * ability + 0.05
                em, f1 = (1.0, 1.0) if u < right else (0.0, 2 / 3) if u < right + 0.15 else (0.0, 0.0)
                out.append((i, g, f"q{i}-g{g}-{j}", em, f1))
    return out


def linearised_se(rows, metric):
    """Cluster-robust linearised SEs of overall: (joint, per group)."""
    q = np.array([r[0] for r in rows])
    g = np.array([r[1] for r in rows])
    x = np.array([r[3 + metric] for r in rows])
    w = np.array([wt for _, wt in GROUPS])
    n = np.array([np.sum(g == k) for k in range(len(GROUPS))], dtype=float)
    c = np.array([x[g == k].mean() for k in range(len(GROUPS))])
    questions = np.unique(q)
    # e[i, k] = S_ik - n_ik c_k: cluster i's centred sum in group k.
    e = np.array([[np.sum(x[(q == i) & (g == k)] - c[k]) for k in range(len(GROUPS))] for i in questions])
    infl = e @ (w / n)
    joint = np.sqrt(np.sum((infl - infl.mean()) ** 2))
    per_group = np.sqrt(np.sum((w / n) ** 2 * np.sum(e**2, axis=0)))
    return float(w @ c), joint, per_group


def write_case(rows, directory):
    """The items and results files of COVARIANCE_CASE, as the Rust test writes them."""
    import json
    import pathlib

    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    items, results = [], []
    for i, g, id_, em, f1 in rows:
        group = GROUPS[g][0]
        task, sub = {
            "planning-convergent": ("planning", "convergent"),
            "planning-divergent": ("planning", "divergent"),
            "noise-abstain": ("noise_robustness", "abstain"),
            "noise-reliability": ("noise_robustness", "reliability"),
        }.get(group, (group, None))
        items.append({
            "id": id_, "task": task, "subtask": sub, "language": "en", "query": f"query {id_}",
            "context": "ctx", "instruction": "Pick.", "polarity": "correct",
            "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"},
                        {"label": "C", "text": "three"}, {"label": "D", "text": "four"}],
            "answer": ["A"], "meta": {"provenance": {"source": {"question_id": f"q{i}"}}},
        })
        ans = ["A"] if em == 1 else ["A", "B"] if f1 > 0 else ["B"]
        results.append({
            "id": id_, "run": 0, "model": "m", "prompt": "informative", "shuffle_seed": None,
            "task": task, "subtask": sub, "group": group, "labels": ["A", "B", "C", "D"],
            "permutation": ["A", "B", "C", "D"], "gold": ["A"], "allow_empty": False,
            "outcome": "ok", "answer": ans, "answer_shown": ans, "parse_note": None, "text": "x",
            "error": None, "usage": None, "cached": False,
        })
    (d / "items.jsonl").write_text("".join(json.dumps(v) + "\n" for v in items))
    (d / "results.jsonl").write_text("".join(json.dumps(v) + "\n" for v in results))


if __name__ == "__main__":
    cells, chi2, p = obuchowski(PAIRS)
    print("cells (n, x, y):", [tuple(int(v) for v in c) for c in cells])
    print(f"chi2 = {chi2!r}")
    print(f"p = {p!r}")
    a_only = sum(1 for _, x, y in PAIRS if x == 1 and y == 0)
    b_only = sum(1 for _, x, y in PAIRS if x == 0 and y == 1)
    exact = stats.binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
    print(f"a_only = {a_only}, b_only = {b_only}, binomtest p = {exact!r}")
    # The same pairs 4 times over, each copy its own 6 clusters (24 clusters).
    many = [(f"{c}-{r}", x, y) for r in range(4) for c, x, y in PAIRS]
    _, chi2, p = obuchowski(many)
    print(f"x4 (24 clusters): chi2 = {chi2!r}, p = {p!r}")
    # The joint cluster bootstrap's reference (COVARIANCE_CASE).
    rows = covariance_case()
    per = [sum(1 for r in rows if r[1] == k) for k in range(len(GROUPS))]
    print(f"covariance case: {len(rows)} items in {N_QUESTIONS} questions; per group {per}")
    for metric, name in [(0, "EM"), (1, "F1")]:
        est, joint, per_group = linearised_se(rows, metric)
        print(f"  overall {name} = {est!r}: linearised SE joint {joint!r}, per group {per_group!r}")
    if "--write" in sys.argv:
        write_case(rows, sys.argv[sys.argv.index("--write") + 1])
