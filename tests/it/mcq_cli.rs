//! `stats mcq` end to end: validate rules, hand-computed scores, compare/McNemar, filter,
//! agreement, and runs against a scripted HTTP server that answers in varied formats.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::cli::{item_of, json_of, jsonl, mcq_run, mcq_score_json, run_ok, stats};
use support::llm_server::{cut_reply, ok_reply, Reply, Server};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// The score row of `name` in a score/compare JSON report.
fn row<'a>(v: &'a Value, key: &str, name: &str) -> &'a Value {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name || r["group"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {v}"))
}

// ------------------------------------------------------------------ validate

#[test]
fn validate_reports_every_rule_with_file_line_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let good = |id: &str| {
        json!({"id": id, "task": "evidence_extraction", "subtask": null, "language": "en",
               "query": "q", "context": "c", "instruction": "i", "polarity": "correct",
               "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}],
               "answer": ["A"]})
    };
    let with = |id: &str, f: &dyn Fn(&mut Value)| {
        let mut v = good(id);
        f(&mut v);
        v.to_string()
    };
    let lines = [
        good("ok-1").to_string(), // 1 valid
        "{not json".to_string(),  // 2 json
        with("f-1", &|v| {
            v.as_object_mut().unwrap().remove("query");
        }), // 3 field
        with("f-2", &|v| {
            v["answers"] = json!(["A"]);
        }), // 4 field (unknown)
        good("ok-1").to_string(), // 5 duplicate_id
        with("t-1", &|v| {
            v["task"] = json!("summarisation");
        }), // 6 task
        with("s-1", &|v| {
            v["task"] = json!("planning");
            v["subtask"] = json!("abstain");
        }), // 7 subtask
        with("p-1", &|v| {
            v["polarity"] = json!("best");
        }), // 8 polarity
        with("o-1", &|v| {
            v["options"] = json!([{"label": "A", "text": "one"}]);
        }), // 9 options
        with("l-1", &|v| {
            v["options"][1]["label"] = json!("A");
        }), // 10 label
        with("x-1", &|v| {
            v["options"][1]["text"] = json!(" One ");
        }), // 11 option_text (dup)
        with("x-2", &|v| {
            v["options"][1]["text"] = json!("");
        }), // 12 option_text (empty)
        with("a-1", &|v| {
            v["answer"] = json!(["C"]);
        }), // 13 answer
        with("e-1", &|v| {
            v["answer"] = json!([]);
        }), // 14 empty_answer
        with("e-2", &|v| {
            v["answer"] = json!([]);
            v["allow_empty"] = json!(true);
        }), // 15 valid
        with("n-1", &|v| {
            v["task"] = json!("noise_robustness");
        }), // 16 subtask missing
    ];
    let p = write(dir.path(), "items.jsonl", &(lines.join("\n") + "\n"));
    let out = stats().args(["mcq", "validate"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let f = p.display().to_string();
    for (line, id, rule) in [
        (2, None, "json"),
        (3, Some("f-1"), "field"),
        (4, Some("f-2"), "field"),
        (5, Some("ok-1"), "duplicate_id"),
        (6, Some("t-1"), "task"),
        (7, Some("s-1"), "subtask"),
        (8, Some("p-1"), "polarity"),
        (9, Some("o-1"), "options"),
        (10, Some("l-1"), "label"),
        (11, Some("x-1"), "option_text"),
        (12, Some("x-2"), "option_text"),
        (13, Some("a-1"), "answer"),
        (14, Some("e-1"), "empty_answer"),
        (16, Some("n-1"), "subtask"),
    ] {
        let want = match id {
            Some(id) => format!("{f}:{line}: item \"{id}\": [{rule}]"),
            None => format!("{f}:{line}: [{rule}]"),
        };
        assert!(text.contains(&want), "missing {want:?} in\n{text}");
    }
    assert!(
        !text.contains(&format!("{f}:1:")) && !text.contains(&format!("{f}:15:")),
        "{text}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 of 16 line(s) valid"), "{stderr}");

    // The sample data is valid; `run` refuses an invalid file with exit 2 before any call.
    run_ok(stats().args(["mcq", "validate", "data/mcq/sample.jsonl"]));
    let out = stats()
        .args(["mcq", "run"])
        .arg(&p)
        .args([
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
        ])
        .arg(dir.path().join("r.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(":13: item \"a-1\": [answer]"));
}

// ------------------------------------------------------------------ hand-computed scores

pub(crate) fn result_line(
    id: &str,
    run: u32,
    model: &str,
    group: &str,
    gold: &[&str],
    outcome: &str,
    answer: Option<&[&str]>,
) -> String {
    let (task, subtask) = match group {
        "planning-convergent" => ("planning", Some("convergent")),
        "planning-divergent" => ("planning", Some("divergent")),
        "noise-abstain" => ("noise_robustness", Some("abstain")),
        "noise-reliability" => ("noise_robustness", Some("reliability")),
        g => (g, None),
    };
    json!({"id": id, "run": run, "model": model, "prompt": "informative", "shuffle_seed": null,
           "task": task, "subtask": subtask, "group": group,
           "labels": ["A", "B", "C", "D"], "permutation": ["A", "B", "C", "D"],
           "gold": gold, "allow_empty": gold.is_empty(), "outcome": outcome,
           "answer": answer, "answer_shown": answer, "parse_note": null, "text": "x",
           "error": null, "usage": null, "cached": false})
    .to_string()
}

