//! Unbalanced panels (issue #12): nested labels, loading unbalanced strata, `--drop-incomplete`
//! reports, and `stats variance` by REML pinned to lme4.

mod common;

use common::{stats, write, XorShift};
use predicates::prelude::*;
use ragstats::panel::{load_panel, LoadOptions};

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
