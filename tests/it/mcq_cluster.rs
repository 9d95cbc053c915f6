//! `stats mcq compare|score --items ITEMS --cluster-by …` (issue #35, item 4): items of one
//! source question resampled and tested as a cluster.

use crate::common::gpu_ran;
use crate::mcq_cli::result_line;
use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::cli::{json_of, stats};

const BARE: &str = "data/demo/mcq-bare.jsonl";
const INF: &str = "data/demo/mcq-informative.jsonl";
const SAMPLE: &str = "data/mcq/sample.jsonl";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn to_jsonl(vs: &[Value]) -> String {
    vs.iter().map(|v| v.to_string() + "\n").collect()
}

/// The sample items with `meta.provenance.source.question_id` = `question(id)`.
fn items_with(dir: &Path, name: &str, question: &dyn Fn(&str) -> String) -> PathBuf {
    let items: Vec<Value> = lines(SAMPLE)
        .into_iter()
        .map(|mut it| {
            let q = question(it["id"].as_str().unwrap());
            it["meta"] = json!({"provenance": {"source": {"question_id": q}}});
            it
        })
        .collect();
    write(dir, name, &to_jsonl(&items))
}

const FAST: [&str; 6] = [
    "--format",
    "json",
    "--backend",
    "cpu",
    "--replicates",
    "400",
];

/// `mcq compare FILES --mcnemar EXTRA` as JSON: the tests here check the cluster-adjusted
/// McNemar (Obuchowski), which comes with `--mcnemar`.
fn compare(files: &[&Path], extra: &[&str]) -> Value {
    json_of(
        stats()
            .args(["mcq", "compare"])
            .args(files)
            .args(FAST)
            .arg("--mcnemar")
            .args(extra),
    )
}

fn overall<'a>(v: &'a Value, key: &str) -> &'a Value {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "overall" || r["group"] == "overall")
        .unwrap()
}

/// The demo's result lines of one group, written to `name`.
fn one_group(dir: &Path, path: &str, group: &str, name: &str) -> PathBuf {
    let kept: Vec<Value> = lines(path)
        .into_iter()
        .filter(|r| r["group"] == group)
        .collect();
    write(dir, name, &to_jsonl(&kept))
}

