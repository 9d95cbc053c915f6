//! `stats import` and logs read as panels (issue #32): inspect_ai `.eval`/`.json` logs made
//! by the real inspect_ai, lm-eval samples built from `result_schema.py`, and Parquet written
//! by pyarrow and polars (tests/fixtures/import/README.md says how each was made).
//!
//! Expected numbers: `/work/venv-import/bin/python tests/reference/import_inspect.py` (inspect
//! 0.3.285 reading the fixture logs itself, numpy for the contrast) printed
//!   model-a match accuracy 0.7999999999999998 stderr 0.03746343246326777
//!   model-b match accuracy 0.7666666666666665 stderr 0.03504383220252312
//!   openai-api/scripted/model-{a,b} input 2410 cache_read 1280 output 240 reasoning 60 total 3930
//!   contrast mean -0.03333333333333333 se 0.04775669329409192
//! and `python3 tests/fixtures/import/make_lmeval_samples.py` printed lm-eval's
//!   model-a strict-match (0.8, 0.09176629354822471), model-b (0.65, 0.1094243309804831).

use std::path::PathBuf;

use crate::common::{json, stats};

fn fixture(p: &str) -> String {
    format!("{}/tests/fixtures/import/{p}", env!("CARGO_MANIFEST_DIR"))
}

const MODEL_A: &str = "openai-api/scripted/model-a";
const CONTRAST: &str = "openai-api/scripted/model-b-openai-api/scripted/model-a";

/// `(estimate, se)` of `stats variance ARGS --format json`.
fn variance(args: &[&str]) -> (f64, f64) {
    let mut a = vec!["variance"];
    a.extend_from_slice(args);
    a.extend(["--format", "json"]);
    let v = json(&a);
    (v["estimate"].as_f64().unwrap(), v["se"].as_f64().unwrap())
}

/// Whether `a` and `b` are within `ulps` units in the last place: inspect sums its means in
/// another order than the nested ANOVA, which can move the last bit.
fn close(a: f64, b: f64, ulps: u64) -> bool {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() <= ulps
}

/// Inspect's own accuracy and stderr (the SE over the epoch-reduced sample means) are the
/// one-arm estimate and SE, from the `.eval`, the `.json` and the chunked `.eval` alike.
#[test]
fn one_model_reproduces_inspects_accuracy_and_stderr() {
    let logs = [
        fixture("logs/eval/arith-model-a.eval"),
        fixture("logs/json/arith-model-a.json"),
        fixture("chunked/arith-model-a.eval"),
    ];
    let mut seen = Vec::new();
    for log in &logs {
        let (est, se) = variance(&[log, "--metric", "match", "--arm", MODEL_A]);
        assert!(close(est, 0.7999999999999998, 2), "{log}: {est}");
        assert!(close(se, 0.03746343246326777, 2), "{log}: {se}");
        seen.push((est.to_bits(), se.to_bits()));
    }
    // The three layouts are one panel, to the bit.
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // Model b, through the other scorer (its scores equal match's on these answers).
    let (est, se) = variance(&[
        &fixture("logs/eval/arith-model-b.eval"),
        "--metric",
        "includes",
        "--arm",
        "openai-api/scripted/model-b",
    ]);
    assert!(close(est, 0.7666666666666665, 2), "{est}");
    assert!(close(se, 0.03504383220252312, 2), "{se}");
}

/// The paired contrast of two logs in one directory equals numpy's SE over the questions of
/// the per-question mean difference; `stats import` then `stats variance` of the CSV gives
/// the same bits as the direct read.
#[test]
fn the_paired_contrast_of_two_logs_is_numpys() {
    let dir = fixture("logs/eval");
    let (est, se) = variance(&[&dir, "--metric", "match", "--contrast", CONTRAST]);
    assert!(close(est, -0.03333333333333333, 2), "{est}");
    assert!(close(se, 0.04775669329409192, 2), "{se}");
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("panel.csv");
    let ledger = tmp.path().join("ledger.jsonl");
    stats()
        .args(["import", &dir, "--out"])
        .arg(&csv)
        .arg("--ledger-out")
        .arg(&ledger)
        .assert()
        .success();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("dataset,question,trajectory,read,arm,includes,match\n"));
    assert_eq!(text.lines().count(), 1 + 2 * 20 * 3);
    let (e2, s2) = variance(&[
        csv.to_str().unwrap(),
        "--metric",
        "match",
        "--contrast",
        CONTRAST,
    ]);
    assert_eq!((e2.to_bits(), s2.to_bits()), (est.to_bits(), se.to_bits()));
    // The .json logs are the same panel.
    let (e3, s3) = variance(&[
        &fixture("logs/json"),
        "--metric",
        "match",
        "--contrast",
        CONTRAST,
    ]);
    assert_eq!((e3.to_bits(), s3.to_bits()), (est.to_bits(), se.to_bits()));
}