#[test]
fn score_two_level_average_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let m = "m1";
    let lines = [
        result_line(
            "p1",
            0,
            m,
            "planning-convergent",
            &["A", "B"],
            "ok",
            Some(&["A"]),
        ), // 0, 2/3
        result_line(
            "p2",
            0,
            m,
            "planning-convergent",
            &["C"],
            "ok",
            Some(&["C"]),
        ), // 1, 1
        result_line(
            "d1",
            0,
            m,
            "planning-divergent",
            &["A"],
            "ok",
            Some(&["A", "B"]),
        ), // 0, 2/3
        result_line(
            "e1",
            0,
            m,
            "evidence_extraction",
            &["A", "B", "C"],
            "ok",
            Some(&["C", "B", "A"]),
        ), // 1, 1
        result_line("e2", 0, m, "evidence_extraction", &["B"], "ok", Some(&[])), // 0, 0
        result_line(
            "e3",
            0,
            m,
            "evidence_extraction",
            &["A", "D"],
            "ok",
            Some(&["A", "B", "D"]),
        ), // 0, 0.8
        result_line("g1", 0, m, "grounded_reasoning", &[], "ok", Some(&[])), // 1, 1 (empty gold)
        result_line("g2", 0, m, "grounded_reasoning", &[], "ok", Some(&["A"])), // 0, 0
        result_line("n1", 0, m, "noise-abstain", &["C"], "parse_failed", None), // 0, 0 or excluded
        result_line(
            "r1",
            0,
            m,
            "noise-reliability",
            &["A", "B"],
            "ok",
            Some(&["B"]),
        ), // 0, 2/3
        result_line(
            "r2",
            0,
            m,
            "noise-reliability",
            &["C", "D"],
            "ok",
            Some(&["C", "D"]),
        ), // 1, 1
    ];
    let p = write(dir.path(), "r.jsonl", &(lines.join("\n") + "\n"));
    let v = mcq_score_json(&p, 200, &[]);
    let want = [
        ("planning-convergent", 0.5, 5.0 / 6.0),
        ("planning-divergent", 0.0, 2.0 / 3.0),
        ("evidence_extraction", 1.0 / 3.0, 0.6),
        ("grounded_reasoning", 0.5, 0.5),
        ("noise-abstain", 0.0, 0.0),
        ("noise-reliability", 0.5, 5.0 / 6.0),
        ("planning", 0.25, 0.75),
        ("noise_robustness", 0.25, 5.0 / 12.0),
        ("overall", 1.0 / 3.0, (0.75 + 0.6 + 0.5 + 5.0 / 12.0) / 4.0),
    ];
    for (name, em, f1) in want {
        let r = row(&v, "scores", name);
        assert!(
            close(r["em"]["estimate"].as_f64().unwrap(), em),
            "{name} EM: {r}"
        );
        assert!(
            close(r["f1"]["estimate"].as_f64().unwrap(), f1),
            "{name} F1: {r}"
        );
        // One run: the run mean is the estimate and there is no SD.
        assert!(close(r["em"]["run_mean"].as_f64().unwrap(), em));
        assert!(r["em"]["run_sd"].is_null());
    }
    assert_eq!(row(&v, "scores", "overall")["items"], 11);
    // The engine and the bootstrap settings are in the envelope, not the body.
    let run = &v["run"];
    assert_eq!(
        (&run["backend"], &run["replicates"]),
        (&json!("cpu"), &json!(200))
    );
    assert_eq!(
        (&run["seed"], &run["confidence"]),
        (&json!(1), &json!(0.95))
    );
    assert!(
        run["adapter"].as_str().unwrap().starts_with("rayon, "),
        "{run}"
    );
    assert_eq!(run["inputs"]["results"], json!(p.display().to_string()));
    for k in [
        "backend",
        "backend_description",
        "replicates",
        "seed",
        "file",
    ] {
        assert!(v.get(k).is_none(), "{k} in the body");
    }
    let rates = row(&v, "rates", "overall");
    assert_eq!(rates["records"], 11);
    assert_eq!(rates["parse_failed"], 1);
    assert_eq!(rates["errors"], 0);
    // A group of one item cannot vary under the bootstrap.
    let na = row(&v, "scores", "noise-abstain");
    assert_eq!(na["em"]["ci"], json!([0.0, 0.0]));
    // The overall interval contains the estimate and has width.
    let ov = row(&v, "scores", "overall")["f1"].clone();
    let (lo, hi, est) = (
        ov["ci"][0].as_f64().unwrap(),
        ov["ci"][1].as_f64().unwrap(),
        ov["estimate"].as_f64().unwrap(),
    );
    assert!(lo < est && est < hi, "{ov}");

    // Excluding failures drops n1 and with it the noise-abstain group.
    let v = mcq_score_json(&p, 50, &["--failures", "exclude"]);
    let ov = row(&v, "scores", "overall");
    assert!(close(
        ov["em"]["estimate"].as_f64().unwrap(),
        (0.25 + 1.0 / 3.0 + 0.5 + 0.5) / 4.0
    ));
    assert!(close(
        ov["f1"]["estimate"].as_f64().unwrap(),
        (0.75 + 0.6 + 0.5 + 5.0 / 6.0) / 4.0
    ));
    assert!(v["scores"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["name"] != "noise-abstain"));

    // The same seed gives the same intervals; the table format prints every level.
    let t = run_ok(stats().args(["mcq", "score"]).arg(&p).args([
        "--backend",
        "cpu",
        "--replicates",
        "50",
    ]));
    assert!(
        t.contains("planning-convergent")
            && t.contains("overall")
            && t.contains("parse_failure_rate"),
        "{t}"
    );
}

