//! `stats compare --by COLUMN` (the systems from a column other than `arm`) and
//! `stats compare --ledger` (the next study priced by `stats plan`'s search).
//!
//! `--by` is checked against the renamed panel: the same rows with the column renamed `arm`
//! must give the same document body to the last bit, and every pair the same SE as
//! `stats variance --contrast` of the renamed panel. The priced next step is checked against
//! `stats plan` on the same pair and by hand on a ledger of constant unit costs.

use crate::common::{body, json, stats, write};

const ARMS4: &str = "tests/fixtures/compare/arms4.csv";

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().expect("a number")
}

/// `stats compare ARGS… --backend cpu --replicates 300 --format json`.
fn compare(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend([
        "--backend",
        "cpu",
        "--replicates",
        "300",
        "--format",
        "json",
    ]);
    json(&all)
}

/// Runs `stats compare ARGS…`, asserts exit 2, and returns stderr.
fn refusal(args: &[&str]) -> String {
    let out = stats().arg("compare").args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The fixture's lines with its `arm` column renamed `column`, every data row passed
/// through `row` (which may drop it).
fn renamed(column: &str, row: impl Fn(&str) -> Option<String>) -> String {
    let text = std::fs::read_to_string(ARMS4).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .replace(",arm,", &format!(",{column},"));
    let mut out = format!("{header}\n");
    for l in lines.filter_map(row) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Every pair's SE of `doc` equals `stats variance PANEL --contrast b-a` to 1e-12 (the
/// pairs being of `panel`'s arms).
fn pairs_are_variance_contrasts(doc: &serde_json::Value, panel: &str) {
    for p in doc["pairs"].as_array().unwrap() {
        let spec = format!("{}-{}", p["b"].as_str().unwrap(), p["a"].as_str().unwrap());
        let v = json(&["variance", panel, "--contrast", &spec, "--format", "json"]);
        assert!((num(&p["se"]) - num(&v["se"])).abs() < 1e-12, "{spec}");
        assert!(
            (num(&p["estimate"]) - num(&v["estimate"])).abs() < 1e-12,
            "{spec}"
        );
    }
}

#[test]
fn by_a_column_is_the_comparison_of_the_panel_with_that_column_as_arm() {
    let dir = tempfile::tempdir().unwrap();
    // One row left out (hotpotqa-0003, trajectory 1, read 1 of system b), so that stratum
    // is unbalanced and every pair with b is fitted by REML, as `variance` fits it.
    let drop = |l: &str| (!l.starts_with("hotpotqa,hotpotqa-0003,1,1,b,")).then(|| l.to_string());
    let arm = write(&dir, "arm.csv", &renamed("arm", drop));
    let model = write(&dir, "model.csv", &renamed("model", drop));
    let want = compare(&[arm.to_str().unwrap()]);
    let got = compare(&[model.to_str().unwrap(), "--by", "model"]);
    assert_eq!(body(got.clone()), body(want.clone()));
    assert_eq!(got["run"]["inputs"]["by"], "model");
    assert_eq!(want["systems"].as_array().unwrap().len(), 4);
    pairs_are_variance_contrasts(&got, arm.to_str().unwrap());
    // At least one pair has unpaired cells (the dropped row), so REML was used.
    assert!(got["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| num(&p["unpaired_cells"]) > 0.0));

    // Selectors as the systems, in a panel whose `arm` column has one value.
    let sel = renamed("selector", |l| Some(l.to_string()))
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l},arm\n")
            } else {
                format!("{l},only\n")
            }
        })
        .collect::<String>();
    let sel = write(&dir, "sel.csv", &sel);
    let got = compare(&[sel.to_str().unwrap(), "--by", "selector"]);
    assert_eq!(body(got), body(compare(&[ARMS4])));
    // With --reference, and as CSV, the same as the renamed panel.
    let csv = |args: &[&str]| {
        let mut all = vec!["compare"];
        all.extend_from_slice(args);
        all.extend(["--backend", "cpu", "--replicates", "300", "--format", "csv"]);
        let out = stats().args(&all).output().unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(
        csv(&[
            sel.to_str().unwrap(),
            "--by",
            "selector",
            "--reference",
            "b"
        ]),
        csv(&[ARMS4, "--reference", "b"])
    );
}

#[test]
fn by_a_column_within_one_of_several_arms() {
    let dir = tempfile::tempdir().unwrap();
    // Arm `u` holds the fixture's scores, arm `v` 1 − score, each system in a `model`
    // column.
    let text = std::fs::read_to_string(ARMS4).unwrap();
    let mut both = String::from("dataset,question,trajectory,read,model,f1,arm\n");
    let mut flipped = String::from("dataset,question,trajectory,read,arm,f1\n");
    for l in text.lines().skip(1) {
        let (keys, f1) = l.rsplit_once(',').unwrap();
        let v = 1.0 - f1.parse::<f64>().unwrap();
        both.push_str(&format!("{keys},{f1},u\n{keys},{v},v\n"));
        flipped.push_str(&format!("{keys},{v}\n"));
    }
    let both = write(&dir, "both.csv", &both);
    let flipped = write(&dir, "flipped.csv", &flipped);
    let p = both.to_str().unwrap();
    let err = refusal(&[p, "--by", "model"]);
    assert!(
        err.contains("both.csv")
            && err.contains("several arms (u, v)")
            && err.contains("compared within one arm: choose the arm"),
        "{err}"
    );
    let err = refusal(&[p, "--by", "model", "--arm", "w"]);
    assert!(
        err.contains("unknown arm 'w'; the panel's arms are: u, v"),
        "{err}"
    );
    let u = compare(&[p, "--by", "model", "--arm", "u"]);
    assert_eq!(body(u), body(compare(&[ARMS4])));
    // The same rows as JSONL.
    let mut jsonl = String::new();
    for l in std::fs::read_to_string(&both).unwrap().lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        jsonl.push_str(&format!(
            r#"{{"dataset":"{}","question":"{}","trajectory":{},"read":{},"model":"{}","f1":{},"arm":"{}"}}"#,
            f[0], f[1], f[2], f[3], f[4], f[5], f[6]
        ));
        jsonl.push('\n');
    }
    let jsonl = write(&dir, "both.jsonl", &jsonl);
    let j = jsonl.to_str().unwrap();
    let u = compare(&[j, "--by", "model", "--arm", "u"]);
    assert_eq!(body(u), body(compare(&[ARMS4])));
    let err = refusal(&[j, "--by", "model"]);
    assert!(err.contains("several arms (u, v)"), "{err}");
    let v = compare(&[p, "--by", "model", "--arm", "v"]);
    assert_eq!(body(v.clone()), body(compare(&[flipped.to_str().unwrap()])));
    pairs_are_variance_contrasts(&v, flipped.to_str().unwrap());
    // 1 − score reverses every difference: c − base is 0.268763885417 in the fixture
    // (tests/reference/compare.py), so −0.268763885417 here.
    let c_base = v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == "base" && p["b"] == "c")
        .unwrap();
    assert!((num(&c_base["estimate"]) + 0.268763885417).abs() < 1e-11);
}

