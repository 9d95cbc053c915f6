"""ragstats.variance(labels=...) against ppi_py 0.2.3 called directly (#49): the PPI++,
PPI and labels-only estimates and 95% intervals of a mean and a paired difference; the
labelling sheet and agreement against the command line."""

import csv

import numpy as np
import pandas as pd
import pytest

import ragstats
from conftest import ROOT, cli_json, stats

ppi_py = pytest.importorskip("ppi_py")

PANEL = str(ROOT / "tests/fixtures/judges/panel.csv")
LABELS = str(ROOT / "tests/fixtures/judges/labels.csv")


def fixture():
    judge = {"a": {}, "b": {}}
    with open(PANEL, newline="") as f:
        for r in csv.DictReader(f):
            judge[r["arm"]][r["question"]] = float(r["judge"])
    human = {"a": {}, "b": {}}
    with open(LABELS, newline="") as f:
        for r in csv.DictReader(f):
            human[r["arm"]][r["question"]] = float(r["human"])
    return judge, human


@pytest.mark.parametrize("lam", [None, 1.0, 0.0])
@pytest.mark.parametrize("outcome", ["b", "b-a"])
def test_ppi_equals_ppi_py(outcome, lam):
    judge, human = fixture()
    questions = list(judge["a"])
    labelled = [q for q in questions if q in human["a"]]
    rest = [q for q in questions if q not in human["a"]]
    if outcome == "b":
        y = np.array([human["b"][q] for q in labelled])
        f = lambda q: judge["b"][q]  # noqa: E731
        kw = {"arm": "b"}
    else:
        y = np.array([human["b"][q] - human["a"][q] for q in labelled])
        f = lambda q: judge["b"][q] - judge["a"][q]  # noqa: E731
        kw = {"contrast": "b-a"}
    yhat = np.array([f(q) for q in labelled])
    yhat_u = np.array([f(q) for q in rest])
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam))[0])
    lo, hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam))
    got = ragstats.variance(
        PANEL, metric="judge", labels=LABELS, label_metric="human", ppi_lambda=lam, **kw
    ).to_dict()["ppi"]
    assert abs(got["estimate"] - est) < 1e-9
    assert abs(got["ci"][0] - lo) < 1e-6 and abs(got["ci"][1] - hi) < 1e-6


def test_labels_may_be_a_data_frame():
    want = ragstats.variance(PANEL, metric="judge", arm="b", labels=LABELS, label_metric="human").to_dict()
    got = ragstats.variance(
        PANEL, metric="judge", arm="b", labels=pd.read_csv(LABELS), label_metric="human"
    ).to_dict()
    assert got["ppi"]["estimate"] == want["ppi"]["estimate"]
    assert got["ppi"]["ci"] == want["ppi"]["ci"]


def test_sample_and_agreement_are_the_cli(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ragstats.labels_sample(PANEL, metric="judge", arm="b", n=25, seed=3, out=str(a))
    out = stats("labels", "sample", PANEL, "--metric", "judge", "--arm", "b", "--n", "25", "--seed", "3", "--out", str(b))
    assert out.returncode == 0, out.stderr
    assert a.read_text() == b.read_text()
    assert len(a.read_text().splitlines()) == 26
    got = ragstats.labels_agreement(PANEL, metric="judge", arm="b", labels=LABELS, label_metric="human").to_dict()
    want = cli_json("labels", "agreement", PANEL, "--metric", "judge", "--arm", "b", "--labels", LABELS, "--label-metric", "human")
    del got["run"], want["run"]
    assert got == want
    with pytest.raises(ragstats.InputError, match="the panel has 200"):
        ragstats.labels_sample(PANEL, metric="judge", arm="b", n=201, seed=3, out=str(a))


def test_compare_with_labels_is_ppi_py_per_pair():
    judge, human = fixture()
    labelled = [q for q in judge["a"] if q in human["a"]]
    rest = [q for q in judge["a"] if q not in human["a"]]
    d = lambda q: judge["b"][q] - judge["a"][q]  # noqa: E731
    y = np.array([human["b"][q] - human["a"][q] for q in labelled])
    lo, hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, np.array([d(q) for q in labelled]), np.array([d(q) for q in rest]), alpha=0.05))
    got = ragstats.compare(PANEL, metric="judge", labels=LABELS, label_metric="human").to_dict()
    assert abs(got["pairs"][0]["ci"][0] - lo) < 1e-6 and abs(got["pairs"][0]["ci"][1] - hi) < 1e-6
    del got["run"]
    want = cli_json("compare", PANEL, "--metric", "judge", "--labels", LABELS, "--label-metric", "human")
    del want["run"]
    assert got == want


def test_bootstrap_with_labels_is_the_cli():
    got = ragstats.bootstrap(PANEL, metric="judge", contrast="b-a", labels=LABELS, label_metric="human", replicates=500, backend="cpu").to_dict()
    want = cli_json("bootstrap", PANEL, "--metric", "judge", "--contrast", "b-a", "--labels", LABELS, "--label-metric", "human", "--replicates", "500", "--backend", "cpu")
    del got["run"], want["run"]
    assert got == want
    assert got["ci"][0] < got["estimate"] < got["ci"][1]


