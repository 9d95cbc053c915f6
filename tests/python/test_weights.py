"""``weights=`` on the panel functions that combine strata beyond variance, bootstrap and
compare (#46): forecast, plan, bootstrap designs, subsets and consistency, each checked by
hand against SE² = Σ_d w_d² SE²_d; and ``columns=`` on consistency."""

import math

import pandas as pd
import pytest

import ragstats

# Two strata, one cell per question: A 1, 0, 0.5 (s² = 0.25, Q = 3); B 0.2, 0.6 (s² = 0.08,
# Q = 2). Weights 1 : 3 are 0.25, 0.75 once normalised.
TWO = pd.DataFrame({
    "dataset": ["A", "A", "A", "B", "B"],
    "question": ["a1", "a2", "a3", "b1", "b2"],
    "f1": [1.0, 0.0, 0.5, 0.2, 0.6],
})
W = {"A": 1, "B": 3}
# sqrt(0.25²·0.25/3 + 0.75²·0.08/2) (numpy, tests/it/panel_shape.rs).
WEIGHTED_SE = 0.1664582029619848


def test_forecast_is_the_weighted_sum_of_the_strata_forecasts():
    d = ragstats.forecast(audit=TWO, design="A=6,B=8:1:1", weights=W).to_dict()
    # Each stratum alone: SE²_A(6) = 0.25/6, SE²_B(8) = 0.08/8.
    a = ragstats.forecast(audit=TWO[TWO.dataset == "A"], design="6:1:1").to_dict()
    b = ragstats.forecast(audit=TWO[TWO.dataset == "B"], design="8:1:1").to_dict()
    sa, sb = a["designs"][0]["se_nested"], b["designs"][0]["se_nested"]
    assert abs(sa**2 - 0.25 / 6) < 1e-15 and abs(sb**2 - 0.01) < 1e-15
    want = math.sqrt(0.25**2 * sa**2 + 0.75**2 * sb**2)
    assert abs(d["designs"][0]["se_nested"] - want) < 1e-15
    assert d["weights"] == [0.25, 0.75]
    # 'size' is the dict of question counts, to the bit.
    size = ragstats.forecast(audit=TWO, design="A=6,B=8:1:1", weights="size").to_dict()
    counts = ragstats.forecast(audit=TWO, design="A=6,B=8:1:1", weights={"A": 3, "B": 2}).to_dict()
    assert size["designs"] == counts["designs"]


def test_plan_and_bootstrap_designs_follow_the_weights():
    # 10 questions split 6 + 4: SE² = 0.25²·0.25/6 + 0.75²·0.08/4.
    p = ragstats.plan(audit=TWO, unit_costs="1,1", questions=10, trajectories=1, reads=1,
                      weights=W, replicates=200, backend="cpu").to_dict()
    assert abs(p["allocations"][0]["se"] - math.sqrt(0.0625 * 0.25 / 6 + 0.5625 * 0.08 / 4)) < 1e-15
    b = ragstats.bootstrap(TWO, weights=W, components=True, design="A=6,B=8:1:1",
                           replicates=200, backend="cpu").to_dict()
    want = math.sqrt(0.0625 * 0.25 / 6 + 0.5625 * 0.08 / 8)
    assert abs(b["components"]["designs"][0]["se_nested"]["estimate"] - want) < 1e-12


def test_a_weights_dict_lacking_a_stratum_is_refused_by_name():
    with pytest.raises(ragstats.InputError, match="no weight for stratum 'B'"):
        ragstats.forecast(audit=TWO, design="10:1:1", weights={"A": 1})


def test_consistency_reads_mapped_columns_and_weighs_the_one_read_se(tmp_path):
    # TWO's scores at both reads of one trajectory, in a third party's names; a2's answers
    # differ between reads. (consistency reads its answers from a file.)
    rows = []
    for temp in ["0.7", "1.0"]:
        for d, q, y in zip(TWO.dataset, TWO.question, TWO.f1):
            for r in range(2):
                rows.append({"temp": temp, "task": d, "qid": q, "traj": 0, "read": r,
                             "answer": "other" if (q == "a2" and r == 1) else q, "f1": y})
    reads = tmp_path / "reads.csv"
    pd.DataFrame(rows).to_csv(reads, index=False)
    r = ragstats.consistency(str(reads), by="temp", metric="f1", weights=W, replicates=200,
                             backend="cpu",
                             columns={"dataset": "task", "question": "qid", "trajectory": "traj"})
    d = r.to_dict()
    for g in d["precision"]:
        assert abs(g["one_read_se"] - WEIGHTED_SE) < 1e-12
    assert d["disagreement"][0]["disagreeing"] == 1 and d["disagreement"][0]["cells"] == 5
