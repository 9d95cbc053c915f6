//! `stats plan` against exhaustive searches written here, the normal power formula, and
//! (ignored, run by name) simulated panels at the planned allocation.

use crate::common;

use common::{json, stats, write};
use ragstats_core::allocation::efficiency::UnitCosts;
use ragstats_core::allocation::planner::{mde_multiplier, Bounds, Goal, PlanStratum, Planner};
use ragstats_core::components::forecast::split_questions;
use ragstats_core::components::variance::PerLevel;

/// A components file (as `stats variance --format json` writes) with one stratum per
/// (name, questions, σ²_q, σ²_t, σ²_r).
fn components(dir: &tempfile::TempDir, strata: &[(&str, usize, f64, f64, f64)]) -> String {
    let strata: Vec<serde_json::Value> = strata
        .iter()
        .map(|&(name, q, sq, st, sr)| {
            serde_json::json!({
                "name": name, "questions": q, "trajectories": 2, "reads": 2,
                "se": ((sq + st / 2.0 + sr / 4.0) / q as f64).sqrt(),
                "components": {"question": sq, "trajectory": st, "read": sr},
            })
        })
        .collect();
    write(
        dir,
        "components.json",
        &serde_json::json!({ "strata": strata }).to_string(),
    )
    .display()
    .to_string()
}

/// Every (Q, T, R) with Q ≤ `max_q`, T, R ≤ 10, Q split by largest remainder in `weights`:
/// the least cost with SE ≤ `target` (ties: smaller SE), as (Q, T, R, SE, cost).
/// `v(d, t, r)` is stratum d's per-question variance, `k(t, r)` the cost of one question.
fn exhaustive(
    weights: &[usize],
    v: &dyn Fn(usize, usize, usize) -> f64,
    k: &dyn Fn(usize, usize) -> f64,
    max_q: usize,
    target: Option<f64>,
    budget: Option<f64>,
) -> (usize, usize, usize, f64, f64) {
    let d2 = (weights.len() * weights.len()) as f64;
    let mut best: Option<(usize, usize, usize, f64, f64)> = None;
    for q in 1..=max_q {
        let parts = split_questions(q, weights);
        if parts.contains(&0) {
            continue;
        }
        for t in 1..=10 {
            for r in 1..=10 {
                let se2: f64 = parts
                    .iter()
                    .enumerate()
                    .map(|(d, &n)| v(d, t, r) / n as f64)
                    .sum::<f64>()
                    / d2;
                let cost = q as f64 * k(t, r);
                let ok = target.is_none_or(|s| se2 <= s * s) && budget.is_none_or(|b| cost <= b);
                if !ok {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) if target.is_some() => cost < b.4 || (cost == b.4 && se2 < b.3),
                    Some(b) => se2 < b.3 || (se2 == b.3 && cost < b.4),
                };
                if better {
                    best = Some((q, t, r, se2, cost));
                }
            }
        }
    }
    let b = best.expect("some allocation is feasible");
    (b.0, b.1, b.2, b.3.sqrt(), b.4)
}

fn first(v: &serde_json::Value) -> (usize, usize, usize, f64, f64) {
    let a = &v["allocations"][0];
    (
        a["questions"].as_u64().unwrap() as usize,
        a["trajectories"].as_u64().unwrap() as usize,
        a["reads"].as_u64().unwrap() as usize,
        a["se"].as_f64().unwrap(),
        a["cost"].as_f64().unwrap(),
    )
}

