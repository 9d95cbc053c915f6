//! Human labels priced into the plan (#49 item 5): `plan --labels --label-cost` on the
//! demo's judged panel against an independent numpy computation of the same formula
//! (tests/reference/label_plan_reference.py), `compare --ledger --labels --label-cost`'s
//! next step against `plan --labels` of the pair, and the flags' refusals.

use std::collections::HashMap;

use crate::common;

use common::{json, stats};
use predicates::prelude::*;

const JUDGED: [&str; 8] = [
    "--audit",
    "data/demo/judged.csv",
    "--metric",
    "judge_score",
    "--labels",
    "data/demo/judged-labels.csv",
    "--label-metric",
    "correct",
];

fn planned(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["plan"];
    args.extend_from_slice(&JUDGED);
    args.extend_from_slice(&[
        "--unit-costs",
        "1000,500",
        "--label-cost",
        "20000",
        "--format",
        "json",
    ]);
    args.extend_from_slice(extra);
    json(&args)
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap()
}

/// `python3 tests/reference/label_plan_reference.py` (numpy 2.4.6): the judge's components
/// σ²_q = 3.6633239171374763, σ²_t = 3.2152777777777777 (one-way ANOVA, T = 4), the
/// labels' σ²_Y = 0.13273809523809524 and c = 0.7553571428571428 (ddof 1); over every
/// T ≤ 10 and 40 ≤ n ≤ Q ≤ 1000 the cheapest designs are n 40 of 110:2:1 (SE
/// 0.03995429310406067, 1,130,000 tokens), 42 of 201:1:1 (1,141,500), 40 of 94:3:1
/// (1,223,000); labelling every question needs 83 (1,784,500); at the audit's own design
/// (15 labels of 60) the formula gives SE 0.049628347057850276.
#[test]
fn the_demo_plan_is_numpys_brute_force_optimum() {
    let doc = planned(&["--target-se", "0.04", "--runners-up", "2"]);
    let s = &doc["strata"][0];
    assert!((num(&s["human_variance"]) - 0.13273809523809524).abs() < 1e-12);
    assert!((num(&s["covariance"]) - 0.7553571428571428).abs() < 1e-12);
    assert!(
        (num(&s["judge_variance"]) - (3.6633239171374763 + 3.2152777777777777 / 4.0)).abs() < 1e-9
    );
    let want = [
        (40, 110, 2, 0.03995429310406067, 1_130_000.0),
        (42, 201, 1, 0.03997699480247429, 1_141_500.0),
        (40, 94, 3, 0.03984855124334585, 1_223_000.0),
    ];
    let designs = doc["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 3);
    for (d, (n, q, t, se, cost)) in designs.iter().zip(want) {
        assert_eq!(
            (
                d["labels"].as_u64(),
                d["questions"].as_u64(),
                d["trajectories"].as_u64()
            ),
            (Some(n), Some(q), Some(t)),
            "{d}"
        );
        assert_eq!(d["reads"], 1);
        assert!((num(&d["se"]) - se).abs() < 1e-12, "{d}");
        assert_eq!(num(&d["cost"]), cost);
        assert_eq!(num(&d["labels_cost"]), n as f64 * 20000.0);
    }
    let all = &doc["labels_only"];
    assert_eq!(
        (all["labels"].as_u64(), all["questions"].as_u64()),
        (Some(83), Some(83))
    );
    assert_eq!(num(&all["cost"]), 1_784_500.0);
    // At the audit's own design: the formula's SE (numpy) beside `variance --labels`'
    // measured SE. They differ by the sample λ̂ against λ* and by the judge's sample
    // variances on the labelled and unlabelled questions against σ²_f of the components
    // (about 8% here, 15 labels): the plan is a forecast, not the audit's SE.
    let audit = &doc["audit"];
    assert!((num(&audit["se_planned"]) - 0.049628347057850276).abs() < 1e-12);
    let measured = json(&[
        "variance",
        "data/demo/judged.csv",
        "--metric",
        "judge_score",
        "--labels",
        "data/demo/judged-labels.csv",
        "--label-metric",
        "correct",
        "--format",
        "json",
    ]);
    assert_eq!(audit["se_measured"], measured["ppi"]["se"]);
    let ratio = num(&audit["se_planned"]) / num(&audit["se_measured"]);
    assert!((0.85..1.15).contains(&ratio), "{ratio}");
    // An MDE is a target SE of MDE / (z_0.975 + z_0.8); min_labels 2 lets the plan label
    // fewer (the judge's correlation with the labels is 0.98 here).
    let mde = planned(&["--mde", "0.112", "--runners-up", "0"]);
    assert_eq!(mde["goal"], "mde");
    assert!((num(&mde["target_se"]) - 0.112 / 2.8015852181129683).abs() < 1e-9);
    let few = planned(&[
        "--target-se",
        "0.04",
        "--min-labels",
        "2",
        "--runners-up",
        "0",
    ]);
    assert!(few["designs"][0]["labels"].as_u64().unwrap() < 40);
    assert!(num(&few["designs"][0]["cost"]) < 1_130_000.0);
    let notes = few["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("fewer than 40 labels")),
        "{few}"
    );
}

/// The flags' refusals: exit 2 with the flag named.
#[test]
fn bad_label_plans_are_refused_with_exit_2() {
    let base = |extra: &[&str]| {
        let mut c = stats();
        c.arg("plan")
            .args(JUDGED)
            .args(["--unit-costs", "1000,500"])
            .args(extra);
        c
    };
    base(&["--label-cost=-3", "--target-se", "0.04"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--label-cost").and(predicate::str::contains(
                "the price is -3; expected a finite price",
            )),
        );
    base(&["--target-se", "0.04"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--label-cost: labels in the plan need the cost of one label",
        ));
    base(&["--label-cost", "100", "--budget-tokens", "1e6"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "with labels, plan finds the cheapest labels and Q:T:R for a target SE or an MDE",
        ));
    base(&[
        "--label-cost",
        "100",
        "--target-se",
        "0.04",
        "--min-labels",
        "1",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains(
        "--min-labels: 1: a stratum needs at least 2 labels",
    ));
    stats()
        .args([
            "plan",
            "--audit",
            "data/demo/judged.csv",
            "--metric",
            "judge_score",
        ])
        .args([
            "--unit-costs",
            "1000,500",
            "--label-cost",
            "100",
            "--target-se",
            "0.04",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--labels"));
}

/// A labels file of the demo panel: `stats labels sample` of the contrast adaptive-open
/// (40 questions, seed 1, both arms), filled with the panel's own `em` (a stand-in for a
/// human's exact-match labels of the f1 "judge").
fn demo_labels(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let sheet = dir.path().join("sheet.csv");
    stats()
        .args([
            "labels",
            "sample",
            "data/demo/panel.csv",
            "--contrast",
            "adaptive-open",
        ])
        .args(["--n", "40", "--seed", "1", "--label-metric", "em", "--out"])
        .arg(&sheet)
        .assert()
        .success();
    let panel = std::fs::read_to_string("data/demo/panel.csv").unwrap();
    let em: HashMap<String, String> = panel
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[..5].join(","), c[6].to_string())
        })
        .collect();
    let mut out = String::from("dataset,question,trajectory,read,arm,em\n");
    for l in std::fs::read_to_string(&sheet).unwrap().lines().skip(1) {
        let key = l.trim_end_matches(',');
        out.push_str(&format!("{key},{}\n", em[key]));
    }
    let path = dir.path().join("labels.csv");
    std::fs::write(&path, out).unwrap();
    path
}

