"""ragstats.mcq.compare(..., items=...) with items of one source as a cluster: the test of
the overall ΔEM equals a brute-force delete-one-cluster jackknife in numpy/scipy, the
cluster-adjusted McNemar p (mcnemar=True) an independent computation of Obuchowski's test on
the demo's results, and the document is the CLI's."""

import json

import numpy as np
from scipy import stats as sps

import ragstats
from conftest import ROOT, cli_json

BARE = "data/demo/mcq-bare.jsonl"
INF = "data/demo/mcq-informative.jsonl"
SAMPLE = ROOT / "data" / "mcq" / "sample.jsonl"


def question(item_id):
    """Two source questions per group: the id's prefix and the parity of its number."""
    return f"{item_id[:2]}-{int(item_id[-1]) % 2}"


def clustered_items(path):
    lines = []
    for line in SAMPLE.read_text().splitlines():
        it = json.loads(line)
        it["meta"] = {"provenance": {"source": {"question_id": question(it["id"])}}}
        lines.append(json.dumps(it))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def em(path):
    """(id, run) -> exact match (a failure scores 0)."""
    out = {}
    for line in (ROOT / path).read_text().splitlines():
        r = json.loads(line)
        ok = r["outcome"] == "ok" and set(r["answer"]) == set(r["gold"])
        out[(r["id"], r["run"])] = 1.0 if ok else 0.0
    return out


def obuchowski(a, b):
    keys = sorted(set(a) & set(b))
    clusters = sorted({question(k[0]) for k in keys})
    n = np.array([sum(1 for k in keys if question(k[0]) == c) for c in clusters], float)
    x = np.array([sum(a[k] for k in keys if question(k[0]) == c) for c in clusters])
    y = np.array([sum(b[k] for k in keys if question(k[0]) == c) for c in clusters])
    big_i, big_n = len(clusters), n.sum()
    pa, pb = x.sum() / big_n, y.sum() / big_n
    f = big_i / (big_i - 1) / big_n**2
    var = f * (np.sum((x - n * pa) ** 2) + np.sum((y - n * pb) ** 2) - 2 * np.sum((x - n * pa) * (y - n * pb)))
    chi2 = (pa - pb) ** 2 / var
    return len(clusters), chi2, sps.chi2.sf(chi2, 1)


def group_em(path):
    """(id, run) -> (group, exact match)."""
    out = {}
    for line in (ROOT / path).read_text().splitlines():
        r = json.loads(line)
        ok = r["outcome"] == "ok" and set(r["answer"]) == set(r["gold"])
        out[(r["id"], r["run"])] = (r["group"], 1.0 if ok else 0.0)
    return out


def overall_delta(items):
    """The printed overall ΔEM of (id, group, d) rows: the mean over tasks of the mean over
    their groups of the mean d."""
    task = lambda g: g.split("-")[0] if g.startswith(("planning", "noise")) else g
    groups = {}
    for _, g, d in items:
        groups.setdefault(g, []).append(d)
    tasks = {}
    for g, ds in groups.items():
        tasks.setdefault(task(g), []).append(np.mean(ds))
    return np.mean([np.mean(v) for v in tasks.values()])


def jackknife_t(a, b):
    """The overall ΔEM's delete-one-cluster jackknife: every question left out in turn and
    the printed Δ recomputed from the rest; SE² = (C − 1)/C Σ (Δ₍c₎ − mean)², t on C − 1 df."""
    per = {}
    for k in a.keys() & b.keys():
        per.setdefault(k[0], (a[k][0], []))[1].append(b[k][1] - a[k][1])
    items = [(i, g, np.mean(d)) for i, (g, d) in per.items()]
    est = overall_delta(items)
    qs = sorted({question(i) for i, _, _ in items})
    loo = np.array([overall_delta([x for x in items if question(x[0]) != q]) for q in qs])
    c = len(qs)
    se = np.sqrt((c - 1) / c * np.sum((loo - loo.mean()) ** 2))
    t = est / se
    return est, se, c - 1, t, 2 * sps.t.sf(abs(t), c - 1)


