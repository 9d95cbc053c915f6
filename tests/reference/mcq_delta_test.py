#!/usr/bin/env python3
"""Reference values of the test of `mcq compare`'s ΔEM (crates/ragstats-core/src/mcq/delta_test.rs)
and of McNemar's exact p and mid-p (crates/ragstats-core/src/mcq/paired_tests.rs), computed
independently of the Rust code:

- McNemar: statsmodels' `mcnemar(table, exact=True)` and scipy's `binomtest`; the mid-p from
  scipy's binomial cdf and pmf, 2 * cdf(k - 1) + pmf(k), k = min(b, c).
- stratified-t: the printed Δ = sum_g W_g mean_g(d), SE^2 = sum_g W_g^2 var_g(d, ddof=1) / n_g,
  Welch-Satterthwaite df, p and interval from scipy's t. For one group scipy's ttest_1samp.
- cluster-t: the delete-one-cluster jackknife by brute force: every cluster left out in
  turn and Δ recomputed from the remaining items' group means (the Rust code uses the closed
  form of the change of each group mean); SE^2 = (C - 1)/C sum (Δ_(c) - mean)^2, t on C - 1 df.
- SCENARIO (issue 45): 80 source questions, 6 evidence-extraction items per question
  favouring A, one item in each other group favouring B (1 run): the printed Δ, the
  cluster-t test, and the pooled tests (exact McNemar on the (id, run) pairs, Obuchowski
  over the 80 clusters) that favour A.

    /tmp/venv-mcq/bin/python tests/reference/mcq_delta_test.py
    (python -m venv /tmp/venv-mcq && /tmp/venv-mcq/bin/pip install numpy scipy statsmodels:
     numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0)
    /tmp/venv-mcq/bin/python tests/reference/mcq_delta_test.py --write DIR   # also the scenario's files
"""

import json
import pathlib
import sys

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

GROUPS = ["planning-convergent", "planning-divergent", "evidence_extraction",
          "grounded_reasoning", "noise-abstain", "noise-reliability"]
TASK = {"planning-convergent": "planning", "planning-divergent": "planning",
        "evidence_extraction": "evidence_extraction", "grounded_reasoning": "grounded_reasoning",
        "noise-abstain": "noise_robustness", "noise-reliability": "noise_robustness"}


def overall_weights(present):
    """W_g of `overall`: the mean over tasks present of the mean over their groups present."""
    tasks = {}
    for g in present:
        tasks.setdefault(TASK[g], []).append(g)
    return {g: 1 / len(tasks) / len(gs) for gs in tasks.values() for g in gs}


def delta(rows, weights):
    return sum(w * np.mean([d for g, _, d in rows if g == k]) for k, w in weights.items())


def stratified_t(rows, weights, confidence=0.95):
    terms, est = [], 0.0
    for g, w in weights.items():
        d = np.array([x for h, _, x in rows if h == g])
        est += w * d.mean()
        if len(d) >= 2:
            terms.append((w * w * d.var(ddof=1) / len(d), len(d) - 1))
    var = sum(a for a, _ in terms)
    df = var**2 / sum(a * a / nu for a, nu in terms)
    return summary(est, np.sqrt(var), df, confidence)


def cluster_t(rows, weights, confidence=0.95):
    rows = [r for r in rows if r[0] in weights]
    clusters = list(dict.fromkeys(c for _, c, _ in rows))
    est = delta(rows, weights)
    loo = []
    for c in clusters:
        rest = [r for r in rows if r[1] != c]
        # A group whose items all lie in c keeps its mean (the Rust convention: 0/0 -> 0).
        kept = {g: w for g, w in weights.items() if any(r[0] == g for r in rest)}
        val = delta(rest, kept) + sum(w * np.mean([d for g, _, d in rows if g == k])
                                      for k, w in weights.items() if k not in kept)
        loo.append(val)
    loo = np.array(loo)
    k = len(clusters)
    var = (k - 1) / k * np.sum((loo - loo.mean()) ** 2)
    return summary(est, np.sqrt(var), k - 1, confidence)


