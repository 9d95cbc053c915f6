//! Issue #31, items 2, 3, 6 and 10a: two-part read costs (first read of a packet billed in
//! full, later reads cached), every billed row of the panel's questions counted, a cost per
//! question, and the direct check over every pair of reads.

use crate::common;

use common::{json, stats};

const DEMO: [&str; 10] = [
    "efficiency",
    "data/demo/panel.csv",
    "--contrast",
    "adaptive-open",
    "--ledger",
    "data/demo/ledger.jsonl",
    "--replicates",
    "50",
    "--backend",
    "cpu",
];

fn close(a: &serde_json::Value, b: f64, tol: f64) {
    let a = a.as_f64().unwrap_or(f64::NAN);
    assert!((a - b).abs() <= tol, "{a} vs {b}");
}

/// The demo in dollars, against tests/reference/two_part_costs.py (numpy, from the formulas):
///
/// ```text
/// $ /work/venv-cost/bin/python tests/reference/two_part_costs.py data/demo/panel.csv data/demo/ledger.jsonl
/// hotpotqa: c_T 0.006592 c_R1 0.004645 c_R+ 0.001360; fixed-Q best R 3, loss 4.155754%
/// musique: c_T 0.006578 c_R1 0.004608 c_R+ 0.001350; fixed-Q best R 4, loss 4.612419%
/// combined fixed-T J_T(1)/J_T(2) = 0.952516
/// direct check over 10 pairs: 0.951725
/// billed total of the panel's questions 22.254886 vs Q T (c_T + c_R1 + (R-1) c_R+) 22.254886
/// ```
///
/// (With one average read price the fixed-Q losses were 1.76% / 2.09% and J_T(1)/J_T(2)
/// 0.865, far from the direct check.)
#[test]
fn demo_usd_losses_with_two_part_read_costs_match_numpy() {
    let d = json(
        &[
            &DEMO[..],
            &[
                "--currency",
                "usd",
                "--prices",
                "data/demo/prices.toml",
                "--format",
                "json",
            ],
        ]
        .concat(),
    );
    let s = &d["strata"];
    close(&s[0]["unit_costs"]["trajectory"], 0.006592, 5e-7);
    close(&s[0]["unit_costs"]["first_read"], 0.004645, 5e-7);
    close(&s[0]["unit_costs"]["read"], 0.001360, 5e-7);
    close(&s[1]["unit_costs"]["first_read"], 0.004608, 5e-7);
    close(&s[0]["efficiency"]["loss_percent"], 4.155754, 5e-6);
    close(&s[1]["efficiency"]["loss_percent"], 4.612419, 5e-6);
    assert_eq!(s[0]["efficiency"]["r_best"], 3);
    assert_eq!(s[1]["efficiency"]["r_best"], 4);
    let p = &d["combined"]["product"];
    let f = |k: &str| p[k].as_f64().unwrap();
    let j = |r: f64| (f("a") + f("b") / r) * (f("c") + f("d") * r);
    assert!(
        (j(1.0) / j(2.0) - 0.952516).abs() < 5e-7,
        "{}",
        j(1.0) / j(2.0)
    );
    close(&d["direct"]["ratio"], 0.951725, 5e-7);
    assert_eq!(d["direct"]["pairs"].as_array().unwrap().len(), 10);
    assert_eq!(d["direct"]["pairs"][2]["reads"], serde_json::json!([1, 2]));
    close(&d["pooled"]["efficiency"]["budget"], 22.254886, 5e-7);
    assert_eq!(d["absent_rows"], 0);
}

