"""`ragstats.compare` through the library's front door: on a file and on a data frame it
gives the numbers `stats compare` prints, a ledger may be records (a list of dicts), and a
bad keyword is named as the keyword."""

import json

import pandas as pd
import pytest

import ragstats
from conftest import ROOT, cli_json

ARMS4 = "tests/fixtures/compare/arms4.csv"
P = "data/demo/panel.csv"
L = "data/demo/ledger.jsonl"
PR = "data/demo/prices.toml"
FAST = ["--backend", "cpu", "--replicates", "500"]
KW = dict(backend="cpu", replicates=500)


def body(doc):
    return {k: v for k, v in doc.items() if k != "run"}


def run_without_inputs(doc):
    return {k: v for k, v in doc["run"].items() if k != "inputs"}


def test_compare_on_a_file_and_on_a_frame_is_the_clis():
    want = cli_json("compare", ARMS4, "--reference", "base", *FAST)
    on_file = ragstats.compare(ARMS4, reference="base", **KW).to_dict()
    on_frame = ragstats.compare(pd.read_csv(ROOT / ARMS4), reference="base", **KW).to_dict()
    assert on_file == want
    assert on_file["run"]["inputs"] == {"panel": ARMS4}
    assert body(on_frame) == body(want)
    assert run_without_inputs(on_frame) == run_without_inputs(want)
    assert on_frame["run"]["inputs"] == {"panel": "<pandas.DataFrame>"}
    # The CLI's numbers, read back: the systems in the panel's order, each pair against
    # the reference with its Holm-adjusted p.
    assert [s["name"] for s in on_frame["systems"]] == ["base", "a", "b", "c"]
    assert [(p["a"], p["b"]) for p in on_frame["pairs"]] == [("base", "a"), ("base", "b"), ("base", "c")]
    for got, cli in zip(on_frame["pairs"], want["pairs"]):
        assert (got["estimate"], got["se"], got["p_holm"]) == (cli["estimate"], cli["se"], cli["p_holm"])


def test_a_ledger_as_records_prices_the_next_step_as_its_file():
    want = cli_json("compare", P, "--ledger", L, "--prices", PR, "--currency", "usd", *FAST)
    records = [json.loads(line) for line in (ROOT / L).read_text().splitlines() if line.strip()]
    got = ragstats.compare(P, ledger=records, prices=PR, currency="usd", **KW).to_dict()
    assert got["next"] == want["next"]
    assert got["next"]["allocation"]["currency"] == "USD"
    assert body(got) == body(want)
    assert got["run"]["inputs"] == {"panel": P, "ledger": "<records>", "prices": PR}
    # The file itself gives the CLI's document, inputs and all.
    assert ragstats.compare(P, ledger=L, prices=PR, currency="usd", **KW).to_dict() == want


def test_a_bad_keyword_is_named_as_the_keyword():
    with pytest.raises(ragstats.InputError, match=r"^power: 2 must be between 0 and 1 \(exclusive\)") as e:
        ragstats.compare(ARMS4, power=2)
    assert "--" not in str(e.value), e.value
    with pytest.raises(ragstats.InputError, match=r"^arms: a,,b: expected the names of two or more systems"):
        ragstats.compare(ARMS4, arms="a,,b")
    with pytest.raises(ragstats.InputError, match=r"^max_reads: prices or bounds the next step's least-cost search, which needs a ledger"):
        ragstats.compare(ARMS4, max_reads=3)
    with pytest.raises(ragstats.InputError, match=r"^by: selector compares the selectors"):
        ragstats.compare(ARMS4, by="selector", selector="x")
    with pytest.raises(ragstats.InputError, match=r"^interval: 'wald': expected auto, t, score or clopper-pearson"):
        ragstats.compare(ARMS4, interval="wald")
