"""Third-party tables read as they are (#46): ``columns=``, ``weights=``,
``common_questions=`` and ``duplicates=`` on the panel functions, each the CLI's flag."""

import pandas as pd
import polars as pl
import pytest

import ragstats

# Stratum (task) t1: questions a1, a2; t2: b1, b2, b3; two models. m2 lacks b2, and a1 of
# m1 is given twice (1, then 0).
ROWS = {
    "question_id": ["a1", "a1", "a2", "a2", "b1", "b1", "b2", "b3", "b3", "a1"],
    "model": ["m1", "m2", "m1", "m2", "m1", "m2", "m1", "m1", "m2", "m1"],
    "task": ["t1", "t1", "t1", "t1", "t2", "t2", "t2", "t2", "t2", "t1"],
    "score": [1.0, 0.0, 0.5, 0.0, 0.25, 1.0, 0.75, 0.5, 0.5, 0.0],
}
COLUMNS = {"question": "question_id", "arm": "model", "dataset": "task"}


@pytest.mark.parametrize("frame", [pd.DataFrame(ROWS), pl.DataFrame(ROWS)], ids=["pandas", "polars"])
def test_columns_weights_and_duplicates_as_keywords(frame, capfd):
    # duplicates='first' keeps a1 = 1 for m1: t1 (1 + 0.5)/2 = 0.75, t2 (0.25 + 0.75 + 0.5)/3
    # = 0.5.
    r = ragstats.variance(frame, columns=COLUMNS, arm="m1", duplicates="first")
    d = r.to_dict()
    assert abs(d["estimate"] - 0.625) < 1e-12
    # Loading's notes travel with the result (the CLI writes the same lines to stderr).
    assert any("kept the first of 1 duplicate row" in n for n in r.notes), r.notes
    # The same columns as the CLI's string form.
    s = ragstats.variance(frame, columns="question=question_id,arm=model,dataset=task", arm="m1", duplicates="first")
    assert s.to_dict()["estimate"] == d["estimate"]
    # duplicates='mean': a1 = 0.5, t1 (0.5 + 0.5)/2 = 0.5; weights 1:3 → 0.25·0.5 + 0.75·0.5.
    w = ragstats.variance(frame, columns=COLUMNS, arm="m1", duplicates="mean", weights={"t1": 1, "t2": 3}).to_dict()
    assert abs(w["estimate"] - 0.5) < 1e-12
    assert w["weights"] == [0.25, 0.75]
    # weights='size': t1 has 2 questions, t2 3 → 0.4 and 0.6; both means 0.5.
    z = ragstats.variance(frame, columns=COLUMNS, arm="m1", duplicates="mean", weights="size").to_dict()
    assert z["weights"] == [0.4, 0.6]
    assert abs(z["estimate"] - 0.5) < 1e-12


def test_common_questions_and_the_one_pass_error():
    frame = pd.DataFrame(ROWS)
    with pytest.raises(ragstats.InputError) as e:
        ragstats.compare(frame, columns=COLUMNS)
    msg = str(e.value)
    assert "the panel has 2 problems" in msg
    assert "duplicates: 1 row repeats a cell already given" in msg
    assert "m2 lacks 1 (e.g. t2/b2)" in msg
    # common_questions drops b2 (m1's only): m1 t1 0.75 (the first a1), t2 (0.25 + 0.5)/2 →
    # 0.5625; m2 t1 0, t2 (1 + 0.5)/2 → 0.375.
    r = ragstats.compare(frame, columns=COLUMNS, duplicates="first", common_questions=True, replicates=200)
    est = {s["name"]: s["estimate"] for s in r.to_dict()["systems"]}
    assert abs(est["m1"] - 0.5625) < 1e-12 and abs(est["m2"] - 0.375) < 1e-12, est


def test_compare_weights_its_systems_and_a_command_without_strata_refuses():
    # After common_questions, m1: t1 0.75, t2 0.375; m2: t1 0, t2 0.75. Weights 1:3 give
    # m1 0.25·0.75 + 0.75·0.375 = 0.46875 and m2 0.75·0.75 = 0.5625.
    r = ragstats.compare(
        pd.DataFrame(ROWS), columns=COLUMNS, duplicates="first", common_questions=True,
        weights={"t1": 1, "t2": 3}, replicates=200,
    ).to_dict()
    est = {s["name"]: s["estimate"] for s in r["systems"]}
    assert abs(est["m1"] - 0.46875) < 1e-12 and abs(est["m2"] - 0.5625) < 1e-12, est
    assert r["weights"] == [0.25, 0.75]
    # A command that combines no strata refuses weights, saying why.
    with pytest.raises(ragstats.InputError, match="combines no strata"):
        ragstats.slice(pd.DataFrame(ROWS), design="2:1:1", out="unused.csv", columns=COLUMNS,
                       arm="m1", duplicates="first", weights="size")
