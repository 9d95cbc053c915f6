//! Real third-party evaluation outputs (issue #46), read from `../shared/real-evals` (see
//! PROVENANCE.md there: sources, commits, licences and the sources' own published numbers).
//! Nothing of them is copied into the repository; a missing folder FAILS these tests.
//!
//! Every number asserted is the source's own: inspect's `results` of its log, and the
//! lm-evaluation-harness's `results_<date>.json` (`"exact_match,<filter>"` and
//! `"exact_match_stderr,<filter>"`). The harness's stderr for a `mean` aggregation is
//! `mean_stderr` = `sample_stddev / sqrt(n)` (`lm_eval/api/metrics.py`: `sample_stddev` is the
//! n − 1 standard deviation of the per-document scores); inspect's `stderr()` is the same over
//! its samples. With one read per document, the balanced nested ANOVA's SE of the grand mean
//! is √(MS_Q / Q) = √(s²/Q) with s² the (n − 1) variance of the documents' scores: the same
//! formula, so `stats variance` must give those numbers to rounding (1e-12).

use std::path::{Path, PathBuf};

use crate::common::{json, stats};

/// `../shared/real-evals/<rel>`, which must exist: these tests fail, not skip, without it.
fn real(rel: &str) -> String {
    let p = format!("{}/../shared/real-evals/{rel}", env!("CARGO_MANIFEST_DIR"));
    assert!(
        Path::new(&p).exists(),
        "{p} is missing: the real third-party outputs (../shared/real-evals, PROVENANCE.md) are \
         needed by these tests"
    );
    p
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

/// `stats variance ARGS --format json`.
fn variance(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["variance"];
    a.extend_from_slice(args);
    a.extend(["--format", "json"]);
    json(&a)
}

/// `stats import ARGS --out TMP/p.csv --format json`: the report and the panel CSV's lines.
fn import(args: &[&str]) -> (serde_json::Value, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("p.csv");
    let mut a = vec!["import"];
    a.extend_from_slice(args);
    let o = out.to_str().unwrap();
    a.extend(["--out", o, "--format", "json"]);
    let v = json(&a);
    let csv = std::fs::read_to_string(&out).unwrap();
    (v, csv.lines().map(String::from).collect())
}

/// inspect's own `accuracy` and `stderr` of the gpt-4 MMLU log (285 samples, 1 epoch):
/// 0.7824561403508772 ± 0.024481850763866792 (PROVENANCE.md; the log's `results`), the
/// mean of the `choice` scores and the (n − 1) SE of the mean over samples.
#[test]
fn inspect_mmlu_reproduces_its_accuracy_and_stderr() {
    let log =
        real("inspect/inspect_demo/2025-07-30T18-42-38+00-00_mmlu_ZYEnfbu3nstBuwzjiAGzuG.eval");
    let v = variance(&[&log]);
    assert_eq!(v["metric"], "choice", "{v}");
    assert_eq!(v["strata"][0]["questions"], 285, "{v}");
    let (est, se) = (v["estimate"].as_f64().unwrap(), v["se"].as_f64().unwrap());
    assert!(near(est, 0.7824561403508772), "{est}");
    assert!(near(se, 0.024481850763866792), "{se}");
}

/// gpt-4o on KoBEST from an older harness (sample lines without `metrics` or `filter`),
/// imported from the UNPATCHED folder: every task's `exact_match` and its stderr are the
/// harness's own (results_2024-11-28T18-09-15.647260.json; filter get-answer for boolq, copa,
/// hellaswag, none for sentineg and wic), each task a stratum.
#[test]
fn kobest_from_an_older_harness_reproduces_every_tasks_exact_match_and_stderr() {
    let dir = real("lmeval/gpt4o_kobest");
    let harness = [
        (
            "kobest_boolq",
            1404,
            0.9565527065527065,
            0.005442607058113144,
        ),
        ("kobest_copa", 1000, 0.98, 0.0044294039801783276),
        ("kobest_hellaswag", 500, 0.746, 0.019486596801643385),
        (
            "kobest_sentineg",
            397,
            0.982367758186398,
            0.006613680698322635,
        ),
        (
            "kobest_wic",
            1260,
            0.35555555555555557,
            0.013490672872121768,
        ),
    ];
    let v = variance(&[&dir, "--dataset-from", "task"]);
    assert_eq!(v["metric"], "exact_match", "{v}");
    let strata = v["strata"].as_array().unwrap();
    assert_eq!(strata.len(), 5, "{v}");
    for (task, q, mean, se) in harness {
        let s = strata.iter().find(|s| s["name"] == task).expect(task);
        assert_eq!(s["questions"], q, "{task}");
        let (m, e) = (s["mean"].as_f64().unwrap(), s["se"].as_f64().unwrap());
        assert!(near(m, mean), "{task}: mean {m}, harness {mean}");
        assert!(near(e, se), "{task}: se {e}, harness {se}");
    }
    // The import says which rule named the metrics: the results file's configs for four
    // tasks; sentineg's config has no metric_list, so its `results` keys.
    let (r, _) = import(&[&dir, "--dataset-from", "task"]);
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for task in [
        "kobest_boolq",
        "kobest_copa",
        "kobest_hellaswag",
        "kobest_wic",
    ] {
        assert!(
            notes
                .iter()
                .any(|n| n.contains(&format!("(configs.{task}.metric_list)"))),
            "{task}: {notes:?}"
        );
    }
    assert!(
        notes.iter().any(
            |n| n.contains("the 'metric,filter' keys of results.kobest_sentineg), filter none")
        ),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("samples_kobest_boolq") && n.contains("filter get-answer")),
        "{notes:?}"
    );
}

