//! lm-evaluation-harness per-document samples: `samples_<task>_<date>.jsonl`, written with
//! `--log_samples`, one line per (document, filter) in the `SampleResult` shape of
//! `lm_eval/result_schema.py` (`doc_id`, `doc`, `target`, `arguments`, `resps`,
//! `filtered_resps`, `filter`, `metrics`, the hashes, and one top-level number per metric).
//!
//! The model is not in the samples file: it is read from the `results_<date>.json` beside
//! it with the same date (its `model_name`, else `config.model`), when there is one.
//!
//! Older harness versions wrote no `metrics` or `filter` key on a sample line; the metrics
//! and filters are then those the results file names for the task (`configs.<task>`'s
//! `metric_list` and `filter_list`, else the `metric,filter` keys of `results.<task>`), and
//! without a results file the line's numeric fields. The log's notes say which rule was used.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Format, ImportOptions, LmRun, Log, LogSample};
use crate::io::{clip, JsonlReader};
use crate::{Error, Result};

/// The task and the date of a samples file's name `samples_<task>_<date>.jsonl` (the date
/// is the last `_`-separated part when it starts with a digit).
fn task_and_date(path: &Path) -> (String, Option<String>) {
    let stem = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".jsonl").unwrap_or(&stem);
    let stem = stem.strip_prefix("samples_").unwrap_or(stem);
    match stem.rsplit_once('_') {
        Some((task, date))
            if date.starts_with(|c: char| c.is_ascii_digit()) && !task.is_empty() =>
        {
            (task.to_string(), Some(date.to_string()))
        }
        _ => (stem.to_string(), None),
    }
}

/// The `results_<date>.json` beside `path` with the same date.
fn results_file(path: &Path, date: &str) -> Option<PathBuf> {
    let f = path.with_file_name(format!("results_{date}.json"));
    f.is_file().then_some(f)
}

/// What a `results_<date>.json` says about one task of its run.
#[derive(Debug, Default)]
struct ResultsInfo {
    /// The model (`model_name`, else `config.model_args`' `pretrained=`, else `config.model`).
    model: Option<String>,
    /// The task's `repeats`, when more than 1.
    repeats: Option<u64>,
    /// The task's metrics and where they were read (`configs.<task>.metric_list`, else the
    /// `results.<task>` keys); empty when the file names none.
    metrics: Vec<String>,
    metrics_from: &'static str,
    /// The task's filters, in the harness's order (`configs.<task>.filter_list`, else the
    /// `results.<task>` keys); empty when the file names none.
    filters: Vec<String>,
}

