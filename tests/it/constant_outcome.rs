//! Issue #30 item 7: an outcome that does not vary has variance components of 0, so every
//! component share is 0/0. `stats variance` printed 0.000000 for them; it now says
//! `undefined (the outcome does not vary)` in the table, leaves the CSV cells empty, and
//! gives `null` with the reason in JSON, as `efficiency` does for its 0/0 losses. Its
//! figures draw no share bars and no axis below 0 (the SE axis went to −1).

use std::path::PathBuf;

use serde_json::{json, Value};

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

/// Issue #51 item 9: what `NO_SPREAD_NOTE` in ragstats-core says, word for word.
const NO_SPREAD: &str = "the outcome does not vary between questions (e.g. every value is the same), so every bootstrap replicate equals the estimate: an SE of 0 and a zero-width interval say nothing about precision";

/// Two arms (a, b) scoring 0 everywhere: 2 strata x 4 questions x T = 2 x R = 2 (as a run
/// whose every answer was refused), with a ledger (a 100 + 10 token planner call per
/// trajectory, a 50 + 5 token reader call per read, both arms) and prices for its model.
fn zero_panel(dir: &tempfile::TempDir) -> (PathBuf, PathBuf, PathBuf) {
    let mut panel = String::from("dataset,question,trajectory,read,arm,f1\n");
    let mut ledger = String::new();
    for d in ["hotpotqa", "musique"] {
        for q in 0..4 {
            for arm in ["a", "b"] {
                for t in 0..2 {
                    ledger.push_str(&format!(
                        "{{\"kind\":\"planner\",\"dataset\":\"{d}\",\"question\":\"{d}-q{q}\",\"arm\":\"{arm}\",\"trajectory\":{t},\"model\":\"m\",\"input_tokens\":100,\"output_tokens\":10}}\n"
                    ));
                    for r in 0..2 {
                        panel.push_str(&format!("{d},{d}-q{q},{t},{r},{arm},0\n"));
                        ledger.push_str(&format!(
                            "{{\"kind\":\"reader\",\"dataset\":\"{d}\",\"question\":\"{d}-q{q}\",\"arm\":\"{arm}\",\"trajectory\":{t},\"read\":{r},\"model\":\"m\",\"input_tokens\":50,\"output_tokens\":5}}\n"
                        ));
                    }
                }
            }
        }
    }
    let p = dir.path().join("zero.csv");
    let l = dir.path().join("zero.jsonl");
    let prices = dir.path().join("prices.toml");
    std::fs::write(&p, panel).unwrap();
    std::fs::write(&l, ledger).unwrap();
    std::fs::write(
        &prices,
        "[models.m]\ninput = 1.0\noutput = 2.0\n\n[search]\nusd_per_1000 = 0.5\n",
    )
    .unwrap();
    (p, l, prices)
}

/// Runs `stats ARGS` in text, JSON and CSV and checks that each says [`NO_SPREAD`]: a
/// `note:` line in the text, the JSON body's `field` (`notes` or `warnings`) holding it, and
/// a `note:` line on stderr beside the CSV. Returns the JSON document.
fn says_no_spread(args: &[&str], field: &str) -> Value {
    let run = |format: &str| {
        let out = stats()
            .args(args)
            .args(["--replicates", "50", "--backend", "cpu", "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} {format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (text, _) = run("table");
    let line = if field == "warnings" {
        format!("warning: {NO_SPREAD}\n")
    } else {
        format!("note: {NO_SPREAD}\n")
    };
    assert!(text.contains(&line), "{args:?}:\n{text}");
    assert!(!text.contains("NaN"), "{args:?}:\n{text}");
    let (json, _) = run("json");
    let v: Value = serde_json::from_str(&json).unwrap();
    let notes = v[field]
        .as_array()
        .unwrap_or_else(|| panic!("{args:?}: {v}"));
    assert_eq!(notes[0], NO_SPREAD, "{args:?}");
    let (_, err) = run("csv");
    assert!(
        err.contains(&format!("note: {NO_SPREAD}")),
        "{args:?}: {err}"
    );
    v
}

#[test]
fn every_resampling_command_says_a_constant_outcome_has_no_interval_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let (p, l, prices) = zero_panel(&dir);
    let (p, l, prices) = (
        p.to_str().unwrap(),
        l.to_str().unwrap(),
        prices.to_str().unwrap(),
    );

    // bootstrap: one arm's all-zero panel; the estimate, its SE and interval are 0.
    let v = says_no_spread(&["bootstrap", p, "--arm", "a"], "notes");
    assert_eq!(
        (&v["estimate"], &v["se"], &v["ci"]),
        (&json!(0.0), &json!(0.0), &json!([0.0, 0.0]))
    );
    // compare: both systems constant, so every pair's SE is 0.
    let v = says_no_spread(&["compare", p], "notes");
    assert_eq!(v["pairs"][0]["se"], json!(0.0));
    // efficiency: the paired contrast of two constant arms, priced from the ledger.
    says_no_spread(
        &["efficiency", p, "--contrast", "b-a", "--ledger", l],
        "warnings",
    );
    // allocate: two nested allocations of the constant master panel.
    let v = says_no_spread(
        &[
            "allocate",
            p,
            "--contrast",
            "b-a",
            "--ledger",
            l,
            "--prices",
            prices,
            "--allocation",
            "A=8:2:1",
            "--allocation",
            "B=4:2:2",
        ],
        "notes",
    );
    assert_eq!(v["allocations"][0]["se"], json!(0.0));
    // subsets: the panel is its own depth panel and audit.
    says_no_spread(&["subsets", p, "--contrast", "b-a", "--audit", p], "notes");
    // plan: a given design's SE and its bootstrap interval from the constant audit.
    says_no_spread(
        &[
            "plan",
            "--audit",
            p,
            "--contrast",
            "b-a",
            "--questions",
            "8",
            "--trajectories",
            "2",
            "--reads",
            "1",
        ],
        "notes",
    );
}

/// A panel whose outcome varies has no such note (the demo panel's contrast).
#[test]
fn a_varying_outcome_has_no_constant_note() {
    let out = run_ok(stats().args([
        "bootstrap",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--replicates",
        "20",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("notes").is_none(), "{v}");
}