/// The ledger's token totals per model are the log's `stats.model_usage`: input 2410 plus
/// the 1280 cache reads inspect counts apart, 1280 cached, 240 output, 60 reasoning; and
/// `stats cost` prices it, every sample epoch being one read.
#[test]
fn ledger_tokens_are_the_logs_model_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("p.csv");
    let ledger = tmp.path().join("l.jsonl");
    stats()
        .args(["import", &fixture("logs/eval"), "--out"])
        .arg(&csv)
        .arg("--ledger-out")
        .arg(&ledger)
        .assert()
        .success();
    let text = std::fs::read_to_string(&ledger).unwrap();
    for model in [MODEL_A, "openai-api/scripted/model-b"] {
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["model"] == model)
            .collect();
        assert_eq!(rows.len(), 60);
        let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(
            (
                sum("input_tokens"),
                sum("cached_input_tokens"),
                sum("output_tokens"),
                sum("reasoning_tokens")
            ),
            (2410 + 1280, 1280, 240, 60)
        );
        assert!(rows
            .iter()
            .all(|r| r["kind"] == "eval" && r["arm"] == model));
    }
    let cost = json(&["cost", ledger.to_str().unwrap(), "--format", "json"]);
    let u = &cost["unit_costs"];
    // The 60 (question, epoch) cells, each billed for both arms' calls (as a paired panel's
    // cells are): c_R = 2 · (3690 + 240) / 60 = 131 tokens.
    assert_eq!(u["reads"], 60, "{cost}");
    assert_eq!(u["tokens"]["read"].as_f64(), Some(131.0), "{cost}");
}

/// lm-eval: the harness's reported accuracy and stderr (`mean`, `mean_stderr`) per filter,
/// the model from the results file; several filters need `--filter`.
#[test]
fn lm_eval_samples_reproduce_the_harness_numbers() {
    let a = fixture("lmeval/model-a/samples_arith_2026-12-02T04-00-00.000000.jsonl");
    let (est, se) = variance(&[&a, "--filter", "strict-match", "--arm", "model-a"]);
    assert!(
        close(est, 0.8, 2) && close(se, 0.09176629354822471, 2),
        "{est} {se}"
    );
    let (est, se) = variance(&[&a, "--filter", "flexible-extract", "--arm", "model-a"]);
    assert!(
        close(est, 0.9, 2) && close(se, 0.06882472016116853, 2),
        "{est} {se}"
    );
    let out = stats().args(["variance", &a]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("samples_arith_2026-12-02T04-00-00.000000.jsonl: the samples are of 2 filters (strict-match, flexible-extract); pick one"),
        "{err}"
    );
    // Both models imported: the paired contrast's SE is that of the per-document
    // differences (b − a on strict-match: sd 0.1539, hand-computed below).
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("p.csv");
    stats()
        .args([
            "import",
            &a,
            &fixture("lmeval/model-b/samples_arith_2026-12-02T04-00-00.000000.jsonl"),
            "--filter",
            "strict-match",
            "--out",
        ])
        .arg(&csv)
        .assert()
        .success();
    let (est, se) = variance(&[csv.to_str().unwrap(), "--contrast", "model-b-model-a"]);
    // The documents' differences, from the fixture's rule (make_lmeval_samples.py `right`).
    let d: Vec<f64> = (0..20)
        .map(|k: i64| {
            let a = f64::from(u8::from((k * 7) % 5 != 0));
            let b = f64::from(u8::from((k * 5) % 3 != 0));
            b - a
        })
        .collect();
    let m = d.iter().sum::<f64>() / 20.0;
    let sd = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 19.0).sqrt();
    assert!(
        (est - m).abs() < 1e-15 && (se - sd / 20f64.sqrt()).abs() < 1e-15,
        "{est} {se}"
    );
}

