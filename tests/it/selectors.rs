//! Panels with a `selector` column (issue #11 item 5): one selector's rows, or the selector
//! average per question × trajectory × read cell (the default with several selectors), and
//! `--by selector` reports.
//!
//! The hand panel below has Q = 3 questions, T = 2 trajectories, R = 2 reads and selectors
//! `rrf` and `rr`. Its expected values are the nested ANOVA of docs/METHODS.md computed in
//! exact fractions by a plain-Python script (no numpy here), `python3 anova.py`:
//!
//! ```text
//! from fractions import Fraction as F
//! rrf = [[[1, 1], [0.5, 0]], [[1, 1], [0.5, 1]], [[0, 0], [0, 0]]]     # y[q][t][r]
//! rr  = [[[1, 1], [0.5, 1]], [[0.5, 0.5], [0.5, 0.5]], [[0, 0.5], [0.5, 1]]]
//! def anova(y):
//!     Q, T, R = len(y), len(y[0]), len(y[0][0])
//!     g = sum(F(v) for q in y for t in q for v in t) / (Q*T*R)
//!     qm = [sum(F(v) for t in q for v in t) / (T*R) for q in y]
//!     tm = [[sum(F(v) for v in t) / R for t in q] for q in y]
//!     ssq = T*R*sum((m-g)**2 for m in qm)
//!     sst = R*sum((tm[i][j]-qm[i])**2 for i in range(Q) for j in range(T))
//!     ssr = sum((F(y[i][j][k])-tm[i][j])**2 for i in range(Q) for j in range(T) for k in range(R))
//!     msq, mst, msr = ssq/(Q-1), sst/(Q*(T-1)), ssr/(Q*T*(R-1))
//!     return dict(mean=g, sr=msr, st=(mst-msr)/R, sq=(msq-mst)/(T*R), se2=msq/(Q*T*R))
//! avg = [[[(F(a)+F(b))/2 for a, b in zip(x, z)] for x, z in zip(qa, qb)] for qa, qb in zip(rrf, rr)]
//! ```
//!
//! which prints: rrf mean 1/2, σ²_q 29/192, σ²_t 1/12, σ²_r 1/24, SE² 13/192; rr mean 5/8,
//! σ²_q 1/48, σ²_t 1/48, σ²_r 1/16, SE² 1/64; average mean 9/16, σ²_q 3/64, σ²_t 3/64,
//! σ²_r 1/64, SE² 19/768. The average's read component is below both selectors': the two
//! selectors' read-level noise partly cancels in the cell mean, which is why the selector
//! average is not the same analysis as treating the selectors' rows as extra reads.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;
use ragstats_core::components::variance::{analyse_panel, VarianceReport};
use ragstats_core::panel::{load_panel, LoadOptions, SelectorChoice};

const RRF: [[[f64; 2]; 2]; 3] = [
    [[1.0, 1.0], [0.5, 0.0]],
    [[1.0, 1.0], [0.5, 1.0]],
    [[0.0, 0.0], [0.0, 0.0]],
];
const RR: [[[f64; 2]; 2]; 3] = [
    [[1.0, 1.0], [0.5, 1.0]],
    [[0.5, 0.5], [0.5, 0.5]],
    [[0.0, 0.5], [0.5, 1.0]],
];

/// The hand panel as CSV, the two selectors' rows adjacent per cell (rr first). With
/// `arm = Some((name, base))` its rows are arm `name`, and an arm `base` is added whose
/// score is `base` under rrf and 0 under rr.
fn panel_csv(arm: Option<(&str, f64)>) -> String {
    let mut s = String::from("question,trajectory,read,selector,f1");
    if arm.is_some() {
        s.push_str(",arm");
    }
    s.push('\n');
    for q in 0..3 {
        for t in 0..2 {
            for r in 0..2 {
                for (name, y) in [("rr", RR), ("rrf", RRF)] {
                    s.push_str(&format!("q{q},{t},{r},{name},{}", y[q][t][r]));
                    if let Some((a, _)) = arm {
                        s.push_str(&format!(",{a}"));
                    }
                    s.push('\n');
                }
                // The baseline arm: a constant per selector, so the contrast is known.
                if let Some((_, base)) = arm {
                    s.push_str(&format!("q{q},{t},{r},rrf,{base},base\n"));
                    s.push_str(&format!("q{q},{t},{r},rr,0,base\n"));
                }
            }
        }
    }
    s
}