def test_mcq_compare_with_clusters(tmp_path):
    items = clustered_items(tmp_path / "items.jsonl")
    # The default: the test of each level's ΔEM, and no McNemar.
    plain = ragstats.mcq.compare(BARE, INF, items=items, backend="cpu", replicates=500).to_dict()
    assert "mcnemar" not in plain
    t = next(x for x in plain["tests"] if x["level"] == "overall")
    est, se, df, tt, p = jackknife_t(group_em(BARE), group_em(INF))
    assert t["test"] == "cluster-t" and t["clusters"] == 12 and t["df"] == df == 11
    for key, want in [("estimate", est), ("se", se), ("t", tt), ("p", p)]:
        assert abs(t[key] - want) < 1e-10 * abs(want), (key, t[key], want)
    assert (t["p"] < 0.05) == (t["ci"][0] > 0 or t["ci"][1] < 0)
    r = ragstats.mcq.compare(BARE, INF, items=items, backend="cpu", replicates=500, mcnemar=True).to_dict()
    assert r["tests"] == plain["tests"]
    assert r["clusters"]["rule"] == "question"
    assert r["clusters"]["clusters"] == 12
    overall = next(m for m in r["mcnemar"] if m["group"] == "overall")
    k, chi2, p = obuchowski(em(BARE), em(INF))
    assert overall["clusters"] == k == 12
    assert abs(overall["chi2"] - chi2) < 1e-9 * chi2
    assert abs(overall["obuchowski_p"] - p) < 1e-9 * max(p, 1e-300)
    # 12 clusters are fewer than 20: the exact sign test over clusters decides.
    assert overall["cluster_test"] == "cluster-sign"
    lean_a = lean_b = 0
    a, b = em(BARE), em(INF)
    for c in {question(k[0]) for k in a}:
        d = sum(a[k] - b[k] for k in a if question(k[0]) == c)
        lean_a += d > 0
        lean_b += d < 0
    sign = sps.binomtest(min(lean_a, lean_b), lean_a + lean_b, 0.5).pvalue
    assert abs(overall["cluster_p"] - sign) < 1e-12
    # The values themselves (numpy 2.4.6, scipy 1.17.1): 13 A-only, 30 B-only (id, run)
    # pairs in 12 clusters; X² = 9.715580135351876, p = 0.0018271239491826565, while the
    # exact McNemar p on the pairs is 0.01371818505867867.
    assert (overall["a_only"], overall["b_only"]) == (13, 30)
    assert abs(chi2 - 9.715580135351876) < 1e-9 and abs(p - 0.0018271239491826565) < 1e-12
    # The exact McNemar p is still scipy's binomtest on the discordant counts.
    exact = sps.binomtest(min(overall["a_only"], overall["b_only"]), overall["a_only"] + overall["b_only"], 0.5)
    assert abs(overall["p"] - exact.pvalue) < 1e-12
    assert abs(exact.pvalue - 0.01371818505867867) < 1e-12
    # The Python document is the CLI's.
    want = cli_json("mcq", "compare", BARE, INF, "--items", items, "--backend", "cpu", "--replicates", "500", "--mcnemar")
    for key in ("deltas", "tests", "test_notes", "mcnemar", "clusters"):
        assert r[key] == want[key]
    # cluster_by forwards --cluster-by: item by item there are no clusters.
    plain = ragstats.mcq.compare(BARE, INF, items=items, cluster_by="none", backend="cpu", replicates=500).to_dict()
    assert "clusters" not in plain


def _reference():
    """tests/reference/mcq_cluster.py as a module (its COVARIANCE_CASE and numpy SEs)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mcq_cluster_ref", ROOT / "tests" / "reference" / "mcq_cluster.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mcq_score_clusters_drawn_jointly_across_groups(tmp_path):
    """Clusters spanning groups: the bootstrap SE of overall is numpy's cluster-robust
    linearised SE (within 3 %), not the per-group one that leaves out the covariance."""
    ref = _reference()
    rows = ref.covariance_case()
    ref.write_case(rows, tmp_path)
    r = ragstats.mcq.score(
        str(tmp_path / "results.jsonl"), items=str(tmp_path / "items.jsonl"),
        backend="cpu", replicates=20000, seed=1,
    ).to_dict()
    assert r["clusters"]["clusters"] == ref.N_QUESTIONS and r["clusters"]["notes"] == []
    overall = next(s for s in r["scores"] if s["name"] == "overall")
    for metric, key in [(0, "em"), (1, "f1")]:
        est, joint, per_group = ref.linearised_se(rows, metric)
        assert abs(overall[key]["estimate"] - est) < 1e-12
        assert abs(overall[key]["se"] / joint - 1) < 0.03, (key, overall[key]["se"], joint)
        assert overall[key]["se"] > 1.35 * per_group
