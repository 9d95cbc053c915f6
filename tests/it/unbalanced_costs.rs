//! `efficiency`, `allocate` and `plan` on unbalanced audits (issues #12 item 4 and #20): the
//! ledger is matched to each question's own trajectories and reads, unit costs are mean
//! costs per trajectory and per read over the cells that exist, components are `stats
//! variance`'s (REML), and the bootstrap refits them per replicate.

use crate::common::{self, json, stats, write};

/// One stratum `d`, six questions with trajectory labels unique per question (`q1-a`,
/// `q1-b`, …), nominally 2 trajectories x 2 reads, with a missing read (q2-b has read 0
/// only) and a failed trajectory (q3 has q3-a only): 6 questions, 11 trajectories, 21 reads.
/// A question: its id and its trajectories (label, read scores).
type Question = (&'static str, &'static [(&'static str, &'static [f64])]);

const PANEL: &[Question] = &[
    ("q1", &[("q1-a", &[0.61, 0.55]), ("q1-b", &[0.72, 0.70])]),
    ("q2", &[("q2-a", &[0.31, 0.40]), ("q2-b", &[0.22])]),
    ("q3", &[("q3-a", &[0.90, 0.81])]),
    ("q4", &[("q4-a", &[0.45, 0.52]), ("q4-b", &[0.38, 0.30])]),
    ("q5", &[("q5-a", &[0.66, 0.58]), ("q5-b", &[0.81, 0.77])]),
    ("q6", &[("q6-a", &[0.12, 0.25]), ("q6-b", &[0.33, 0.29])]),
];

/// The panel CSV and its ledger: question i's planner call costs 90 + 10 i input + 10 output
/// = 100 + 10 i tokens per trajectory; a read costs 25 + 5 = 30 tokens in q1, 15 + 5 = 20
/// elsewhere.
fn files(dir: &tempfile::TempDir) -> (String, String) {
    let mut csv = String::from("dataset,question,trajectory,read,score\n");
    let mut ledger = String::new();
    for (i, (q, trajs)) in PANEL.iter().enumerate() {
        for (t, reads) in trajs.iter() {
            ledger.push_str(&format!(
                "{{\"kind\":\"planner\",\"dataset\":\"d\",\"question\":\"{q}\",\"trajectory\":\"{t}\",\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":10}}\n",
                100 + 10 * i
            ));
            for (r, v) in reads.iter().enumerate() {
                csv.push_str(&format!("d,{q},{t},{r},{v}\n"));
                ledger.push_str(&format!(
                    "{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"{q}\",\"trajectory\":\"{t}\",\"read\":{r},\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":5}}\n",
                    if *q == "q1" { 25 } else { 15 }
                ));
            }
        }
    }
    let p = write(dir, "panel.csv", &csv);
    let l = write(dir, "ledger.jsonl", &ledger);
    (
        p.to_str().unwrap().to_string(),
        l.to_str().unwrap().to_string(),
    )
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `stats efficiency --format json` with 200 replicates under `--seed 7` unless `extra`
/// gives another.
fn efficiency(panel: &str, ledger: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "efficiency",
        panel,
        "--ledger",
        ledger,
        "--replicates",
        "200",
        "--format",
        "json",
    ];
    if !extra.contains(&"--seed") {
        args.extend(["--seed", "7"]);
    }
    args.extend_from_slice(extra);
    json(&args)
}