/// With one group and every item its own cluster, the joint cluster bootstrap's one
/// stratum is the item bootstrap's (the same items in the same order, so the same draws)
/// and its sums are the same f32 adds: every estimate, SE and interval of `mcq compare`
/// (two files and three), and of `mcq score`, is bit-for-bit today's. With several groups
/// the estimates and the McNemar tests are today's, the intervals not: the joint draw does
/// not stratify by group.
#[test]
fn singleton_clusters_give_the_item_bootstrap_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let items = items_with(dir.path(), "items.jsonl", &|id| format!("q-{id}"));
    let bare = one_group(dir.path(), BARE, "grounded_reasoning", "bare-gr.jsonl");
    let inf = one_group(dir.path(), INF, "grounded_reasoning", "inf-gr.jsonl");
    let (bare, inf) = (bare.as_path(), inf.as_path());
    let plain = compare(&[bare, inf], &[]);
    let clus = compare(&[bare, inf], &["--items", items.to_str().unwrap()]);
    assert_eq!(clus["deltas"], plain["deltas"]);
    assert_eq!(clus["deltas"].as_array().unwrap().len(), 3);
    let c = &clus["clusters"];
    assert_eq!(
        (&c["rule"], &c["clusters"], &c["items"], &c["largest"]),
        (&json!("question"), &json!(25), &json!(25), &json!(1))
    );
    assert_eq!(c["without_provenance"], 0);
    assert_eq!(c["notes"], json!([]));
    assert!(plain.get("clusters").is_none());
    // One group, every item its own cluster: the jackknife t is the stratified (one-sample)
    // t, to rounding.
    for (a, b) in plain["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(clus["tests"].as_array().unwrap())
    {
        assert_eq!(
            (&a["test"], &b["test"]),
            (&json!("stratified-t"), &json!("cluster-t"))
        );
        assert_eq!((&a["df"], &a["clusters"]), (&b["df"], &b["clusters"]));
        for k in ["se", "t", "p"] {
            let (x, y) = (a[k].as_f64().unwrap(), b[k].as_f64().unwrap());
            assert!((x - y).abs() < 1e-12 * x.abs(), "{k}: {a} vs {b}");
        }
    }
    // All six groups: the same estimates and exact McNemar p, the cluster test beside it.
    let (bare6, inf6) = (Path::new(BARE), Path::new(INF));
    let plain6 = compare(&[bare6, inf6], &[]);
    let clus6 = compare(&[bare6, inf6], &["--items", items.to_str().unwrap()]);
    for (a, b) in plain6["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .zip(clus6["deltas"].as_array().unwrap())
    {
        assert_eq!(a["delta_em"]["estimate"], b["delta_em"]["estimate"]);
        assert_eq!(a["delta_f1"]["estimate"], b["delta_f1"]["estimate"]);
    }
    let (m0, m1) = (overall(&plain6, "mcnemar"), overall(&clus6, "mcnemar"));
    assert_eq!(m0["p"], m1["p"]);
    assert_eq!(m1["cluster_test"], "obuchowski");
    assert_eq!(m1["clusters"], 25);

    // Three files: every system's scores and every pair's deltas are today's too.
    let plain = compare(&[bare, inf, bare], &[]);
    let clus = compare(&[bare, inf, bare], &["--items", items.to_str().unwrap()]);
    assert_eq!(clus["systems"], plain["systems"]);
    for (p, q) in plain["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(clus["pairs"].as_array().unwrap())
    {
        assert_eq!(p["deltas"], q["deltas"]);
        assert_eq!(q["mcnemar"][0]["adjusted"], "cluster_p");
    }

    // `mcq score --items`: the same.
    let score = |extra: &[&str]| {
        json_of(
            stats()
                .args(["mcq", "score"])
                .arg(bare)
                .args(FAST)
                .args(extra),
        )
    };
    let (s0, s1) = (score(&[]), score(&["--items", items.to_str().unwrap()]));
    assert_eq!(s0["scores"], s1["scores"]);
    assert_eq!(s1["clusters"]["clusters"], 25);
}

/// Each item and each of its result lines copied 3 times, the copies one cluster (the
/// original id as question): the replicates draw the same clusters as the original items'
/// singleton clusters and every replicate mean is the same (the f32 sums of a cluster of 3
/// equal rows round differently, so to 1e-6), so every interval and SE is the original's:
/// duplication narrows nothing. Resampled item by item (`--cluster-by none`) the copies
/// make the intervals about √3 narrower. Obuchowski's X² is unchanged by copying (each
/// cluster's counts and size scale together), so its p is the original's.
#[test]
fn copies_in_one_cluster_give_the_intervals_of_the_originals() {
    let dir = tempfile::tempdir().unwrap();
    let single = items_with(dir.path(), "single.jsonl", &|id| id.to_string());
    let mut tripled_items = Vec::new();
    for it in lines(SAMPLE) {
        for c in ["x", "y", "z"] {
            let mut v = it.clone();
            let id = it["id"].as_str().unwrap();
            v["id"] = json!(format!("{id}-{c}"));
            v["meta"] = json!({"provenance": {"source": {"question_id": id}}});
            tripled_items.push(v);
        }
    }
    let items3 = write(dir.path(), "tripled.jsonl", &to_jsonl(&tripled_items));
    let triple = |path: &str, name: &str| {
        let mut out = Vec::new();
        for r in lines(path) {
            for c in ["x", "y", "z"] {
                let mut v = r.clone();
                v["id"] = json!(format!("{}-{c}", r["id"].as_str().unwrap()));
                out.push(v);
            }
        }
        write(dir.path(), name, &to_jsonl(&out))
    };
    let (b3, i3) = (triple(BARE, "bare3.jsonl"), triple(INF, "inf3.jsonl"));
    let orig = compare(
        &[Path::new(BARE), Path::new(INF)],
        &["--items", single.to_str().unwrap()],
    );
    let copy = compare(&[&b3, &i3], &["--items", items3.to_str().unwrap()]);
    assert_eq!(copy["clusters"]["clusters"], 25);
    assert_eq!(copy["clusters"]["largest"], 3);
    let (d0, d1) = (
        orig["deltas"].as_array().unwrap(),
        copy["deltas"].as_array().unwrap(),
    );
    assert_eq!(d0.len(), d1.len());
    let near = |a: &Value, b: &Value| (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6;
    for (a, b) in d0.iter().zip(d1) {
        assert_eq!(
            a["items"].as_u64().unwrap() * 3,
            b["items"].as_u64().unwrap()
        );
        for k in ["delta_em", "delta_f1"] {
            for f in ["estimate", "se"] {
                assert!(near(&a[k][f], &b[k][f]), "{k}.{f}: {a} vs {b}");
            }
            for e in 0..2 {
                assert!(near(&a[k]["ci"][e], &b[k]["ci"][e]), "{k}.ci: {a} vs {b}");
            }
        }
    }
    // The demo's overall ΔF1 interval has width > 0, and item by item the copies narrow it.
    let width = |v: &Value| {
        let ci = &overall(v, "deltas")["delta_f1"]["ci"];
        ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()
    };
    let naive = compare(
        &[&b3, &i3],
        &["--items", items3.to_str().unwrap(), "--cluster-by", "none"],
    );
    assert!(naive.get("clusters").is_none());
    let (w, wn) = (width(&orig), width(&naive));
    assert!(w > 0.0 && wn < 0.75 * w, "{w} vs item by item {wn}");
    // The test of ΔEM: the copies of a cluster leave together, so every Δ₍c₎ is the
    // original's: the same SE, df and p. Item by item the copies make it too optimistic.
    for (a, b) in orig["tests"]
        .as_array()
        .unwrap()
        .iter()
        .zip(copy["tests"].as_array().unwrap())
    {
        assert_eq!((&a["test"], &a["df"]), (&b["test"], &b["df"]), "{a} vs {b}");
        for k in ["estimate", "p"] {
            assert!(near(&a[k], &b[k]), "{k}: {a} vs {b}");
        }
        if a.get("se").is_some() {
            assert!(near(&a["se"], &b["se"]), "{a} vs {b}");
        }
    }
    let (p0, pn) = (
        overall(&orig, "tests")["p"].as_f64().unwrap(),
        overall(&naive, "tests")["p"].as_f64().unwrap(),
    );
    assert!(pn < p0 / 10.0, "{p0} vs item by item {pn}");
    // Obuchowski: the same X² and p for the copies.
    for (a, b) in orig["mcnemar"]
        .as_array()
        .unwrap()
        .iter()
        .zip(copy["mcnemar"].as_array().unwrap())
    {
        assert_eq!(a["cluster_test"], b["cluster_test"]);
        assert!(near(&a["cluster_p"], &b["cluster_p"]), "{a} vs {b}");
        if a.get("obuchowski_p").is_some() {
            assert!(near(&a["obuchowski_p"], &b["obuchowski_p"]), "{a} vs {b}");
        }
    }
}

/// The hand-made clustered case of tests/reference/mcq_cluster.py: 15 (item, run) pairs of
/// one group in 6 source questions. Reference (`/work/venv-mcq/bin/python
/// tests/reference/mcq_cluster.py`, numpy 2.4.6, scipy 1.17.1): Obuchowski X² =
/// 2.2865853658536586, p = 0.13049673824162555; A-only 7, B-only 2, exact McNemar p =
/// scipy.stats.binomtest(2, 9, 0.5).pvalue = 0.1796875.
#[test]
fn obuchowski_and_exact_mcnemar_against_numpy_and_scipy() {
    // (question, A right, B right), as PAIRS in the script.
    let pairs = [
        ("c1", 1, 1),
        ("c1", 1, 0),
        ("c1", 1, 0),
        ("c2", 1, 0),
        ("c2", 0, 0),
        ("c3", 1, 1),
        ("c3", 0, 1),
        ("c3", 1, 0),
        ("c3", 0, 0),
        ("c4", 1, 0),
        ("c5", 0, 1),
        ("c5", 1, 1),
        ("c5", 0, 0),
        ("c6", 1, 0),
        ("c6", 1, 0),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (mut items, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (q, ra, rb)) in pairs.iter().enumerate() {
        let id = format!("e{i}");
        items.push(json!({
            "id": id, "task": "evidence_extraction", "subtask": null, "language": "en",
            "query": format!("query {i}"), "context": "ctx", "instruction": "Pick the evidence.",
            "polarity": "correct",
            "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"},
                        {"label": "C", "text": "three"}, {"label": "D", "text": "four"}],
            "answer": ["A"],
            "meta": {"provenance": {"source": {"question_id": q, "run": "r", "arm": "x",
                                               "trajectory": 0}}}
        }));
        let ans = |r: i32| if r == 1 { vec!["A"] } else { vec!["B"] };
        let line = |m: &str, r: i32| {
            result_line(
                &id,
                0,
                m,
                "evidence_extraction",
                &["A"],
                "ok",
                Some(&ans(r)),
            )
        };
        a.push(line("ma", *ra));
        b.push(line("mb", *rb));
    }
    let it = write(dir.path(), "items.jsonl", &to_jsonl(&items));
    let pa = write(dir.path(), "a.jsonl", &(a.join("\n") + "\n"));
    let pb = write(dir.path(), "b.jsonl", &(b.join("\n") + "\n"));
    let v = compare(&[&pa, &pb], &["--items", it.to_str().unwrap()]);
    for level in ["evidence_extraction", "overall"] {
        let m = v["mcnemar"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["group"] == level)
            .unwrap();
        assert_eq!((&m["a_only"], &m["b_only"]), (&json!(7), &json!(2)), "{m}");
        assert!((m["p"].as_f64().unwrap() - 0.1796875).abs() < 1e-15, "{m}");
        let (chi2, p) = (
            m["chi2"].as_f64().unwrap(),
            m["obuchowski_p"].as_f64().unwrap(),
        );
        assert!((chi2 - 2.2865853658536586).abs() < 1e-12, "{m}");
        assert!((p - 0.13049673824162555).abs() < 1e-12, "{m}");
        // 6 clusters are fewer than 20: the exact sign test over clusters decides (4
        // clusters lean A, 1 leans B, 1 ties: 2·(1 + 5)/32 = 0.375).
        assert_eq!(
            (&m["cluster_test"], &m["clusters"]),
            (&json!("cluster-sign"), &json!(6))
        );
        assert!(
            (m["cluster_p"].as_f64().unwrap() - 0.375).abs() < 1e-15,
            "{m}"
        );
    }
    // By trajectory: every pair here has the trajectory r/c_k/x/0, so the same 6 clusters.
    let t = compare(
        &[&pa, &pb],
        &[
            "--items",
            it.to_str().unwrap(),
            "--cluster-by",
            "trajectory",
        ],
    );
    assert_eq!(t["clusters"]["rule"], "trajectory");
    assert_eq!(
        overall(&t, "mcnemar")["cluster_p"],
        overall(&v, "mcnemar")["cluster_p"]
    );
    // The text names the test.
    let out = stats()
        .args(["mcq", "compare"])
        .args([&pa, &pb])
        .args([
            "--items",
            it.to_str().unwrap(),
            "--backend",
            "cpu",
            "--replicates",
            "50",
            "--mcnemar",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Obuchowski 1998") && text.contains("p Obuchowski  test          p cluster"),
        "{text}"
    );
    assert!(text.contains("clusters: by question from"), "{text}");
    assert!(
        text.contains("delete-one-cluster jackknife t over the clusters above, df = clusters − 1"),
        "{text}"
    );
}

/// Items without provenance are their own cluster, and the report says so; `auto` with no
/// provenance anywhere clusters nothing.
#[test]
fn items_without_provenance_are_their_own_cluster() {
    let dir = tempfile::tempdir().unwrap();
    // pc-* items share one question; the others carry none.
    let mut items = lines(SAMPLE);
    for it in &mut items {
        if it["id"].as_str().unwrap().starts_with("pc-") {
            it["meta"] = json!({"provenance": {"question_id": 17}});
        }
    }
    let p = write(dir.path(), "items.jsonl", &to_jsonl(&items));
    let v = compare(
        &[Path::new(BARE), Path::new(INF)],
        &["--items", p.to_str().unwrap()],
    );
    let c = &v["clusters"];
    assert_eq!(
        (&c["clusters"], &c["without_provenance"]),
        (&json!(22), &json!(21))
    );
    assert_eq!(c["largest"], 4);
    assert_eq!(
        c["notes"][0],
        "21 of 25 item(s) carry no question provenance; each is its own cluster"
    );
    // planning-convergent: 4 items, one cluster: the sign test over 1 cluster.
    let m = v["mcnemar"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["group"] == "planning-convergent")
        .unwrap();
    assert_eq!(
        (&m["clusters"], &m["cluster_p"]),
        (&json!(1), &json!(1.0)),
        "{m}"
    );
    assert_eq!(m["cluster_test"], "cluster-sign");
    // A resample of one cluster is the estimate itself.
    let pc = v["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "planning-convergent")
        .unwrap();
    assert_eq!(pc["delta_f1"]["ci"][0], pc["delta_f1"]["estimate"], "{pc}");
    // No provenance at all under auto: no clusters, today's report.
    let none = compare(&[Path::new(BARE), Path::new(INF)], &["--items", SAMPLE]);
    assert!(none.get("clusters").is_none());
    assert!(overall(&none, "mcnemar").get("cluster_p").is_none());
}

#[test]
fn bad_items_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let refuse = |args: &[&str], needles: &[&str]| {
        let out = stats().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
        }
        assert!(!err.contains("panick"), "{err}");
    };
    // An items file without pd-003, whose first result is on line 22 of mcq-bare.jsonl.
    let first = lines(BARE)
        .iter()
        .position(|r| r["id"] == "pd-003")
        .unwrap()
        + 1;
    let missing: Vec<Value> = lines(SAMPLE)
        .into_iter()
        .filter(|it| it["id"] != "pd-003")
        .collect();
    let p = write(dir.path(), "missing.jsonl", &to_jsonl(&missing));
    let at = format!(
        "{BARE}:{first}: result for item \"pd-003\" has no item in {}",
        p.display()
    );
    refuse(
        &["mcq", "compare", BARE, INF, "--items", p.to_str().unwrap()],
        &[&at],
    );
    refuse(
        &["mcq", "score", BARE, "--items", p.to_str().unwrap()],
        &[&at],
    );
    // Provenance of the wrong type, on line 2 and line 3.
    let bad = |name: &str, meta: Value, line: usize, needle: &str| {
        let mut items = lines(SAMPLE);
        items[line - 1]["meta"] = meta;
        let p = write(dir.path(), name, &to_jsonl(&items));
        let at = format!(
            "{}:{line}: item {}: {needle}",
            p.display(),
            items[line - 1]["id"]
        );
        refuse(
            &["mcq", "compare", BARE, INF, "--items", p.to_str().unwrap()],
            &[&at],
        );
    };
    bad(
        "string.jsonl",
        json!({"provenance": "q1"}),
        2,
        "meta.provenance is a string; expected an object",
    );
    bad(
        "float.jsonl",
        json!({"provenance": {"source": {"question_id": 1.5}}}),
        3,
        "meta.provenance.source.question_id is a number; expected a string or an integer",
    );
    bad(
        "array.jsonl",
        json!({"provenance": {"question_id": ["q"]}}),
        3,
        "meta.provenance.question_id is an array; expected a string or an integer",
    );
    // --cluster-by question names what it needs (a setting's error: the flag, then the
    // analysis's words).
    refuse(
        &["mcq", "compare", BARE, INF, "--cluster-by", "question"],
        &["--cluster-by: needs the items"],
    );
}

/// The clustered bootstrap draws the same clusters on the GPU as on the CPU: the JSON is
/// identical but for the engine. A GPU adapter is required when STATS_REQUIRE_GPU=1 (CI,
/// with lavapipe); elsewhere the test skips with a reason.
#[test]
fn clustered_compare_on_gpu_equals_cpu() {
    let dir = tempfile::tempdir().unwrap();
    // Two clusters per group (question = the id's prefix and parity).
    let items = items_with(dir.path(), "items.jsonl", &|id| {
        let n: u32 = id[id.len() - 1..].parse().unwrap();
        format!("{}-{}", &id[..2], n % 2)
    });
    // And 4 clusters spanning five groups (question = the id's number mod 4) beside one
    // holding all of planning-convergent, which about a third of the replicates miss
    // ((4/5)^5). Replicates that miss a group are counted in the notes, the same on both;
    // with 12 clusters drawn jointly a group of 2 is missed by about (10/12)^12 = 11 %.
    let spanning = items_with(dir.path(), "spanning.jsonl", &|id| {
        let n: u32 = id[id.len() - 1..].parse().unwrap();
        if id.starts_with("pc") {
            "pc".into()
        } else {
            format!("n{}", n % 4)
        }
    });
    let run = |items: &Path, backend: &str| {
        stats()
            .args(["mcq", "compare", BARE, INF, BARE])
            .args(["--items", items.to_str().unwrap(), "--format", "json"])
            .args(["--replicates", "333", "--backend", backend])
            .output()
            .unwrap()
    };
    for (items, clusters, spans) in [(&items, 12, 0), (&spanning, 5, 4)] {
        let gpu = run(items, "gpu");
        if !gpu_ran(&gpu) {
            return;
        }
        let cpu = run(items, "cpu");
        let mut g: Value = serde_json::from_slice(&gpu.stdout).unwrap();
        let mut c: Value = serde_json::from_slice(&cpu.stdout).unwrap();
        assert_eq!(
            (&g["run"]["backend"], &c["run"]["backend"]),
            (&json!("gpu"), &json!("cpu"))
        );
        assert_eq!(c["clusters"]["clusters"], clusters);
        assert_eq!(c["clusters"]["spanning_groups"], spans);
        let notes = c["clusters"]["notes"].as_array().unwrap();
        // Each of the 3 systems and 3 pairs misses a group in some replicates.
        assert_eq!(notes.len(), 6, "{notes:?}");
        assert!(notes[0]
            .as_str()
            .unwrap()
            .starts_with("data/demo/mcq-bare.jsonl: EM and F1: bootstrap replicates (of 333)"));
        assert!(notes[3].as_str().unwrap().starts_with(
            "data/demo/mcq-bare.jsonl vs data/demo/mcq-informative.jsonl: ΔEM and ΔF1: "
        ));
        for v in [&mut g, &mut c] {
            v["run"].as_object_mut().unwrap().remove("backend");
            v["run"].as_object_mut().unwrap().remove("adapter");
        }
        assert_eq!(g, c);
    }
}

/// The groups of COVARIANCE_CASE in the order it draws them.
const COV_GROUPS: [&str; 6] = [
    "evidence_extraction",
    "planning-convergent",
    "planning-divergent",
    "noise-abstain",
    "noise-reliability",
    "grounded_reasoning",
];

/// COVARIANCE_CASE of tests/reference/mcq_cluster.py, generated by the same 31-bit LCG:
/// 200 source questions, each with an ability u and 0–3 items in each of the six groups;
/// an item is right (EM 1, F1 1) when its draw is below 0.85 u + 0.05, half right (A,B
/// against gold A: EM 0, F1 2/3) below 0.85 u + 0.2, else wrong. Returns the items file
/// and the results file; with `all_wrong` every answer is B (EM 0, F1 0).
fn covariance_case(dir: &Path, all_wrong: bool) -> (PathBuf, PathBuf) {
    let mut state: u64 = 20240601;
    let mut rnd = || {
        state = (1103515245 * state + 12345) % (1 << 31);
        state as f64 / 2147483648.0
    };
    let (mut items, mut results) = (Vec::new(), Vec::new());
    for i in 0..200 {
        let ability = rnd();
        for (g, group) in COV_GROUPS.iter().enumerate() {
            for j in 0..(rnd() * 4.0) as usize {
                let u = rnd();
                let right = 0.85 * ability + 0.05;
                let answer: &[&str] = if all_wrong {
                    &["B"]
                } else if u < right {
                    &["A"]
                } else if u < right + 0.15 {
                    &["A", "B"]
                } else {
                    &["B"]
                };
                let id = format!("q{i}-g{g}-{j}");
                let line: Value = serde_json::from_str(&result_line(
                    &id,
                    0,
                    "m",
                    group,
                    &["A"],
                    "ok",
                    Some(answer),
                ))
                .unwrap();
                items.push(json!({
                    "id": id, "task": line["task"], "subtask": line["subtask"], "language": "en",
                    "query": format!("query {id}"), "context": "ctx", "instruction": "Pick.",
                    "polarity": "correct",
                    "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"},
                                {"label": "C", "text": "three"}, {"label": "D", "text": "four"}],
                    "answer": ["A"],
                    "meta": {"provenance": {"source": {"question_id": format!("q{i}")}}}
                }));
                results.push(line);
            }
        }
    }
    let name = if all_wrong {
        "wrong.jsonl"
    } else {
        "results.jsonl"
    };
    (
        write(dir, "items.jsonl", &to_jsonl(&items)),
        write(dir, name, &to_jsonl(&results)),
    )
}