/// lm-eval's `output/<model>/` layout (winogrande, --limit 10): the folder is searched
/// recursively and imported as four systems; SOLAR's two runs (14-36-36: 0.7 ± 0.1528,
/// 15-04-32: 0.8 ± 0.1333) are its reads 0 and 1 in date order, the llama fine-tune's five
/// exact_match runs its reads 0-4, and its loglikelihood `acc` run (13-17-27, no `metrics`
/// key) is kept apart as an arm of its own, named in a note.
#[test]
fn winogrande_output_folder_is_four_systems_with_repeated_runs_as_reads() {
    let dir = real("lmeval/winogrande_limit10");
    let (r, csv) = import(&[&dir]);
    assert_eq!(r["logs"].as_array().unwrap().len(), 10, "{r}");
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 10, "{r}");
    assert!(
        skipped.iter().all(|s| s["reason"]
            .as_str()
            .unwrap()
            .starts_with("lm-eval results file")),
        "{r}"
    );
    assert_eq!(
        csv[0],
        "dataset,question,trajectory,read,arm,exact_match,acc"
    );
    let text = csv.join("\n");
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let mut arms: Vec<(String, u32)> = rows
        .iter()
        .map(|r| (r[4].to_string(), r[3].parse().unwrap()))
        .collect();
    arms.sort();
    arms.dedup();
    let llama = "/vfroot/n22-model/f6e12a6705dc47f5af9f2b6bce90e0d4/93/40/e3564e474cf19dfb7e2fc364fe61/llama3.1-pro16-0827-Inst-nc-chat_241016";
    let solar = "upstage/SOLAR-10.7B-Instruct-v1.0";
    let mut want: Vec<(String, u32)> = vec![
        ("LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct".into(), 0),
        ("gpt-4o".into(), 0),
        (format!("{llama} [acc,none]"), 0),
        (solar.into(), 0),
        (solar.into(), 1),
    ];
    want.extend((0..5).map(|r| (llama.to_string(), r)));
    want.sort();
    assert_eq!(arms, want);
    assert_eq!(rows.len(), 100);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "{solar} on winogrande: 2 runs (2024-12-23T14-36-36.300029, 2024-12-23T15-04-32.131238) are the reads 0-1"
        )),
        "{notes}"
    );
    assert!(
        notes.contains("the run(s) 2024-12-23T13-17-27.691350 score acc with filter none, unlike the 5 run(s) of exact_match with filter get-answer: kept apart"),
        "{notes}"
    );

    // Each SOLAR run alone is the harness's number for it.
    for (file, mean, se) in [
        (
            "samples_winogrande_2024-12-23T14-36-36.300029.jsonl",
            0.7,
            0.15275252316519464,
        ),
        (
            "samples_winogrande_2024-12-23T15-04-32.131238.jsonl",
            0.8,
            0.13333333333333333,
        ),
    ] {
        let v = variance(&[&format!("{dir}/upstage__SOLAR-10.7B-Instruct-v1.0/{file}")]);
        let (m, e) = (v["estimate"].as_f64().unwrap(), v["se"].as_f64().unwrap());
        assert!(near(m, mean) && near(e, se), "{file}: {m} ± {e}");
    }
    // The four systems of the exact_match panel, each system's estimate the mean of its
    // runs' harness numbers, its SE over the 10 documents' read means.
    for (arm, mean, se, reads) in [
        ("gpt-4o", 0.3, 0.15275252316519464, 1),
        ("LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct", 0.0, 0.0, 1),
        // The five runs score every document alike (0.7 each), so the SE is the harness's.
        (llama, 0.7, 0.15275252316519466, 5),
        // (0.7 + 0.8) / 2; document means 0,1,0,1,1,1,1,0.5,1,1: Σ(x − 0.75)² = 1.625,
        // SE = √(1.625 / 9 / 10).
        (solar, 0.75, (1.625f64 / 9.0 / 10.0).sqrt(), 2),
    ] {
        let v = variance(&[&dir, "--metric", "exact_match", "--arm", arm]);
        let s = &v["strata"][0];
        assert_eq!(
            (s["questions"].as_u64(), s["reads"].as_u64()),
            (Some(10), Some(reads)),
            "{arm}: {v}"
        );
        let (m, e) = (v["estimate"].as_f64().unwrap(), v["se"].as_f64().unwrap());
        assert!(near(m, mean) && near(e, se), "{arm}: {m} ± {e}");
    }
}