/// c_T, c_R and the fixed-T loss by hand; components equal to `stats variance`'s REML fit.
#[test]
fn unit_costs_components_and_fixed_t_loss_of_an_unbalanced_panel() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let v = efficiency(&panel, &ledger, &["--backend", "cpu"]);
    let var = json(&["variance", &panel, "--format", "json"]);
    let s = &v["strata"][0];
    assert_eq!(s["method"], "REML");
    assert_eq!(s["shape"]["trajectories"]["total"], 11);
    assert_eq!(s["shape"]["reads"]["total"], 21);
    assert_eq!(s["shape"]["trajectories"]["min"], 1);
    assert_eq!(s["shape"]["reads"]["min"], 1);
    // Trajectory costs: 2·110 + 2·120 + 1·130 + 2·140 + 2·150 + 2·160 = 1490 over 11
    // trajectories; first reads: 2·30 (q1) + 9·20 = 240 over the 11 trajectories; later
    // reads: 2·30 + 8·20 = 220 over the other 10 reads.
    let (ct, cr1, cr) = (1490.0 / 11.0, 240.0 / 11.0, 22.0);
    assert!((f(&s["unit_costs"]["trajectory"]) - ct).abs() < 1e-12);
    assert!((f(&s["unit_costs"]["first_read"]) - cr1).abs() < 1e-12);
    assert!((f(&s["unit_costs"]["read"]) - cr).abs() < 1e-12);
    let c0 = ct + cr1 - cr;
    // The components are exactly `stats variance`'s.
    let vc = &var["strata"][0]["components"];
    for l in ["question", "trajectory", "read"] {
        assert_eq!(s["components"][l], vc[l], "{l}");
    }
    assert_eq!(var["strata"][0]["method"], "REML");
    // Fixed T at the mean design T̄ = 11/6: J_T(R) = (σ²_q + σ²_t/T̄ + σ²_r/(T̄ R)) T̄ (c₀ +
    // R c_R+), c₀ = c_T + c_R1 − c_R+; the loss is 100 (J_T(1)/min_{R ≤ 10} J_T(R) − 1) and
    // R*_T = sqrt(b c/(a d)) with a = σ²_q + σ²_t/T̄, b = σ²_r/T̄, c = T̄ c₀, d = T̄ c_R+.
    let (sq, st, sr) = (f(&vc["question"]), f(&vc["trajectory"]), f(&vc["read"]));
    assert!(sq > 0.0 && st > 0.0 && sr > 0.0);
    let t = 11.0 / 6.0;
    let j = |r: f64| (sq + st / t + sr / (t * r)) * t * (c0 + r * cr);
    let best = (1..=10).map(|r| j(r as f64)).fold(f64::INFINITY, f64::min);
    let loss = 100.0 * (j(1.0) / best - 1.0);
    let ft = &s["fixed_t"];
    assert!((f(&ft["loss_percent"]) - loss).abs() < 1e-9, "{ft}");
    let (a, b, c, d) = (sq + st / t, sr / t, t * c0, t * cr);
    assert!((f(&ft["r_star"]) - (b * c / (a * d)).sqrt()).abs() < 1e-9);
    // Fixed Q: the budget Q T̄ (c_T + c_R1 + (R̄ − 1) c_R+) is the panel's measured cost
    // 1490 + 240 + 220.
    assert!((f(&s["efficiency"]["budget"]) - 1950.0).abs() < 1e-9);
    // The direct check uses the 10 trajectories with 2 reads: C₁ = their trajectory costs
    // (1490 − 120 for q2-b) + read 0 (2·30 + 8·20), C₂ adds read 1 (another 220).
    let dc = &v["direct"];
    assert!((f(&dc["cost_one_read"]) - (1370.0 + 220.0)).abs() < 1e-9);
    assert!((f(&dc["cost_two_reads"]) - (1370.0 + 440.0)).abs() < 1e-9);
    // Bootstrap intervals exist and contain the point loss (fixed Q).
    let ci = &s["loss_ci"];
    assert!(f(&ci[0]) <= f(&s["efficiency"]["loss_percent"]) + 1e-12);
}

/// The table names the method and the min/mean/max design, and says how the direct check
/// treats trajectories with one read.
#[test]
fn efficiency_table_names_method_design_and_direct_check_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let out = stats()
        .args([
            "efficiency",
            &panel,
            "--ledger",
            &ledger,
            "--replicates",
            "50",
            "--backend",
            "cpu",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("d         6  1/1.83/2  1/1.91/2  135.454545  21.818182  22.000000"),
        "{text}"
    );
    assert!(text.contains("REML"));
    assert!(text.contains("uses every trajectory with both reads a and b"));
}