def test_coverage_with_labels_is_the_cli():
    """ragstats.coverage(labels=...) is `stats coverage --labels` (the same document), and
    its human model is numpy's least-squares fit of the labelled questions' human means on
    the judge's (tests/reference/coverage_labels_reference.py does the same on the demo)."""
    kw = dict(metric="judge", arm="b", label_metric="human", panels=20, replicates=100, backend="cpu")
    got = ragstats.coverage(PANEL, labels=LABELS, **kw).to_dict()
    want = cli_json(
        "coverage", PANEL, "--metric", "judge", "--arm", "b", "--labels", LABELS, "--label-metric", "human",
        "--panels", "20", "--replicates", "100", "--backend", "cpu",
    )
    del got["run"], want["run"]
    assert got == want
    judge, human = fixture()
    labelled = [q for q in judge["b"] if q in human["b"]]
    y = np.array([human["b"][q] for q in labelled])
    x = np.array([judge["b"][q] for q in labelled])
    slope, intercept = np.polyfit(x, y, 1)
    arm = next(a for a in got["labels"]["strata"][0]["arms"] if a["arm"] == "b")
    assert arm["labelled"] == 40
    assert abs(arm["slope"] - slope) < 1e-12 and abs(arm["intercept"] - intercept) < 1e-12
    rows = {(r["generator"], r["statistic"]) for r in got["rows"]}
    assert ("gaussian", "estimate: PPI++ normal interval (labels)") in rows
    with pytest.raises(ragstats.InputError, match="^ppi_lambda: is a setting of labels"):
        ragstats.coverage(PANEL, metric="judge", arm="b", ppi_lambda=0.5)

def test_plan_with_labels_is_the_cli_and_numpys_optimum():
    """ragstats.plan(labels=..., label_cost=...): the command line's plan, whose best design
    is numpy's brute-force optimum (tests/reference/label_plan_reference.py: n 40 of
    110:2:1, SE 0.03995429310406067, 1,130,000 tokens)."""
    judged, labels = str(ROOT / "data/demo/judged.csv"), str(ROOT / "data/demo/judged-labels.csv")
    got = ragstats.plan(
        audit=judged, metric="judge_score", labels=labels, label_metric="correct",
        unit_costs="1000,500", label_cost=20000, target_se=0.04,
    ).to_dict()
    best = got["designs"][0]
    assert (best["labels"], best["questions"], best["trajectories"], best["reads"]) == (40, 110, 2, 1)
    assert abs(best["se"] - 0.03995429310406067) < 1e-12 and best["cost"] == 1130000
    want = cli_json(
        "plan", "--audit", judged, "--metric", "judge_score", "--labels", labels,
        "--label-metric", "correct", "--unit-costs", "1000,500", "--label-cost", "20000",
        "--target-se", "0.04",
    )
    del got["run"], want["run"]
    assert got == want
    with pytest.raises(ragstats.InputError, match="^label_cost: the label cost is -1"):
        ragstats.plan(audit=judged, metric="judge_score", labels=labels, label_metric="correct",
                      unit_costs="1000,500", label_cost=-1, target_se=0.04)
    with pytest.raises(ragstats.InputError, match="^label_cost: prices human labels"):
        ragstats.plan(audit=judged, metric="judge_score", unit_costs="1000,500", label_cost=5, target_se=0.04)


def test_compare_with_labels_and_a_ledger_names_the_labels_it_needs(tmp_path):
    """ragstats.compare(labels=..., ledger=..., label_cost=...): the command line's next step
    (the demo panel's `em` standing in for human labels of 40 questions of both arms)."""
    panel, ledger = str(ROOT / "data/demo/panel.csv"), str(ROOT / "data/demo/ledger.jsonl")
    sheet = tmp_path / "sheet.csv"
    ragstats.labels_sample(panel, contrast="adaptive-open", n=40, seed=1, label_metric="em", out=str(sheet))
    keys = ["dataset", "question", "trajectory", "read", "arm"]
    em = pd.read_csv(panel)[keys + ["em"]]
    labels = pd.read_csv(sheet)[keys].merge(em, on=keys, how="left")
    path = tmp_path / "labels.csv"
    labels.to_csv(path, index=False)
    got = ragstats.compare(panel, labels=str(path), label_metric="em", ledger=ledger, label_cost=20000).to_dict()
    want = cli_json("compare", panel, "--labels", str(path), "--label-metric", "em", "--ledger", ledger, "--label-cost", "20000")
    del got["run"], want["run"]
    assert got == want
    nxt = got["next"]
    assert nxt["plan"]["se"] <= nxt["target_se"] and nxt["label_cost"] == 20000
    with pytest.raises(ragstats.InputError, match="^label_cost: with labels, the ledger's next step"):
        ragstats.compare(panel, labels=str(path), label_metric="em", ledger=ledger)