#[test]
fn by_refusals_name_the_file_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(&[ARMS4, "--by", "model"]);
    assert!(
        err.contains("arms4.csv")
            && err.contains("missing column 'model'")
            && err.contains("dataset, question, trajectory, read, arm, f1"),
        "{err}"
    );
    let err = refusal(&[ARMS4, "--by", "question"]);
    assert!(
        err.contains("error: --by: 'question' is a key") && err.contains("paired on"),
        "{err}"
    );
    let err = refusal(&[ARMS4, "--by", "f1"]);
    assert!(
        err.contains("error: --by: 'f1' is the score column"),
        "{err}"
    );
    let one = write(
        &dir,
        "one.csv",
        "dataset,question,model,f1\nd,q1,x,0.1\nd,q2,x,0.3\n",
    );
    let err = refusal(&[one.to_str().unwrap(), "--by", "model"]);
    assert!(
        err.contains("one.csv")
            && err.contains("at least two systems in the 'model' column; the panel has only 'x'"),
        "{err}"
    );
    // clap refuses `--arm` without `--by` before the library sees it.
    let err = refusal(&[ARMS4, "--arm", "a"]);
    assert!(err.contains("--by"), "{err}");
    let sel = write(
        &dir,
        "sel.csv",
        "dataset,question,selector,f1\nd,q1,x,0.1\nd,q1,y,0.3\n",
    );
    let err = refusal(&[sel.to_str().unwrap(), "--by", "selector", "--selector", "x"]);
    assert!(
        err.contains("--by selector compares the selectors"),
        "{err}"
    );
    let err = refusal(&["tests/fixtures/import/logs/eval", "--by", "model"]);
    assert!(err.contains("--arm-from"), "{err}");
    let err = refusal(&[ARMS4, "--by", "model", "--reference", "zzz"]);
    assert!(err.contains("missing column 'model'"), "{err}");
}

