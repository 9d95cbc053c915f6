//! lm-evaluation-harness per-document samples: `samples_<task>_<date>.jsonl`, written with
//! `--log_samples`, one line per (document, filter) in the `SampleResult` shape of
//! `lm_eval/result_schema.py` (`doc_id`, `doc`, `target`, `arguments`, `resps`,
//! `filtered_resps`, `filter`, `metrics`, the hashes, and one top-level number per metric).
//!
//! The model is not in the samples file: it is read from the `results_<date>.json` beside
//! it with the same date (its `model_name`, else `config.model`), when there is one.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Format, ImportOptions, Log, LogSample};
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

/// The model a results file names (`model_name`, else `config.model` with
/// `config.model_args`' `pretrained=`), and the task's `repeats` when it is more than 1.
fn model_of(results: &Value, task: &str) -> (Option<String>, Option<u64>) {
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
    let repeats = results
        .get("configs")
        .and_then(|c| c.get(task))
        .and_then(|c| c.get("repeats"))
        .and_then(Value::as_u64)
        .filter(|&r| r > 1);
    (model, repeats)
}

/// Reads an lm-eval samples file: one sample per (document, the chosen filter).
///
/// # Errors
/// [`Error::Input`] naming the file and line for: a line that is not a JSON object, a line
/// without `doc_id` or `metrics`, a metric whose value is not a number (when that metric is
/// asked for with `--score`), several filters without `--filter`, an unknown `--filter`.
pub(crate) fn read_samples(path: &Path, opts: &ImportOptions) -> Result<Log> {
    let (task, date) = task_and_date(path);
    let mut notes = Vec::new();
    let (mut model, mut repeats) = (None, None);
    match date.as_deref().and_then(|d| results_file(path, d)) {
        Some(rf) => {
            let text = crate::io::read_text(&rf)?;
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| Error::input(&rf, Some(e.line() as u64), e.to_string()))?;
            (model, repeats) = model_of(&v, &task);
        }
        None if opts.arm.is_none() => notes.push(
            "no results_<date>.json beside it names the model: the rows have no arm (pass --arm NAME)"
                .to_string(),
        ),
        None => {}
    }
    let mut rdr = JsonlReader::open(path)?;
    let mut filters: Vec<String> = Vec::new();
    let mut samples = Vec::new();
    let mut skipped_metrics: Vec<String> = Vec::new();
    let mut max_resps = 0usize;
    while let Some((line, obj)) = rdr.next_object()? {
        let err = |m: String| Error::input(path, Some(line), m);
        let filter = obj
            .get("filter")
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_string();
        if !filters.contains(&filter) {
            filters.push(filter.clone());
        }
        if opts.filter.as_ref().is_some_and(|f| *f != filter) {
            continue;
        }
        let id = match (obj.get("doc_id"), obj.get("doc_hash")) {
            (Some(Value::Number(n)), _) => n.to_string(),
            (Some(Value::String(s)), _) => s.clone(),
            (_, Some(Value::String(h))) => h.clone(),
            _ => return Err(err("missing 'doc_id' (a number) or 'doc_hash'".into())),
        };
        let Some(Value::Array(metrics)) = obj.get("metrics") else {
            return Err(err("missing 'metrics' (the list of metric names)".into()));
        };
        let mut scores = Vec::new();
        for m in metrics {
            let Some(name) = m.as_str() else {
                return Err(err(format!(
                    "'metrics' holds {}; expected names",
                    clip(&m.to_string())
                )));
            };
            let asked = opts.scores.iter().any(|s| s == name);
            match obj.get(name) {
                Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {
                    scores.push((name.to_string(), Ok(n.as_f64().unwrap_or_default())));
                }
                Some(Value::Bool(b)) => {
                    scores.push((name.to_string(), Ok(f64::from(u8::from(*b)))));
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
                _ => {
                    if !skipped_metrics.iter().any(|s| s == name) {
                        skipped_metrics.push(name.to_string());
                    }
                }
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
            return Err(Error::input(
                path,
                None,
                format!(
                    "the samples are of {} filters ({}); pick one with --filter NAME",
                    filters.len(),
                    filters.join(", ")
                ),
            ))
        }
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
    Ok(Log {
        path: path.to_path_buf(),
        format: Format::LmEvalSamples,
        task,
        model,
        solver: None,
        samples,
        notes,
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
}
