//! `stats forecast --measured DESIGN=PANEL`: each measured panel is compared with its own
//! design only, after checking that it has that design.

use crate::common;

use common::{json, stats};
use predicates::prelude::*;

const DEMO: &str = "data/demo/panel.csv";

#[test]
fn measured_panel_is_compared_with_its_own_design_only() {
    let v = json(&[
        "forecast",
        "--audit",
        DEMO,
        "--contrast",
        "adaptive-open",
        "--design",
        "446:2:1",
        "--design",
        "446:3:5",
        "--measured",
        "446:3:5=data/demo/panel.csv",
        "--format",
        "json",
    ]);
    let d = &v["designs"];
    // 446:2:1 has no measured panel: nothing is compared with it.
    assert!(d[0].get("se_measured").is_none());
    assert!(d[0].get("rel_error_nested").is_none());
    // The audit's own design: the Q-only forecast is the measured SE, so its error is 0, and
    // the nested error is the nested forecast over the measured SE, minus 1.
    let m = d[1]["se_measured"].as_f64().unwrap();
    assert!((d[1]["se_q_only"].as_f64().unwrap() - m).abs() < 1e-15);
    assert!(d[1]["rel_error_q_only"].as_f64().unwrap().abs() < 1e-12);
    let want = d[1]["se_nested"].as_f64().unwrap() / m - 1.0;
    assert!((d[1]["rel_error_nested"].as_f64().unwrap() - want).abs() < 1e-12);
    assert_eq!(d[1]["measured_panel"], DEMO);
    // The measured SE is the one `stats variance` prints.
    let var = json(&[
        "variance",
        DEMO,
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    assert_eq!(d[1]["se_measured"], var["se"]);
    // Table: the row without a measured panel shows dashes.
    stats()
        .args([
            "forecast",
            "--audit",
            DEMO,
            "--contrast",
            "adaptive-open",
            "--design",
            "446:2:1",
            "--design",
            "446:3:5",
            "--measured",
            DEMO,
        ])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"446:2:1 .* -\s+-\s+-\n").unwrap())
        .stdout(predicate::str::contains("+0.0%\n"));
}

#[test]
fn a_measured_panel_of_another_design_is_refused() {
    let run = |measured: &str, needle: &str| {
        stats()
            .args([
                "forecast",
                "--audit",
                DEMO,
                "--contrast",
                "adaptive-open",
                "--design",
                "446:2:1",
                "--measured",
                measured,
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    };
    run(
        "446:2:1=data/demo/panel.csv",
        "the panel data/demo/panel.csv has design hotpotqa=223,musique=223:3:5, not 446:2:1 (hotpotqa=223,musique=223:2:1)",
    );
    run(
        DEMO,
        "has design hotpotqa=223,musique=223:3:5, which none of the designs forecast has",
    );
    run(
        "hotpotqa=223,musique=223:3:5=data/demo/panel.csv",
        "no design hotpotqa=223,musique=223:3:5 among the designs forecast to compare with",
    );
}