fn variance(path: &std::path::Path, opts: LoadOptions) -> VarianceReport {
    analyse_panel(&load_panel(path, &opts).unwrap()).unwrap()
}

fn with(selector: Option<SelectorChoice>) -> LoadOptions {
    LoadOptions {
        selector,
        ..LoadOptions::default()
    }
}

/// Asserts a report's mean, SE² and raw components (question, trajectory, read).
fn assert_fit(r: &VarianceReport, mean: f64, se2: f64, comps: [f64; 3]) {
    let s = &r.strata[0];
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() < 1e-12, "{what}: {a} vs {b}");
    close(s.mean, mean, "mean");
    close(s.se * s.se, se2, "SE²");
    let c = &s.fit.components;
    close(c.question, comps[0], "σ²_q");
    close(c.trajectory.unwrap(), comps[1], "σ²_t");
    close(c.read.unwrap(), comps[2], "σ²_r");
}

#[test]
fn each_selector_and_their_average_have_the_hand_computed_components() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "sel.csv", &panel_csv(None));
    let one = |n: &str| with(Some(SelectorChoice::One(n.into())));
    let rrf = variance(&p, one("rrf"));
    assert_fit(
        &rrf,
        0.5,
        13.0 / 192.0,
        [29.0 / 192.0, 1.0 / 12.0, 1.0 / 24.0],
    );
    assert_eq!(rrf.outcome, "f1; selector rrf");
    let rr = variance(&p, one("rr"));
    assert_fit(
        &rr,
        5.0 / 8.0,
        1.0 / 64.0,
        [1.0 / 48.0, 1.0 / 48.0, 1.0 / 16.0],
    );
    let avg = variance(&p, with(Some(SelectorChoice::Average)));
    let want = [3.0 / 64.0, 3.0 / 64.0, 1.0 / 64.0];
    assert_fit(&avg, 9.0 / 16.0, 19.0 / 768.0, want);
    assert_eq!(avg.outcome, "f1; average over selectors rr, rrf");
    // Several selectors and no choice: the average, never the rows as extra reads.
    let default = variance(&p, with(None));
    assert_fit(&default, 9.0 / 16.0, 19.0 / 768.0, want);
    let s = &default.strata[0];
    assert_eq!((s.questions, s.trajectories, s.reads), (3, 2, 2));
}

#[test]
fn the_selector_average_contrast_averages_cells_before_contrasting_arms() {
    let dir = tempfile::tempdir().unwrap();
    // base is 0.5 under rrf and 0 under rr: its selector average is 0.25 in every cell, so
    // the contrast new − base has the average's components and mean 9/16 − 1/4 = 5/16.
    let p = write(&dir, "arms.csv", &panel_csv(Some(("new", 0.5))));
    let opts = LoadOptions {
        contrast: Some("new-base".into()),
        ..LoadOptions::default()
    };
    let r = variance(&p, opts.clone());
    assert_fit(
        &r,
        5.0 / 16.0,
        19.0 / 768.0,
        [3.0 / 64.0, 3.0 / 64.0, 1.0 / 64.0],
    );
    assert_eq!(r.outcome, "f1: new-base; average over selectors rr, rrf");
    // One selector's contrast: rrf − 0.5 has rrf's components and mean 0.
    let r = variance(
        &p,
        LoadOptions {
            selector: Some(SelectorChoice::One("rrf".into())),
            ..opts
        },
    );
    assert_fit(
        &r,
        0.0,
        13.0 / 192.0,
        [29.0 / 192.0, 1.0 / 12.0, 1.0 / 24.0],
    );
}

