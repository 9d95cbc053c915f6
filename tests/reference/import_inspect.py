"""Reference numbers of tests/it/import.rs, from the fixture logs read by inspect_ai itself.

Run: /work/venv-import/bin/python tests/reference/import_inspect.py
(a venv with inspect_ai 0.3.285 and numpy). Prints, per model: inspect's own reported
accuracy and stderr (header results) and the token totals of stats.model_usage; then the
paired contrast model-b − model-a: the mean and SE over questions of the per-question mean
(over epochs) of the difference, with numpy (ddof=1).
"""

import numpy as np
from inspect_ai.log import read_eval_log

F = "tests/fixtures/import/logs/eval/arith-{}.eval"
VAL = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def per_epoch(log, scorer="match"):
    out = {}
    for s in log.samples:
        out[(str(s.id), s.epoch)] = VAL[s.scores[scorer].value]
    return out


logs = {m: read_eval_log(F.format(m)) for m in ["model-a", "model-b"]}
for m, log in logs.items():
    for sc in log.results.scores:
        print(m, sc.name, "accuracy", repr(sc.metrics["accuracy"].value), "stderr", repr(sc.metrics["stderr"].value))
    for model, u in log.stats.model_usage.items():
        print(m, model, "input", u.input_tokens, "cache_read", u.input_tokens_cache_read,
              "cache_write", u.input_tokens_cache_write, "output", u.output_tokens,
              "reasoning", u.reasoning_tokens, "total", u.total_tokens)
a, b = per_epoch(logs["model-a"]), per_epoch(logs["model-b"])
ids = sorted({k[0] for k in a})
d = np.array([[b[(q, e)] - a[(q, e)] for e in (1, 2, 3)] for q in ids])
qm = d.mean(axis=1)
print("contrast mean", repr(qm.mean()), "se", repr(qm.std(ddof=1) / np.sqrt(len(qm))))
for m in ["model-a"]:
    x = per_epoch(logs[m])
    qm = np.array([np.mean([x[(q, e)] for e in (1, 2, 3)]) for q in ids])
    print(m, "numpy mean", repr(qm.mean()), "se", repr(qm.std(ddof=1) / np.sqrt(len(qm))))
