#!/usr/bin/env python3
"""Fill a labelling sheet of data/demo/judged.csv with that file's `correct` column, standing
in for a human's labels (synthetic: the demo has no separate human labelling).

data/demo/judged-labels.csv was made by:

    stats labels sample data/demo/judged.csv --metric judge_score --n 15 --seed 1 \
        --label-metric correct --out sheet.csv
    python3 data/demo/fill_judged_labels.py sheet.csv > data/demo/judged-labels.csv
"""

import csv
import pathlib
import sys

here = pathlib.Path(__file__).resolve().parent
truth = {}
with open(here / "judged.csv", newline="") as f:
    for row in csv.DictReader(f):
        truth[(row["question"], row["trajectory"])] = row["correct"]

with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["question", "trajectory", "correct"])
for row in rows:
    out.writerow([row["question"], row["trajectory"], truth[(row["question"], row["trajectory"])]])