def summary(est, se, df, confidence):
    t = est / se
    q = stats.t.ppf(0.5 + confidence / 2, df)
    return {"estimate": est, "se": se, "df": df, "t": t, "p": 2 * stats.t.sf(abs(t), df),
            "ci": [est - q * se, est + q * se]}


def mcnemar_refs(b, c):
    table = [[5, b], [c, 7]]
    exact = mcnemar(table, exact=True).pvalue if b + c else 1.0
    binom = stats.binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0
    k, n = min(b, c), b + c
    mid = min(1.0, 2 * stats.binom.cdf(k - 1, n, 0.5) + stats.binom.pmf(k, n, 0.5)) if n else 1.0
    return exact, binom, mid


# Hand-made multi-group case (group, cluster, d): d are per-item means over 3 runs.
HAND = [
    ("planning-convergent", "q1", 1 / 3), ("planning-convergent", "q2", 0.0),
    ("planning-convergent", "q3", 2 / 3),
    ("planning-divergent", "q1", -1 / 3), ("planning-divergent", "q4", 1 / 3),
    ("evidence_extraction", "q1", 1.0), ("evidence_extraction", "q2", 1 / 3),
    ("evidence_extraction", "q2", 0.0), ("evidence_extraction", "q5", -1 / 3),
    ("grounded_reasoning", "q3", 0.0), ("grounded_reasoning", "q4", 2 / 3),
    ("grounded_reasoning", "q5", 1 / 3), ("grounded_reasoning", "q6", 1.0),
    ("noise-abstain", "q6", -2 / 3), ("noise-abstain", "q2", 0.0),
    ("noise-reliability", "q3", 1 / 3), ("noise-reliability", "q6", 1 / 3),
    ("noise-reliability", "q4", 0.0),
]


def scenario():
    """[(question, group, item id, A right, B right)] of SCENARIO (1 run per item): per
    question an ability u; 6 evidence-extraction items, A right when its draw is below
    0.4 + 0.5 u and B below 0.2 + 0.5 u (A better by 0.2); one item in each other group, B
    right below 0.4 + 0.5 u and A below 0.195 + 0.5 u (B better by 0.205). Printed Δ:
    (−0.2 + 3 · 0.205) / 4 ≈ +0.104; pooled pairs: 480 evidence pairs against 400 others, so
    more A-only than B-only. Draws: the LCG x -> (1103515245 x + 12345) mod 2^31 from
    20250293, uniforms x / 2^31 (exact in both languages), in the order u, then per item A's
    draw and B's."""
    state = 20250293

    def rnd():
        nonlocal state
        state = (1103515245 * state + 12345) % 2**31
        return state / 2**31

    rows = []
    for q in range(80):
        u = rnd()
        for j in range(6):
            a, b = rnd() < 0.4 + 0.5 * u, rnd() < 0.2 + 0.5 * u
            rows.append((q, "evidence_extraction", f"ee-{q}-{j}", int(a), int(b)))
        for g in ["planning-convergent", "planning-divergent", "grounded_reasoning",
                  "noise-abstain", "noise-reliability"]:
            a, b = rnd() < 0.195 + 0.5 * u, rnd() < 0.4 + 0.5 * u
            rows.append((q, g, f"{g}-{q}", int(a), int(b)))
    return rows


def obuchowski(cells):
    n = np.array([c[0] for c in cells], float)
    x = np.array([c[1] for c in cells], float)
    y = np.array([c[2] for c in cells], float)
    k, big_n = len(cells), n.sum()
    pa, pb = x.sum() / big_n, y.sum() / big_n
    f = k / (k - 1) / big_n**2
    var = f * (np.sum((x - n * pa) ** 2) + np.sum((y - n * pb) ** 2)
               - 2 * np.sum((x - n * pa) * (y - n * pb)))
    chi2 = (pa - pb) ** 2 / var
    return chi2, stats.chi2.sf(chi2, 1)