#[test]
fn compare_deltas_and_mcnemar_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    // 8 evidence items: A right only on e0; B right only on e1..e6; both right on e7.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..8 {
        let id = format!("e{i}");
        let a_right = i == 0 || i == 7;
        let b_right = i >= 1;
        let ans = |r: bool| if r { vec!["A"] } else { vec!["B"] };
        a.push(result_line(
            &id,
            0,
            "ma",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&ans(a_right)),
        ));
        b.push(result_line(
            &id,
            0,
            "mb",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&ans(b_right)),
        ));
    }
    let pa = write(dir.path(), "a.jsonl", &(a.join("\n") + "\n"));
    let pb = write(dir.path(), "b.jsonl", &(b.join("\n") + "\n"));
    let v = json_of(stats().args(["mcq", "compare"]).arg(&pa).arg(&pb).args([
        "--format",
        "json",
        "--backend",
        "cpu",
        "--replicates",
        "500",
        "--mcnemar",
    ]));
    assert_eq!(v["pairs"], 8);
    let run = &v["run"];
    assert_eq!(
        (&run["backend"], &run["replicates"]),
        (&json!("cpu"), &json!(500))
    );
    assert!(
        run["adapter"].as_str().unwrap().starts_with("rayon, "),
        "{run}"
    );
    assert_eq!(run["inputs"]["a"], json!(pa.display().to_string()));
    assert!(
        v.get("backend").is_none() && v["a"].get("file").is_none(),
        "{v}"
    );
    let ov = row(&v, "deltas", "overall");
    assert!(
        close(ov["delta_em"]["estimate"].as_f64().unwrap(), 5.0 / 8.0),
        "{ov}"
    );
    assert!(close(ov["a"]["em"].as_f64().unwrap(), 0.25));
    assert!(close(ov["b"]["em"].as_f64().unwrap(), 0.875));
    let m = v["mcnemar"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["group"] == "overall")
        .unwrap();
    assert_eq!(m["a_only"], 1);
    assert_eq!(m["b_only"], 6);
    // 2 · (C(7,0) + C(7,1)) / 2^7 = 0.125; mid-p 2/128 + 7/128.
    assert!(close(m["p"].as_f64().unwrap(), 0.125), "{m}");
    assert!(close(m["p_mid"].as_f64().unwrap(), 9.0 / 128.0), "{m}");
    assert_eq!(m["assumes"], "independent pairs");
    // The test of ΔEM: the one-sample t of d = (−1, 1, 1, 1, 1, 1, 1, 0) on 7 df (scipy's
    // ttest_1samp p = 0.04917371420480338): significant where the exact McNemar is not.
    let t = row(&v, "tests", "overall");
    assert_eq!(
        (&t["test"], &t["df"]),
        (&json!("stratified-t"), &json!(7.0))
    );
    assert!(
        (t["p"].as_f64().unwrap() - 0.049_173_714_204_803_38).abs() < 1e-13,
        "{t}"
    );
    assert_eq!(t["favours"], "B");
    // Without --mcnemar, no McNemar in any format; the text labels it when asked.
    let args = |extra: &[&str]| {
        let mut c = stats();
        c.args(["mcq", "compare"]).arg(&pa).arg(&pb);
        c.args(["--backend", "cpu", "--replicates", "50"])
            .args(extra);
        c
    };
    let plain = json_of(&mut args(&["--format", "json"]));
    assert!(
        plain.get("mcnemar").is_none() && plain["tests"] == v["tests"],
        "{plain}"
    );
    let text = |extra: &[&str]| String::from_utf8(args(extra).output().unwrap().stdout).unwrap();
    let (t0, t1) = (text(&[]), text(&["--mcnemar"]));
    assert!(
        !t0.contains("McNemar") && t0.contains("stratified-t"),
        "{t0}"
    );
    assert!(t1.contains("assuming every pair independent"), "{t1}");
    let csv = text(&["--format", "csv"]);
    assert!(
        csv.starts_with("level,")
            && csv.contains(",test,test_clusters,")
            && !csv.contains("mcnemar"),
        "{csv}"
    );

    // The other order: the deltas are negative, and so are their intervals (a difference
    // is clamped to [−1, 1], not to a score's [0, 1], which made this [0, 0]).
    let r = json_of(stats().args(["mcq", "compare"]).arg(&pb).arg(&pa).args([
        "--format",
        "json",
        "--backend",
        "cpu",
        "--replicates",
        "500",
    ]));
    let ro = row(&r, "deltas", "overall");
    let est = ro["delta_em"]["estimate"].as_f64().unwrap();
    let ci = [
        ro["delta_em"]["ci"][0].as_f64().unwrap(),
        ro["delta_em"]["ci"][1].as_f64().unwrap(),
    ];
    assert!(close(est, -5.0 / 8.0), "{ro}");
    assert!(ci[0] < est && est < ci[1] && ci[1] < 0.0, "{ro}");
}