/// Bootstrap ranges are reproducible by seed, and the CPU and GPU backends give the same
/// output (the refits use the question draw counts, which do not depend on the backend).
#[test]
fn efficiency_bootstrap_is_reproducible_and_cpu_equals_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let a = efficiency(&panel, &ledger, &["--backend", "cpu"]);
    let b = efficiency(&panel, &ledger, &["--backend", "cpu"]);
    assert_eq!(a, b);
    let other = efficiency(&panel, &ledger, &["--backend", "cpu", "--seed", "8"]);
    assert_ne!(a["strata"][0]["loss_ci"], other["strata"][0]["loss_ci"]);
    let out = stats()
        .args([
            "efficiency",
            &panel,
            "--ledger",
            &ledger,
            "--replicates",
            "200",
            "--seed",
            "7",
            "--format",
            "json",
            "--backend",
            "gpu",
        ])
        .output()
        .unwrap();
    if common::gpu_ran(&out) {
        let mut g: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut c = a.clone();
        assert_eq!(
            (&c["run"]["backend"], &g["run"]["backend"]),
            (&"cpu".into(), &"gpu".into())
        );
        // Only the engine's name and adapter differ.
        for v in [&mut g, &mut c] {
            v["run"]["backend"] = serde_json::Value::Null;
            v["run"]["adapter"] = serde_json::Value::Null;
        }
        assert_eq!(c, g);
    }
}

/// A balanced panel whose trajectory labels are unique per question is priced by its own
/// labels: the same numbers as the panel with shared labels (before, its ledger could not
/// be matched).
#[test]
fn balanced_panel_with_unique_labels_is_priced_like_shared_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut shared = String::from("dataset,question,trajectory,read,score\n");
    let mut unique = shared.clone();
    let (mut ls, mut lu) = (String::new(), String::new());
    let mut g = common::XorShift(0x5eed);
    for q in 0..8 {
        for t in 0..2 {
            let tu = format!("{}-{q}", ["x", "y"][t]);
            for (ledger, label) in [(&mut ls, t.to_string()), (&mut lu, tu.clone())] {
                ledger.push_str(&format!(
                    "{{\"kind\":\"planner\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":\"{label}\",\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":1}}\n",
                    50 + q * 3 + t
                ));
                for r in 0..2 {
                    ledger.push_str(&format!(
                        "{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":\"{label}\",\"read\":{r},\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":1}}\n",
                        10 + r
                    ));
                }
            }
            for r in 0..2 {
                let v = 0.1 * q as f64 + 0.3 * g.grid(100);
                shared.push_str(&format!("d,q{q},{t},{r},{v}\n"));
                unique.push_str(&format!("d,q{q},{tu},{r},{v}\n"));
            }
        }
    }
    let ps = write(&dir, "s.csv", &shared);
    let pu = write(&dir, "u.csv", &unique);
    let ls = write(&dir, "s.jsonl", &ls);
    let lu = write(&dir, "u.jsonl", &lu);
    let a = efficiency(
        ps.to_str().unwrap(),
        ls.to_str().unwrap(),
        &["--backend", "cpu"],
    );
    let b = efficiency(
        pu.to_str().unwrap(),
        lu.to_str().unwrap(),
        &["--backend", "cpu"],
    );
    // The envelopes name different files; the reports are the same.
    let (a, b) = (common::body(a), common::body(b));
    assert_eq!(a, b);
    // Balanced: no method or shape fields (the output is as before).
    assert!(a["strata"][0].get("method").is_none());
    assert!(a.get("unbalanced").is_none());
}