/// A ledger of arms4.csv with constant costs: per trajectory and system one planner call of
/// 1,000 input and 200 output tokens, per read one reader call of 500 + 100: so
/// c_T = 4 × 1,200 = 4,800 and c_R = 4 × 600 = 2,400 tokens (every system's rows of a cell
/// are the cell's cost).
fn constant_ledger() -> String {
    let text = std::fs::read_to_string(ARMS4).unwrap();
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (d, q, t, r, a) = (f[0], f[1], f[2], f[3], f[4]);
        if seen.insert((d, q, t, a)) {
            out.push_str(&format!(
                r#"{{"kind":"planner","dataset":"{d}","question":"{q}","arm":"{a}","trajectory":{t},"step":0,"model":"m","input_tokens":1000,"output_tokens":200}}"#
            ));
            out.push('\n');
        }
        out.push_str(&format!(
            r#"{{"kind":"reader","dataset":"{d}","question":"{q}","arm":"{a}","trajectory":{t},"read":{r},"model":"m","input_tokens":500,"output_tokens":100}}"#
        ));
        out.push('\n');
    }
    out
}

#[test]
fn the_next_step_with_a_ledger_is_plans_cheapest_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = write(&dir, "ledger.jsonl", &constant_ledger());
    let l = ledger.to_str().unwrap();
    let doc = compare(&[ARMS4, "--ledger", l]);
    let next = &doc["next"];
    // The closest unresolved pair: a − base (z = 0.046549 / 0.021894 = 2.126, Holm 0.10).
    assert_eq!(
        (next["a"].as_str(), next["b"].as_str()),
        (Some("base"), Some("a"))
    );
    // Holm's first step, Bonferroni over the 6 pairs, on the normal reference as `stats
    // plan` plans: Φ⁻¹(1 − 0.025/6) (scipy.stats.norm.ppf).
    let c = num(&next["critical_value"]);
    assert!((c - 2.638257273476751).abs() < 1e-12);
    // Φ⁻¹(0.8) = 0.8416212335729143 (scipy.stats.norm.ppf).
    let target = 0.046549142708 / (c + 0.8416212335729143);
    assert!((num(&next["target_se"]) - target).abs() < 1e-11);
    let alloc = &next["allocation"];
    assert_eq!(alloc["currency"], "tokens");
    assert_eq!(alloc["strata"], serde_json::json!(["hotpotqa", "musique"]));
    // `stats plan` on the same pair for that SE: the same allocation, to the last bit.
    let target_se = format!("{:e}", num(&next["target_se"]));
    let plan = json(&[
        "plan",
        "--audit",
        ARMS4,
        "--contrast",
        "a-base",
        "--ledger",
        l,
        "--target-se",
        &target_se,
        "--replicates",
        "20",
        "--format",
        "json",
    ]);
    let best = &plan["allocations"][0];
    for key in [
        "questions",
        "per_stratum",
        "trajectories",
        "reads",
        "se",
        "cost",
    ] {
        assert_eq!(alloc[key], best[key], "{key}");
    }
    // By hand: Q T (c_T + R c_R) with c_T = 4,800 and c_R = 2,400 tokens.
    let (q, t, r) = (
        num(&alloc["questions"]),
        num(&alloc["trajectories"]),
        num(&alloc["reads"]),
    );
    assert_eq!(num(&alloc["cost"]), q * t * (4800.0 + r * 2400.0));
    assert!(num(&alloc["se"]) <= target);
    let parts = alloc["per_stratum"].as_array().unwrap();
    assert_eq!(num(&parts[0]) + num(&parts[1]), q);
    let text = next["text"].as_str().unwrap();
    // The test's costs make one trajectory and one read the cheapest (c_T > 0, c_R > 0).
    assert_eq!((t, r), (1.0, 1.0));
    assert!(
        text.contains(&format!(
            "Q:T:R = {q}:1:1: {q} questions (hotpotqa {}, musique {}), 1 trajectory \
             per question, 1 read per trajectory",
            parts[0], parts[1]
        )),
        "{text}"
    );
    // Without a ledger: no allocation, and the same next step otherwise.
    let plain = compare(&[ARMS4]);
    assert!(plain["next"]["allocation"].is_null());
    assert_eq!(plain["next"]["questions_needed"], next["questions_needed"]);
    assert_eq!(plain["next"]["target_se"], next["target_se"]);
}