/// The hand-worked case: σ² = (0.04, 0.01, 0.02), c_T = 3, c_R = 1.
/// v(T, R) = 0.04 + 0.01/T + 0.02/(TR), a question costs T (3 + R).
/// Target SE 0.01: Q ≥ v/1e-4, so (T, R) = (1, 1) needs Q = 700 (cost 2800), (1, 2)
/// Q = 600 (3000), (2, 1) Q = 550 (4400): the minimum is 700:1:1 at 2800.
/// MDE 0.03 (α 0.05, power 0.8): SE ≤ 0.03/2.801585 = 0.010708, (1, 1) needs
/// Q = ⌈0.07/0.00011467⌉ = 611 (cost 2444).
#[test]
fn hand_worked_target_and_mde_equal_the_exhaustive_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let c = components(&dir, &[("all", 100, 0.04, 0.01, 0.02)]);
    let v = |_: usize, t: usize, r: usize| 0.04 + 0.01 / t as f64 + 0.02 / (t * r) as f64;
    let k = |t: usize, r: usize| t as f64 * (3.0 + r as f64);
    let base = [
        "plan",
        "--components",
        &c,
        "--unit-costs",
        "3,1",
        "--max-questions",
        "3000",
        "--format",
        "json",
    ];
    let out = json(&[&base[..], &["--target-se", "0.01"]].concat());
    let got = first(&out);
    let want = exhaustive(&[100], &v, &k, 3000, Some(0.01), None);
    assert_eq!((got.0, got.1, got.2), (want.0, want.1, want.2));
    assert_eq!((got.0, got.1, got.2), (700, 1, 1));
    assert!((got.4 - 2800.0).abs() < 1e-9 && (got.3 - 0.01).abs() < 1e-12);
    // Runner-up 600:1:2 at 3000 costs 7.14% more.
    let second = &out["allocations"][1];
    assert_eq!(second["questions"], 600);
    assert_eq!(second["reads"], 2);
    assert!(
        (second["extra_percent"].as_f64().unwrap() - 100.0 * (3000.0 / 2800.0 - 1.0)).abs() < 1e-9
    );

    let out = json(&[&base[..], &["--mde", "0.03"]].concat());
    let target = 0.03 / mde_multiplier(0.05, 0.8);
    assert!((target - 0.03 / 2.801585218112968).abs() < 1e-15);
    let got = first(&out);
    let want = exhaustive(&[100], &v, &k, 3000, Some(target), None);
    assert_eq!((got.0, got.1, got.2), (want.0, want.1, want.2));
    assert_eq!((got.0, got.1, got.2), (611, 1, 1));
    assert!((got.4 - 2444.0).abs() < 1e-9);
    assert!(
        (out["allocations"][0]["mde"].as_f64().unwrap() - 2.801585218112968 * got.3).abs() < 1e-12
    );

    // A budget of 2800: the least SE affordable (exhaustive over every Q, T, R).
    let out = json(&[&base[..], &["--budget-tokens", "2800"]].concat());
    let got = first(&out);
    let want = exhaustive(&[100], &v, &k, 3000, None, Some(2800.0));
    assert_eq!((got.0, got.1, got.2), (want.0, want.1, want.2));
    assert!((got.3 - want.3).abs() < 1e-15 && got.4 <= 2800.0);
}

/// Two strata in shares 3:1 with different components: Q is split by largest remainder, so
/// the search must check integers around the closed form; the exhaustive search over every
/// total Q agrees (target and budget).
#[test]
fn two_strata_equal_the_exhaustive_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let c = components(
        &dir,
        &[("a", 300, 0.05, 0.02, 0.03), ("b", 100, 0.02, 0.004, 0.06)],
    );
    let comps = [(0.05, 0.02, 0.03), (0.02, 0.004, 0.06)];
    let v = |d: usize, t: usize, r: usize| {
        let (q, tt, rr) = comps[d];
        q + tt / t as f64 + rr / (t * r) as f64
    };
    let k = |t: usize, r: usize| t as f64 * (5.0 + 2.0 * r as f64);
    for (flag, value) in [("--target-se", "0.009"), ("--budget-usd", "12345")] {
        let out = json(&[
            "plan",
            "--components",
            &c,
            "--unit-costs",
            "5,2",
            "--max-questions",
            "2000",
            flag,
            value,
            "--format",
            "json",
        ]);
        let got = first(&out);
        let want = if flag == "--target-se" {
            exhaustive(&[300, 100], &v, &k, 2000, Some(0.009), None)
        } else {
            exhaustive(&[300, 100], &v, &k, 2000, None, Some(12345.0))
        };
        assert_eq!((got.0, got.1, got.2), (want.0, want.1, want.2), "{flag}");
        assert!((got.3 - want.3).abs() < 1e-15 && (got.4 - want.4).abs() < 1e-9);
        assert_eq!(
            out["currency"],
            if flag == "--target-se" {
                "tokens"
            } else {
                "USD"
            }
        );
    }
    // Given shares 1:1 instead of the audit's 3:1.
    let out = json(&[
        "plan",
        "--components",
        &c,
        "--unit-costs",
        "5,2",
        "--max-questions",
        "2000",
        "--target-se",
        "0.009",
        "--shares",
        "a=1,b=1",
        "--format",
        "json",
    ]);
    let got = first(&out);
    let want = exhaustive(&[1, 1], &v, &k, 2000, Some(0.009), None);
    assert_eq!((got.0, got.1, got.2), (want.0, want.1, want.2));
    let parts = out["allocations"][0]["per_stratum"].as_array().unwrap();
    assert!((parts[0].as_i64().unwrap() - parts[1].as_i64().unwrap()).abs() <= 1);
}