/// Allocations on an unbalanced master panel: each question's first T trajectories and
/// first R reads; a question with fewer keeps what it has and is counted.
#[test]
fn allocate_takes_each_questions_first_trajectories_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let prices = write(
        &dir,
        "prices.toml",
        "[models.\"m\"]\ninput = 1.0\ncached_input = 0.5\noutput = 2.0\n\n[search]\nusd_per_1000 = 0.5\n",
    );
    let v = json(&[
        "allocate",
        &panel,
        "--ledger",
        &ledger,
        "--prices",
        prices.to_str().unwrap(),
        "--allocation",
        "A=6:1:2",
        "--allocation",
        "B=6:2:1",
        "--replicates",
        "100",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    // A: first trajectory (label order: -a before -b), both reads: question means 0.58,
    // 0.355, 0.855, 0.485, 0.62, 0.185. B: read 0 of each trajectory: 0.665, 0.265, 0.90
    // (q3 has one trajectory: short), 0.415, 0.735, 0.225.
    let check = |i: usize, means: [f64; 6], tokens: f64, short: u64| {
        let a = &v["allocations"][i];
        let m = means.iter().sum::<f64>() / 6.0;
        let s2 = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 5.0 / 6.0;
        assert!((f(&a["estimate"]) - m).abs() < 1e-12, "{a}");
        assert!((f(&a["se"]) - s2.sqrt()).abs() < 1e-12, "{a}");
        assert!((f(&a["model_tokens"]) - tokens).abs() < 1e-9, "{a}");
        assert_eq!(a["short"][0][1], short);
    };
    // Tokens A: trajectories 110 + … + 160 = 810, reads 2·30 + 5·2·20 = 260.
    check(0, [0.58, 0.355, 0.855, 0.485, 0.62, 0.185], 1070.0, 0);
    // Tokens B: trajectories 1490, reads 2·30 + 9·20 = 240.
    check(1, [0.665, 0.265, 0.90, 0.415, 0.735, 0.225], 1730.0, 1);
    assert_eq!(v["master_design"][0]["shape"]["trajectories"]["total"], 11);
}

/// `plan` prices an unbalanced audit from the ledger and gives its bootstrap interval,
/// reproducibly.
#[test]
fn plan_on_an_unbalanced_audit_has_ledger_costs_and_an_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let run = |seed: &str| {
        json(&[
            "plan",
            "--audit",
            &panel,
            "--ledger",
            &ledger,
            "--target-se",
            "0.05",
            "--replicates",
            "200",
            "--seed",
            seed,
            "--backend",
            "cpu",
            "--format",
            "json",
        ])
    };
    let v = run("3");
    let c = &v["strata"][0]["costs"];
    assert!((f(&c["trajectory"]) - 1490.0 / 11.0).abs() < 1e-12);
    assert!((f(&c["first_read"]) - 240.0 / 11.0).abs() < 1e-12);
    assert!((f(&c["read"]) - 22.0).abs() < 1e-12);
    let iv = &v["bootstrap"][0];
    assert_eq!(v["run"]["replicates"], 200);
    assert_eq!(f(&iv["estimate"]), f(&v["allocations"][0]["questions"]));
    assert!(f(&iv["ci"][0]) <= f(&iv["estimate"]) && f(&iv["estimate"]) <= f(&iv["ci"][1]));
    assert_eq!(v, run("3"));
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .contains("d: REML, Q = 6, T = 1/1.83/2, R = 1/1.91/2")));
}