/// A family of one pair (the demo's two arms) has the marginal critical value, so the
/// priced next step is `stats plan --mde |d| --power 0.8` at α = 0.05, in dollars with the
/// demo's prices.
#[test]
fn a_pair_of_two_arms_is_plans_mde_allocation_in_dollars() {
    let args = [
        "data/demo/panel.csv",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--prices",
        "data/demo/prices.toml",
        "--currency",
        "usd",
    ];
    let doc = compare(&args);
    let next = &doc["next"];
    // Planned as `plan` plans, on the normal reference: Φ⁻¹(0.975) (scipy.stats.norm.ppf).
    assert!((num(&next["critical_value"]) - 1.959963984540054).abs() < 1e-15);
    let mde = format!("{:e}", num(&next["estimate"]).abs());
    let plan = json(&[
        "plan",
        "--audit",
        "data/demo/panel.csv",
        "--contrast",
        &format!(
            "{}-{}",
            next["b"].as_str().unwrap(),
            next["a"].as_str().unwrap()
        ),
        "--ledger",
        "data/demo/ledger.jsonl",
        "--prices",
        "data/demo/prices.toml",
        "--currency",
        "usd",
        "--mde",
        &mde,
        "--replicates",
        "20",
        "--format",
        "json",
    ]);
    let (alloc, best) = (&next["allocation"], &plan["allocations"][0]);
    assert_eq!(alloc["currency"], "USD");
    for key in ["questions", "per_stratum", "trajectories", "reads", "cost"] {
        assert_eq!(alloc[key], best[key], "{key}");
    }
    assert!((num(&alloc["se"]) - num(&best["se"])).abs() < 1e-15);
    // Dollars need prices.
    let err = refusal(&[
        "data/demo/panel.csv",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--currency",
        "usd",
    ]);
    assert!(
        err.contains("error: --currency: usd needs the models' prices (a prices file)"),
        "{err}"
    );
    // The search's bounds mean nothing without a ledger to price it.
    let err = refusal(&["data/demo/panel.csv", "--max-reads", "3"]);
    assert!(err.contains("needs --ledger"), "{err}");
}

/// `stats report` with a ledger prices its leaderboard's next step with it: the paragraph is
/// the one `stats compare --ledger` writes, and the command shown carries `--ledger`.
#[test]
fn the_reports_leaderboard_is_priced_by_the_reports_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = write(&dir, "ledger.jsonl", &constant_ledger());
    let out = dir.path().join("r.html");
    let run = stats()
        .args([
            "report",
            ARMS4,
            "--contrast",
            "a-base",
            "--ledger",
            ledger.to_str().unwrap(),
            "--replicates",
            "300",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    let doc = json(&[
        "compare",
        ARMS4,
        "--ledger",
        ledger.to_str().unwrap(),
        "--replicates",
        "300",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let a = &doc["next"]["allocation"];
    let qtr = format!(
        "Q:T:R = {}:{}:{}",
        a["questions"], a["trajectories"], a["reads"]
    );
    assert!(html.contains(&qtr), "{qtr}");
    assert!(html.contains(&format!(
        "stats compare tests/fixtures/compare/arms4.csv --ledger {}",
        ledger.display()
    )));
}