/// Clusters spanning groups whose scores share the source question's ability: the joint
/// cluster bootstrap's SE of `overall` (20,000 replicates) is the cluster-robust linearised
/// SE computed independently in numpy, within Monte-Carlo error (3 %). Reference
/// (`/work/venv-mcq/bin/python tests/reference/mcq_cluster.py`, numpy 2.4.6): 1771 items in
/// 200 questions, 199 of them in more than one group; overall EM = 0.46395753616503255 with
/// linearised SE 0.022585703263229086, F1 = 0.5639833331755995 with SE
/// 0.021810659508300956. This build gives 0.022478 and 0.021690 (seed 1).
///
/// The per-group scheme before (commit 627ed14: clusters resampled independently in each
/// group) gave 0.015186 (EM) and 0.014317 (F1) on the same files and seed, and its
/// linearised SE, Σ_g w_g² Σ_i (S_ig − n_ig c_g)² / n_g² in the script, is
/// 0.015123986113808824 and 0.014174983005238726: a third too small, the covariance
/// between groups of one question left out.
#[test]
fn the_overall_se_carries_the_covariance_between_groups_of_a_question() {
    let dir = tempfile::tempdir().unwrap();
    let (items, results) = covariance_case(dir.path(), false);
    let score = |file: &Path| {
        json_of(
            stats()
                .args(["mcq", "score"])
                .arg(file)
                .args(["--items", items.to_str().unwrap(), "--format", "json"])
                .args(["--backend", "cpu", "--replicates", "20000", "--seed", "1"]),
        )
    };
    let v = score(&results);
    assert_eq!(v["items"], 1771);
    assert_eq!(
        (
            &v["clusters"]["clusters"],
            &v["clusters"]["spanning_groups"]
        ),
        (&json!(200), &json!(199))
    );
    assert_eq!(v["clusters"]["notes"], json!([]));
    let o = overall(&v, "scores");
    for (metric, estimate, se, per_group) in [
        (
            "em",
            0.46395753616503255,
            0.022585703263229086,
            0.015123986113808824,
        ),
        (
            "f1",
            0.5639833331755995,
            0.021810659508300956,
            0.014174983005238726,
        ),
    ] {
        let got = &o[metric];
        // The same data as the script's.
        assert!(
            (got["estimate"].as_f64().unwrap() - estimate).abs() < 1e-12,
            "{got}"
        );
        let s = got["se"].as_f64().unwrap();
        assert!(
            (s / se - 1.0).abs() < 0.03,
            "{metric}: SE {s} vs linearised {se}"
        );
        assert!(
            s > 1.35 * per_group,
            "{metric}: SE {s} vs per group {per_group}"
        );
    }

    // The paired deltas draw the same way: against a file wrong everywhere, every
    // difference is minus the item's score, and the overall ΔEM and ΔF1 SEs are the score's.
    let (_, wrong) = covariance_case(dir.path(), true);
    let d = json_of(
        stats()
            .args(["mcq", "compare"])
            .args([&results, &wrong])
            .args(["--items", items.to_str().unwrap(), "--format", "json"])
            .args(["--backend", "cpu", "--replicates", "20000", "--seed", "1"]),
    );
    let od = overall(&d, "deltas");
    for (k, m) in [("delta_em", "em"), ("delta_f1", "f1")] {
        let (a, b) = (&od[k], &o[m]);
        assert!(
            (a["estimate"].as_f64().unwrap() + b["estimate"].as_f64().unwrap()).abs() < 1e-12,
            "{a} vs {b}"
        );
        let (sa, sb) = (a["se"].as_f64().unwrap(), b["se"].as_f64().unwrap());
        assert!((sa - sb).abs() < 1e-9 * sb, "{k}: {sa} vs {sb}");
    }
}