/// A panel with a balanced and an unbalanced stratum: each stratum's components are `stats
/// variance`'s (ANOVA for the balanced one, REML for the other), as is the pooled REML fit,
/// and the balanced stratum's unit costs are its plain Σ/(QT) and Σ/(QTR).
#[test]
fn mixed_panel_takes_each_strata_method_from_variance() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("dataset,question,trajectory,read,score\n");
    let mut ledger = String::new();
    let mut g = common::XorShift(0xC0FFEE);
    for (d, unbalanced) in [("bal", false), ("unb", true)] {
        for q in 0..7 {
            // In the unbalanced stratum, question 0 lost its trajectory 2 and question 3 a read.
            let ts = if unbalanced && q == 0 { 2 } else { 3 };
            for t in 0..ts {
                ledger.push_str(&format!(
                    "{{\"kind\":\"planner\",\"dataset\":\"{d}\",\"question\":\"{q}\",\"trajectory\":{t},\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":0}}\n",
                    40 + 2 * q + t
                ));
                let rs = if unbalanced && q == 3 && t == 1 { 1 } else { 2 };
                for r in 0..rs {
                    let v = 0.05 * q as f64 + 0.1 * g.grid(50) + 0.2 * g.grid(20);
                    csv.push_str(&format!("{d},{q},{t},{r},{v}\n"));
                    ledger.push_str(&format!(
                        "{{\"kind\":\"reader\",\"dataset\":\"{d}\",\"question\":\"{q}\",\"trajectory\":{t},\"read\":{r},\"model\":\"m\",\"input_tokens\":{},\"output_tokens\":0}}\n",
                        7 + r + q
                    ));
                }
            }
        }
    }
    let p = write(&dir, "mixed.csv", &csv);
    let l = write(&dir, "mixed.jsonl", &ledger);
    let (p, l) = (p.to_str().unwrap(), l.to_str().unwrap());
    let v = efficiency(p, l, &["--backend", "cpu"]);
    let var = json(&["variance", p, "--format", "json"]);
    for (i, method) in [(0, "ANOVA"), (1, "REML")] {
        let s = &v["strata"][i];
        assert_eq!(s["method"], method);
        assert_eq!(var["strata"][i]["method"], method);
        assert_eq!(s["components"], var["strata"][i]["components"], "{i}");
    }
    assert_eq!(v["pooled"]["components"], var["pooled"]["components"]);
    // Balanced stratum: planner costs Σ_q Σ_t (40 + 2q + t) = 3·Σ_q (40 + 2q) + 7·(0 + 1 + 2)
    // = 3·322 + 21 = 987 over 21 trajectories = 47; first reads Σ_q 3 (7 + q) = 210 over
    // 21 = 10, later reads Σ_q 3 (8 + q) = 231 over 21 = 11.
    let c = &v["strata"][0]["unit_costs"];
    assert!((f(&c["trajectory"]) - 47.0).abs() < 1e-12, "{c}");
    assert!((f(&c["first_read"]) - 10.0).abs() < 1e-12, "{c}");
    assert!((f(&c["read"]) - 11.0).abs() < 1e-12, "{c}");
}

/// `stats report` on an unbalanced panel with its ledger has the efficiency figure, and it is
/// the one `stats efficiency --plot` draws from the same replicates (REML refits, each
/// question's own cells' costs).
#[test]
fn report_of_an_unbalanced_panel_has_the_efficiency_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (panel, ledger) = files(&dir);
    let html = dir.path().join("report.html");
    let plot = dir.path().join("eff.svg");
    stats()
        .args(["report", &panel, "--ledger", &ledger])
        .args(["--replicates", "200", "--seed", "7", "--out"])
        .arg(&html)
        .assert()
        .success();
    stats()
        .args(["efficiency", &panel, "--ledger", &ledger])
        .args(["--replicates", "200", "--seed", "7", "--plot"])
        .arg(&plot)
        .assert()
        .success();
    let html = std::fs::read_to_string(&html).unwrap();
    let svg = std::fs::read_to_string(&plot).unwrap().replacen(
        r#" xmlns="http://www.w3.org/2000/svg""#,
        "",
        1,
    );
    let start = html
        .find("<figure id=\"fig-efficiency\">\n")
        .expect("the report has the efficiency figure");
    let inline = &html[start..];
    let inline = &inline[inline.find("<svg").unwrap()..];
    let inline = &inline[..inline.find("</figure>").unwrap()];
    assert_eq!(inline, svg);
    // The combined fixed-T loss in its table is the command's.
    let v = efficiency(&panel, &ledger, &[]);
    let loss = f(&v["combined"]["fixed_t"]["loss_percent"]);
    assert!(html.contains(&format!("<td>{loss:.2}</td>")), "{loss:.2}");
}