/// Power of a given design against the normal formula: 400:2:1 has
/// SE = sqrt((0.04 + 0.01/2 + 0.02/2)/400) = sqrt(0.055/400) = 0.011726039399558574 and
/// power against 0.03 of Φ(0.03/SE − z_0.975) + Φ(−0.03/SE − z_0.975) = 0.7252314627377674
/// (reference: Python 3, `statistics.NormalDist()`, `n.cdf(d/se - z) + n.cdf(-d/se - z)` with
/// `z = n.inv_cdf(0.975)`).
#[test]
fn power_of_a_given_design_is_the_normal_formula() {
    let dir = tempfile::tempdir().unwrap();
    let c = components(&dir, &[("all", 100, 0.04, 0.01, 0.02)]);
    let out = json(&[
        "plan",
        "--components",
        &c,
        "--questions",
        "400",
        "--trajectories",
        "2",
        "--reads",
        "1",
        "--difference",
        "0.03",
        "--format",
        "json",
    ]);
    let a = &out["allocations"][0];
    assert!((a["se"].as_f64().unwrap() - 0.011726039399558574).abs() < 1e-15);
    assert!((a["power"].as_f64().unwrap() - 0.7252314627377674).abs() < 1e-12);
    assert!((a["mde"].as_f64().unwrap() - 2.801585218112968 * 0.011726039399558574).abs() < 1e-12);
    // Without costs the design has no cost, and a components file has no bootstrap.
    assert!(a["cost"].is_null());
    assert!(out["notes"][0]
        .as_str()
        .unwrap()
        .contains("no bootstrap interval"));
}

#[test]
fn bad_probabilities_and_unreachable_targets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = components(&dir, &[("all", 100, 0.04, 0.01, 0.02)]);
    for (flag, v) in [
        ("--alpha", "1.5"),
        ("--alpha", "0"),
        ("--power", "1"),
        ("--power", "-0.2"),
    ] {
        stats()
            .args([
                "plan",
                "--components",
                &c,
                "--unit-costs",
                "3,1",
                "--mde",
                "0.03",
                flag,
                v,
            ])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("between 0 and 1"));
    }
    // σ²_q/Q_max = 0.04/100 = 4e-4 > 0.01²: the question variance alone forbids SE 0.01.
    stats()
        .args([
            "plan",
            "--components",
            &c,
            "--unit-costs",
            "3,1",
            "--target-se",
            "0.01",
        ])
        .args(["--max-questions", "100"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "below what the audit's question variance allows at the maximum Q",
        ))
        .stderr(predicates::str::contains("SE 0.020000"));
    // A target or a budget needs costs.
    stats()
        .args(["plan", "--components", &c, "--target-se", "0.01"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("needs unit costs"));
}