#[test]
fn a_cell_without_every_selector_is_refused_or_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let text = panel_csv(None);
    // Drop q1, trajectory 0, read 1 of rr (line 12: header, then 2 rows per cell).
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[11], "q1,0,1,rr,0.5");
    let cut: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 11)
        .map(|(_, l)| *l)
        .collect();
    let p = write(&dir, "cut.csv", &(cut.join("\n") + "\n"));
    let e = load_panel(&p, &with(None)).unwrap_err().to_string();
    assert!(
        e.contains("cut.csv:12")
            && e.contains("question=q1, trajectory=0, read=1")
            && e.contains("no row for selector 'rr'"),
        "{e}"
    );
    let panel = load_panel(
        &p,
        &LoadOptions {
            drop_incomplete: true,
            ..with(None)
        },
    )
    .unwrap();
    assert_eq!(panel.strata[0].questions, ["q0", "q2"]);
    assert_eq!(panel.strata[0].dropped, 1);
    assert!(panel.strata[0].dropped_questions[0].contains("no row for selector 'rr'"));
    // One selector alone is complete.
    let panel = load_panel(&p, &with(Some(SelectorChoice::One("rrf".into())))).unwrap();
    assert_eq!(panel.strata[0].q(), 3);
}

#[test]
fn bad_selector_inputs_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "sel.csv", &panel_csv(None));
    let e = load_panel(&p, &with(Some(SelectorChoice::One("mmr".into()))))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown selector 'mmr'") && e.contains("rr, rrf"),
        "{e}"
    );
    let plain = write(&dir, "plain.csv", "question,trajectory,read,f1\nq,0,0,1\n");
    let e = load_panel(&plain, &with(Some(SelectorChoice::Average)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("has none"), "{e}");
    let dup = write(
        &dir,
        "dup.csv",
        "question,trajectory,read,selector,f1\nq,0,0,rr,1\nq,0,0,rrf,1\nq,0,0,rr,0\n",
    );
    let e = load_panel(&dup, &with(None)).unwrap_err().to_string();
    assert!(
        e.contains("dup.csv: duplicates: 1 row")
            && e.contains("line 4 repeats line 2")
            && e.contains("selector=rr"),
        "{e}"
    );
    let empty = write(
        &dir,
        "empty.csv",
        "question,trajectory,read,selector,f1\nq,0,0,rr,1\nq,0,1,,1\n",
    );
    let e = load_panel(&empty, &with(None)).unwrap_err().to_string();
    assert!(
        e.contains("empty.csv:3") && e.contains("empty 'selector'"),
        "{e}"
    );
}

#[test]
fn jsonl_panels_carry_selectors_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for q in 0..3 {
        for t in 0..2 {
            for r in 0..2 {
                for (name, y) in [("rrf", RRF), ("rr", RR)] {
                    text.push_str(&format!(
                        "{{\"question\":\"q{q}\",\"trajectory\":{t},\"read\":{r},\"selector\":\"{name}\",\"f1\":{}}}\n",
                        y[q][t][r]
                    ));
                }
            }
        }
    }
    let p = write(&dir, "sel.jsonl", &text);
    let avg = variance(&p, with(None));
    assert_fit(
        &avg,
        9.0 / 16.0,
        19.0 / 768.0,
        [3.0 / 64.0, 3.0 / 64.0, 1.0 / 64.0],
    );
}