/// `mcq compare A B` and `mcq compare B A` on the shipped demo: every delta and interval of
/// one order is the other's mirrored (the same items are drawn and a negated row sums to the
/// negated sum, exactly), and every interval holds its estimate, negative ones included.
#[test]
fn compare_in_both_orders_mirrors_and_holds_every_estimate() {
    let json = |a: &str, b: &str| {
        json_of(
            stats()
                .args(["mcq", "compare"])
                .arg(Path::new("data/demo").join(a))
                .arg(Path::new("data/demo").join(b))
                .args([
                    "--format",
                    "json",
                    "--backend",
                    "cpu",
                    "--replicates",
                    "2000",
                ]),
        )
    };
    let (fwd, rev) = (
        json("mcq-bare.jsonl", "mcq-informative.jsonl"),
        json("mcq-informative.jsonl", "mcq-bare.jsonl"),
    );
    let (fd, rd) = (
        fwd["deltas"].as_array().unwrap(),
        rev["deltas"].as_array().unwrap(),
    );
    assert_eq!(fd.len(), 11);
    assert_eq!(fd.len(), rd.len());
    let mut negative = 0;
    for (f, r) in fd.iter().zip(rd) {
        assert_eq!(f["name"], r["name"]);
        for key in ["delta_em", "delta_f1"] {
            let g = |v: &Value, k: &str, i: Option<usize>| match i {
                Some(i) => v[key][k][i].as_f64().unwrap(),
                None => v[key][k].as_f64().unwrap(),
            };
            let (e, lo, hi) = (
                g(f, "estimate", None),
                g(f, "ci", Some(0)),
                g(f, "ci", Some(1)),
            );
            let (re, rlo, rhi) = (
                g(r, "estimate", None),
                g(r, "ci", Some(0)),
                g(r, "ci", Some(1)),
            );
            assert!((e + re).abs() < 1e-12, "{key} {}: {e} vs {re}", f["name"]);
            assert!(
                (lo + rhi).abs() < 1e-9 && (hi + rlo).abs() < 1e-9,
                "{key} {}",
                f["name"]
            );
            for (e, lo, hi) in [(e, lo, hi), (re, rlo, rhi)] {
                assert!(
                    lo <= e && e <= hi,
                    "{key} {}: {e} not in [{lo}, {hi}]",
                    f["name"]
                );
                assert!((-1.0..=1.0).contains(&lo) && (-1.0..=1.0).contains(&hi));
            }
            if rlo < 0.0 && rhi < 0.0 {
                negative += 1;
            }
        }
    }
    // informative − bare: overall ΔEM = 199/480 − 308/480 = −0.227083 (the sides' overall
    // EM, 0.414583 and 0.641667, are the task means of their group means of 1–5 runs).
    let ov = row(&rev, "deltas", "overall");
    assert!(close(
        ov["delta_em"]["estimate"].as_f64().unwrap(),
        -109.0 / 480.0
    ));
    assert!(ov["delta_em"]["ci"][1].as_f64().unwrap() < 0.0, "{ov}");
    assert!(negative >= 4, "{negative} wholly negative intervals");
    // The test of the overall ΔEM on the demo (25 items in six groups of 4–5, 1–5 runs):
    // the stratified t, against tests/reference/mcq_delta_test.py's DEMO line (numpy 2.4.6,
    // scipy 1.17.1): se 0.07990337046152128, df 9.584125384296254, t 2.8419744000997915,
    // p 0.01820425169534034. In the other order the same p, t negated, favouring A.
    for (v, sign, side) in [(&fwd, 1.0, "B"), (&rev, -1.0, "A")] {
        let t = row(v, "tests", "overall");
        let f = |k: &str| t[k].as_f64().unwrap();
        assert_eq!(t["test"], "stratified-t");
        assert!((f("se") - 0.079_903_370_461_521_28).abs() < 1e-14, "{t}");
        assert!((f("df") - 9.584_125_384_296_254).abs() < 1e-12, "{t}");
        assert!(
            (f("t") - sign * 2.841_974_400_099_791_5).abs() < 1e-12,
            "{t}"
        );
        assert!((f("p") - 0.018_204_251_695_340_34).abs() < 1e-13, "{t}");
        assert_eq!(t["favours"], side);
    }
}

