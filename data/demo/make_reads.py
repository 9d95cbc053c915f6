#!/usr/bin/env python3
"""Writes data/demo/reads.csv: synthetic reads with fixed packets at two temperatures, for
`stats consistency data/demo/reads.csv --by temperature` (budget paper §5.4, Fig. 6).

Not model output. 150 questions (75 HotpotQA-like, 75 MuSiQue-like) x 2 trajectories x
3 reads at temperature 0.7 and at 0, the same questions and packets at both (so the SE ratio
is paired). Each (question, trajectory) cell has a modal answer: the gold answer (F1 1) with
the question's probability of being right, else a partial (F1 0.5, 15%) or a wrong one
(F1 0). A read gives the modal answer with probability 0.96 at temperature 0.7 and 0.99 at
temperature 0, else one of the cell's other answers; answers are written in surface
variants ("the X", "x.") that the answer normalisation treats as equal.

Run from the repository root: python3 data/demo/make_reads.py > data/demo/reads.csv
"""
import random

rng = random.Random(20261130)
STAY = {"0.7": 0.96, "0": 0.99}


def variant(text):
    return rng.choice([text, text.lower() + ".", "the " + text])


rows = ["temperature,dataset,question,trajectory,read,answer,f1"]
cells = []
for d, dataset in enumerate(["hotpotqa", "musique"]):
    for i in range(75):
        q = f"{dataset[:2]}{i:03d}"
        right = 0.7 if d == 0 else 0.45
        p = min(0.97, max(0.03, rng.gauss(right, 0.25)))
        answers = [(f"Answer {q}", 1.0), (f"Answer {q} partly", 0.5), (f"Other {q}", 0.0)]
        for t in range(2):
            u = rng.random()
            mode = 0 if u < p else (1 if u < p + 0.15 * (1 - p) else 2)
            cells.append((dataset, q, t, answers, mode))
for temp in ["0.7", "0"]:
    for dataset, q, t, answers, mode in cells:
        for r in range(3):
            k = mode if rng.random() < STAY[temp] else rng.choice([j for j in range(3) if j != mode])
            text, f1 = answers[k]
            rows.append(f"{temp},{dataset},{q},{t},{r},{variant(text)},{f1}")
print("\n".join(rows))
