//! Contrasts with cells present in one arm only (issue #31 item 5): only the unpaired cells
//! are dropped (listed on stderr, counted in the JSON `run`), the unbalanced panel is fitted
//! by REML, `--failure-score X` scores the missing arm as X instead, and `--drop-incomplete`
//! still drops the questions.

// The lme4 numbers are copied digit for digit from reference.out (R's %.17g).
#![allow(clippy::excessive_precision)]

use crate::common::{body, json, stats, write};

const PANEL: &str = "tests/reference/unpaired/panel.csv";

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn variance(panel: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "variance",
        panel,
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json(&args)
}

/// The panel (`tests/reference/unpaired/make_panel.py`: 8 questions × 2 trajectories × 2
/// reads, two arms) has four unpaired cells: q2 (0, 1) and q7 (1, 0), (1, 1) lack
/// `adaptive`, q5 (1, 0) lacks `open`. The remaining 28 contrast cells against lme4
/// (`cd tests/reference/unpaired && Rscript reference.R`, R 4.2.2, lme4 1.1.31, nloptwrap
/// tolerances tightened), which printed (reference.out):
///
/// ```text
/// paired cells: 28 (of 31 open and 29 adaptive rows), 8 questions, 15 trajectories
/// sigma2_question   = 0.01139549039211595
/// sigma2_trajectory = 0.0019117032532844701
/// sigma2_read       = 0.00060991442753413172
/// REML criterion    = -76.900058497318881
/// ```
///
/// lme4's optimiser stops within ~1e-7 of the optimum (relative, in the components), so the
/// components agree to 1e-6 relative and the criterion (flat at the optimum) to 1e-9.
#[test]
fn unpaired_cells_are_dropped_alone_and_fitted_by_reml_as_lme4() {
    let out = stats()
        .args([
            "variance",
            PANEL,
            "--contrast",
            "adaptive-open",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    for cell in [
        "panel.csv:20: unpaired cell (dataset=d, question=q2, trajectory=0, read=1, arm=open): no row for arm 'adaptive'; dropped the cell",
        "panel.csv:45: unpaired cell (dataset=d, question=q5, trajectory=1, read=0, arm=adaptive): no row for arm 'open'; dropped the cell",
        "question=q7, trajectory=1, read=0",
        "question=q7, trajectory=1, read=1",
    ] {
        assert!(err.contains(cell), "{err}");
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["run"]["unpaired_cells"],
        serde_json::json!({"dropped": 4, "scored": 0})
    );
    let s = &v["strata"][0];
    assert_eq!((&s["method"], &s["questions"]), (&"REML".into(), &8.into()));
    assert_eq!(s["shape"]["reads"]["total"], 28);
    let c = &s["components"];
    for (got, want) in [
        (f(&c["question"]), 0.01139549039211595),
        (f(&c["trajectory"]), 0.0019117032532844701),
        (f(&c["read"]), 0.00060991442753413172),
    ] {
        assert!((got - want).abs() < 1e-6 * want, "{got} vs lme4 {want}");
    }
    assert!((f(&s["reml"]["criterion"]) - -76.900058497318881).abs() < 1e-9);
}

/// `--failure-score 0` is the panel with each missing arm's row written in with score 0 by
/// hand: the same report (a balanced panel again, so ANOVA), for `variance` and for the
/// seeded `bootstrap`; only the envelope's input and its count of scored cells differ.
#[test]
fn a_failure_score_is_the_hand_filled_panel() {
    let dir = tempfile::tempdir().unwrap();
    let mut filled = std::fs::read_to_string(PANEL).unwrap();
    for row in [
        "d,q2,0,1,adaptive,0",
        "d,q5,1,0,open,0",
        "d,q7,1,0,adaptive,0",
        "d,q7,1,1,adaptive,0",
    ] {
        filled.push_str(row);
        filled.push('\n');
    }
    let filled = write(&dir, "filled.csv", &filled);
    let filled = filled.to_str().unwrap();
    let scored = variance(PANEL, &["--failure-score", "0"]);
    assert_eq!(
        scored["run"]["unpaired_cells"],
        serde_json::json!({"dropped": 0, "scored": 4})
    );
    let by_hand = variance(filled, &[]);
    assert!(by_hand["run"].get("unpaired_cells").is_none());
    assert_eq!(body(scored.clone()), body(by_hand));
    assert_ne!(scored["strata"][0]["method"], "REML");
    let boot = |panel: &str, extra: &[&str]| {
        let mut a = vec![
            "bootstrap",
            panel,
            "--contrast",
            "adaptive-open",
            "--replicates",
            "300",
            "--backend",
            "cpu",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        body(json(&a))
    };
    assert_eq!(boot(PANEL, &["--failure-score", "0"]), boot(filled, &[]));
    // A score other than 0 moves the contrast: a missing `adaptive` scored 1 adds 1 to
    // its cell's difference, a missing `open` scored 1 takes 1 away.
    let one = variance(PANEL, &["--failure-score", "1"]);
    assert_ne!(body(one), body(scored));
}

/// `--drop-incomplete` keeps its meaning: a question with an unpaired cell is dropped
/// whole (q2, q5, q7), leaving a balanced panel of 5 questions.
#[test]
fn drop_incomplete_still_drops_the_questions() {
    let v = variance(PANEL, &["--drop-incomplete"]);
    let s = &v["strata"][0];
    assert_eq!((&s["questions"], &s["dropped"]), (&5.into(), &3.into()));
    assert!(v["run"].get("unpaired_cells").is_none());
}

/// A command that needs a balanced panel refuses the one left by a dropped cell, and says
/// how to get one; `--failure-score` needs `--contrast`.
#[test]
fn balanced_only_commands_and_bad_flags_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.csv");
    let out = out.to_str().unwrap();
    let slice = |extra: &[&str]| {
        let mut a = vec![
            "slice",
            PANEL,
            "--contrast",
            "adaptive-open",
            "--design",
            "4:2:2",
            "--out",
            out,
        ];
        a.extend_from_slice(extra);
        stats().args(a).assert()
    };
    slice(&[]).code(2).stderr(predicates::str::contains(
        "4 cell(s) of this stratum had one arm only and were dropped (a failure score X scores their missing arm instead)",
    ));
    slice(&["--failure-score", "0"]).success();
    stats()
        .args(["variance", PANEL, "--arm", "open", "--failure-score", "0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "error: --failure-score: scores a contrast's missing arm, so it needs a contrast B-A",
        ));
}