#[test]
fn by_selector_reports_each_selector_then_the_average() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "sel.csv", &panel_csv(None));
    let ps = p.to_str().unwrap();
    let v = json(&["variance", ps, "--by", "selector", "--format", "json"]);
    assert_eq!(v["by"], "selector");
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["selector"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["rr", "rrf", "average"]);
    let read = |i: usize| results[i]["result"]["strata"][0]["components"]["read"].as_f64();
    assert!((read(0).unwrap() - 1.0 / 16.0).abs() < 1e-12);
    assert!((read(1).unwrap() - 1.0 / 24.0).abs() < 1e-12);
    assert!((read(2).unwrap() - 1.0 / 64.0).abs() < 1e-12);
    // The plain run says on stderr that it took the average.
    stats()
        .args(["variance", ps])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "outcome: f1; average over selectors rr, rrf",
        ))
        .stderr(predicate::str::contains(
            "the panel has 2 selectors (rr, rrf); analysing their mean per cell",
        ));
    let out = stats()
        .args(["variance", ps, "--by", "selector", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("selector,scope,questions,"), "{text}");
    // Every section has the same rows (its levels and the combined row), under its name.
    let per: Vec<usize> = ["rr,", "rrf,", "average,"]
        .iter()
        .map(|s| lines[1..].iter().filter(|l| l.starts_with(s)).count())
        .collect();
    assert_eq!(per[0], per[1]);
    assert_eq!(per[0], per[2]);
    assert_eq!(lines.len(), 1 + 3 * per[0]);
    let out = stats()
        .args(["variance", ps, "--by", "selector"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("selector: rr\noutcome: f1; selector rr\n"),
        "{text}"
    );
    assert!(text.contains("\nselector: average\noutcome: f1; average over selectors rr, rrf\n"));
    // --by selector with --selector, or on a panel without selectors, is a usage error.
    stats()
        .args(["variance", ps, "--by", "selector", "--selector", "rr"])
        .assert()
        .code(2);
    stats()
        .args(["variance", "data/demo/panel.csv", "--by", "selector"])
        .args(["--contrast", "adaptive-open"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no 'selector' column"));
}

/// The demo panel with every row given twice, as selectors `rrf` and `rr`.
fn doubled_demo(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string("data/demo/panel.csv").unwrap();
    let mut lines = text.lines();
    let mut out = format!("{},selector\n", lines.next().unwrap());
    for l in lines {
        out.push_str(&format!("{l},rrf\n{l},rr\n"));
    }
    write(dir, "doubled.csv", &out)
}

#[test]
fn identical_selectors_reproduce_the_panel_without_them() {
    // Each selector's rows, and their average, are the demo panel itself: every section of
    // `--by selector` must match the plain run on the demo panel, for the three commands.
    let dir = tempfile::tempdir().unwrap();
    let p = doubled_demo(&dir);
    let ps = p.to_str().unwrap();
    let base = ["--contrast", "adaptive-open", "--format", "json"];
    let fast = ["--replicates", "200", "--backend", "cpu"];
    let cmds: [(&str, Vec<&str>); 3] = [
        ("variance", vec![]),
        ("bootstrap", fast.to_vec()),
        (
            "efficiency",
            [&["--ledger", "data/demo/ledger.jsonl"][..], &fast[..]].concat(),
        ),
    ];
    for (cmd, extra) in cmds {
        let plain = json(&[&[cmd, "data/demo/panel.csv"][..], &base, &extra].concat());
        let by = json(&[&[cmd, ps, "--by", "selector"][..], &base, &extra].concat());
        assert_eq!(by["run"]["seed"], plain["run"]["seed"], "{cmd}");
        let plain = common::body(plain);
        let results = by["results"].as_array().unwrap();
        assert_eq!(results.len(), 3, "{cmd}");
        for r in results {
            let mut got = r["result"].clone();
            let name = r["selector"].as_str().unwrap();
            // Only the outcome differs: it names the selector (the file is in `run.inputs`).
            let outcome = got["outcome"].as_str().map(String::from);
            if let Some(o) = outcome {
                let want = if name == "average" {
                    "f1: adaptive-open; average over selectors rrf, rr".to_string()
                } else {
                    format!("f1: adaptive-open; selector {name}")
                };
                assert_eq!(o, want, "{cmd}");
                got["outcome"] = plain["outcome"].clone();
            }
            assert_eq!(got, plain, "{cmd} --by selector, section {name}");
        }
    }
}

#[test]
fn a_figure_is_refused_where_the_command_would_print_several_analyses() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("f.svg");
    for args in [
        vec!["variance", "data/demo/panel.csv", "--by", "selector"],
        vec![
            "efficiency",
            "data/demo/panel.csv",
            "--ledger",
            "data/demo/ledger.jsonl",
            "--by",
            "selector",
        ],
        vec![
            "efficiency",
            "data/demo/panel.csv",
            "--ledger",
            "data/demo/ledger.jsonl",
            "--prices",
            "data/demo/prices.toml",
            "--currency",
            "tokens,usd",
        ],
    ] {
        stats()
            .args(&args)
            .arg("--plot")
            .arg(&svg)
            .assert()
            .code(2)
            // `--plot draws one analysis: …`, or as a setting's error `--plot: draws …`.
            .stderr(predicate::str::is_match("--plot:? draws one analysis").unwrap());
        assert!(!svg.exists());
    }
}
