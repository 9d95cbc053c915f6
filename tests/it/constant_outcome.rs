//! Issue #30 item 7: an outcome that does not vary has variance components of 0, so every
//! component share is 0/0. `stats variance` printed 0.000000 for them; it now says
//! `undefined (the outcome does not vary)` in the table, leaves the CSV cells empty, and
//! gives `null` with the reason in JSON, as `efficiency` does for its 0/0 losses. Its
//! figures draw no share bars and no axis below 0 (the SE axis went to −1).

use std::path::PathBuf;

use serde_json::Value;

use crate::support::cli::{run_ok, stats};

/// Two strata, 4 questions x T = 2 x R = 2, every f1 0.5.
fn constant_panel(dir: &tempfile::TempDir) -> PathBuf {
    let mut s = String::from("dataset,question,trajectory,read,f1\n");
    for d in ["hotpotqa", "musique"] {
        for q in 0..4 {
            for t in 0..2 {
                for r in 0..2 {
                    s.push_str(&format!("{d},{d}-q{q},{t},{r},0.5\n"));
                }
            }
        }
    }
    let p = dir.path().join("constant.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn variance(p: &PathBuf, format: &str) -> String {
    run_ok(stats().arg("variance").arg(p).args(["--format", format]))
}

#[test]
fn variance_says_the_shares_are_undefined_in_text_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let p = constant_panel(&dir);

    let t = variance(&p, "table");
    let share_rows: Vec<Vec<&str>> = t
        .lines()
        .filter(|l| {
            ["question", "trajectory", "read"].contains(&l.split_whitespace().nth(1).unwrap_or(""))
        })
        .map(|l| l.split_whitespace().collect())
        .collect();
    // 2 strata and the pooled fit, 3 levels each: scope level MS df component share share.
    assert_eq!(share_rows.len(), 9, "{t}");
    for r in &share_rows {
        assert_eq!(r[4], "0.000000", "{t}");
        let want_se2 = if r[0] == "pooled" { "-" } else { "undefined" };
        assert_eq!(&r[5..], ["undefined", want_se2], "{t}");
    }
    assert!(!t.contains("NaN"), "{t}");
    assert!(
        t.contains("  hotpotqa shares: undefined (the outcome does not vary)\n")
            && t.contains("  musique shares: undefined (the outcome does not vary)\n")
            && t.contains(
                "  pooled shares: undefined (the outcome does not vary within any stratum)\n"
            ),
        "{t}"
    );

    let csv = variance(&p, "csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (single, se2) = (
        header.iter().position(|h| *h == "share_single").unwrap(),
        header.iter().position(|h| *h == "share_se2").unwrap(),
    );
    let mut n = 0;
    for row in lines.filter(|l| !l.starts_with("combined")) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!((cells[single], cells[se2]), ("", ""), "{row}");
        n += 1;
    }
    assert_eq!(n, 9, "{csv}");

    let v: Value = serde_json::from_str(&variance(&p, "json")).unwrap();
    for s in v["strata"].as_array().unwrap() {
        assert!(
            s["share_single"].is_null() && s["share_se2"].is_null(),
            "{s}"
        );
        assert_eq!(s["undefined"]["share_single"], "the outcome does not vary");
        assert_eq!(s["undefined"]["share_se2"], "the outcome does not vary");
        assert_eq!(s["se"], 0.0);
    }
    assert!(v["pooled"]["share_single"].is_null());
    assert_eq!(
        v["pooled"]["undefined"]["share_single"],
        "the outcome does not vary within any stratum"
    );
}

/// The `figure-data` attribute `name` of the first figure of `svg`.
fn data_attr(svg: &str, name: &str) -> String {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .find(|n| n.attribute("class") == Some("figure-data"))
        .and_then(|n| n.attribute(name))
        .unwrap_or_else(|| panic!("no {name}"))
        .to_string()
}

#[test]
fn figures_of_a_constant_outcome_draw_no_shares_and_no_negative_axis() {
    let dir = tempfile::tempdir().unwrap();
    let p = constant_panel(&dir);
    let svg = dir.path().join("v.svg");
    run_ok(stats().arg("variance").arg(&p).arg("--plot").arg(&svg));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(data_attr(&text, "data-y-range"), "0 1");
    assert_eq!(
        data_attr(&text, "data-groups"),
        "hotpotqa: undefined|musique: undefined|pooled: undefined|hotpotqa (SE²): undefined|musique (SE²): undefined"
    );
    assert!(!text.contains("class=\"bar\""), "no share bar is drawn");

    // Every SE is 0: the SE axis starts at 0 (it was [-1, 1]).
    let svg = dir.path().join("f.svg");
    run_ok(
        stats()
            .args(["forecast", "--audit"])
            .arg(&p)
            .args(["--design", "8:2:2", "--design", "16:1:1", "--plot"])
            .arg(&svg),
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(data_attr(&text, "data-y-range"), "0 1");
}