/// The `configs.<task>` and `results.<task>` of a results file, read into [`ResultsInfo`].
fn results_info(results: &Value, task: &str) -> ResultsInfo {
    let model = results
        .get("model_name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .or_else(|| {
            let cfg = results.get("config")?;
            let args = cfg.get("model_args").and_then(Value::as_str).unwrap_or("");
            args.split(',')
                .find_map(|a| a.trim().strip_prefix("pretrained=").map(String::from))
                .or_else(|| cfg.get("model").and_then(Value::as_str).map(String::from))
        });
    let config = results.get("configs").and_then(|c| c.get(task));
    let repeats = config
        .and_then(|c| c.get("repeats"))
        .and_then(Value::as_u64)
        .filter(|&r| r > 1);
    let names = |key: &str, field: &str| -> Vec<String> {
        config
            .and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(|m| m.get(field).and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    // `results.<task>` holds `"<metric>,<filter>": value` and `"<metric>_stderr,<filter>"`.
    let mut keyed_metrics = Vec::new();
    let mut keyed_filters = Vec::new();
    if let Some(Value::Object(r)) = results.get("results").and_then(|r| r.get(task)) {
        for k in r.keys() {
            if let Some((m, f)) = k.split_once(',') {
                if m.ends_with("_stderr") {
                    continue;
                }
                push_new(&mut keyed_metrics, m);
                push_new(&mut keyed_filters, f);
            }
        }
    }
    let mut metrics = names("metric_list", "metric");
    let mut metrics_from = "configs.<task>.metric_list";
    if metrics.is_empty() {
        metrics = keyed_metrics;
        metrics_from = "the 'metric,filter' keys of results.<task>";
    }
    let mut filters = names("filter_list", "name");
    if filters.is_empty() {
        filters = keyed_filters;
    }
    ResultsInfo {
        model,
        repeats,
        metrics,
        metrics_from,
        filters,
    }
}

fn push_new(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Keys of a sample line that are not metrics (`SampleResult` of `lm_eval/result_schema.py`).
const NOT_METRICS: [&str; 11] = [
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
];

/// Where a samples file's metric names came from.
enum MetricRule {
    /// Each line's `metrics` list (current harness).
    Lines,
    /// The results file beside it.
    Results(Vec<String>),
    /// Each line's numeric top-level fields (no `metrics`, no results file naming them).
    Numeric,
}

/// Reads an lm-eval samples file: one sample per (document, the chosen filter).
///
/// # Errors
/// [`Error::Input`] naming the file and line for: a line that is not a JSON object, a line
/// without `doc_id`, a metric whose value is not a number (when that metric is asked for
/// with `--score`), several filters without `--filter`, an unknown `--filter`.
pub(crate) fn read_samples(path: &Path, opts: &ImportOptions) -> Result<Log> {
    let (task, date) = task_and_date(path);
    let mut notes = Vec::new();
    let mut info = ResultsInfo::default();
    let results_path = date.as_deref().and_then(|d| results_file(path, d));
    match &results_path {
        Some(rf) => {
            let text = crate::io::read_text(rf)?;
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| Error::input(rf, Some(e.line() as u64), e.to_string()))?;
            info = results_info(&v, &task);
        }
        None if opts.arm.is_none() => notes.push(
            "no results_<date>.json beside it names the model: the rows have no arm (give the arm's name)"
                .to_string(),
        ),
        None => {}
    }
    let repeats = info.repeats;
    let mut rdr = JsonlReader::open(path)?;
    let mut filters: Vec<String> = Vec::new();
    let mut samples = Vec::new();
    let mut skipped_metrics: Vec<String> = Vec::new();
    let mut max_resps = 0usize;
    let mut rule: Option<MetricRule> = None;
    // Older lines carry no `filter`: the harness wrote every document once per filter, one
    // filter after the other in `filter_list` order, so a document's k-th line is of the
    // k-th filter.
    let mut occurrences: std::collections::HashMap<String, usize> = Default::default();
    while let Some((line, obj)) = rdr.next_object()? {
        let err = |m: String| Error::input(path, Some(line), m);
        let id = match (obj.get("doc_id"), obj.get("doc_hash")) {
            (Some(Value::Number(n)), _) => n.to_string(),
            (Some(Value::String(s)), _) => s.clone(),
            (_, Some(Value::String(h))) => h.clone(),
            _ => return Err(err("missing 'doc_id' (a number) or 'doc_hash'".into())),
        };
        let filter = match obj.get("filter").and_then(Value::as_str) {
            Some(f) => f.to_string(),
            None => {
                let k = occurrences.entry(id.clone()).or_default();
                *k += 1;
                match info.filters.len() {
                    0 => "none".to_string(),
                    n if *k <= n => info.filters[*k - 1].clone(),
                    n => {
                        return Err(err(format!(
                            "document {id} appears {} times, but {} names {n} filter(s) ({}) \
                             and the lines do not say which filter each is",
                            *k,
                            results_path
                                .as_deref()
                                .map_or("the results file".into(), |p| p.display().to_string()),
                            info.filters.join(", ")
                        )))
                    }
                }
            }
        };
        push_new(&mut filters, &filter);
        if opts.filter.as_ref().is_some_and(|f| *f != filter) {
            continue;
        }
        let names: Vec<String> = match obj.get("metrics") {
            Some(Value::Array(metrics)) => {
                rule.get_or_insert(MetricRule::Lines);
                let mut names = Vec::new();
                for m in metrics {
                    let Some(name) = m.as_str() else {
                        return Err(err(format!(
                            "'metrics' holds {}; expected names",
                            clip(&m.to_string())
                        )));
                    };
                    names.push(name.to_string());
                }
                names
            }
            Some(other) => {
                return Err(err(format!(
                    "'metrics' is {}; expected the list of metric names",
                    clip(&other.to_string())
                )))
            }
            None if !info.metrics.is_empty() => {
                rule.get_or_insert_with(|| MetricRule::Results(info.metrics.clone()));
                info.metrics.clone()
            }
            None => {
                rule.get_or_insert(MetricRule::Numeric);
                obj.iter()
                    .filter(|(k, v)| {
                        !NOT_METRICS.contains(&k.as_str())
                            && matches!(v, Value::Number(_) | Value::Bool(_))
                    })
                    .map(|(k, _)| k.clone())
                    .collect()
            }
        };
        let mut scores = Vec::new();
        for name in &names {
            let asked = opts.scores.iter().any(|s| s == name);
            match obj.get(name) {
                Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {
                    scores.push((name.clone(), Ok(n.as_f64().unwrap_or_default())));
                }
                Some(Value::Bool(b)) => {
                    scores.push((name.clone(), Ok(f64::from(u8::from(*b)))));
                }
                Some(v) if asked || !matches!(v, Value::Array(_) | Value::Object(_)) => {
                    return Err(err(format!(
                        "metric '{}' is {}; expected a number per document",
                        clip(name),
                        clip(&v.to_string())
                    )))
                }
                None if asked => {
                    return Err(err(format!("metric '{}' is listed but absent", clip(name))))
                }
                // Corpus-level metrics (bleu, …) log a pair per document, no score.
                _ => push_new(&mut skipped_metrics, name),
            }
        }
        if let Some(Value::Array(r)) = obj.get("resps") {
            if let Some(Value::Array(first)) = r.first() {
                max_resps = max_resps.max(first.len());
            }
        }
        let metadata: Map<String, Value> = match obj.get("doc") {
            Some(Value::Object(d)) => d.clone(),
            _ => Map::new(),
        };
        samples.push(LogSample {
            id,
            epoch: 1,
            entry: format!("line {line}"),
            scores: (!scores.is_empty()).then_some(scores),
            error: None,
            metadata,
            usage: Vec::new(),
        });
    }
    match &opts.filter {
        Some(f) if !filters.contains(f) => {
            return Err(Error::input(
                path,
                None,
                format!(
                    "no rows of filter '{}' (filters: {})",
                    clip(f),
                    filters.join(", ")
                ),
            ))
        }
        None if filters.len() > 1 => {
            return Err(Error::setting(
                "filter",
                format!(
                    "{}: the samples are of {} filters ({}); pick one",
                    path.display(),
                    filters.len(),
                    filters.join(", ")
                ),
            ))
        }
        _ => {}
    }
    let results_name = results_path
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match &rule {
        Some(MetricRule::Results(m)) => notes.push(format!(
            "the sample lines have no 'metrics' (an older harness): metric(s) {} from {results_name} \
             ({}), filter {}",
            m.join(", "),
            info.metrics_from.replace("<task>", &task),
            filters.join(", ")
        )),
        Some(MetricRule::Numeric) => notes.push(format!(
            "the sample lines have no 'metrics' (an older harness) and {}: their numeric \
             fields are the metrics",
            if results_name.is_empty() {
                "no results_<date>.json is beside them".to_string()
            } else {
                format!("{results_name} names none for task {task}")
            }
        )),
        _ => {}
    }
    if !skipped_metrics.is_empty() {
        notes.push(format!(
            "corpus-level metric(s) without a per-document score left out: {}",
            skipped_metrics.join(", ")
        ));
    }
    let r = repeats.unwrap_or(0).max(max_resps as u64);
    if r > 1 {
        notes.push(format!(
            "repeats = {r}: the harness logged only the score of the filtered (reduced) \
             response per document, so each document is one read"
        ));
    }
    let mut metrics: Vec<String> = Vec::new();
    for s in &samples {
        for (m, _) in s.scores.iter().flatten() {
            push_new(&mut metrics, m);
        }
    }
    let filter = opts
        .filter
        .clone()
        .or_else(|| filters.first().cloned())
        .unwrap_or_else(|| "none".into());
    Ok(Log {
        path: path.to_path_buf(),
        format: Format::LmEvalSamples,
        task,
        model: info.model,
        solver: None,
        samples,
        notes,
        run: Some(LmRun {
            date: date.unwrap_or_default(),
            metrics,
            filter,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_and_date_come_from_the_file_name() {
        let t = |s: &str| task_and_date(Path::new(s));
        assert_eq!(
            t("out/samples_arc_easy_2024-05-01T12-00-00.123456.jsonl"),
            ("arc_easy".into(), Some("2024-05-01T12-00-00.123456".into()))
        );
        assert_eq!(t("samples_gsm8k.jsonl"), ("gsm8k".into(), None));
    }

    /// Scores of `log` as (id, metric, value).
    fn scores(log: &Log) -> Vec<(String, String, f64)> {
        log.samples
            .iter()
            .flat_map(|s| {
                s.scores
                    .iter()
                    .flatten()
                    .map(|(m, v)| (s.id.clone(), m.clone(), *v.as_ref().unwrap()))
            })
            .collect()
    }

    /// An older harness's lines (no `metrics`, no `filter`) without a results file: the
    /// line's numeric fields are the metrics (not `doc_id`), and a note says so.
    #[test]
    fn older_lines_without_a_results_file_score_their_numeric_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("samples_t_2024-01-01T00-00-00.0.jsonl");
        std::fs::write(
            &p,
            "{\"doc_id\": 0, \"doc\": {\"n\": 5}, \"target\": \"1\", \"resps\": [[\"1\"]], \"exact_match\": 1, \"f1\": 0.5}\n\
             {\"doc_id\": 1, \"doc\": {\"n\": 6}, \"target\": \"2\", \"resps\": [[\"3\"]], \"exact_match\": 0, \"f1\": 0.25}\n",
        )
        .unwrap();
        let log = read_samples(&p, &ImportOptions::default()).unwrap();
        assert_eq!(
            scores(&log),
            vec![
                ("0".into(), "exact_match".into(), 1.0),
                ("0".into(), "f1".into(), 0.5),
                ("1".into(), "exact_match".into(), 0.0),
                ("1".into(), "f1".into(), 0.25),
            ]
        );
        assert!(
            log.notes
                .iter()
                .any(|n| n.contains("their numeric fields are the metrics")),
            "{:?}",
            log.notes
        );
        let run = log.run.unwrap();
        assert_eq!(
            (run.metrics, run.filter),
            (vec!["exact_match".into(), "f1".into()], "none".into())
        );
    }

    /// Older lines of two filters carry no `filter`: the harness wrote each document once per
    /// filter, in `filter_list` order, so a document's second line is the second filter's.
    #[test]
    fn older_lines_of_two_filters_take_them_in_the_results_files_order() {
        let dir = tempfile::tempdir().unwrap();
        let date = "2024-01-01T00-00-00.0";
        let p = dir.path().join(format!("samples_gsm_{date}.jsonl"));
        std::fs::write(
            dir.path().join(format!("results_{date}.json")),
            r#"{"model_name": "m", "configs": {"gsm": {"metric_list": [{"metric": "exact_match"}],
               "filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]}}}"#,
        )
        .unwrap();
        let line = |id: u32, em: u32| {
            format!("{{\"doc_id\": {id}, \"resps\": [[\"x\"]], \"exact_match\": {em}}}\n")
        };
        let text = [line(0, 0), line(1, 1), line(0, 1), line(1, 1)].concat();
        std::fs::write(&p, text).unwrap();
        let err = read_samples(&p, &ImportOptions::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("2 filters (strict-match, flexible-extract)"),
            "{err}"
        );
        let pick = |f: &str| {
            let opts = ImportOptions {
                filter: Some(f.into()),
                ..Default::default()
            };
            let log = read_samples(&p, &opts).unwrap();
            assert_eq!(log.model.as_deref(), Some("m"));
            assert!(
                log.notes[0].contains("configs.gsm.metric_list"),
                "{:?}",
                log.notes
            );
            scores(&log)
                .into_iter()
                .map(|(_, _, v)| v)
                .collect::<Vec<_>>()
        };
        assert_eq!(pick("strict-match"), vec![0.0, 1.0]);
        assert_eq!(pick("flexible-extract"), vec![1.0, 1.0]);
        // A third line of a document is more than the two filters named.
        std::fs::write(&p, [line(0, 0), line(0, 1), line(0, 1)].concat()).unwrap();
        let err = read_samples(&p, &ImportOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains(":3: document 0 appears 3 times"),
            "{err}"
        );
    }
}
