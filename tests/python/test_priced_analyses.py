"""allocate, efficiency and plan through the library's front door (#47): on a file and on a
pandas frame they give the CLI's JSON for the same input (the frame's numbers are the file's;
only the envelope names the frame), a ledger may be records, and a bad keyword raises
InputError naming the keyword in the library's words."""

import json

import pandas as pd
import pytest

import ragstats
from conftest import ROOT, cli_json, stats

P = "data/demo/panel.csv"
L = "data/demo/ledger.jsonl"
PR = "data/demo/prices.toml"
C = ["--contrast", "adaptive-open"]
B = ["--replicates", "300", "--seed", "3", "--backend", "cpu"]
FAST = dict(replicates=300, seed=3, backend="cpu")


def body(doc):
    return {k: v for k, v in doc.items() if k != "run"}


def frame():
    return pd.read_csv(ROOT / P)


def test_allocate_is_the_cli_allocate_on_a_file_a_frame_and_ledger_records():
    allocs = ["A=446:2:1", "B=174:2:5"]
    want = cli_json(
        "allocate", P, *C, "--ledger", L, "--prices", PR,
        "--allocation", allocs[0], "--allocation", allocs[1],
        "--question-cost", "1000,0.002", *B,
    )
    kw = dict(contrast="adaptive-open", prices=PR, allocation=allocs, question_cost="1000,0.002", **FAST)
    got = ragstats.allocate(P, ledger=L, **kw).to_dict()
    assert got == want
    assert [a["name"] for a in got["allocations"]] == ["A", "B"]
    records = [json.loads(line) for line in (ROOT / L).read_text().splitlines() if line.strip()]
    on_frame = ragstats.allocate(frame(), ledger=records, **kw).to_dict()
    assert body(on_frame) == body(want)
    assert on_frame["run"]["inputs"]["panel"] == "<pandas.DataFrame>"
    assert on_frame["run"]["inputs"]["ledger"] == "<records>"
    # The question cost as numbers is the same setting as its text.
    listed = dict(kw, question_cost=[1000, 0.002])
    assert body(ragstats.allocate(P, ledger=L, **listed).to_dict()) == body(want)


def test_efficiency_is_the_cli_efficiency_on_a_file_and_a_frame():
    want = cli_json("efficiency", P, *C, "--ledger", L, "--prices", PR, "--currency", "usd", *B)
    kw = dict(contrast="adaptive-open", ledger=L, prices=PR, currency="usd", **FAST)
    got = ragstats.efficiency(P, **kw).to_dict()
    assert got == want
    assert got["currency"] == "USD"
    assert body(ragstats.efficiency(frame(), **kw).to_dict()) == body(want)
    # Two currencies: one section each, the first the tokens analysis of the same resamples.
    both = ragstats.efficiency(P, **dict(kw, currency=["tokens", "usd"])).text
    out = stats("efficiency", P, *C, "--ledger", L, "--prices", PR, "--currency", "tokens,usd", *B)
    assert out.returncode == 0, out.stderr
    assert both == out.stdout


def test_plan_is_the_cli_plan_on_a_file_a_frame_and_a_components_document(tmp_path):
    want = cli_json("plan", "--audit", P, *C, "--ledger", L, "--mde", "0.02", *B)
    kw = dict(contrast="adaptive-open", ledger=L, mde=0.02, **FAST)
    got = ragstats.plan(audit=P, **kw).to_dict()
    assert got == want
    assert got["goal"]["kind"] == "mde"
    assert body(ragstats.plan(audit=frame(), **kw).to_dict()) == body(want)
    # Without a panel: the components document and the unit costs given, no bootstrap.
    comp = ragstats.variance(P, contrast="adaptive-open").to_dict()
    comp_file = tmp_path / "components.json"
    comp_file.write_text(json.dumps(comp))
    by_cli = cli_json("plan", "--components", str(comp_file), "--unit-costs", "3,1", "--target-se", "0.02")
    got = ragstats.plan(components=str(comp_file), unit_costs=[3, 1], target_se=0.02).to_dict()
    assert got == by_cli
    assert got["goal"] == {"kind": "target_se", "mde": None, "target_se": 0.02}


def test_a_bad_keyword_is_named_in_the_library_s_words():
    with pytest.raises(ragstats.InputError, match=r"^question_cost: '1,-2': expected TOKENS,USD"):
        ragstats.allocate(P, contrast="adaptive-open", ledger=L, prices=PR,
                          allocation=["A=10:1:1", "B=5:1:1"], question_cost="1,-2", **FAST)
    with pytest.raises(ragstats.InputError, match=r"^question_cost: is in one currency"):
        ragstats.efficiency(P, contrast="adaptive-open", ledger=L, prices=PR,
                            currency="tokens,usd", question_cost=5, **FAST)
    with pytest.raises(ragstats.InputError, match=r"^shares: 'hotpotqa' is not name=W"):
        ragstats.plan(audit=P, contrast="adaptive-open", ledger=L, mde=0.02, shares="hotpotqa", **FAST)