/// Parquet written by pyarrow (snappy, dictionary-encoded datasets) and by polars (zstd,
/// large strings) is the demo CSV panel, to the last bit of every number printed.
#[test]
fn parquet_by_pyarrow_and_polars_is_the_csv_panel() {
    let csv = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/panel.csv");
    let doc = |p: &str| {
        let mut v = json(&[
            "variance",
            p,
            "--contrast",
            "adaptive-open",
            "--format",
            "json",
        ]);
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let want = doc(csv);
    for p in [
        "parquet/panel-pyarrow.parquet",
        "parquet/panel-polars.parquet",
    ] {
        assert_eq!(doc(&fixture(p)), want, "{p}");
    }
    let (e, s) = variance(&[
        &fixture("parquet/panel-polars.parquet"),
        "--arm",
        "open",
        "--metric",
        "em",
    ]);
    let (e2, s2) = variance(&[csv, "--arm", "open", "--metric", "em"]);
    assert_eq!((e.to_bits(), s.to_bits()), (e2.to_bits(), s2.to_bits()));
}

/// A correlate table from Parquet (pyarrow's snappy, polars' zstd) is the demo's
/// capability CSV: the same correlations, intervals and p-values to the last bit.
#[test]
fn parquet_correlate_tables_are_the_csv_table() {
    let csv = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/capability.csv");
    let doc = |p: &str| {
        let mut v = json(&[
            "correlate",
            p,
            "--x",
            "planning,evidence",
            "--y",
            "browsecomp,xbench",
            "--replicates",
            "300",
            "--permutations",
            "99",
            "--backend",
            "cpu",
            "--format",
            "json",
        ]);
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let want = doc(csv);
    // The table has 12 models, so one cell is the published pair's Pearson r.
    assert_eq!(want["pairs"].as_array().map(Vec::len), Some(4), "{want}");
    for p in [
        "parquet/capability-pyarrow.parquet",
        "parquet/capability-polars.parquet",
    ] {
        assert_eq!(doc(&fixture(p)), want, "{p}");
    }
}

/// The four commands' JSON of `ARGS` with the envelope's `run` taken out, and the
/// envelope's `inputs`.
fn body_and_inputs(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let mut v = json(args);
    let run = v.as_object_mut().unwrap().remove("run").unwrap();
    (v, run["inputs"].clone())
}

/// `stats variance logs/*.eval`: the paths a shell glob expands to are read as one panel,
/// exactly as the directory holding them, by every panel command (PANEL LOG…, and
/// `--audit LOG…`); the envelope lists every file.
#[test]
fn several_log_paths_are_one_panel() {
    let (a, b) = (
        fixture("logs/eval/arith-model-a.eval"),
        fixture("logs/eval/arith-model-b.eval"),
    );
    let dir = fixture("logs/eval");
    let flags = [
        "--metric",
        "match",
        "--contrast",
        CONTRAST,
        "--format",
        "json",
    ];
    for cmd in [
        vec!["variance"],
        vec!["bootstrap", "--replicates", "200", "--backend", "cpu"],
        vec!["compare", "--replicates", "200", "--backend", "cpu"],
    ] {
        let with = |paths: &[&str]| {
            let mut args = vec![cmd[0]];
            args.extend_from_slice(paths);
            args.extend_from_slice(&cmd[1..]);
            // compare has no --contrast: every pair of arms is its family.
            let f: &[&str] = if cmd[0] == "compare" {
                &["--metric", "match", "--format", "json"]
            } else {
                &flags
            };
            args.extend_from_slice(f);
            body_and_inputs(&args)
        };
        let (from_dir, _) = with(&[&dir]);
        let (from_files, inputs) = with(&[&a, &b]);
        assert_eq!(from_files, from_dir, "{}", cmd[0]);
        assert_eq!(inputs["panel"], serde_json::json!([a, b]), "{}", cmd[0]);
    }
    // The contrast's numbers are numpy's (the module's reference), from the two files.
    let (est, se) = variance(&[&a, &b, "--metric", "match", "--contrast", CONTRAST]);
    assert!(close(est, -0.03333333333333333, 2), "{est}");
    assert!(close(se, 0.04775669329409192, 2), "{se}");
    // An option taking the audit: `--audit LOG LOG`.
    let plan = |audit: &[&str]| {
        let mut args = vec!["plan", "--audit"];
        args.extend_from_slice(audit);
        args.extend_from_slice(&flags[..4]);
        args.extend(["--mde", "0.05", "--unit-costs", "1,1", "--format", "json"]);
        body_and_inputs(&args)
    };
    let (from_dir, _) = plan(&[&dir]);
    let (from_files, inputs) = plan(&[&a, &b]);
    assert_eq!(from_files, from_dir);
    assert_eq!(inputs["audit"], serde_json::json!([a, b]));
}

/// Several paths are one panel only when each is a log: a CSV among them is refused by
/// name (exit 2), as is a missing file, before anything is read.
#[test]
fn several_paths_with_a_panel_among_them_are_refused() {
    let a = fixture("logs/eval/arith-model-a.eval");
    let csv = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/panel.csv");
    let out = stats()
        .args(["variance", &a, csv, "--metric", "match"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("data/demo/panel.csv") && err.contains("read as one panel only when each is"),
        "{err}"
    );
    let out = stats()
        .args(["variance", &a, "no-such.eval"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no-such.eval"), "{err}");
}

/// `stats import ARGS --out` in a fresh directory: the exit code, stderr, and whether the
/// output exists.
fn import_fails(args: &[String]) -> (Option<i32>, String, bool) {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("p.csv");
    let o = stats()
        .arg("import")
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out.exists(),
    )
}

/// Every bad input of item 5 is exit 2 naming the file and the entry, and writes nothing.
#[test]
fn bad_logs_are_refused_naming_the_file_and_entry() {
    let bad = |f: &str| fixture(&format!("bad/{f}"));
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            vec![bad("truncated.eval")],
            vec!["truncated.eval: not a readable .eval archive (truncated or damaged?)"],
        ),
        (
            vec![bad("unfinished.eval")],
            vec!["unfinished.eval: header.json: missing; the log is still being written"],
        ),
        (
            vec![fixture("logs/eval/arith-model-a.eval"), bad("geometry-model-a.eval")],
            vec![
                "arith-model-a.eval: the logs are of 2 tasks (arith in ",
                "geometry in ",
                "take the dataset from the task",
            ],
        ),
        (
            vec![bad("duplicate.eval")],
            vec!["duplicate.eval: samples/q03_epoch_2_copy.json: sample q03 epoch 2 appears twice (first in samples/q03_epoch_2.json)"],
        ),
        (
            vec![bad("oddscore.eval")],
            vec!["oddscore.eval: samples/q05_epoch_1.json: score 'match' is [1,2]; expected C, I, P or N"],
        ),
        (
            vec![fixture("logs/eval/arith-model-a.eval"), fixture("logs/json/arith-model-a.json")],
            vec!["arith-model-a.json: samples[", "is also in ", "one cell, two logs"],
        ),
    ];
    for (args, wants) in cases {
        let (code, err, written) = import_fails(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        for w in wants {
            assert!(err.contains(w), "{args:?}: {err}");
        }
        assert!(!written, "{args:?}");
    }
    // Mixed tasks as strata, when asked: two datasets.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p.csv");
    stats()
        .args([
            "import",
            &fixture("logs/eval/arith-model-a.eval"),
            &bad("geometry-model-a.eval"),
        ])
        .args(["--dataset-from", "task", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("\ngeometry,q05,0,2,") && text.contains("\narith,q19,0,2,"));
    // The mapping flags reach the panel commands: the score it cannot map is left out.
    let (est, _) = variance(&[
        &bad("oddscore.eval"),
        "--score",
        "includes",
        "--arm",
        MODEL_A,
    ]);
    assert!(est > 0.0);
    // An input is never an output.
    let log = fixture("logs/eval/arith-model-a.eval");
    let o = stats()
        .args(["import", &log, "--out", &log])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--out: ") && err.contains("is also the input log: it would be overwritten"),
        "{err}"
    );
    // Nor are the two outputs one file.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p.csv");
    let o = stats()
        .args(["import", &log, "--out"])
        .arg(&p)
        .arg("--ledger-out")
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--ledger-out: ") && err.contains("p.csv is also the panel's file (out)"),
        "{err}"
    );
    assert!(!p.exists());
}

/// The library's front door (`ragstats_core::analyses::import`, what `ragstats.read_logs`
/// calls) writes the panel and ledger `stats import` writes, byte for byte, and reports
/// the same document.
#[test]
fn the_library_call_writes_what_the_command_writes() {
    use ragstats_core::analyses::{import, ImportSettings};
    use ragstats_core::panel::Source;
    let logs = fixture("logs/eval");
    let tmp = tempfile::tempdir().unwrap();
    let (cli, lib) = (tmp.path().join("cli"), tmp.path().join("lib"));
    let o = stats()
        .args(["import", &logs, "--missing-as", "0", "--out"])
        .arg(cli.join("p.csv"))
        .arg("--ledger-out")
        .arg(cli.join("l.jsonl"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let settings = ImportSettings {
        out: lib.join("p.csv"),
        ledger_out: Some(lib.join("l.jsonl")),
        logs: ragstats_core::import::LogMapping {
            missing_as: Some(0.0),
            ..Default::default()
        },
        ..Default::default()
    };
    let done = import(&Source::file(&logs), &settings).unwrap();
    for f in ["p.csv", "l.jsonl"] {
        let (a, b) = (
            std::fs::read(cli.join(f)).unwrap(),
            std::fs::read(lib.join(f)).unwrap(),
        );
        assert!(!a.is_empty() && a == b, "{f} differs");
    }
    assert_eq!(
        std::fs::read_to_string(cli.join("p.csv"))
            .unwrap()
            .lines()
            .count(),
        1 + 2 * 20 * 3
    );
    // The same document but for the files' own paths.
    let mut want: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got = done.document();
    for doc in [&mut want, &mut got] {
        doc["out"] = serde_json::Value::Null;
        doc["ledger_out"] = serde_json::Value::Null;
    }
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        serde_json::to_string(&want).unwrap()
    );
}

/// A sample with an error is left out and listed with its id, never scored 0 silently;
/// `--missing-as 0` scores it 0.
#[test]
fn samples_with_errors_are_listed_and_left_out() {
    let text = std::fs::read_to_string(fixture("logs/json/arith-model-a.json")).unwrap();
    let mut log: serde_json::Value = serde_json::from_str(&text).unwrap();
    let s = &mut log["samples"][0];
    let (id, epoch) = (
        s["id"].as_str().unwrap().to_string(),
        s["epoch"].as_u64().unwrap(),
    );
    s["error"] = serde_json::json!({"message": "RuntimeError: boom", "traceback": ""});
    s.as_object_mut().unwrap().remove("scores");
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("failed.json");
    std::fs::write(&p, serde_json::to_string(&log).unwrap()).unwrap();
    let out = tmp.path().join("p.csv");
    let o = stats()
        .arg("import")
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "left out 1 sample(s) (score missing samples as 0 to keep them): {id} epoch {epoch} (error: RuntimeError: boom)"
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 60);
    stats()
        .arg("import")
        .arg(&p)
        .args(["--missing-as", "0", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 61);
    // A score of infinity or NaN would poison every mean: refused, naming the flag, for the
    // import and for a panel command reading the log directly; nothing is written.
    let other = out.with_extension("nan.csv");
    for args in [
        vec![
            "import".to_string(),
            p.display().to_string(),
            "--missing-as".into(),
            "inf".into(),
            "--out".into(),
            other.display().to_string(),
        ],
        vec![
            "variance".to_string(),
            p.display().to_string(),
            "--missing-as".into(),
            "nan".into(),
        ],
    ] {
        stats()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--missing-as: "))
            .stderr(predicates::str::contains(
                "is not a score: give a finite number, e.g. 0",
            ));
    }
    assert!(!other.exists());
    let read = epoch - 1;
    assert!(
        text.contains(&format!("arith,{id},0,{read},{MODEL_A},0,0\n")),
        "{text}"
    );
}

/// The ledger's `eval` rows by cell: per (question, read) the summed tokens (input, cached
/// included, + output) and the USD fee at `price` (USD per 1M: input, cached input, output)
/// of every row of that cell (both models' rows).
fn eval_cells(
    ledger: &std::path::Path,
    price: [f64; 3],
) -> std::collections::BTreeMap<(String, u64), (f64, f64)> {
    let mut cells: std::collections::BTreeMap<(String, u64), (f64, f64)> = Default::default();
    for line in std::fs::read_to_string(ledger).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!((&r["kind"], &r["trajectory"]), (&"eval".into(), &0.into()));
        let n = |k: &str| r[k].as_u64().unwrap() as f64;
        let (input, cached, output) = (
            n("input_tokens"),
            n("cached_input_tokens"),
            n("output_tokens"),
        );
        let fee = ((input - cached) * price[0] + cached * price[1] + output * price[2]) / 1e6;
        let c = cells
            .entry((
                r["question"].as_str().unwrap().to_string(),
                r["read"].as_u64().unwrap(),
            ))
            .or_default();
        c.0 += input + output;
        c.1 += fee;
    }
    cells
}

/// Whether `a` and `b` agree to 1e-12 relative (sums taken in another order).
fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// Issue #51 item 1: the ledger `stats import --ledger-out` writes prices the imported
/// panel. Each sample epoch's `eval` rows are that cell's read and the trajectory costs 0,
/// so `efficiency` and `plan --ledger` report c_T = 0, c_R1 = the mean cost of the first
/// epochs' cells and c_R+ = the mean of the later epochs' cells, in tokens and in USD, and
/// `allocate` bills each allocation the sum of its cells. The means are taken here from the
/// ledger's own token columns (the log made by the real inspect_ai, 20 samples × 3 epochs ×
/// 2 models; both models' rows of a cell are its cost, as the paired panel's cells are).
#[test]
fn an_imported_ledger_prices_efficiency_allocate_and_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("panel.csv");
    let ledger = tmp.path().join("ledger.jsonl");
    stats()
        .args(["import", &fixture("logs/eval"), "--out"])
        .arg(&csv)
        .arg("--ledger-out")
        .arg(&ledger)
        .assert()
        .success();
    let prices = tmp.path().join("prices.toml");
    // USD per 1M tokens: input 2, cached input 0.5, output 8 (both models).
    let price = [2.0, 0.5, 8.0];
    let mut toml = String::new();
    for m in [MODEL_A, "openai-api/scripted/model-b"] {
        toml.push_str(&format!(
            "[models.\"{m}\"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n\n"
        ));
    }
    toml.push_str("[search]\nusd_per_1000 = 0.0\n");
    std::fs::write(&prices, toml).unwrap();
    let cells = eval_cells(&ledger, price);
    assert_eq!(cells.len(), 20 * 3);
    let mean = |first: bool, usd: bool| {
        let v: Vec<f64> = cells
            .iter()
            .filter(|((_, r), _)| (*r == 0) == first)
            .map(|(_, c)| if usd { c.1 } else { c.0 })
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (first_tok, later_tok) = (mean(true, false), mean(false, false));
    let (first_usd, later_usd) = (mean(true, true), mean(false, true));
    // Every cell's tokens: 2 · (3690 + 240) / 60 = 131 on average (`stats cost`).
    assert!(
        near((first_tok + 2.0 * later_tok) / 3.0, 131.0),
        "{first_tok} {later_tok}"
    );
    let (csv_s, ledger_s, prices_s) = (
        csv.to_str().unwrap(),
        ledger.to_str().unwrap(),
        prices.to_str().unwrap(),
    );
    let panel = ["--metric", "match", "--contrast", CONTRAST];
    let boot = ["--replicates", "20", "--backend", "cpu", "--format", "json"];
    let check = |costs: &serde_json::Value, first: f64, later: f64, what: &str| {
        assert_eq!(costs["trajectory"].as_f64(), Some(0.0), "{what}: {costs}");
        assert!(
            near(costs["first_read"].as_f64().unwrap(), first),
            "{what}: {costs} {first}"
        );
        assert!(
            near(costs["read"].as_f64().unwrap(), later),
            "{what}: {costs} {later}"
        );
    };

    // efficiency and plan --ledger (the audit's strata), in tokens and in USD, are priced the
    // same way.
    for (command, costs) in [
        (&["efficiency", csv_s][..], "unit_costs"),
        (&["plan", "--audit", csv_s, "--mde", "0.05"][..], "costs"),
    ] {
        for (currency, first, later) in [
            ("tokens", first_tok, later_tok),
            ("usd", first_usd, later_usd),
        ] {
            let mut a = command.to_vec();
            a.extend(panel);
            a.extend([
                "--ledger",
                ledger_s,
                "--prices",
                prices_s,
                "--currency",
                currency,
            ]);
            a.extend(boot);
            let v = json(&a);
            check(
                &v["strata"][0][costs],
                first,
                later,
                &format!("{} {currency}", command[0]),
            );
            if command[0] == "plan" {
                assert!(v["allocations"][0]["cost"].as_f64().unwrap() > 0.0, "{v}");
            }
        }
    }

    // allocate: A = every question at 1 read (epoch 1), B = 10 questions at 3 reads; their
    // model tokens and fees are the sums of their cells.
    let mut a = vec!["allocate", csv_s];
    a.extend(panel);
    a.extend([
        "--ledger",
        ledger_s,
        "--prices",
        prices_s,
        "--allocation",
        "A=20:1:1",
        "--allocation",
        "B=10:1:3",
    ]);
    a.extend(boot);
    let v = json(&a);
    let questions: Vec<String> = {
        let mut q: Vec<String> = cells.keys().map(|(q, _)| q.clone()).collect();
        q.dedup();
        q
    };
    let sum = |qs: &[String], reads: u64, usd: bool| -> f64 {
        cells
            .iter()
            .filter(|((q, r), _)| qs.contains(q) && *r < reads)
            .map(|(_, c)| if usd { c.1 } else { c.0 })
            .sum()
    };
    let alloc = &v["allocations"];
    assert_eq!(
        alloc[0]["model_tokens"].as_f64(),
        Some(sum(&questions, 1, false)),
        "{v}"
    );
    assert!(
        near(
            alloc[0]["fees_usd"][0].as_f64().unwrap(),
            sum(&questions, 1, true)
        ),
        "{v}"
    );
    assert_eq!(
        alloc[1]["model_tokens"].as_f64(),
        Some(sum(&questions[..10], 3, false)),
        "{v}"
    );
    assert!(
        near(
            alloc[1]["fees_usd"][0].as_f64().unwrap(),
            sum(&questions[..10], 3, true)
        ),
        "{v}"
    );
}

/// A third party's real log (`../shared/real-evals`, PROVENANCE.md: openai/gpt-4 on MMLU,
/// 285 samples, 1 epoch; its `model_usage` says 40,623 input and 1,601 output tokens),
/// imported with its ledger: `plan --ledger` prices its read at the source's own
/// (40623 + 1601) / 285 = 148.154… tokens and its trajectory at 0. The shared data are not
/// part of the repository; without them this test fails (it does not skip).
#[test]
fn a_third_party_inspect_log_prices_its_plan_at_its_own_usage() {
    let log = format!(
        "{}/../shared/real-evals/inspect/inspect_demo/2025-07-30T18-42-38+00-00_mmlu_ZYEnfbu3nstBuwzjiAGzuG.eval",
        env!("CARGO_MANIFEST_DIR")
    );
    assert!(
        std::path::Path::new(&log).exists(),
        "{log} is missing: ../shared/real-evals (PROVENANCE.md) is needed by this test"
    );
    let tmp = tempfile::tempdir().unwrap();
    let (csv, ledger) = (tmp.path().join("p.csv"), tmp.path().join("l.jsonl"));
    stats()
        .args(["import", &log, "--out"])
        .arg(&csv)
        .arg("--ledger-out")
        .arg(&ledger)
        .assert()
        .success();
    let v = json(&[
        "plan",
        "--audit",
        csv.to_str().unwrap(),
        "--mde",
        "0.1",
        "--ledger",
        ledger.to_str().unwrap(),
        "--replicates",
        "20",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let c = &v["strata"][0]["costs"];
    let per_read = (40623.0 + 1601.0) / 285.0;
    assert_eq!(c["trajectory"].as_f64(), Some(0.0), "{c}");
    assert!(near(c["first_read"].as_f64().unwrap(), per_read), "{c}");
    assert!(near(c["read"].as_f64().unwrap(), per_read), "{c}");
}
