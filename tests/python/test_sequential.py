"""`ragstats.sequential` and `ragstats.gate` through the library's front door: on a file
and on a data frame they give the document `stats sequential` and `stats gate` print, the
gate's verdict is its exit code's, and a bad keyword is named as the keyword."""

import json

import pandas as pd
import pytest

import ragstats
from conftest import ROOT, cli_json, stats

P = "data/demo/panel.csv"


def body(doc):
    return {k: v for k, v in doc.items() if k != "run"}


def test_sequential_on_a_file_and_on_a_frame_is_the_clis():
    want = cli_json("sequential", P, "--contrast", "adaptive-open", "--metric", "f1", "--look-every", "100")
    got = ragstats.sequential(P, contrast="adaptive-open", metric="f1", look_every=100).to_dict()
    assert got == want
    frame = ragstats.sequential(
        pd.read_csv(ROOT / P), contrast="adaptive-open", metric="f1", look_every=100
    ).to_dict()
    assert body(frame) == body(want)
    assert [look["questions"] for look in got["looks"]] == [100, 200, 300, 400, 446]
    assert got["decision"] == "unresolved" and got["stopped_at"] is None
    # The last look's estimate is the fixed-n estimate (variance's, 0.010276 on the demo).
    variance = ragstats.variance(P, contrast="adaptive-open", metric="f1").to_dict()
    assert got["looks"][-1]["estimate"] == pytest.approx(variance["estimate"], abs=1e-12)


def test_the_gate_is_the_clis_and_its_verdict_is_the_exit_code():
    for extra, kw, code in [([], {}, 0), (["--sequential"], {"sequential": True}, 4)]:
        out = stats("gate", P, "--contrast", "adaptive-open", "--metric", "f1", "--margin", "0.02", *extra, "--format", "json")
        assert out.returncode == code, out.stderr
        want = json.loads(out.stdout)
        got = ragstats.gate(P, contrast="adaptive-open", metric="f1", margin=0.02, **kw).to_dict()
        assert got == want
    assert want["verdict"] == "inconclusive" and want["questions_needed"] > 446


def test_a_bad_keyword_is_named():
    with pytest.raises(ragstats.InputError, match="look_every"):
        ragstats.sequential(P, contrast="adaptive-open", look_every=0)
    with pytest.raises(ragstats.InputError, match="contrast"):
        ragstats.gate(P, margin=0.02)


def test_strata_rounds_or_union_is_a_keyword():
    # The demo's 223 + 223 questions: 223 rounds of one question each by default, the union
    # bound with strata="union" (half-widths 0.070846 and 0.087465 at 446 questions, as
    # tests/it/sequential.rs asserts for the command).
    rounds = ragstats.sequential(P, contrast="adaptive-open", metric="f1").to_dict()
    union = ragstats.sequential(P, contrast="adaptive-open", metric="f1", strata="union").to_dict()
    assert rounds["strata_rule"] == "rounds" and rounds["rounds"] == 223
    assert union["strata_rule"] == "union" and union["rounds"] is None
    assert rounds["last"]["half_width"] == pytest.approx(0.070846, abs=5e-7)
    assert union["last"]["half_width"] == pytest.approx(0.087465, abs=5e-7)
    want = cli_json("sequential", P, "--contrast", "adaptive-open", "--metric", "f1", "--strata", "union")
    assert union == want
    gate = ragstats.gate(P, contrast="adaptive-open", metric="f1", sequential=True, strata="union").to_dict()
    assert gate["interval"] == union["last"]["interval"]