/// SOLAR on the Open LLM Leaderboard's math-hard group: every one of 1324 documents scored 0
/// (the harness says exact_match 0.0 ± 0.0 on all 7 subtasks). It imports; each task is a
/// stratum with mean 0 and SE 0, the variance shares are undefined with the reason, nothing
/// prints NaN, and the import's notes say the outcome does not vary.
#[test]
fn a_run_scored_zero_everywhere_imports_and_says_its_outcome_is_constant() {
    let dir = real("lmeval/solar_math_hard");
    let v = variance(&[&dir, "--dataset-from", "task"]);
    let strata = v["strata"].as_array().unwrap();
    assert_eq!(strata.len(), 7, "{v}");
    let q: u64 = strata
        .iter()
        .map(|s| s["questions"].as_u64().unwrap())
        .sum();
    assert_eq!(q, 1324);
    for s in strata {
        assert_eq!(
            (s["mean"].as_f64(), s["se"].as_f64()),
            (Some(0.0), Some(0.0)),
            "{s}"
        );
        assert_eq!(
            s["undefined"]["share_se2"], "the outcome does not vary",
            "{s}"
        );
    }
    assert_eq!(
        (v["estimate"].as_f64(), v["se"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    let out = stats()
        .args(["variance", &dir, "--dataset-from", "task"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.to_lowercase().contains("nan"), "{text}");
    let (r, _) = import(&[&dir, "--dataset-from", "task"]);
    let notes = r["notes"].to_string();
    assert_eq!(
        notes
            .matches("scored 0 on exact_match: the outcome does not vary")
            .count(),
        7,
        "{notes}"
    );
    assert!(
        notes.contains("every one of its 307 documents scored 0"),
        "{notes}"
    );
}

/// inspect's own test logs: 2 samples × 2 epochs (accuracy 0.75, stderr 0.25 in its
/// `results`: the SE over the 2 samples' epoch means 1 and 0.5, √(0.125 / 2) = 0.25) are two
/// reads; an unscored run is refused, also with `--missing-as 0` (it has no scorer to fill).
#[test]
fn inspect_epochs_are_reads_and_an_unscored_run_is_refused() {
    let dir = real("inspect/inspect_ai_tests");
    let v = variance(&[&format!("{dir}/tests_log_test_eval_log_log_streaming.eval")]);
    let s = &v["strata"][0];
    assert_eq!(
        (s["questions"].as_u64(), s["reads"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    assert!(near(v["estimate"].as_f64().unwrap(), 0.75), "{v}");
    assert!(near(v["se"].as_f64().unwrap(), 0.25), "{v}");
    let unscored = format!(
        "{dir}/tests_scorer_logs_2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
    );
    let tmp = tempfile::tempdir().unwrap();
    for extra in [&[][..], &["--missing-as", "0"][..]] {
        let out = stats()
            .args(["import", &unscored, "--out"])
            .arg(tmp.path().join("p.csv"))
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no scored samples in the logs"), "{err}");
        assert!(!tmp.path().join("p.csv").exists());
    }
}

/// The inspect folder holds the same log twice (`log_formats.eval` and `.json`): searched
/// recursively, it is refused as one cell in two logs, naming both files.
#[test]
fn the_same_inspect_log_in_two_formats_is_refused_by_name() {
    let dir = real("inspect");
    let tmp = tempfile::tempdir().unwrap();
    let out = stats()
        .args(["import", &dir, "--dataset-from", "task", "--out"])
        .arg(tmp.path().join("p.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tests_log_test_eval_log_log_formats.json")
            && err.contains("tests_log_test_eval_log_log_formats.eval")
            && err.contains("one cell, two logs"),
        "{err}"
    );
}

/// `stats mcq score` given files that are not `mcq run` results says what each looks like
/// and what it expected, not "not valid UTF-8": an inspect `.eval` zip, a CSV panel, a
/// Parquet file, bytes that are not text.
#[test]
fn mcq_score_on_a_foreign_file_says_what_it_looks_like() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = crate::common::write(&tmp, "panel.csv", "dataset,question,f1\nd,q1,1\n");
    let bin = tmp.path().join("blob.bin");
    // A PNG file's signature and the start of its header chunk.
    std::fs::write(
        &bin,
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x01\x00",
    )
    .unwrap();
    let cases = [
        (
            real("inspect/inspect_demo/2025-07-30T18-42-38+00-00_mmlu_ZYEnfbu3nstBuwzjiAGzuG.eval"),
            "an inspect_ai .eval log (a zip archive)",
        ),
        (
            real("livebench/livebench_13012025.parquet"),
            "a Parquet file",
        ),
        (
            csv.to_str().unwrap().to_string(),
            "a CSV file (header: dataset,question,f1)",
        ),
        (
            bin.to_str().unwrap().to_string(),
            "a binary file (not text)",
        ),
    ];
    for (file, looks) in cases {
        let out = stats().args(["mcq", "score", &file]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("this is {looks}, not `mcq run` results"))
                && err.contains("expected the JSONL file `stats mcq run` writes")
                && !err.contains("UTF-8"),
            "{file}: {err}"
        );
    }
}

/// lm-eval's clusters come from a doc field (#48 item 5): KoBEST WiC asks about one `word` in
/// two contexts, often more than once, so `--cluster-from word` groups its 1,260 documents
/// into the 778 words. Reference (the samples file as published):
/// python3 -c "import json,collections; f='samples_kobest_wic_2024-11-28T18-09-15.647260.jsonl';
///   r=[json.loads(l) for l in open(f)]; c=collections.Counter(x['doc']['word'] for x in r);
///   print(len(r), len(c), sorted(collections.Counter(c.values()).items()),
///   r[0]['doc_id'], r[0]['doc']['word'])"
/// prints `1260 778 [(1, 296), (2, 482)] 0 …` (the first document's word is the first
/// cluster below).
#[test]
fn lm_eval_docs_are_clustered_by_a_doc_field() {
    let dir = real("lmeval/gpt4o_kobest");
    let file = format!("{dir}/samples_kobest_wic_2024-11-28T18-09-15.647260.jsonl");
    let (_, lines) = import(&[&file, "--cluster-from", "word"]);
    let text = lines.join("\n");
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (q, c) = (col("question"), col("cluster"));
    let mut per_cluster: std::collections::HashMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    let mut n = 0;
    for r in rows.records() {
        let r = r.unwrap();
        per_cluster
            .entry(r[c].to_string())
            .or_default()
            .insert(r[q].to_string());
        n += 1;
    }
    assert_eq!(n, 1260);
    assert_eq!(per_cluster.len(), 778);
    let mut sizes = std::collections::BTreeMap::new();
    for qs in per_cluster.values() {
        *sizes.entry(qs.len()).or_insert(0) += 1;
    }
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [(1, 296), (2, 482)]);

    // A field the docs do not have is refused by name, with the document.
    let o = stats()
        .args(["import", &file, "--cluster-from", "passage", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("p.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("has no doc field 'passage' (a string or number) for the cluster"),
        "{err}"
    );
}