#[test]
fn filter_drops_items_every_model_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let item = |id: &str| {
        json!({"id": id, "task": "evidence_extraction", "language": "en", "query": "q",
               "context": "c", "instruction": "i", "polarity": "correct",
               "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}],
               "answer": ["A"]})
        .to_string()
    };
    let items = [
        item("x"),
        item("y"),
        "{\"id\": \"bad\"}".to_string(),
        item("z"),
    ]
    .join("\n")
        + "\n";
    let pi = write(dir.path(), "gen.jsonl", &items);
    let m1 = [
        result_line(
            "x",
            0,
            "m1",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["A"]),
        ),
        result_line(
            "y",
            0,
            "m1",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["A"]),
        ),
        result_line(
            "z",
            0,
            "m1",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["B"]),
        ),
    ];
    let m2 = [
        result_line(
            "x",
            0,
            "m2",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["A"]),
        ),
        result_line(
            "x",
            1,
            "m2",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["A"]),
        ),
        result_line(
            "y",
            0,
            "m2",
            "evidence_extraction",
            &["A"],
            "ok",
            Some(&["A", "B"]),
        ),
        result_line(
            "z",
            0,
            "m2",
            "evidence_extraction",
            &["A"],
            "parse_failed",
            None,
        ),
    ];
    let p1 = write(dir.path(), "m1.jsonl", &(m1.join("\n") + "\n"));
    let p2 = write(dir.path(), "m2.jsonl", &(m2.join("\n") + "\n"));
    let out = dir.path().join("kept.jsonl");
    let v = json_of(
        stats()
            .args(["mcq", "filter"])
            .arg(&pi)
            .arg("--predictions")
            .arg(&p1)
            .arg(&p2)
            .arg("--out")
            .arg(&out)
            .args(["--format", "json"]),
    );
    assert_eq!(v["kept"], 2);
    assert_eq!(v["dropped_format"], 1);
    assert_eq!(v["dropped_difficulty"], 1);
    assert_eq!(v["untested"], json!(["z"]));
    let kept = std::fs::read_to_string(&out).unwrap();
    assert_eq!(kept, format!("{}\n{}\n", item("y"), item("z")));
    let rows = jsonl(&dir.path().join("kept.dropped.jsonl"));
    assert_eq!(rows[0]["id"], "x");
    assert_eq!(rows[0]["reason"], "difficulty");
    assert_eq!(rows[0]["models"], json!(["m1", "m2"]));
    assert_eq!(rows[0]["agreed_is_gold"], true);
    assert_eq!(rows[1]["line"], 3);
    assert_eq!(rows[1]["reason"], "format");
    // One model is not enough for a difficulty filter.
    let o = stats()
        .args(["mcq", "filter"])
        .arg(&pi)
        .arg("--predictions")
        .arg(&p1)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn agreement_by_hand_on_the_sample_annotations() {
    let v = json_of(stats().args([
        "mcq",
        "agree",
        "data/mcq/annotations.jsonl",
        "--items",
        "data/mcq/sample.jsonl",
        "--format",
        "json",
    ]));
    // Per item (3 annotators unless noted): pc-001 {AD,AD,A}: (1 + 1/2 + 1/2)/3 = 2/3;
    // pd-001 {ABD,AB,AD}: (2/3 + 2/3 + 1/3)/3 = 5/9; ee-002 all equal: 1;
    // gr-001 {CD,CD,CDE}: (1 + 2/3 + 2/3)/3 = 7/9; gr-003 {∅,∅,B}: (1 + 0 + 0)/3 = 1/3;
    // na-001: 1; nr-001 {CD,D,C}: (1/2 + 1/2 + 0)/3 = 1/3; nr-004 (two annotators): 1.
    let want = [
        ("planning", (2.0 / 3.0 + 5.0 / 9.0) / 2.0, 1),
        ("evidence_extraction", 1.0, 1),
        ("grounded_reasoning", (7.0 / 9.0 + 1.0 / 3.0) / 2.0, 2),
        ("noise_robustness", (1.0 + 1.0 / 3.0 + 1.0) / 3.0, 2),
        ("overall", 51.0 / 72.0, 6),
    ];
    for (name, j, maj) in want {
        let r = row(&v, "agreement", name);
        assert!(close(r["jaccard"].as_f64().unwrap(), j), "{name}: {r}");
        assert_eq!(r["with_majority"], maj, "{name}");
    }
    assert_eq!(v["no_majority"], json!(["nr-001", "pd-001"]));
    let item = |id: &str| {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(item("gr-003")["majority"], json!([]));
    assert_eq!(item("pc-001")["majority"], json!(["A", "D"]));
    assert_eq!(item("pd-001")["per_option"], json!(["A", "B", "D"]));
    assert_eq!(item("nr-001")["per_option"], json!(["C", "D"]));
    assert_eq!(item("gr-001")["per_option"], json!(["C", "D"]));

    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.jsonl");
    run_ok(
        stats()
            .args([
                "mcq",
                "agree",
                "data/mcq/annotations.jsonl",
                "--per-option",
                "--gold-out",
            ])
            .arg(&gold),
    );
    let g = std::fs::read_to_string(&gold).unwrap();
    assert_eq!(g.lines().count(), 8);
    assert!(g.contains("{\"annotators\":3,\"answer\":[\"A\",\"B\",\"D\"],\"id\":\"pd-001\",\"method\":\"per_option\",\"votes\":1}"), "{g}");
    // Bad annotation lines name file:line.
    let bad = write(
        dir.path(),
        "ann.jsonl",
        "{\"id\":\"pc-001\",\"annotator\":\"a\",\"answer\":[\"Z\"]}\n",
    );
    let o = stats()
        .args(["mcq", "agree"])
        .arg(&bad)
        .args(["--items", "data/mcq/sample.jsonl"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ann.jsonl:1: id \"pc-001\": label \"Z\""));
}

// ------------------------------------------------------------------ runs against a server

/// Six items, one per group, with queries the server recognises.
fn e2e_items(dir: &Path) -> PathBuf {
    let mk =
        |id: &str, task: &str, sub: Option<&str>, answer: &[&str], n: usize, allow_empty: bool| {
            let texts = [
                "check the registry",
                "read the annual report",
                "search the forum",
                "ask the regulator",
                "open the archive",
            ];
            let options: Vec<Value> = (0..n)
                .map(|i| json!({"label": ((b'A' + i as u8) as char).to_string(), "text": texts[i]}))
                .collect();
            let mut v = json!({"id": id, "task": task, "subtask": sub, "language": "en",
            "query": format!("QUERY-{id}"), "context": "ctx", "instruction": "Choose.",
            "polarity": "correct", "options": options, "answer": answer});
            if allow_empty {
                v["allow_empty"] = json!(true);
            }
            v.to_string()
        };
    let lines = [
        mk("i1", "planning", Some("convergent"), &["A", "C"], 4, false),
        mk("i2", "planning", Some("divergent"), &["B"], 4, false),
        mk(
            "i3",
            "evidence_extraction",
            None,
            &["A", "B", "D"],
            5,
            false,
        ),
        mk("i4", "grounded_reasoning", None, &[], 3, true),
        mk("i5", "noise_robustness", Some("abstain"), &["C"], 3, false),
        mk(
            "i6",
            "noise_robustness",
            Some("reliability"),
            &["B", "D"],
            4,
            false,
        ),
    ];
    write(dir, "items.jsonl", &(lines.join("\n") + "\n"))
}

#[test]
fn run_end_to_end_with_varied_answer_formats_resume_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let items = e2e_items(dir.path());
    // The run index arrives as seed − 100 (sample k is sent seed + k).
    let server = Server::start(|req, _| {
        let run = req.body["seed"].as_u64().unwrap() - 100;
        let text = match (item_of(&req.prompt).as_str(), run) {
            ("i1", 0) => "The registry is primary.\nAnswer: A, C",
            ("i1", _) => "<think>maybe C too?</think>Answer: A",
            ("i2", 0) => "\\boxed{B}",
            ("i2", _) => "I cannot decide between these.",
            ("i3", 0) => "答案：A、B",
            ("i3", _) => "Answer: A, B and D",
            ("i4", 0) => "All statements are fine.\nAnswer: none",
            ("i4", _) => "Answer: B",
            ("i5", 0) => return Reply::status(500, "{\"error\":{\"message\":\"overloaded\"}}"),
            ("i5", _) => "**C**",
            ("i6", 0) => "answer: b, d",
            _ => "Final answer: B and D.",
        };
        ok_reply(text)
    });
    let out = dir.path().join("runs/m.jsonl");
    let cmd = |out: &Path| mcq_run(&items, "test-model", out, &server.base);
    // One call failed (i5 run 0 got a 500), so the run exits 1 (issue #13 item 14).
    let o = cmd(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: 1 call(s) failed; exit status 1"),
        "{err}"
    );
    assert_eq!(server.count(), 12);
    let ids: Vec<(String, u64)> = server
        .requests()
        .iter()
        .map(|r| (item_of(&r.prompt), r.body["seed"].as_u64().unwrap()))
        .collect();
    assert!(ids.contains(&("i6".to_string(), 101)));
    let results = jsonl(&out);
    assert_eq!(results.len(), 12);
    let get = |id: &str, run: u64| {
        results
            .iter()
            .find(|r| r["id"] == id && r["run"] == run)
            .unwrap()
            .clone()
    };
    assert_eq!(get("i1", 1)["answer"], json!(["A"]));
    assert_eq!(get("i2", 1)["outcome"], "parse_failed");
    assert_eq!(get("i3", 0)["answer"], json!(["A", "B"]));
    assert_eq!(get("i4", 0)["answer"], json!([]));
    assert_eq!(get("i5", 0)["outcome"], "error");
    assert_eq!(get("i5", 0)["error"]["kind"], "status");
    assert_eq!(get("i6", 0)["answer"], json!(["B", "D"]));
    assert_eq!(get("i1", 0)["usage"]["prompt_tokens"], 10);
    // Raw responses sit next to the results; request ids are <id>#run<k>, sample k.
    let raw = std::fs::read_to_string(dir.path().join("runs/m.responses.jsonl")).unwrap();
    assert!(raw.contains("\"id\":\"i3#run1\",\"sample\":1"), "{raw}");

    // Resume: only the failed call is asked again (and fails again: exit 1).
    assert_eq!(cmd(&out).output().unwrap().status.code(), Some(1));
    assert_eq!(server.count(), 13);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 12);

    // Hand-computed scores (failures score 0). Per item (run 0, run 1) as (EM, F1):
    // i1 (1,1) (0,2/3); i2 (1,1) (0,0); i3 (0,0.8) (1,1); i4 (1,1) (0,0); i5 (0,0) (1,1);
    // i6 (1,1) (1,1).
    let v = mcq_score_json(&out, 100, &[]);
    let want = [
        ("planning", 0.5, (5.0 / 6.0 + 0.5) / 2.0),
        ("evidence_extraction", 0.5, 0.9),
        ("grounded_reasoning", 0.5, 0.5),
        ("noise_robustness", 0.75, 0.75),
        ("overall", 0.5625, (2.0 / 3.0 + 0.9 + 0.5 + 0.75) / 4.0),
    ];
    for (name, em, f1) in want {
        let r = row(&v, "scores", name);
        assert!(
            close(r["em"]["estimate"].as_f64().unwrap(), em),
            "{name}: {r}"
        );
        assert!(
            close(r["f1"]["estimate"].as_f64().unwrap(), f1),
            "{name}: {r}"
        );
    }
    // Runs: overall EM 0.625 and 0.5, F1 0.825 and 7/12.
    let ov = row(&v, "scores", "overall");
    assert!(close(ov["em"]["run_mean"].as_f64().unwrap(), 0.5625));
    assert!(close(
        ov["em"]["run_sd"].as_f64().unwrap(),
        0.125 / 2f64.sqrt()
    ));
    assert!(close(
        ov["f1"]["run_sd"].as_f64().unwrap(),
        (0.825 - 7.0 / 12.0) / 2f64.sqrt()
    ));
    // Every group has one item, so the bootstrap cannot move the overall score.
    assert!(
        close(ov["em"]["ci"][0].as_f64().unwrap(), 0.5625)
            && close(ov["em"]["ci"][1].as_f64().unwrap(), 0.5625)
    );
    let rates = row(&v, "rates", "overall");
    assert_eq!(
        (
            rates["records"].as_u64(),
            rates["parse_failed"].as_u64(),
            rates["errors"].as_u64()
        ),
        (Some(12), Some(1), Some(1))
    );
    assert_eq!(row(&v, "rates", "noise-abstain")["errors"], 1);
    assert_eq!(row(&v, "rates", "planning-divergent")["parse_failed"], 1);

    // Reusing the responses file for another model is refused.
    let o = stats()
        .args(["mcq", "run"])
        .arg(&items)
        .args([
            "--model", "other", "--runs", "2", "--seed", "100", "--prompt", "bare", "--out",
        ])
        .arg(&out)
        .env("OPENAI_BASE_URL", &server.base)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("answered for a different request"));
}

