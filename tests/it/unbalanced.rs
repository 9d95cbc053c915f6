//! Unbalanced panels (issue #12): nested labels, loading unbalanced strata, `--drop-incomplete`
//! reports, and `stats variance` by REML pinned to lme4.

// The lme4 numbers are copied digit for digit from reference.out (R's %.17g).
#![allow(clippy::excessive_precision)]

use crate::common;

use common::{stats, write, XorShift};
use predicates::prelude::*;
use ragstats_core::panel::{load_panel, LoadOptions};

/// A balanced panel (2 strata, Q=4, T=3, R=2) with irregular values; `label(d, q, t)` names
/// the trajectories. Rows are written questions in order, trajectories and reads reversed.
fn balanced_csv(label: impl Fn(usize, usize, usize) -> String) -> String {
    let mut g = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut s = String::from("dataset,question,trajectory,read,f1\n");
    for d in 0..2 {
        for q in 0..4 {
            for t in (0..3).rev() {
                for r in (0..2).rev() {
                    let v = g.grid(1000);
                    s.push_str(&format!("d{d},q{q},{},{r},{v}\n", label(d, q, t)));
                }
            }
        }
    }
    s
}

#[test]
fn trajectory_labels_unique_per_question_give_the_same_array() {
    let dir = tempfile::tempdir().unwrap();
    let shared = write(&dir, "shared.csv", &balanced_csv(|_, _, t| t.to_string()));
    // Labels unique per question, sorting in the same order within each question.
    let unique = write(
        &dir,
        "unique.csv",
        &balanced_csv(|d, q, t| format!("{}-{d}{q}-7d1a", ["a", "b", "c"][t])),
    );
    let a = load_panel(&shared, &LoadOptions::default()).unwrap();
    let b = load_panel(&unique, &LoadOptions::default()).unwrap();
    for (x, y) in a.strata.iter().zip(&b.strata) {
        assert!(x.is_balanced() && y.is_balanced());
        assert_eq!((x.q(), x.t(), x.r()), (4, 3, 2));
        assert_eq!((y.q(), y.t(), y.r()), (4, 3, 2));
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&x.y), bits(&y.y));
        assert_eq!(x.trajectories, ["0", "1", "2"]);
        // Labels differ between questions: the array's positions are named 1..T.
        assert_eq!(y.trajectories, ["1", "2", "3"]);
    }
    // The same numbers printed either way.
    let out = |p: &std::path::Path| {
        stats()
            .args(["variance", p.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(out(&shared), out(&unique));
}

/// lme4's REML components of the fixtures (copied from tests/fixtures/reml/reference.out, as
/// in tests/it/reml.rs): (file, stratum or "pooled", σ²_q, σ²_t, σ²_r).
const LME4: &[(&str, &str, f64, f64, f64)] = &[
    (
        "missing_read.csv",
        "d1",
        0.039431879915934574,
        0.0061730646704959988,
        0.0074362465384037128,
    ),
    (
        "extra_trajectory.csv",
        "d1",
        0.066621542207269846,
        0.010788197314818716,
        0.0067338541730050548,
    ),
    (
        "unique_labels.csv",
        "d1",
        0.035401481702047835,
        0.003184147217216052,
        0.0061909124291108734,
    ),
    (
        "pooled.csv",
        "hotpot",
        0.039100397476506253,
        0.006067859609188998,
        0.0068300502368852109,
    ),
    (
        "pooled.csv",
        "musique",
        0.085429217184246842,
        0.019754970409682038,
        0.0021893535212816184,
    ),
    (
        "pooled.csv",
        "pooled",
        0.059752448900400414,
        0.010991498835632765,
        0.004411604819168964,
    ),
];

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/reml/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn variance_prints_the_lme4_components_of_unbalanced_fixtures() {
    for &(file, scope, q, t, r) in LME4 {
        let v = common::json(&["variance", &fixture(file), "--format", "json"]);
        let fit = if scope == "pooled" {
            &v["pooled"]
        } else {
            v["strata"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == scope)
                .unwrap()
        };
        assert_eq!(fit["method"], "REML", "{file} {scope}");
        assert!(fit.get("ms").is_none(), "REML has no mean squares");
        let c = &fit["components"];
        for (level, want) in [("question", q), ("trajectory", t), ("read", r)] {
            let got = c[level].as_f64().unwrap();
            assert!(
                ((got - want) / want).abs() < 1e-6,
                "{file} {scope} {level}: {got} vs lme4 {want}"
            );
        }
    }
}

#[test]
fn variance_table_names_the_method_and_the_spread_of_the_design() {
    // missing_read.csv: 12 questions, one trajectory missing a read (q03, trajectory 2).
    stats()
        .args(["variance", &fixture("missing_read.csv")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "stratum  Q   T  R         mean      SE        dropped  method\n\
             d1       12  3  1/1.97/2  0.593299  0.059783        0  REML\n",
        ))
        .stdout(predicate::str::contains("d1      question     -   -   0.039432"))
        .stderr(predicate::str::contains(
            "missing_read.csv:14: question 'q03' in stratum 'd1' is missing 1 of 6 cells: (trajectory 2, read 0)",
        ));
}

#[test]
fn drop_incomplete_lists_what_it_dropped() {
    // extra_trajectory.csv: q03, q11 and q17 have a fourth trajectory; the design is 3 x 2.
    let out = stats()
        .args([
            "variance",
            &fixture("extra_trajectory.csv"),
            "--drop-incomplete",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("note: dropped incomplete questions: 3 in d1"),
        "{err}"
    );
    for q in ["q03", "q11", "q17"] {
        assert!(
            err.contains(&format!(
                "note: dropped from d1: {q} (has 4 trajectories with 2, 2, 2, 2 reads; the design is 3 trajectories x 2 reads)"
            )),
            "{err}"
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["strata"][0];
    assert_eq!(s["method"], "ANOVA");
    assert_eq!(
        (
            s["questions"].as_u64(),
            s["trajectories"].as_u64(),
            s["reads"].as_u64()
        ),
        (Some(17), Some(3), Some(2))
    );
    assert_eq!(s["dropped"], 3);
}

#[test]
fn commands_that_need_balance_still_refuse_naming_the_missing_cells() {
    stats()
        .args([
            "subsets",
            &fixture("missing_read.csv"),
            "--audit",
            &fixture("missing_read.csv"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "missing_read.csv:14: unbalanced design: question 'q03' in stratum 'd1' is missing 1 of 6 cells: (trajectory 2, read 0); every question needs all 3 trajectories x 2 reads",
        ))
        .stderr(predicate::str::contains(
            "this command needs every question to have the same numbers of trajectories and reads \
             (`stats variance`, `stats forecast` and `stats bootstrap` fit unbalanced panels by REML)",
        ));
}

#[test]
fn a_balanced_panel_gives_identical_bits_through_the_old_and_new_paths() {
    use ragstats_core::components::variance::{analyse, analyse_panel};
    use ragstats_core::panel::StratumStats;
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "b.csv", &balanced_csv(|_, _, t| t.to_string()));
    let opts = LoadOptions {
        allow_unbalanced: true,
        ..LoadOptions::default()
    };
    let panel = load_panel(&p, &opts).unwrap();
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let old = analyse(&panel.outcome, &stats, &[0, 0]).unwrap();
    let new = analyse_panel(&panel).unwrap();
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        serde_json::to_string(&new).unwrap()
    );
    for s in &new.strata {
        assert_eq!(
            s.fit.components.question.to_bits(),
            old.strata
                .iter()
                .find(|o| o.name == s.name)
                .unwrap()
                .fit
                .components
                .question
                .to_bits()
        );
    }
}

#[test]
fn forecast_from_an_unbalanced_audit_uses_the_lme4_components() {
    let v = common::json(&[
        "forecast",
        "--audit",
        &fixture("missing_read.csv"),
        "--design",
        "100:3:2",
        "--format",
        "json",
    ]);
    let (q, t, r) = (LME4[0].2, LME4[0].3, LME4[0].4);
    let want = (q / 100.0 + t / 300.0 + r / 600.0).sqrt();
    let got = v["designs"][0]["se_nested"].as_f64().unwrap();
    assert!(((got - want) / want).abs() < 1e-6, "{got} vs {want}");
    assert_eq!(v["notes"].as_array().unwrap().len(), 0);
}

#[test]
fn forecast_from_an_audit_with_one_read_says_r_cannot_vary() {
    // Q=3, T=2, R=1 with irregular values.
    let mut g = XorShift(77);
    let mut text = String::from("question,trajectory,f1\n");
    for q in 0..3 {
        for t in 0..2 {
            text.push_str(&format!("q{q},{t},{}\n", g.grid(100)));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "r1.csv", &text);
    let out = stats()
        .args([
            "forecast",
            "--audit",
            p.to_str().unwrap(),
            "--design",
            "10:2:1",
            "--design",
            "10:2:5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(
        "note: all: the audit has R = 1, so the read component is folded into the trajectory component and the forecast cannot vary R (every R' gives the same SE)"
    ), "{text}");
    // And indeed both designs give the same SE.
    let lines: Vec<&str> = text.lines().collect();
    let se = |l: &str| l.split_whitespace().nth(2).unwrap().to_string();
    assert_eq!(se(lines[1]), se(lines[2]));
}
