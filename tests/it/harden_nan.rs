//! Issue #13, item 9: no command prints `NaN` or `inf` on degenerate inputs. Each case is
//! a clear error (exit 2) or an explicit `undefined (reason)` in text and `null` beside an
//! `undefined` reason in JSON; a CSV cell that is undefined is empty.

use std::path::{Path, PathBuf};

/// Whether `text` holds NaN or an infinity as a word, case-insensitively (not inside a word
/// like "info" or "infinite").
fn has_non_finite(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
}

#[test]
fn the_detector_finds_what_it_should() {
    assert!(has_non_finite("SE NaN"));
    assert!(has_non_finite("[-inf, 2]"));
    assert!(has_non_finite("x=Infinity"));
    assert!(has_non_finite("1,nan,2"));
    assert!(!has_non_finite("info: infinite loops; Nancy"));
}

/// A balanced two-arm panel, one stratum `d`, T = R = 2, score `score(q, t, r)`.
fn panel(path: &Path, questions: usize, score: impl Fn(usize, usize, usize) -> f64) {
    let mut s = String::from("dataset,question,arm,trajectory,read,f1\n");
    for q in 0..questions {
        for arm in ["open", "adaptive"] {
            for t in 0..2 {
                for r in 0..2 {
                    s += &format!("d,q{q},{arm},{t},{r},{}\n", score(q, t, r));
                }
            }
        }
    }
    std::fs::write(path, s).unwrap();
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let out = crate::support::cli::stats()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TMPDIR", dir)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

/// Runs `args` and asserts exit `code`, no panic and no NaN/inf on stdout or stderr.
fn check(dir: &Path, args: &[&str], code: i32) -> Run {
    let r = run(dir, args);
    assert_eq!(r.code, Some(code), "{args:?}: {}\n{}", r.stderr, r.stdout);
    assert!(
        !has_non_finite(&r.stdout),
        "{args:?} printed:\n{}",
        r.stdout
    );
    assert!(!has_non_finite(&r.stderr), "{args:?} said:\n{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    r
}

/// The same command in table, JSON and CSV form; returns the three outputs.
fn all_formats(dir: &Path, args: &[&str]) -> [String; 3] {
    let table = check(dir, args, 0).stdout;
    let json = check(dir, &[args, &["--format", "json"]].concat(), 0).stdout;
    serde_json::from_str::<serde_json::Value>(&json).expect("stdout is JSON");
    let csv = check(dir, &[args, &["--format", "csv"]].concat(), 0).stdout;
    [table, json, csv]
}

struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        panel(&p("const.csv"), 6, |_, _, _| 0.5);
        panel(&p("oneq.csv"), 1, |_, t, r| 0.1 * (t + r) as f64);
        std::fs::write(p("empty.jsonl"), "").unwrap();
        Inputs { dir }
    }
    fn path(&self, n: &str) -> String {
        self.dir.path().join(n).to_str().unwrap().to_string()
    }
    fn p(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

const C: [&str; 2] = ["--contrast", "adaptive-open"];

#[test]
fn a_single_replicate_has_an_undefined_se_with_its_reason() {
    let i = Inputs::new();
    let args = [
        &[
            "bootstrap",
            "data/demo/panel.csv",
            "--replicates-range",
            "0..1",
        ][..],
        &C,
    ]
    .concat();
    let [table, json, csv] = all_formats(&i.p(), &args);
    assert!(
        table.contains("SE undefined (1 replicate(s): a standard error needs at least 2)"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["se"].is_null());
    assert_eq!(
        v["se_undefined"],
        "1 replicate(s): a standard error needs at least 2"
    );
    // The estimate row's SE cell is empty.
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("estimate,,0.0102757"),
        "{csv}"
    );
    assert!(
        csv.lines().nth(1).unwrap().split(',').nth(3) == Some(""),
        "{csv}"
    );
    // The replicates of a one-replicate shard merge to the same undefined SE.
    let reps = i.path("one.bin");
    check(
        &i.p(),
        &[&args[..], &["--replicates-out", &reps, "--format", "json"]].concat(),
        0,
    );
    let m = check(&i.p(), &["merge", &reps], 0).stdout;
    assert!(m.contains("SE undefined (1 replicate(s)"), "{m}");
}

#[test]
fn a_one_question_stratum_with_components_is_refused() {
    let i = Inputs::new();
    let r = check(
        &i.p(),
        &[
            &["bootstrap", &i.path("oneq.csv"), "--replicates", "20"][..],
            &["--components", "--design", "5:2:1"],
            &C,
        ]
        .concat(),
        2,
    );
    assert!(
        r.stderr.contains(
            "stratum 'd' has 1 question(s); refitting the variance components needs at least 2"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn a_level_with_one_read_is_not_estimable_with_its_reason() {
    let i = Inputs::new();
    // R = 1: the read component has no degrees of freedom.
    let mut s = String::from("dataset,question,trajectory,read,f1\n");
    for q in 0..5 {
        for t in 0..2 {
            s += &format!(
                "d,q{q},{t},0,{}\n",
                0.1 * q as f64 + 0.05 * t as f64 * q as f64
            );
        }
    }
    let p = i.dir.path().join("r1.csv");
    std::fs::write(&p, s).unwrap();
    let args = [
        "bootstrap",
        p.to_str().unwrap(),
        "--replicates",
        "30",
        "--components",
    ];
    let [table, json, _] = all_formats(&i.p(), &args);
    assert!(
        table.contains(
            "not estimable in d: reads: one per cell, so the level has no degrees of freedom"
        ),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["components"]["strata"][0]["read"].is_null());
    assert_eq!(
        v["components"]["strata"][0]["undefined"]["read"],
        "reads: one per cell, so the level has no degrees of freedom"
    );
}

#[test]
fn efficiency_on_constant_scores_is_undefined_with_its_reason() {
    let i = Inputs::new();
    let (sim, ledger) = (i.path("sim.csv"), i.path("sim.jsonl"));
    check(
        &i.p(),
        &[
            "simulate",
            "--out",
            &sim,
            "--ledger",
            &ledger,
            "--datasets",
            "a=8,b=8",
            "--trajectories",
            "2",
            "--reads",
            "2",
        ],
        0,
    );
    // Every f1 (column 6) set to 0.5.
    let text = std::fs::read_to_string(&sim).unwrap();
    let mut lines = text.lines();
    let mut konst = format!("{}\n", lines.next().unwrap());
    for l in lines {
        let mut f: Vec<&str> = l.split(',').collect();
        f[5] = "0.5";
        konst += &(f.join(",") + "\n");
    }
    let konst_path = i.path("const_sim.csv");
    std::fs::write(&konst_path, konst).unwrap();
    let args = [
        &[
            "efficiency",
            &konst_path,
            "--ledger",
            &ledger,
            "--replicates",
            "200",
        ][..],
        &C,
    ]
    .concat();
    let [table, json, csv] = all_formats(&i.p(), &args);
    let reason = "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0";
    assert!(
        table.contains(&format!("  a fixed_t: undefined ({reason})")),
        "{table}"
    );
    assert!(
        table.contains("variance x cost ratio one/two = undefined (both SEs are 0"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["strata"][0]["fixed_t"].is_null());
    assert_eq!(v["strata"][0]["undefined"]["fixed_t"], reason);
    assert!(v["pooled"]["efficiency"]["loss_percent"].is_null());
    assert_eq!(v["pooled"]["undefined"]["efficiency.loss_percent"], reason);
    assert!(v["direct"]["ratio"].is_null());
    assert!(v["direct"]["undefined"]["ratio"].is_string());
    // fixed_t,a: R*, best R, loss and its interval are empty cells.
    assert!(
        csv.lines()
            .any(|l| l == "fixed_t,a,8,2,2,20558.125,18687.1875,18677.3125,,,,,"),
        "{csv}"
    );
}

#[test]
fn consistency_on_its_own_group_column_is_refused_and_a_zero_se_ratio_is_undefined() {
    let i = Inputs::new();
    let mut s = String::from("temperature,dataset,question,trajectory,read,answer,f1\n");
    for temp in ["0", "0.7"] {
        for q in 0..4 {
            for t in 0..2 {
                for r in 0..2 {
                    s += &format!("{temp},d,q{q},{t},{r},a{},0.5\n", (q + r) % 2);
                }
            }
        }
    }
    std::fs::write(i.dir.path().join("reads.csv"), s).unwrap();
    let reads = i.path("reads.csv");
    let r = check(
        &i.p(),
        &[
            "consistency",
            &reads,
            "--by",
            "temperature",
            "--metric",
            "temperature",
        ],
        2,
    );
    assert!(
        r.stderr.contains("--metric: temperature is the by column"),
        "{}",
        r.stderr
    );
    let args = [
        "consistency",
        &reads,
        "--by",
        "temperature",
        "--replicates",
        "50",
    ];
    let [table, json, _] = all_formats(&i.p(), &args);
    assert!(
        table.contains("one-read SE ratio 0/0.7 = undefined (the one-read SEs of 0 and 0.7 are both 0 (the scores do not vary), so the ratio is 0/0)")
            || table.contains("one-read SE ratio 0.7/0 = undefined (the one-read SEs of 0.7 and 0 are both 0"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["se_ratio"]["ratio"].is_null());
    assert!(v["se_ratio"]["undefined"]
        .as_str()
        .unwrap()
        .contains("are both 0"));
}

#[test]
fn agreement_with_one_annotator_is_undefined_with_its_reason() {
    let i = Inputs::new();
    let one: String = std::fs::read_to_string("data/mcq/annotations.jsonl")
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"ann1\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(i.dir.path().join("ann1.jsonl"), one).unwrap();
    let args = [
        "mcq",
        "agree",
        &i.path("ann1.jsonl"),
        "--items",
        "data/mcq/sample.jsonl",
    ];
    let [table, json, _] = all_formats(&i.p(), &args);
    assert!(
        table.contains("overall: undefined (no item has 2 or more annotators, and agreement needs a pair of annotators)"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let overall = v["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "overall")
        .unwrap();
    assert!(overall["jaccard"].is_null());
    assert!(overall["undefined"].is_string());
}

#[test]
fn an_empty_ledger_and_an_empty_answers_file() {
    let i = Inputs::new();
    let [table, json, _] = all_formats(&i.p(), &["cost", &i.path("empty.jsonl")]);
    assert!(
        table.contains("c_T: not computed: no planner or search rows"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["unit_costs"]["usd"].is_null());
    assert!(v["unit_costs"]["trajectory_note"].is_string());
    let r = check(&i.p(), &["score-answers", &i.path("empty.jsonl")], 2);
    assert!(
        r.stderr.contains("holds no answers to score"),
        "{}",
        r.stderr
    );
}

/// Every command on degenerate inputs (constant scores, one question, one replicate, one
/// annotator, an empty file), in every output format: exit 0 or 2, and no `NaN`/`inf` on
/// stdout, stderr or in any file written.
#[test]
fn every_command_on_degenerate_inputs_prints_no_nan_or_inf() {
    let i = Inputs::new();
    let d = i.p();
    let (konst, oneq, empty) = (
        i.path("const.csv"),
        i.path("oneq.csv"),
        i.path("empty.jsonl"),
    );
    let out = |n: &str| i.path(n);
    let zero_sim = out("zero.csv");
    let zero_ledger = out("zero.jsonl");
    let zero_col = out("zerocol.csv");
    std::fs::write(&zero_col, "x,y\n1,0\n1,1\n1,0\n1,1\n1,0\n").unwrap();
    let audit = out("audit.json");
    let cases: Vec<Vec<String>> = vec![
        vec!["variance", &konst],
        vec!["variance", &oneq],
        vec!["forecast", "--audit", &konst, "--design", "10:2:1"],
        vec![
            "bootstrap",
            &konst,
            "--replicates",
            "50",
            "--components",
            "--design",
            "10:2:1",
        ],
        vec!["bootstrap", &oneq, "--replicates", "50"],
        vec!["subsets", &konst, "--audit", &konst, "--replicates", "50"],
        vec![
            "slice",
            &konst,
            "--design",
            "3:1:1",
            "--out",
            &out("slice.csv"),
        ],
        vec!["cost", &empty],
        vec!["score-answers", &empty],
        vec![
            "correlate",
            &zero_col,
            "--x",
            "x",
            "--y",
            "y",
            "--replicates",
            "50",
            "--permutations",
            "50",
        ],
        vec![
            "correlate",
            &zero_col,
            "--x",
            "y",
            "--y",
            "y",
            "--replicates",
            "50",
        ],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    let _ = audit;
    // A simulated panel with every standard deviation 0 (constant latent scores).
    let sim = [
        "simulate",
        "--out",
        &zero_sim,
        "--ledger",
        &zero_ledger,
        "--datasets",
        "a=5",
        "--trajectories",
        "2",
        "--reads",
        "2",
        "--sigma-q",
        "0",
        "--sigma-t",
        "0",
        "--sigma-r",
        "0",
        "--contrast-sigma-q",
        "0",
        "--contrast-sigma-t",
        "0",
        "--contrast-sigma-r",
        "0",
        "--effect",
        "0",
    ];
    check(&d, &sim, 0);
    let mut cases = cases;
    cases.push(
        [
            "efficiency",
            &zero_sim,
            "--ledger",
            &zero_ledger,
            "--replicates",
            "50",
        ]
        .map(String::from)
        .to_vec(),
    );
    cases.push(
        [
            "allocate",
            &zero_sim,
            "--ledger",
            &zero_ledger,
            "--prices",
            "data/demo/prices.toml",
            "--allocation",
            "A=5:2:1",
            "--allocation",
            "B=5:1:2",
            "--replicates",
            "50",
        ]
        .map(String::from)
        .to_vec(),
    );
    for base in cases {
        let mut base = base;
        let needs_contrast = [
            "variance",
            "forecast",
            "bootstrap",
            "subsets",
            "slice",
            "efficiency",
            "allocate",
        ];
        if needs_contrast.contains(&base[0].as_str()) {
            base.extend(C.map(String::from));
        }
        for fmt in [None, Some("json"), Some("csv")] {
            let mut args = base.clone();
            if let Some(f) = fmt {
                if ["slice", "score-answers"].contains(&base[0].as_str()) {
                    continue;
                }
                args.extend(["--format".to_string(), f.to_string()]);
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = run(&d, &refs);
            assert!(matches!(r.code, Some(0 | 2)), "{refs:?}: {}", r.stderr);
            assert!(
                !has_non_finite(&r.stdout),
                "{refs:?} printed:\n{}",
                r.stdout
            );
            assert!(!has_non_finite(&r.stderr), "{refs:?} said:\n{}", r.stderr);
            assert!(!r.stderr.contains("panicked"), "{refs:?}: {}", r.stderr);
        }
    }
    // Every file the commands wrote.
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "bin") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        assert!(!has_non_finite(&text), "{} holds:\n{text}", p.display());
    }
}