/// An audit with R = 1 cannot inform the read level: the plan says what it assumes and
/// never buys a second read (extra reads would cost and, as assumed, reduce nothing).
#[test]
fn audit_with_one_read_says_what_is_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let text = serde_json::json!({"strata": [{
        "name": "all", "questions": 100, "trajectories": 2, "reads": 1, "se": 0.02,
        "components": {"question": 0.03, "trajectory": 0.02, "read": null},
    }]})
    .to_string();
    let c = write(&dir, "c.json", &text).display().to_string();
    let out = json(&[
        "plan",
        "--components",
        &c,
        "--unit-costs",
        "1,1",
        "--target-se",
        "0.01",
        "--format",
        "json",
    ]);
    assert!(out["allocations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["reads"] == 1));
    assert!(out["notes"][0]
        .as_str()
        .unwrap()
        .contains("the audit has R = 1, so it cannot inform the read level"));
}

/// The demo audit with its ledger: the plan's cost is the ledger's unit costs times the
/// design, and the bootstrap interval of the required Q contains the point answer.
#[test]
fn demo_plan_uses_ledger_unit_costs() {
    let out = json(&[
        "plan",
        "--audit",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--mde",
        "0.02",
        "--replicates",
        "200",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let a = &out["allocations"][0];
    let strata = out["strata"].as_array().unwrap();
    let (t, r) = (
        a["trajectories"].as_f64().unwrap(),
        a["reads"].as_f64().unwrap(),
    );
    let cost: f64 = strata
        .iter()
        .zip(a["per_stratum"].as_array().unwrap())
        .map(|(s, q)| {
            let c = &s["costs"];
            let f = |k: &str| c[k].as_f64().unwrap();
            // T (c_T + c_R1 + (R − 1) c_R+) per question.
            q.as_f64().unwrap() * t * (f("trajectory") + f("first_read") + (r - 1.0) * f("read"))
        })
        .sum();
    assert!((a["cost"].as_f64().unwrap() - cost).abs() < 1e-6 * cost);
    // c_T of hotpotqa as `stats efficiency` prints it for the demo (README).
    assert!((strata[0]["costs"]["trajectory"].as_f64().unwrap() - 20231.621824).abs() < 1e-6);
    let b = &out["bootstrap"][0];
    let q = a["questions"].as_f64().unwrap();
    assert!(b["ci"][0].as_f64().unwrap() <= q && q <= b["ci"][1].as_f64().unwrap());
}

/// Simulation check: plan for an MDE of 0.03 from known components (0.04, 0.01, 0.02) with
/// c_T = 20, c_R = 1 (the plan buys 3 reads), simulate Gaussian panels with those components
/// and a true difference equal to the MDE at the planned allocation, and test each at
/// α = 0.05 with its measured SE: the rejection rate must be the nominal power 0.8 (plus the
/// far tail, 1e-6) within 3 Monte Carlo SEs.
///
/// Run: `cargo test --test it plan::simulated_panels_reach_nominal_power -- --ignored --nocapture`.
/// Recorded run (2026-11-30, debug build, 11 s): plan 495:1:3 (SE 0.010699); rejection rate
/// 0.7943 over 4000 panels, MC SE 0.0063 (within 1 MC SE of 0.8).
#[test]
#[ignore]
fn simulated_panels_reach_nominal_power() {
    let (sq, st, sr) = (0.04f64, 0.01f64, 0.02f64);
    let planner = Planner {
        strata: vec![PlanStratum {
            name: "all".into(),
            components: PerLevel {
                question: sq,
                trajectory: Some(st),
                read: Some(sr),
            },
            costs: Some(UnitCosts::flat(20.0, 1.0)),
            weight: 1,
            audit_questions: 100,
            audit_trajectories: 2,
            audit_reads: 2,
            audit_se: 0.02,
        }],
        bounds: Bounds {
            max_questions: 100_000,
            max_trajectories: 10,
            max_reads: 10,
        },
        weights: Vec::new(),
    };
    let mde = 0.03;
    let target = mde / mde_multiplier(0.05, 0.8);
    let plan = planner.search(Goal::TargetSe(target)).unwrap()[0].clone();
    let (q, t, r) = (plan.questions, plan.trajectories, plan.reads);
    let z = 1.959963984540054;
    let panels = 4000u64;
    let mut rejected = 0u64;
    for seed in 0..panels {
        let rows = ragstats_core::sim::simulate_normal_panel(
            &[("all".to_string(), q)],
            t,
            r,
            mde,
            sq.sqrt(),
            st.sqrt(),
            sr.sqrt(),
            1000 + seed,
        );
        let means: Vec<f64> = rows
            .chunks(t * r)
            .map(|c| c.iter().map(|x| x.f1).sum::<f64>() / (t * r) as f64)
            .collect();
        let n = means.len() as f64;
        let m = means.iter().sum::<f64>() / n;
        let var = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        if (m / (var / n).sqrt()).abs() > z {
            rejected += 1;
        }
    }
    let rate = rejected as f64 / panels as f64;
    let mc = (0.8f64 * 0.2 / panels as f64).sqrt();
    eprintln!(
        "plan {q}:{t}:{r} SE {:.6}; rejection rate {rate:.4} over {panels} panels (MC SE {mc:.4})",
        plan.se
    );
    assert!((rate - 0.8).abs() < 3.0 * mc, "rate {rate}");
}

/// An unbalanced audit is fitted by REML as `forecast` fits it: the plan's SE of a design is
/// `forecast`'s nested SE of it, and its bootstrap interval (REML refitted in every
/// replicate) is centred on that SE's estimate and brackets it.
#[test]
fn unbalanced_audit_plans_from_reml_components() {
    let audit = "tests/fixtures/reml/missing_read.csv";
    let plan = json(&[
        "plan",
        "--audit",
        audit,
        "--questions",
        "60",
        "--trajectories",
        "2",
        "--reads",
        "3",
        "--format",
        "json",
    ]);
    let forecast = json(&[
        "forecast", "--audit", audit, "--design", "60:2:3", "--format", "json",
    ]);
    let (a, f) = (
        plan["allocations"][0]["se"].as_f64().unwrap(),
        forecast["designs"][0]["se_nested"].as_f64().unwrap(),
    );
    assert!((a - f).abs() < 1e-15 * f.max(1.0), "{a} vs {f}");
    assert!(plan["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("the audit is unbalanced")));
    let b = &plan["bootstrap"][0];
    assert_eq!(b["what"], "SE of the design");
    assert_eq!(plan["run"]["replicates"], 10000);
    assert!((b["estimate"].as_f64().unwrap() - a).abs() < 1e-15 * a.max(1.0));
    let (lo, hi) = (b["ci"][0].as_f64().unwrap(), b["ci"][1].as_f64().unwrap());
    assert!(0.0 < lo && lo < a && a < hi, "[{lo}, {hi}] around {a}");
}

/// The library entry point called directly on the demo audit (with given unit costs 3,1)
/// gives what `stats plan` prints for the same flags: the same best allocation and the same
/// bootstrap interval of the required Q, digit for digit (the same seed and replicates on
/// the CPU engine), and the interval brackets the point answer.
#[test]
fn library_plan_of_the_demo_audit_is_the_commands() {
    use ragstats_core::allocation::planner_report::{plan, PlanCosts, PlanGoal, PlanJob};
    use ragstats_core::components::forecast::Audit;
    use ragstats_core::components::variance::analyse_panel;
    use ragstats_core::panel::{load_panel, LoadOptions};
    use ragstats_core::resample::cpu::CpuBackend;
    use ragstats_core::resample::Resampling;

    let panel = load_panel(
        std::path::Path::new("data/demo/panel.csv"),
        &LoadOptions {
            contrast: Some("adaptive-open".into()),
            allow_unbalanced: true,
            ..Default::default()
        },
    )
    .unwrap();
    let audit = Audit::from_report(&analyse_panel(&panel).unwrap());
    let settings = PlanJob {
        goal: PlanGoal::TargetSe {
            se: 0.01,
            from_mde: None,
        },
        unit: "tokens".into(),
        alpha: 0.05,
        power: 0.8,
        difference: None,
        shares: None,
        bounds: Bounds {
            max_questions: 100_000,
            max_trajectories: 10,
            max_reads: 10,
        },
        runners_up: 5,
        resampling: Resampling {
            seed: 5,
            replicates: 200,
            confidence: 0.9,
        },
        question_cost: 0.0,
    };
    let costs = PlanCosts::Given(UnitCosts::flat(3.0, 1.0));
    let r = plan(
        &audit,
        Some(&panel),
        &costs,
        &settings,
        &CpuBackend::new(),
        &|_| {},
    )
    .unwrap();
    let cli = json(&[
        "plan",
        "--audit",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--unit-costs",
        "3,1",
        "--target-se",
        "0.01",
        "--replicates",
        "200",
        "--seed",
        "5",
        "--confidence",
        "0.9",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let a = &r.allocations[0].allocation;
    assert_eq!(cli["allocations"][0]["questions"], a.questions);
    assert_eq!(cli["allocations"][0]["trajectories"], a.trajectories);
    assert_eq!(cli["allocations"][0]["se"].as_f64().unwrap(), a.se);
    let b = &r.bootstrap[0];
    assert_eq!(
        b.what,
        format!("required Q at T = {}, R = {}", a.trajectories, a.reads)
    );
    assert_eq!(cli["bootstrap"][0]["ci"][0].as_f64().unwrap(), b.ci[0]);
    assert_eq!(cli["bootstrap"][0]["ci"][1].as_f64().unwrap(), b.ci[1]);
    assert!(b.ci[0] <= a.questions as f64 && a.questions as f64 <= b.ci[1]);
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("the unit costs given are held fixed")));
    assert!(r.engine.adapter.is_some() && !r.ledger_costs);
}
