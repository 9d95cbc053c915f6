"""`cluster=` (issue 48) in Python against `--cluster` of the CLI, on the clustered demo panel."""

import pathlib

import pytest

import ragstats
from conftest import ROOT, cli_json

REL = "data/demo/clustered.csv"


def test_cluster_is_the_cli_flag():
    got = ragstats.variance(REL, cluster="article").to_dict()
    want = cli_json("variance", REL, "--cluster", "article")
    assert got == want
    s = got["strata"][0]
    assert s["cluster"]["clusters"] == 40 and s["cluster"]["questions_per_cluster"] == 3
    # The article-level SE is larger than the SE that ignores the articles.
    flat = ragstats.variance(REL).to_dict()
    assert got["se"] > 1.2 * flat["se"]
    assert "cluster" not in flat["strata"][0]


def test_clustered_designs_are_forecast_and_planned():
    f = ragstats.forecast(audit=REL, cluster="article", design=["80x3:2:2", "160x3:2:2"]).to_dict()
    assert f == cli_json("forecast", "--audit", REL, "--cluster", "article", "--design", "80x3:2:2", "--design", "160x3:2:2")
    own, double = f["designs"]
    assert own["clusters"] == 80 and abs(own["se_nested"] - ragstats.variance(REL, cluster="article").to_dict()["se"]) < 1e-12
    assert double["se_nested"] < own["se_nested"]
    p = ragstats.plan(audit=REL, cluster="article", unit_costs="2000,1000", cluster_cost=8000, target_se=0.02).to_dict()
    assert p["designs"][0]["se"] <= 0.02 and p["cluster_cost"] == 8000


def test_a_question_in_two_clusters_is_refused_by_the_cli_and_python(tmp_path):
    from conftest import stats

    bad = tmp_path / "bad.csv"
    lines = (pathlib.Path(ROOT) / REL).read_text().splitlines()
    # Line 3 (the question's second row) in another article.
    fields = lines[2].split(",")
    fields[2] = "Hot article 99"
    lines[2] = ",".join(fields)
    bad.write_text("\n".join(lines) + "\n")
    r = stats("variance", str(bad), "--cluster", "article")
    assert r.returncode == 2
    assert f"{bad}:3: question 'ho000' of dataset 'hotpotqa' is in two clusters: 'Hot article 01' (line 2) and 'Hot article 99'" in r.stderr
    with pytest.raises(ragstats.InputError, match="is in two clusters"):
        ragstats.variance(str(bad), cluster="article")


def test_the_cluster_bootstrap_refits_components_and_clustered_designs():
    kw = dict(cluster="article", components=True, design=["80x3:2:2"], replicates=200, backend="cpu")
    got = ragstats.bootstrap(REL, **kw).to_dict()
    want = cli_json(
        "bootstrap", REL, "--cluster", "article", "--components", "--design", "80x3:2:2",
        "--replicates", "200", "--backend", "cpu",
    )
    assert got == want
    c = got["components"]
    assert c["strata"][0]["cluster"]["estimate"] == pytest.approx(
        ragstats.variance(REL, cluster="article").to_dict()["strata"][0]["cluster"]["component"], abs=1e-12
    )
    # The forecast at the audit's own design is its measured (cluster-level) SE.
    own = c["designs"][0]["se_nested"]["estimate"]
    assert own == pytest.approx(ragstats.variance(REL, cluster="article").to_dict()["se"], abs=1e-12)
