"""Makes tests/fixtures/compare/arms4.csv: a 4-arm panel in which arm c is clearly best.

    stats simulate --out /tmp/arms4.csv --datasets hotpotqa=60,musique=40 \
        --trajectories 2 --reads 2 --arms base,a,b,c --effect 0.05 --seed 3
    python3 tests/reference/compare_fixture.py /tmp/arms4.csv tests/fixtures/compare/arms4.csv

Arm c's f1 is raised by 0.25 (em dropped), so c ranks first with certainty while base, a
and b cannot be told apart.
"""
import csv
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src, newline="") as f, open(dst, "w", newline="") as g:
    r = csv.DictReader(f)
    w = csv.writer(g, lineterminator="\n")
    w.writerow(["dataset", "question", "trajectory", "read", "arm", "f1"])
    for row in r:
        f1 = float(row["f1"]) + (0.25 if row["arm"] == "c" else 0.0)
        w.writerow([row["dataset"], row["question"], row["trajectory"], row["read"], row["arm"], repr(round(f1, 6))])
