#!/usr/bin/env python3
"""Writes data/demo/clustered.csv: a synthetic HotpotQA/MuSiQue-like panel whose questions
come from shared Wikipedia articles, for the README's example of `--cluster article`.

Not model output. Per dataset 40 articles with 3 questions each (the `article` column is
the first supporting title, as `stats questions convert` writes it into `cluster`),
2 trajectories x 2 reads, binary exact match. An article's questions share its
difficulty: p_article ~ Beta around 0.55 (HotpotQA) or 0.4 (MuSiQue), a question's
probability ~ Beta around its article's, each trajectory's around its question's, reads
Bernoulli.

Run from the repository root: python3 data/demo/make_clustered.py > data/demo/clustered.csv
"""
import random

rng = random.Random(48)


def beta(mean, rho):
    """A Beta draw with this mean and variance rho * mean * (1 - mean)."""
    n = 1 / rho - 1
    return rng.betavariate(max(mean * n, 1e-3), max((1 - mean) * n, 1e-3))


print("dataset,question,article,trajectory,read,em")
for dataset, mean in [("hotpotqa", 0.55), ("musique", 0.4)]:
    for a in range(40):
        title = f"{dataset[:3].title()} article {a + 1:02d}"
        p_article = beta(mean, 0.25)
        for k in range(3):
            q = f"{dataset[:2]}{a:02d}{k}"
            p_question = beta(p_article, 0.2)
            for t in range(1, 3):
                p_traj = beta(p_question, 0.1)
                for r in range(1, 3):
                    print(f"{dataset},{q},{title},{t},{r},{int(rng.random() < p_traj)}")