/// `compare --ledger --labels --label-cost`: the next step's design is `plan --labels` of
/// the closest unresolved pair's contrast at the next step's target SE, and its SE meets it.
#[test]
fn compares_next_step_with_labels_is_the_pairs_label_plan() {
    let dir = tempfile::tempdir().unwrap();
    let labels = demo_labels(&dir);
    let l = labels.to_str().unwrap();
    let doc = json(&[
        "compare",
        "data/demo/panel.csv",
        "--labels",
        l,
        "--label-metric",
        "em",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--label-cost",
        "20000",
        "--format",
        "json",
    ]);
    let next = &doc["next"];
    assert_eq!(
        (next["a"].as_str(), next["b"].as_str()),
        (Some("open"), Some("adaptive"))
    );
    let pair = &doc["pairs"][0];
    assert_eq!(next["estimate"], pair["estimate"]);
    // One pair: the two-sided Wald test at 0.05, s₁ = |d̂| / (z_0.975 + z_0.8) (scipy:
    // norm.ppf(0.975) + norm.ppf(0.8) = 2.8015852181129683).
    let target = num(&pair["estimate"]).abs() / 2.8015852181129683;
    assert!((num(&next["target_se"]) - target).abs() < 1e-9);
    let design = &next["plan"];
    assert!(num(&design["se"]) <= num(&next["target_se"]));
    let target = format!("{}", num(&next["target_se"]));
    let plan = json(&[
        "plan",
        "--audit",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--labels",
        l,
        "--label-metric",
        "em",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--label-cost",
        "20000",
        "--target-se",
        &target,
        "--runners-up",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(&plan["designs"][0], design);
    assert!(next["text"].as_str().unwrap().contains(&format!(
        "labels {} of Q:T:R = {}:{}:{}",
        design["labels"], design["questions"], design["trajectories"], design["reads"]
    )));
    // Without a label cost the ledger's next step is refused; a label cost without labels
    // too.
    stats()
        .args([
            "compare",
            "data/demo/panel.csv",
            "--ledger",
            "data/demo/ledger.jsonl",
        ])
        .args(["--label-cost", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--labels"));
}