/// Item 3: a failed planner call (trajectory 9 of hotpotqa-0001, which the panel lacks) is
/// billed. The pooled fixed-Q budget Q T̄ (c_T + c_R1 + (R̄ − 1) c_R+) equals `stats cost`'s
/// total tokens of the ledger (every question of the demo ledger is in the panel), with the
/// injected row counted as one row of a cell the panel lacks; without it both drop by its
/// 1,000 + 200 tokens.
#[test]
fn a_failed_planner_call_is_billed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string("data/demo/ledger.jsonl").unwrap();
    let failed = r#"{"kind":"planner","dataset":"hotpotqa","question":"hotpotqa-0001","arm":"open","trajectory":9,"step":0,"model":"deepseek-v4.1-flash","input_tokens":1000,"cached_input_tokens":0,"output_tokens":200}"#;
    let ledger = common::write(&dir, "ledger.jsonl", &format!("{demo}{failed}\n"));
    let ledger = ledger.to_str().unwrap();
    let total = |ledger: &str| {
        let c = json(&["cost", ledger, "--format", "json"]);
        c["total"]["model_tokens"].as_f64().unwrap()
    };
    let eff = |ledger: &str| {
        let mut args = DEMO.to_vec();
        args[5] = ledger;
        json(&[&args[..], &["--format", "json"]].concat())
    };
    let with = eff(ledger);
    let without = eff("data/demo/ledger.jsonl");
    let billed = total(ledger);
    assert_eq!(billed, total("data/demo/ledger.jsonl") + 1200.0);
    close(
        &with["pooled"]["efficiency"]["budget"],
        billed,
        1e-6 * billed,
    );
    close(
        &without["pooled"]["efficiency"]["budget"],
        billed - 1200.0,
        1e-6 * billed,
    );
    assert_eq!(with["absent_rows"], 1);
    assert_eq!(without["absent_rows"], 0);
    // The stratum's c_T carries it: 1,200 more tokens over its 223 × 3 trajectories.
    let ct = |d: &serde_json::Value| d["strata"][0]["unit_costs"]["trajectory"].as_f64().unwrap();
    assert!((ct(&with) - ct(&without) - 1200.0 / 669.0).abs() < 1e-6);
    let text = stats().args(DEMO).output().unwrap();
    assert!(text.status.success());
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("0 row(s) belong to cells the panel lacks"),
        "{out}"
    );
    assert!(out.contains("central 95% bootstrap range"), "{out}");
}