/// Shown options `(letter, text)` parsed back out of a rendered prompt.
fn shown(prompt: &str) -> Vec<(String, String)> {
    prompt
        .lines()
        .filter_map(|l| {
            let b = l.as_bytes();
            (b.len() > 3 && b[0].is_ascii_uppercase() && &l[1..3] == ". ")
                .then(|| (l[..1].to_string(), l[3..].to_string()))
        })
        .collect()
}

#[test]
fn shuffled_runs_score_the_same_when_the_model_answers_by_text() {
    let dir = tempfile::tempdir().unwrap();
    let items = e2e_items(dir.path());
    let gold: std::collections::HashMap<String, Vec<String>> = std::fs::read_to_string(&items)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let texts: Vec<String> = v["answer"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    let i = (a.as_str().unwrap().as_bytes()[0] - b'A') as usize;
                    v["options"][i]["text"].as_str().unwrap().to_string()
                })
                .collect();
            (v["id"].as_str().unwrap().to_string(), texts)
        })
        .collect();
    // An oracle that finds the gold options by their text in the prompt: it quotes the
    // texts for half the items and gives the shown letters for the others.
    let server = Server::start(move |req, _| {
        let id = item_of(&req.prompt);
        let want = &gold[&id];
        if want.is_empty() {
            return ok_reply("Answer: none");
        }
        let opts = shown(&req.prompt);
        let text = if matches!(id.as_str(), "i1" | "i3" | "i5") {
            format!(
                "Answer: {}",
                want.iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        } else {
            let letters: Vec<String> = opts
                .iter()
                .filter(|(_, t)| want.contains(t))
                .map(|(l, _)| l.clone())
                .collect();
            format!("Answer: {}", letters.join(", "))
        };
        ok_reply(&text)
    });
    let run = |out: &Path, extra: &[&str]| {
        run_ok(
            stats()
                .args(["mcq", "run"])
                .arg(&items)
                .args(["--model", "oracle", "--runs", "2", "--no-cache", "--out"])
                .arg(out)
                .args(extra)
                .env("OPENAI_BASE_URL", &server.base),
        );
    };
    let (plain, shuf) = (
        dir.path().join("plain.jsonl"),
        dir.path().join("shuf.jsonl"),
    );
    run(&plain, &[]);
    run(&shuf, &["--shuffle-seed", "11"]);
    let score = |p: &Path| mcq_score_json(p, 100, &[]);
    let (a, b) = (score(&plain), score(&shuf));
    assert_eq!(a["scores"], b["scores"]);
    assert!(close(
        row(&a, "scores", "overall")["em"]["estimate"]
            .as_f64()
            .unwrap(),
        1.0
    ));
    // The shuffle really moved options, and answers map back to original labels.
    let lines = jsonl(&shuf);
    assert!(lines.iter().any(|r| r["permutation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect::<String>()
        != r["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect::<String>()));
    assert!(lines.iter().any(|r| r["answer"] != r["answer_shown"]));
    for r in &lines {
        assert_eq!(r["answer"], r["gold"], "{r}");
    }
    // Position table and agreement between the original and the shuffled run.
    let p = json_of(
        stats()
            .args(["mcq", "score"])
            .arg(&plain)
            .args(["--positions", "--shuffled"])
            .arg(&shuf)
            .args(["--format", "json", "--backend", "cpu", "--replicates", "10"]),
    );
    assert_eq!(p["shuffle_agreement"]["pairs"], 12);
    assert_eq!(p["shuffle_agreement"]["agreement"], 1.0);
    let first = &p["positions"][0];
    // Unshuffled, position 1 is option A: gold in i1, i3 (×2 runs) of 12 lines; chosen as often.
    assert_eq!(first["shown"], 12);
    assert_eq!(first["gold"], 4);
    assert_eq!(first["chosen"], 4);
}

/// Every bootstrap interval of a score is a share: within [0, 1]. On the demo's bare run
/// the planning-convergent EM interval starts at an item set scoring 0, which the f32 sums
/// of centred rows printed as −9.9341e-9 before replicates were clamped.
#[test]
fn score_intervals_stay_within_zero_and_one() {
    for file in [
        "data/demo/mcq-bare.jsonl",
        "data/demo/mcq-informative.jsonl",
    ] {
        let v = mcq_score_json(Path::new(file), 10_000, &[]);
        for s in v["scores"].as_array().unwrap() {
            for m in ["em", "f1"] {
                let ci = &s[m]["ci"];
                let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
                assert!((0.0..=hi).contains(&lo) && hi <= 1.0, "{file} {s}");
            }
        }
        if file.ends_with("bare.jsonl") {
            assert_eq!(row(&v, "scores", "planning-convergent")["em"]["ci"][0], 0.0);
        }
    }
}

/// `mcq run --limit N` asks only the first N items (each `--runs` times), and the warning
/// about replies cut at the token cap tells prompt echoes from cut reasoning (issue #51):
/// model `echo` sends items i1 and i2 their own prompt back and cuts the others' reasoning;
/// model `thinker` cuts every reply's reasoning.
#[test]
fn limit_asks_the_first_items_and_cut_echoes_get_their_own_advice() {
    let dir = tempfile::tempdir().unwrap();
    let items = e2e_items(dir.path());
    let server = Server::start(|req, _| {
        let echo =
            req.body["model"] == "echo" && matches!(item_of(&req.prompt).as_str(), "i1" | "i2");
        if echo {
            cut_reply(&req.prompt)
        } else {
            cut_reply("Let me weigh each option in turn, starting with the")
        }
    });
    let run = |model: &str, limit: &str, name: &str| -> (String, String, Vec<Value>) {
        let out = dir.path().join(name);
        let o = mcq_run(&items, model, &out, &server.base)
            .args(["--limit", limit, "--max-tokens", "64"])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        );
        assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
        (stdout, stderr, jsonl(&out))
    };
    let more = "Pass a larger --max-tokens";

    // --limit 2 with --runs 2: exactly the first two items' four calls, every one an echo.
    let (stdout, stderr, results) = run("echo", "2", "a.jsonl");
    assert_eq!(server.count(), 4);
    let mut asked: Vec<String> = server
        .requests()
        .iter()
        .map(|r| item_of(&r.prompt))
        .collect();
    asked.sort();
    assert_eq!(asked, ["i1", "i1", "i2", "i2"]);
    let ids: Vec<(&str, u64)> = results
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["run"].as_u64().unwrap()))
        .collect();
    assert_eq!(ids, [("i1", 0), ("i1", 1), ("i2", 0), ("i2", 1)]);
    assert!(
        stdout.starts_with("mcq run: 2 item(s) (the first 2 of 6: --limit) × 2 run(s) = 4 call(s): 0 already answered, 4 run now: 4 answered now, 0 from cache, 0 failed\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: 4 of 4 reply(ies) were cut at --max-tokens 64 (finish_reason \"length\"), and every one echoes the prompt (repeats its lines or placeholders) instead of answering: the model copies its prompt, so a larger --max-tokens would only make the run slower"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(more) && !stderr.contains("pass a larger"),
        "{stderr}"
    );

    // --limit 4: i1 and i2 echo (4 calls), i3 and i4 are cut reasoning (4 calls).
    let (_, stderr, results) = run("echo", "4", "b.jsonl");
    assert_eq!(server.count(), 4 + 8);
    assert_eq!(results.len(), 8);
    assert!(
        stderr.contains("warning: 8 of 8 reply(ies) were cut at --max-tokens 64 (finish_reason \"length\"); 4 of them echo the prompt (repeat its lines or placeholders) instead of answering, which more tokens do not help; the other 4 may need more room: pass a larger --max-tokens\n"),
        "{stderr}"
    );

    // Only cut reasoning: the advice to give the replies more room, as before.
    let (_, stderr, _) = run("thinker", "1", "c.jsonl");
    assert_eq!(server.count(), 4 + 8 + 2);
    assert!(
        stderr.contains("warning: 2 of 2 reply(ies) were cut at --max-tokens 64 (finish_reason \"length\"); their text is incomplete. Pass a larger --max-tokens if the replies need more room\n"),
        "{stderr}"
    );
}

/// McNemar's heading names the flag that asked for it, in the two-file comparison and in the
/// leaderboard of three or more files (the library's view names the setting; the CLI spells
/// it as its flag).
#[test]
fn the_mcnemar_heading_names_its_flag() {
    let (bare, inf) = (
        "data/demo/mcq-bare.jsonl",
        "data/demo/mcq-informative.jsonl",
    );
    let text = |files: &[&str]| {
        let out = stats()
            .args(["mcq", "compare"])
            .args(files)
            .args(["--replicates", "50", "--mcnemar"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let heading = "\n\nMcNemar on EM over (id, run) pairs (--mcnemar), assuming every pair \
                   independent: the runs of one item are not, so with several runs these p are \
                   too small; and it weights tasks by their pairs, not as the ΔEM above";
    let two = text(&[bare, inf]);
    assert!(two.contains(&format!("{heading}\ngroup ")), "{two}");
    let three = text(&[bare, inf, bare]);
    assert!(
        three.contains(&format!("{heading}; adjusted over the pairs\na ")),
        "{three}"
    );
}