/// The case of issue 45, SCENARIO of tests/reference/mcq_delta_test.py: 80 source questions,
/// each with 6 evidence-extraction items on which A is better (by 0.2 in expectation) and one
/// item in each other group on which B is (by 0.205); 1 run. The printed ΔEM, the mean of the
/// task means, is +0.103125 (B better), but the 480 evidence pairs outnumber the 400 others,
/// so the pooled (id, run) pairs lean A. Reference (`/tmp/venv-mcq/bin/python
/// tests/reference/mcq_delta_test.py`, numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0;
/// the jackknife by brute force): overall cluster-t SE 0.024805579721860024, df 79,
/// t 4.157330776233407, p 8.107667153615479e-05, interval [0.053750728627743515,
/// 0.1524992713722565]; pooled pairs A-only 219, B-only 185, exact McNemar p
/// 0.10051002788092246; Obuchowski over the 80 questions X² 3.4430704267832994,
/// p 0.0635175483742957.
#[test]
fn the_overall_test_tests_the_printed_delta_not_the_pooled_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let mut state: u64 = 20250293;
    let mut rnd = || {
        state = (1103515245 * state + 12345) % (1 << 31);
        state as f64 / 2147483648.0
    };
    let (mut items, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
    let mut push = |id: String, question: usize, group: &str, ra: bool, rb: bool| {
        let (task, sub) = match group {
            "planning-convergent" => ("planning", Some("convergent")),
            "planning-divergent" => ("planning", Some("divergent")),
            "noise-abstain" => ("noise_robustness", Some("abstain")),
            "noise-reliability" => ("noise_robustness", Some("reliability")),
            g => (g, None),
        };
        items.push(json!({
            "id": id, "task": task, "subtask": sub, "language": "en",
            "query": format!("query {id}"), "context": "ctx", "instruction": "Pick.",
            "polarity": "correct",
            "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"},
                        {"label": "C", "text": "three"}, {"label": "D", "text": "four"}],
            "answer": ["A"],
            "meta": {"provenance": {"source": {"question_id": format!("q{question}")}}}
        }));
        let ans = |r: bool| if r { vec!["A"] } else { vec!["B"] };
        a.push(result_line(
            &id,
            0,
            "ma",
            group,
            &["A"],
            "ok",
            Some(&ans(ra)),
        ));
        b.push(result_line(
            &id,
            0,
            "mb",
            group,
            &["A"],
            "ok",
            Some(&ans(rb)),
        ));
    };
    for q in 0..80 {
        let u = rnd();
        for j in 0..6 {
            let (ra, rb) = (rnd() < 0.4 + 0.5 * u, rnd() < 0.2 + 0.5 * u);
            push(format!("ee-{q}-{j}"), q, "evidence_extraction", ra, rb);
        }
        for g in [
            "planning-convergent",
            "planning-divergent",
            "grounded_reasoning",
            "noise-abstain",
            "noise-reliability",
        ] {
            let (ra, rb) = (rnd() < 0.195 + 0.5 * u, rnd() < 0.4 + 0.5 * u);
            push(format!("{g}-{q}"), q, g, ra, rb);
        }
    }
    let it = write(dir.path(), "items.jsonl", &to_jsonl(&items));
    let pa = write(dir.path(), "a.jsonl", &(a.join("\n") + "\n"));
    let pb = write(dir.path(), "b.jsonl", &(b.join("\n") + "\n"));
    let v = compare(&[&pa, &pb], &["--items", it.to_str().unwrap()]);
    assert_eq!(v["clusters"]["clusters"], 80);
    let d = overall(&v, "deltas");
    let est = d["delta_em"]["estimate"].as_f64().unwrap();
    assert!((est - 0.103_125).abs() < 1e-15, "{d}");
    // The printed interval (the joint cluster bootstrap) says B, and so does the test.
    let ci = &d["delta_em"]["ci"];
    assert!(ci[0].as_f64().unwrap() > 0.0, "{d}");
    let t = overall(&v, "tests");
    assert_eq!(
        (&t["test"], &t["clusters"]),
        (&json!("cluster-t"), &json!(80))
    );
    assert_eq!(t["df"], 79.0);
    let near = |k: &str, want: f64| {
        let x = t[k].as_f64().unwrap();
        assert!((x - want).abs() < 1e-10 * want.abs(), "{k}: {x} vs {want}");
    };
    near("estimate", 0.103_125);
    near("se", 0.024_805_579_721_860_024);
    near("t", 4.157_330_776_233_407);
    near("p", 8.107_667_153_615_479e-5);
    assert!((t["ci"][0].as_f64().unwrap() - 0.053_750_728_627_743_515).abs() < 1e-12);
    assert!((t["ci"][1].as_f64().unwrap() - 0.152_499_271_372_256_5).abs() < 1e-12);
    assert_eq!(t["favours"], "B");
    // Interval and test agree about 0 at every level here, so no note says otherwise.
    assert!(
        !v["test_notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("overall")),
        "{v}"
    );
    // The pooled tests (--mcnemar) lean the other way: more A-only pairs.
    let m = overall(&v, "mcnemar");
    assert_eq!((&m["a_only"], &m["b_only"]), (&json!(219), &json!(185)));
    assert!(
        (m["p"].as_f64().unwrap() - 0.100_510_027_880_922_46).abs() < 1e-12,
        "{m}"
    );
    assert!(
        (m["chi2"].as_f64().unwrap() - 3.443_070_426_783_299_4).abs() < 1e-9,
        "{m}"
    );
    assert!(
        (m["obuchowski_p"].as_f64().unwrap() - 0.063_517_548_374_295_7).abs() < 1e-12,
        "{m}"
    );
    // The evidence-extraction group's test favours A, as its Δ does.
    let ee = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["level"] == "group" && t["name"] == "evidence_extraction")
        .unwrap();
    assert_eq!(ee["favours"], "A", "{ee}");
    assert!(
        (ee["estimate"].as_f64().unwrap() + 0.25).abs() < 1e-15,
        "{ee}"
    );
}
