"""Writes panel.csv: one stratum, 8 questions x 2 trajectories x 2 reads, arms open and
adaptive, with four cells present in one arm only (issue #31 item 5). Deterministic (an
LCG), so rerunning rewrites the same file: python3 make_panel.py"""
state = 12345


def u():
    global state
    state = (1103515245 * state + 12345) % 2**31
    return state / 2**31


missing = {("q2", 0, 1, "adaptive"), ("q5", 1, 0, "open"), ("q7", 1, 0, "adaptive"),
           ("q7", 1, 1, "adaptive")}
rows = ["dataset,question,trajectory,read,arm,f1"]
for q in range(8):
    qe = 0.3 * (u() - 0.5)
    base = u()
    for t in range(2):
        te = 0.2 * (u() - 0.5)
        for r in range(2):
            o = base + 0.1 * (u() - 0.5)
            a = o + qe + te + 0.1 * (u() - 0.5)
            for arm, v in (("open", o), ("adaptive", a)):
                if (f"q{q}", t, r, arm) not in missing:
                    rows.append(f"d,q{q},{t},{r},{arm},{v:.4f}")
open("panel.csv", "w").write("\n".join(rows) + "\n")
