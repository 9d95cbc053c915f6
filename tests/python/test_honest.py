"""Issue "honest" through the built extension: `ragstats.coverage` is `stats coverage`, and
`ragstats.compare(interval=...)` chooses the score or t methods as the flag does."""

import pytest

import ragstats

from conftest import PANEL, cli_json


def body(doc):
    return {k: v for k, v in doc.items() if k != "run"}


def test_coverage_is_the_commands_report():
    kw = dict(contrast="adaptive-open", panels=20, replicates=100, backend="cpu", seed=3)
    got = ragstats.coverage(PANEL, **kw).to_dict()
    want = cli_json(
        "coverage", PANEL, "--contrast", "adaptive-open", "--panels", "20",
        "--replicates", "100", "--backend", "cpu", "--seed", "3",
    )
    assert body(got) == body(want)
    assert got["target"]["interval"] == [0.935, 0.97]
    rates = [r["rate"] for r in got["rows"] if r["rate"] is not None]
    assert rates and all(0.0 <= r <= 1.0 for r in rates)


def test_compare_interval_rule(tmp_path):
    # 20 questions, two systems, binary one-cell scores: A right on 18, B on all 20, B − A
    # discordant on 2 questions (both B), so the exact McNemar p is 2 · 0.5² = 0.5.
    rows = ["dataset,question,arm,em"]
    for q in range(20):
        rows.append(f"d,q{q},A,{0 if q < 2 else 1}")
        rows.append(f"d,q{q},B,1")
    path = tmp_path / "binary.csv"
    path.write_text("\n".join(rows) + "\n")
    auto = ragstats.compare(str(path), replicates=50, backend="cpu").to_dict()
    assert auto["pairs"][0]["p"] == 0.5
    assert "Wilson" in auto["methods"]["ci"]
    # B at 20/20: Wilson (statsmodels proportion_confint(20, 20, method='wilson')).
    lo, hi = auto["systems"][1]["ci"]
    assert abs(lo - 0.8388748419471804) < 1e-12 and hi > 0.999999
    t = ragstats.compare(str(path), replicates=50, backend="cpu", interval="t").to_dict()
    assert t["systems"][1]["ci"] == [1.0, 1.0]
    with pytest.raises(ragstats.InputError, match="binary outcome"):
        ragstats.compare("tests/fixtures/compare/arms4.csv", replicates=50, backend="cpu", interval="score")