/// Item 6: `--question-cost` enters the fixed-T loss (c = T c₀ + c_Q) and not the fixed-Q
/// one, and `plan` prices it into every question: with --unit-costs 1,0 and components
/// σ²_q = 0.01, σ²_t = 0.04, σ²_r = 0 (reads free and useless: R = 1) a target SE 0.001 costs (T + c_Q)·⌈v/1e-6⌉,
/// v = 0.01 + 0.04/T; T* = 1 without a question cost and T* = 2 sqrt(c_Q) = 4 with c_Q = 4
/// (cost 20,000 × 8 = 160,000; see planner's `a_question_cost_moves_t_star` for the
/// neighbours).
#[test]
fn a_question_cost_moves_the_plan_and_the_fixed_t_loss() {
    let dir = tempfile::tempdir().unwrap();
    let comps = common::write(
        &dir,
        "components.json",
        r#"{"strata":[{"name":"all","questions":200,"trajectories":2,"reads":2,"se":0.01,
            "components":{"question":0.01,"trajectory":0.04,"read":0.0}}]}"#,
    );
    let plan = |extra: &[&str]| {
        let mut a = vec![
            "plan",
            "--components",
            comps.to_str().unwrap(),
            "--unit-costs",
            "1,0",
            "--target-se",
            "0.001",
            "--max-questions",
            "1000000",
            "--format",
            "json",
        ];
        a.extend(extra);
        let out = stats().args(&a).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, out, err) = plan(&[]);
    assert!(ok, "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    let best = &d["allocations"][0];
    assert_eq!(
        (&best["trajectories"], &best["questions"]),
        (&serde_json::json!(1), &serde_json::json!(50000))
    );
    let (ok, out, err) = plan(&["--question-cost", "4"]);
    assert!(ok, "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    let best = &d["allocations"][0];
    assert_eq!(best["trajectories"], 4);
    close(&best["cost"], 160_000.0, 1e-6);
    let notes = d["notes"].to_string();
    assert!(
        notes.contains("more trajectories (4) than the audit (2)"),
        "{notes}"
    );

    // efficiency: c_Q raises R*_T by sqrt((T c₀ + c_Q)/(T c₀)) and leaves fixed Q alone.
    let base = json(&[&DEMO[..], &["--format", "json"]].concat());
    let with = json(&[&DEMO[..], &["--question-cost", "50000", "--format", "json"]].concat());
    let s0 = &base["strata"][0];
    let s1 = &with["strata"][0];
    for k in ["loss_percent", "r_best", "r_star", "t_best"] {
        assert_eq!(s0["efficiency"][k], s1["efficiency"][k], "{k}");
    }
    // Only the budget moves: by Q c_Q = 223 × 50,000.
    close(
        &s1["efficiency"]["budget"],
        s0["efficiency"]["budget"].as_f64().unwrap() + 223.0 * 50000.0,
        1e-6,
    );
    let u = &s0["unit_costs"];
    let c0 = u["trajectory"].as_f64().unwrap() + u["first_read"].as_f64().unwrap()
        - u["read"].as_f64().unwrap();
    let ratio = ((3.0 * c0 + 50000.0) / (3.0 * c0)).sqrt();
    let r0 = s0["fixed_t"]["r_star"].as_f64().unwrap();
    close(&s1["fixed_t"]["r_star"], r0 * ratio, 1e-9 * r0 * ratio);
    assert_eq!(s1["unit_costs"]["question"], 50000.0);
}

/// Item 6: a stratum with fewer than 30 questions is said to make the normal approximation
/// rough, in `efficiency` (JSON `warnings`, text `warning:` lines) and in `plan`'s notes.
#[test]
fn small_strata_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let mut panel = String::from("dataset,question,trajectory,read,score\n");
    let mut ledger = String::new();
    let mut x = common::XorShift(0x31);
    for q in 0..6 {
        for t in 0..2 {
            ledger.push_str(&format!("{{\"kind\":\"planner\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":{t},\"model\":\"m\",\"input_tokens\":100,\"output_tokens\":0}}\n"));
            for r in 0..2 {
                let y = 0.1 * q as f64 + 0.3 * x.grid(100);
                panel.push_str(&format!("d,q{q},{t},{r},{y:.4}\n"));
                ledger.push_str(&format!("{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q{q}\",\"trajectory\":{t},\"read\":{r},\"model\":\"m\",\"input_tokens\":50,\"output_tokens\":0}}\n"));
            }
        }
    }
    let p = common::write(&dir, "p.csv", &panel);
    let l = common::write(&dir, "l.jsonl", &ledger);
    let (p, l) = (p.to_str().unwrap(), l.to_str().unwrap());
    let base = [
        "efficiency",
        p,
        "--ledger",
        l,
        "--replicates",
        "20",
        "--backend",
        "cpu",
    ];
    let v = json(&[&base[..], &["--format", "json"]].concat());
    let w = v["warnings"].to_string();
    assert!(w.contains("d: 6 questions (fewer than 30)"), "{w}");
    let out = stats().args(base).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning: d: 6 questions (fewer than 30), so the normal approximation"),
        "{text}"
    );
    let plan = json(&[
        "plan",
        "--audit",
        p,
        "--ledger",
        l,
        "--target-se",
        "0.05",
        "--replicates",
        "20",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let notes = plan["notes"].to_string();
    assert!(
        notes.contains("stratum 'd' has 6 audit questions (fewer than 30)"),
        "{notes}"
    );
}

/// Item 6 in `allocate`: `--question-cost TOKENS,USD` adds Q·c_Q to each allocation's tokens
/// and fees and leaves its SE alone.
#[test]
fn allocate_prices_a_question_cost_into_every_allocation() {
    let base = [
        "allocate",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--prices",
        "data/demo/prices.toml",
        "--allocation",
        "A=446:1:1",
        "--allocation",
        "B=200:3:5",
        "--replicates",
        "20",
        "--backend",
        "cpu",
        "--format",
        "json",
    ];
    let a = json(&base);
    let b = json(&[&base[..], &["--question-cost", "1000,0.002"]].concat());
    for (x, y) in a["allocations"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["allocations"].as_array().unwrap())
    {
        let q = x["questions"].as_f64().unwrap();
        close(
            &y["model_tokens"],
            x["model_tokens"].as_f64().unwrap() + 1000.0 * q,
            1e-6,
        );
        close(
            &y["fees_usd"][0],
            x["fees_usd"][0].as_f64().unwrap() + 0.002 * q,
            1e-9,
        );
        assert_eq!(x["se"], y["se"]);
    }
}
