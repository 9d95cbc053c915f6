"""A tour of ragstats from Python on the demo study (run from the repository root):
variance components of a pandas frame, the stratified bootstrap, a D-study forecast with
its figure, and MCQ capability scores. CI runs it (tests/python/test_examples.py).

    python examples/python_tour.py
"""

import pandas as pd

import ragstats

panel = pd.read_csv("data/demo/panel.csv")

# Where the variance comes from: one row per stratum x level.
v = ragstats.variance(panel, contrast="adaptive-open")
print(v.to_pandas()[["scope", "level", "component", "share_se2"]].to_string(index=False))

# The stratified question bootstrap (10,000 replicates; GPU when one is there and worth it).
b = ragstats.bootstrap(panel, contrast="adaptive-open")
doc = b.to_dict()
print(f"estimate {doc['estimate']:.6f}, 95% CI [{doc['ci'][0]:.6f}, {doc['ci'][1]:.6f}]"
      f" on {doc['run']['backend']} ({doc['run']['adapter']})")

# What SE would other allocations give? The figure is SVG text.
f = ragstats.forecast(audit=panel, contrast="adaptive-open", design=["446:2:1", "174:2:5"], plot=True)
for d in f.to_dict()["designs"]:
    print(f"{d['questions']}:{d['trajectories']}:{d['reads']}  SE {d['se_nested']:.6f}")
import os

with open(os.path.join(os.environ.get("RAGSTATS_EXAMPLE_OUT", "."), "forecast.svg"), "w") as out:
    out.write(f.figure())

# Capability scores of an MCQ run, with intervals.
m = ragstats.mcq.score("data/demo/mcq-bare.jsonl", replicates=2000)
print(m.text.splitlines()[0])
