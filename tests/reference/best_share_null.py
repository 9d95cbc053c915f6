"""Best share under the null (issue #45): five systems with equal true means.

Each panel: Q = 120 questions, y_qa = u_q + e_qa with u_q ~ N(0, 0.5²) shared by the systems
and e_qa ~ N(0, 0.3²); each system's estimate is its mean; 2,000 question-bootstrap
replicates give each system's share of replicates in which it has the highest mean (what
`stats compare` reports as `best_share`). Over 400 panels it prints the observed leader's
share. No system is better than another, so a probability of being best would be 1/5 for
every one; the leader's share is not.

    /tmp/venv-rs/bin/python tests/reference/best_share_null.py
    leader share: mean 0.551 median 0.527 q10 0.370 q90 0.772; P(leader share>0.5) 0.570
"""

import numpy as np

rng = np.random.default_rng(20240)
k, Q, B, P = 5, 120, 2000, 400
lead = []
for p in range(P):
    y = rng.normal(size=(Q, 1)) * 0.5 + rng.normal(size=(Q, k)) * 0.3
    idx = rng.integers(0, Q, size=(B, Q))
    means = y[idx].mean(axis=1)  # B x k
    best = means.argmax(axis=1)
    share = np.bincount(best, minlength=k) / B
    lead.append(share.max())
lead = np.array(lead)
print(
    "leader share: mean %.3f median %.3f q10 %.3f q90 %.3f; P(leader share>0.5) %.3f"
    % (lead.mean(), np.median(lead), *np.quantile(lead, [0.1, 0.9]), (lead > 0.5).mean())
)
