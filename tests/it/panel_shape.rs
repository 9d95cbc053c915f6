//! Tables not written for ragstats (#46): `--columns` renames a file's columns to the
//! panel's roles, the score column is found by its name, and (below) uneven panels.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

/// Two tasks × two questions × two models, in a third party's column names. Per task and
/// model the mean is hand-computed in the tests.
const THIRD_PARTY: &str = "question_id,model,task,tstamp,score\n\
    a1,m1,t1,100,1\na1,m2,t1,100,0\n\
    a2,m1,t1,101,0.5\na2,m2,t1,101,0\n\
    b1,m1,t2,102,0.25\nb1,m2,t2,102,1\n\
    b2,m1,t2,103,0.75\nb2,m2,t2,103,1\n";

#[test]
fn columns_rename_a_third_party_table_and_score_is_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "lb.csv", THIRD_PARTY);
    let p = p.to_str().unwrap();
    let cols = "question=question_id,arm=model,dataset=task";
    // m1: t1 mean (1 + 0.5)/2 = 0.75, t2 (0.25 + 0.75)/2 = 0.5; equal weights 0.625.
    let out = stats()
        .args([
            "variance",
            p,
            "--columns",
            cols,
            "--arm",
            "m1",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["strata"][0]["name"], "t1");
    assert!((v["strata"][0]["mean"].as_f64().unwrap() - 0.75).abs() < 1e-12);
    assert!((v["strata"][1]["mean"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert!((v["estimate"].as_f64().unwrap() - 0.625).abs() < 1e-12);
    // `tstamp` is numeric too, but only `score` is named like a score: used, with a note.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: using 'score' as the score column"),
        "{err}"
    );
    // The same table as JSON lines: the fields are renamed likewise.
    let jsonl: String = THIRD_PARTY
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!(
                "{{\"question_id\":\"{}\",\"model\":\"{}\",\"task\":\"{}\",\"tstamp\":{},\"score\":{}}}\n",
                f[0], f[1], f[2], f[3], f[4]
            )
        })
        .collect();
    let j = write(&dir, "lb.jsonl", &jsonl);
    let v = json(&[
        "variance",
        j.to_str().unwrap(),
        "--columns",
        cols,
        "--arm",
        "m1",
        "--format",
        "json",
    ]);
    assert!(
        (v["estimate"].as_f64().unwrap() - 0.625).abs() < 1e-12,
        "{v}"
    );
    // The contrast m2 − m1 per question: t1 −1, −0.5 (mean −0.75); t2 0.75, 0.25 (0.5).
    let v = json(&[
        "bootstrap",
        p,
        "--columns",
        cols,
        "--contrast",
        "m2-m1",
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    assert!(
        (v["estimate"].as_f64().unwrap() - (-0.125)).abs() < 1e-12,
        "{v}"
    );
    // compare reads the same flags.
    let v = json(&[
        "compare",
        p,
        "--columns",
        cols,
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    let est: Vec<f64> = v["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["estimate"].as_f64().unwrap())
        .collect();
    // m2: t1 0, t2 1 → 0.5; m1 0.625.
    assert!(est.iter().any(|e| (e - 0.625).abs() < 1e-12), "{est:?}");
    assert!(est.iter().any(|e| (e - 0.5).abs() < 1e-12), "{est:?}");
}

#[test]
fn columns_errors_name_the_role_or_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "lb.csv", THIRD_PARTY);
    let p = p.to_str().unwrap();
    stats()
        .args(["variance", p, "--columns", "questoin=question_id"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown role 'questoin'; the roles are: question, arm, dataset, trajectory, read, cluster",
        ));
    stats()
        .args(["variance", p, "--columns", "question=qid", "--arm", "m1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "lb.csv:1: no column 'qid' for the role question; the columns are: question_id, model, task, tstamp, score",
        ));
    stats()
        .args(["variance", p, "--columns", "question"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected ROLE=COLUMN"));
}

#[test]
fn several_score_named_columns_are_listed_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", "question,em,acc\nq1,1,1\nq2,0,1\n");
    stats()
        .args(["variance", p.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "several columns could be the score (em, acc); choose one as the metric",
        ));
    // `f1` stays the default when present (the documented rule since the first panels).
    let p = write(
        &dir,
        "q.csv",
        "question,em,f1\nq1,1,0.5\nq2,0,0.25\nq3,1,1\n",
    );
    let v = json(&["variance", p.to_str().unwrap(), "--format", "json"]);
    assert!((v["estimate"].as_f64().unwrap() - 1.75 / 3.0).abs() < 1e-12);
}

/// Two arms, one with a repeated row and one lacking a question: refused with both problems
/// in one message; `--duplicates` and `--common-questions` settle each.
const UNEVEN: &str = "question,arm,f1\n\
    q1,a,1\nq1,b,0\n\
    q2,a,0.5\nq2,b,0.25\n\
    q2,a,0\n\
    q3,a,1\n";

#[test]
fn uneven_panels_list_every_problem_at_once_and_flags_settle_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "u.csv", UNEVEN);
    let p = p.to_str().unwrap();
    stats()
        .args(["compare", p])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "u.csv: the panel has 2 problems:\n  \
             - duplicates: 1 row repeats a cell already given (1 cell); line 6 repeats line 4 \
             (question=q2, trajectory=0, read=0, arm=a); duplicates 'mean' averages a cell's \
             rows, 'first' keeps the first\n  \
             - missing questions: 1 of 2 arms lack questions other arms have (3 questions in \
             all); b lacks 1 (e.g. q3); keeping the common questions keeps those every arm has",
        ));
    // a's mean with the duplicate averaged: q1 1, q2 (0.5 + 0)/2, q3 1 → 2.25/3 = 0.75.
    let v = json(&[
        "variance",
        p,
        "--arm",
        "a",
        "--duplicates",
        "mean",
        "--format",
        "json",
    ]);
    assert!(
        (v["estimate"].as_f64().unwrap() - 0.75).abs() < 1e-12,
        "{v}"
    );
    // The first row kept: q2 0.5 → 2.5/3.
    let v = json(&[
        "variance",
        p,
        "--arm",
        "a",
        "--duplicates",
        "first",
        "--format",
        "json",
    ]);
    assert!(
        (v["estimate"].as_f64().unwrap() - 2.5 / 3.0).abs() < 1e-12,
        "{v}"
    );
    // Both settled: q3 dropped for a, so a is (1 + 0.5)/2 and b (0 + 0.25)/2.
    let out = stats()
        .args([
            "variance",
            p,
            "--arm",
            "a",
            "--duplicates",
            "first",
            "--common-questions",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        (v["estimate"].as_f64().unwrap() - 0.75).abs() < 1e-12,
        "{v}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "note: common questions: kept the 2 questions (in 1 stratum) that all 2 arms \
             have; questions dropped per arm: a 1 of 3 (the other 1 arms lost none)"
        ) && err.contains("note: kept the first of 1 duplicate row"),
        "{err}"
    );
    let v = json(&[
        "compare",
        p,
        "--duplicates",
        "first",
        "--common-questions",
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    let est: Vec<f64> = v["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["estimate"].as_f64().unwrap())
        .collect();
    assert!(est.iter().any(|e| (e - 0.75).abs() < 1e-12), "{est:?}");
    assert!(est.iter().any(|e| (e - 0.125).abs() < 1e-12), "{est:?}");
}

/// Stratum A: three questions scoring 1, 0, 0.5 (mean 0.5, s² 0.25, SE² 1/12); stratum B:
/// two scoring 0.2, 0.6 (mean 0.4, s² 0.08, SE² 0.04).
const TWO_STRATA: &str = "dataset,question,f1\nA,a1,1\nA,a2,0\nA,a3,0.5\nB,b1,0.2\nB,b2,0.6\n";

#[test]
fn weights_from_a_file_or_by_size_combine_the_strata() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", TWO_STRATA);
    let p = p.to_str().unwrap();
    // Weights 1 and 3, normalised to 0.25 and 0.75.
    let w = write(&dir, "w.csv", "dataset,weight\nB,3\nA,1\n");
    let v = json(&[
        "variance",
        p,
        "--weights",
        w.to_str().unwrap(),
        "--format",
        "json",
    ]);
    // Σ w·ȳ = 0.25·0.5 + 0.75·0.4; SE² = 0.25²/12 + 0.75²·0.04;
    // df = (a_A + a_B)² / (a_A²/2 + a_B²/1) with a = w²·SE².
    // The same in numpy: (w*m).sum(), sqrt((w**2*se2).sum()),
    // aa=w**2*se2; aa.sum()**2/(aa[0]**2/2 + aa[1]**2/1)
    // → 0.425, 0.1664582029619848, 1.476975744165658.
    let close = |x: &serde_json::Value, want: f64| (x.as_f64().unwrap() - want).abs() < 1e-12;
    assert!(close(&v["estimate"], 0.425), "{v}");
    assert!(close(&v["se"], 0.1664582029619848), "{v}");
    assert!(close(&v["df"], 1.476975744165658), "{v}");
    assert_eq!(v["weights"], serde_json::json!([0.25, 0.75]));
    let t = stats()
        .args(["variance", p, "--weights", w.to_str().unwrap()])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&t.stdout);
    assert!(
        t.contains("(weighted mean over 2 strata)\n")
            && t.contains("\nweights: A 0.250000, B 0.750000\n"),
        "{t}"
    );
    // `size`: each stratum's share of the questions, 3/5 and 2/5: the pooled mean of the
    // five question scores, (1 + 0 + 0.5 + 0.2 + 0.6)/5.
    let v = json(&["variance", p, "--weights", "size", "--format", "json"]);
    assert!(close(&v["estimate"], 2.3 / 5.0), "{v}");
    // The bootstrap combines every replicate's stratum means with the weights: with all
    // the weight on A, the estimate's replicates are A's mean's, so its summary is A's.
    let only_a = write(&dir, "a.csv", "dataset,weight\nA,2\nB,0\n");
    let v = json(&[
        "bootstrap",
        p,
        "--weights",
        only_a.to_str().unwrap(),
        "--replicates",
        "500",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    for k in ["estimate", "se", "ci"] {
        assert_eq!(v[k], v["strata"][0][k], "{k}: {v}");
    }
    let v = json(&[
        "bootstrap",
        p,
        "--weights",
        w.to_str().unwrap(),
        "--replicates",
        "500",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(close(&v["estimate"], 0.425), "{v}");
    assert_eq!(v["weights"], serde_json::json!([0.25, 0.75]));
}

#[test]
fn weights_that_do_not_fit_the_panel_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", TWO_STRATA);
    let p = p.to_str().unwrap();
    // (file, its text, what the refusal says)
    let cases = [
        (
            "w1.csv",
            "dataset,weight\nA,1\n",
            "no weight for stratum 'B'; every dataset of the panel needs one",
        ),
        (
            "w2.csv",
            "dataset,weight\nA,1\nB,1\nC,1\n",
            "the panel has no dataset 'C' (its datasets: A, B)",
        ),
        (
            "w3.csv",
            "dataset,weight\nA,1\nB,-2\n",
            "w3.csv:3: weight -2 for 'B'; expected a finite number ≥ 0",
        ),
        (
            "w4.csv",
            "dataset,weight\nA,0\nB,0\n",
            "the strata's weights sum to 0",
        ),
        (
            "w5.csv",
            "dataset,w\nA,1\nB,1\n",
            "w5.csv:1: strata weights: column 'weight' not found; the columns are: dataset, w",
        ),
    ];
    for (name, text, says) in cases {
        let w = write(&dir, name, text);
        stats()
            .args(["variance", p, "--weights", w.to_str().unwrap()])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    // Every command that combines strata refuses such files alike (tests/it/weights.rs).
}