def write_scenario(directory):
    """The items (provenance: question_id) and the two results files of SCENARIO."""
    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    items, ra, rb = [], [], []
    for q, g, id_, a, b in scenario():
        task = TASK[g]
        sub = {"planning-convergent": "convergent", "planning-divergent": "divergent",
               "noise-abstain": "abstain", "noise-reliability": "reliability"}.get(g)
        items.append({"id": id_, "task": task, "subtask": sub, "language": "en",
                      "query": f"query {id_}", "context": "ctx", "instruction": "Pick.",
                      "polarity": "correct",
                      "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}],
                      "answer": ["A"], "meta": {"provenance": {"source": {"question_id": f"q{q}"}}}})
        for out, right, model in [(ra, a, "ma"), (rb, b, "mb")]:
            ans = ["A"] if right else ["B"]
            out.append({"id": id_, "run": 0, "model": model, "prompt": "bare", "shuffle_seed": None,
                        "task": task, "subtask": sub, "group": g, "labels": ["A", "B"],
                        "permutation": ["A", "B"], "gold": ["A"], "allow_empty": False,
                        "outcome": "ok", "answer": ans, "answer_shown": ans, "parse_note": None,
                        "text": "x", "error": None, "usage": None, "cached": False})
    for name, rows in [("items.jsonl", items), ("a.jsonl", ra), ("b.jsonl", rb)]:
        (d / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def demo_rows(root):
    """(group, item, d) of the shipped demo: data/demo/mcq-bare.jsonl (A) against
    data/demo/mcq-informative.jsonl (B), EM of each (id, run) (a failure scores 0), d the mean
    over an item's paired runs."""
    def em(path):
        out = {}
        for line in (root / path).read_text().splitlines():
            r = json.loads(line)
            ok = r["outcome"] == "ok" and set(r["answer"]) == set(r["gold"])
            out[(r["id"], r["run"])] = (r["group"], 1.0 if ok else 0.0)
        return out
    a, b = em("data/demo/mcq-bare.jsonl"), em("data/demo/mcq-informative.jsonl")
    per = {}
    for k in a.keys() & b.keys():
        per.setdefault(k[0], (a[k][0], []))[1].append(b[k][1] - a[k][1])
    return [(g, i, float(np.mean(d))) for i, (g, d) in per.items()]


def main():
    print("McNemar (b, c): statsmodels exact, scipy binomtest, mid-p")
    for b, c in [(1, 6), (2, 8), (0, 5), (13, 30), (40, 69), (300, 280), (3, 3), (7, 2)]:
        print(f"  ({b}, {c}):", *map(repr, mcnemar_refs(b, c)))

    present = GROUPS
    w = overall_weights(present)
    print("HAND overall stratified-t:", stratified_t(HAND, w))
    print("HAND overall cluster-t:", cluster_t(HAND, w))
    planning = {"planning-convergent": 0.5, "planning-divergent": 0.5}
    print("HAND task planning stratified-t:", stratified_t(HAND, planning))
    print("HAND task planning cluster-t:", cluster_t(HAND, planning))
    d = [x for g, _, x in HAND if g == "grounded_reasoning"]
    r = stats.ttest_1samp(d, 0)
    print("HAND grounded_reasoning ttest_1samp:", repr(r.statistic), repr(r.pvalue), r.df)

    root = pathlib.Path(__file__).resolve().parents[2]
    demo = demo_rows(root)
    print("DEMO overall stratified-t:", stratified_t(demo, overall_weights(GROUPS)))

    rows = scenario()
    sc = [(g, q, b - a) for q, g, _, a, b in rows]
    print("SCENARIO overall cluster-t:", cluster_t(sc, w))
    print("SCENARIO group deltas:",
          {g: np.mean([x for h, _, x in sc if h == g]) for g in GROUPS})
    a_only = sum(1 for r in rows if r[3] == 1 and r[4] == 0)
    b_only = sum(1 for r in rows if r[3] == 0 and r[4] == 1)
    print("SCENARIO pooled pairs: A only", a_only, "B only", b_only,
          "exact McNemar p", repr(stats.binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue))
    cells = []
    for q in range(80):
        qs = [r for r in rows if r[0] == q]
        cells.append((len(qs), sum(r[3] for r in qs), sum(r[4] for r in qs)))
    print("SCENARIO Obuchowski over 80 clusters (chi2, p):", obuchowski(cells))
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        write_scenario(sys.argv[2])


if __name__ == "__main__":
    main()
