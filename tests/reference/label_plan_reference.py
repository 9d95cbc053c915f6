#!/usr/bin/env python3
"""Reference numbers of `stats plan --labels` (issue #49 item 5; tests/it/label_plan.rs and
ragstats-core's judges::plan tests), computed independently with numpy and exact fractions.

1. The hand case of judges::plan's unit test: one stratum, σ²_f = 1, σ²_Y = 0.25, c = 0.4, a
   question costing 1 and a label 10, target SE 0.05: the least cost over every n ≤ Q
   (exact rational arithmetic).
2. The demo: data/demo/judged.csv (judge_score, 60 questions × 4 trajectories, R = 1) with
   data/demo/judged-labels.csv (`correct` of 15 questions), unit costs C_T = 1000, C_R = 500,
   a label at 20000, at least 40 labels, target SE 0.04. The judge's components by the
   one-way ANOVA (σ²_t = MS_within, σ²_q = (MS_q − MS_t)/T), σ²_Y and c of the labelled
   question means (ddof 1), the plan's variance formula
       Var(λ) = (σ²_Y − 2λc + λ²σ²_f)/n + λ²σ²_f/N,  λ = clip(c/(σ²_f(1 + n/N)), 0, 1),
   |c| ≤ σ_Y σ_f, at every T ≤ 10, 40 ≤ n ≤ Q ≤ 1000 (a cheaper design would need Q > 1000,
   whose questions alone cost more than the best), then the best design per T; and the
   plan's SE at the audit's own design (15 labels of 60 at T = 4).

    python3 tests/reference/label_plan_reference.py
(numpy 2.4.6; prints the numbers the tests hold.)
"""

import csv
import pathlib
from fractions import Fraction as F

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def hand():
    sy, c, sf = F(1, 4), F(2, 5), F(1)

    def var(n, big_n):
        if big_n == 0:
            return sy / n
        lam = min(max(c / (sf * (1 + F(n, big_n))), 0), 1)
        return (sy - 2 * lam * c + lam * lam * sf) / n + lam * lam * sf / big_n

    target = F(1, 400)
    best = None
    for n in range(2, 200):
        for q in range(n, 3000):
            if var(n, q - n) <= target:
                cost = q + 10 * n
                key = (cost, var(n, q - n))
                if best is None or key < best[0]:
                    best = (key, n, q)
                break
    (cost, v), n, q = best
    print(f"hand: best n = {n}, Q = {q}, cost {cost}, SE {float(v) ** 0.5!r}")


def demo():
    judge = {}
    with open(ROOT / "data/demo/judged.csv", newline="") as f:
        for row in csv.DictReader(f):
            judge.setdefault(row["question"], {})[row["trajectory"]] = float(row["judge_score"])
    human = {}
    with open(ROOT / "data/demo/judged-labels.csv", newline="") as f:
        for row in csv.DictReader(f):
            human.setdefault(row["question"], {})[row["trajectory"]] = float(row["correct"])
    qs = sorted(judge)
    x = np.array([[judge[q][t] for t in sorted(judge[q])] for q in qs])
    n_q, t_a = x.shape
    ms_t = ((x - x.mean(1, keepdims=True)) ** 2).sum() / (n_q * (t_a - 1))
    ms_q = t_a * ((x.mean(1) - x.mean()) ** 2).sum() / (n_q - 1)
    s2q, s2t = (ms_q - ms_t) / t_a, ms_t
    lab = sorted(human)
    y = np.array([np.mean([human[q][t] for t in human[q]]) for q in lab])
    f = np.array([np.mean([judge[q][t] for t in human[q]]) for q in lab])
    s2y = y.var(ddof=1)
    cov = np.cov(y, f, ddof=1)[0, 1]
    print(f"demo: sigma2_q {s2q!r}, sigma2_t {s2t!r}, sigma2_Y {s2y!r}, c {cov!r}")

    def var(n, big_n, sf):
        c = np.clip(cov, -np.sqrt(s2y * sf), np.sqrt(s2y * sf))
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(big_n > 0, np.clip(c / (sf * (1 + n / big_n)), 0, 1), 0.0)
            imputed = np.where(big_n > 0, lam * lam * sf / np.maximum(big_n, 1), 0.0)
        return (s2y - 2 * lam * c + lam * lam * sf) / n + imputed

    sf_audit = s2q + s2t / t_a
    se_audit = float(np.sqrt(var(np.array(15.0), np.array(45.0), sf_audit)))
    print(f"demo: the plan's SE at the audit's design {se_audit!r}")
    target2 = 0.04**2
    rows = []
    for t in range(1, 11):
        sf = s2q + s2t / t
        k = t * (1000 + 500)
        best = None
        for n in range(40, 1001):
            q = np.arange(n, 1001)
            v = var(float(n), (q - n).astype(float), sf)
            ok = np.nonzero(v <= target2)[0]
            if len(ok) == 0:
                continue
            qq = int(q[ok[0]])
            cost = qq * k + n * 20000
            key = (cost, float(v[ok[0]]), n)
            if best is None or key < best[0]:
                best = (key, n, qq)
        (cost, v, _), n, q = best
        rows.append((cost, v, n, q, t))
    rows.sort()
    for cost, v, n, q, t in rows[:3]:
        print(f"demo: n {n}, Q:T:R {q}:{t}:1, SE {v ** 0.5!r}, cost {cost}")
    # Every question labelled (λ = 0) at T = 1: the least n with σ²_Y/n ≤ target².
    n_all = int(np.ceil(s2y / target2))
    print(f"demo: labels only n = Q = {n_all}, cost {n_all * (1500 + 20000)}")


hand()
demo()
