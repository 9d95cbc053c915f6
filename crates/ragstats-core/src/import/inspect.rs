//! inspect_ai logs: the `.eval` zip archive (sample entries `samples/{id}_epoch_{n}.json`, or
//! the chunked per-sample layout `samples/{id}_epoch_{n}/sample.json` with its
//! `metadata.json`; `header.json` written when the run ends, `_journal/start.json` when it
//! starts) and the `.json` log (one object: `eval`, `plan`, `results`, `stats`, `samples`).
//!
//! Only the fields a panel and a ledger need are read: the task and model (`eval`), the
//! solver chain (`plan.steps`), and per sample its `id`, `epoch`, `scores`, `metadata`,
//! `model_usage` and `error`.

use std::io::BufReader;
#[cfg(feature = "formats")]
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Format, Log, LogSample, ScoreValue, Usage};
use crate::io::clip;
use crate::{Error, Result};

/// The `header.json` entry of an `.eval` archive.
#[cfg(feature = "formats")]
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    status: Option<String>,
    eval: EvalSpec,
    #[serde(default)]
    plan: Option<Plan>,
}

#[derive(Deserialize)]
struct JsonLog {
    #[serde(default)]
    status: Option<String>,
    eval: EvalSpec,
    #[serde(default)]
    plan: Option<Plan>,
    #[serde(default)]
    samples: Option<Vec<Sample>>,
}

#[derive(Deserialize)]
struct EvalSpec {
    task: String,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct Plan {
    #[serde(default)]
    steps: Vec<Step>,
}

#[derive(Deserialize)]
struct Step {
    solver: String,
}

#[derive(Deserialize)]
struct Sample {
    id: Value,
    epoch: u32,
    #[serde(default)]
    scores: Option<Map<String, Value>>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default)]
    model_usage: Option<Map<String, Value>>,
    #[serde(default)]
    error: Option<Value>,
}

/// The samples' `id` as text (inspect ids are strings or integers).
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// An inspect score value as a number: `C` (correct) 1, `I` (incorrect) 0, `P` (partial)
/// 0.5, `N` (no answer) 0, as inspect's `value_to_float` maps them; numbers as they are;
/// booleans 1/0; `yes`/`true` 1 and `no`/`false` 0; text that parses as a number. `None` for
/// anything else.
fn score_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => match s.trim() {
            "C" => Some(1.0),
            "I" | "N" => Some(0.0),
            "P" => Some(0.5),
            t => match t.to_ascii_lowercase().as_str() {
                "yes" | "true" => Some(1.0),
                "no" | "false" => Some(0.0),
                _ => t.parse::<f64>().ok().filter(|x| x.is_finite()),
            },
        },
        _ => None,
    }
}

/// The score columns of one sample: one per scorer, or one per key (`scorer.key`) of a
/// dict-valued score; a scorer whose value is null is absent.
/// A value that cannot be mapped is kept as the message for the user, refused only if the
/// column is imported (`--score` can leave it out).
fn score_columns(entry: &str, scores: &Map<String, Value>) -> Vec<(String, ScoreValue)> {
    let mut out = Vec::new();
    let bad = |name: &str, v: &Value| {
        format!(
            "{entry}: score '{}' is {}; expected C, I, P or N, a number, a boolean, or an \
                 object of those (or import only the other scorers' scores)",
            clip(name),
            clip(&v.to_string())
        )
    };
    for (scorer, score) in scores {
        let value = match score {
            Value::Object(o) => o.get("value").unwrap_or(&Value::Null),
            other => other,
        };
        match value {
            Value::Null => {}
            Value::Object(parts) => {
                for (k, v) in parts {
                    if v.is_null() {
                        continue;
                    }
                    let name = format!("{scorer}.{k}");
                    out.push((name.clone(), score_number(v).ok_or_else(|| bad(&name, v))));
                }
            }
            v => out.push((
                scorer.clone(),
                score_number(v).ok_or_else(|| bad(scorer, v)),
            )),
        }
    }
    out
}

/// A token count field of inspect's `ModelUsage` (absent or null: 0).
fn count(u: &Map<String, Value>, k: &str) -> u64 {
    u.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// One model's `ModelUsage` in the ledger's convention. Inspect reports prompt tokens read
/// from and written to the provider's cache apart from `input_tokens` for most providers
/// (then `total_tokens` = input + cache read + cache write + output), but inside it for
/// some (then `total_tokens` = input + output); the ledger's `input_tokens` counts every
/// prompt token, cached ones included, so the cache counts are added unless the total
/// shows they are already in. Cache writes are billed as ordinary input.
pub(crate) fn usage(u: &Map<String, Value>) -> Usage {
    let (input, output) = (count(u, "input_tokens"), count(u, "output_tokens"));
    let (read, write) = (
        count(u, "input_tokens_cache_read"),
        count(u, "input_tokens_cache_write"),
    );
    let included = u.get("total_tokens").and_then(Value::as_u64) == Some(input + output)
        && read + write > 0
        && read + write <= input;
    Usage {
        input: if included {
            input
        } else {
            input + read + write
        },
        cached_input: read,
        output,
        reasoning: count(u, "reasoning_tokens"),
    }
}

/// One sample as the importer sees it.
fn log_sample(path: &Path, entry: String, s: Sample) -> Result<LogSample> {
    let id = id_text(&s.id).ok_or_else(|| {
        Error::input(
            path,
            None,
            format!(
                "{entry}: sample id is {}; expected a string or integer",
                clip(&s.id.to_string())
            ),
        )
    })?;
    let scores = match &s.scores {
        Some(m) if !m.is_empty() => {
            let cols = score_columns(&entry, m);
            (!cols.is_empty()).then_some(cols)
        }
        _ => None,
    };
    let error = match &s.error {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(
            o.get("message")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_string(),
        ),
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => Some(other.to_string()),
    };
    let usage = s
        .model_usage
        .iter()
        .flatten()
        .filter_map(|(m, u)| u.as_object().map(|u| (m.clone(), usage(u))))
        .collect();
    Ok(LogSample {
        id,
        epoch: s.epoch,
        entry,
        scores,
        error,
        metadata: s.metadata.unwrap_or_default(),
        usage,
    })
}

/// The log as a whole: task, model, solver chain, and a note on a status other than success.
fn log_of(
    path: &Path,
    format: Format,
    status: Option<String>,
    eval: EvalSpec,
    plan: Option<Plan>,
) -> Result<Log> {
    let mut notes = Vec::new();
    match status.as_deref() {
        Some("started") => return Err(Error::input(
            path,
            None,
            "the log is still being written (status 'started'); import it when the run has ended",
        )),
        None | Some("success") => {}
        Some(other) => notes.push(format!(
            "the run's status is '{other}': the samples it logged are read"
        )),
    }
    let solver = plan.and_then(|p| {
        (!p.steps.is_empty()).then(|| {
            p.steps
                .iter()
                .map(|s| s.solver.as_str())
                .collect::<Vec<_>>()
                .join("+")
        })
    });
    Ok(Log {
        path: path.to_path_buf(),
        format,
        task: eval.task,
        model: eval.model,
        solver,
        samples: Vec::new(),
        notes,
        run: None,
    })
}

/// Reads an inspect_ai `.json` log.
///
/// # Errors
/// [`Error::Input`] for a file that is not such a log, a log without samples, a log still
/// being written, a sample id or score that cannot be read.
pub(crate) fn read_json(path: &Path) -> Result<Log> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let parsed: JsonLog = serde_json::from_reader(BufReader::new(file)).map_err(|e| {
        Error::input(
            path,
            Some(e.line() as u64),
            format!("not a complete inspect_ai .json log: {e}"),
        )
    })?;
    let mut log = log_of(
        path,
        Format::InspectJson,
        parsed.status,
        parsed.eval,
        parsed.plan,
    )?;
    let Some(samples) = parsed.samples else {
        return Err(Error::input(
            path,
            None,
            "the log has no samples (was it written with log_samples=False?)",
        ));
    };
    for (i, s) in samples.into_iter().enumerate() {
        log.samples
            .push(log_sample(path, format!("samples[{i}]"), s)?);
    }
    Ok(log)
}

/// An inspect_ai `.eval` log in a build without the `formats` feature: refused, naming it.
///
/// # Errors
/// Always [`Error::Input`].
#[cfg(not(feature = "formats"))]
pub(crate) fn read_eval(path: &Path) -> Result<Log> {
    Err(Error::input(path, None, super::FORMATS_OFF.to_string()))
}

/// Reads an inspect_ai `.eval` log (entries deflated or zstd-compressed).
///
/// # Errors
/// [`Error::Input`] for an archive that is truncated or damaged, a log still being written
/// (no `header.json` yet), an entry that cannot be decompressed or parsed, a sample id or
/// score that cannot be read.
#[cfg(feature = "formats")]
pub(crate) fn read_eval(path: &Path) -> Result<Log> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| {
        Error::input(
            path,
            None,
            format!("not a readable .eval archive (truncated or damaged?): {e}"),
        )
    })?;
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::input(path, None, format!("an entry name cannot be read: {e}")))?;
    let mut read = |name: &str| -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        zip.by_name(name)
            .and_then(|mut f| f.read_to_end(&mut bytes).map_err(Into::into))
            .map_err(|e| Error::input(path, None, format!("{name}: cannot read the entry: {e}")))?;
        Ok(bytes)
    };
    let has = |n: &str| names.iter().any(|x| x == n);
    if !has("header.json") {
        return Err(Error::input(
            path,
            None,
            if has("_journal/start.json") {
                "header.json: missing; the log is still being written (it has \
                 _journal/start.json only); import it when the run has ended"
            } else {
                "header.json: missing; not an inspect_ai .eval log"
            },
        ));
    }
    let header: Header = serde_json::from_slice(&read("header.json")?)
        .map_err(|e| Error::input(path, None, format!("header.json: {e}")))?;
    let mut log = log_of(
        path,
        Format::InspectEval,
        header.status,
        header.eval,
        header.plan,
    )?;
    let mut entries: Vec<(&str, Option<String>)> = Vec::new();
    for n in &names {
        let Some(rest) = n.strip_prefix("samples/") else {
            continue;
        };
        if !rest.contains('/') && rest.ends_with(".json") {
            entries.push((n, None));
        } else if let Some(prefix) = rest.strip_suffix("/sample.json") {
            let meta = format!("samples/{prefix}/metadata.json");
            entries.push((n, has(&meta).then_some(meta)));
        }
    }
    // Entry order in the archive is completion order; read them by name for a stable panel.
    entries.sort();
    for (name, meta) in entries {
        let bytes = read(name)?;
        let mut s: Sample = serde_json::from_slice(&bytes)
            .map_err(|e| Error::input(path, None, format!("{name}: {e}")))?;
        if let Some(m) = meta {
            let bytes = read(&m)?;
            let v: Map<String, Value> = serde_json::from_slice(&bytes)
                .map_err(|e| Error::input(path, None, format!("{m}: {e}")))?;
            s.metadata = Some(v);
        }
        log.samples.push(log_sample(path, name.to_string(), s)?);
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_values_map_as_inspect_maps_them() {
        let v = |s: &str| score_number(&serde_json::from_str(s).unwrap());
        assert_eq!(v(r#""C""#), Some(1.0));
        assert_eq!(v(r#""I""#), Some(0.0));
        assert_eq!(v(r#""P""#), Some(0.5));
        assert_eq!(v(r#""N""#), Some(0.0));
        assert_eq!(v("0.25"), Some(0.25));
        assert_eq!(v("true"), Some(1.0));
        assert_eq!(v(r#""no""#), Some(0.0));
        assert_eq!(v(r#""3.5""#), Some(3.5));
        assert_eq!(v(r#""X""#), None);
        assert_eq!(v("[1]"), None);
        let m: Map<String, Value> = serde_json::from_str(
            r#"{"a":{"value":{"x":"C","y":0.5}},"b":{"value":null},"c":{"value":"I"}}"#,
        )
        .unwrap();
        assert_eq!(
            score_columns("e", &m),
            [
                ("a.x".to_string(), Ok(1.0)),
                ("a.y".into(), Ok(0.5)),
                ("c".into(), Ok(0.0))
            ]
        );
        let odd: Map<String, Value> = serde_json::from_str(r#"{"m":{"value":[1]}}"#).unwrap();
        assert!(score_columns("e", &odd)[0]
            .1
            .as_ref()
            .unwrap_err()
            .starts_with("e: score 'm' is [1];"));
    }

    #[test]
    fn cache_tokens_join_the_input_unless_the_total_has_them() {
        let u = |s: &str| usage(&serde_json::from_str(s).unwrap());
        // OpenAI through inspect 0.3.285: input excludes the cache read; total has it.
        assert_eq!(
            u(
                r#"{"input_tokens":23,"output_tokens":4,"total_tokens":59,"input_tokens_cache_read":32,"reasoning_tokens":1}"#
            ),
            Usage {
                input: 55,
                cached_input: 32,
                output: 4,
                reasoning: 1
            }
        );
        // A provider whose input already counts the cached tokens.
        assert_eq!(
            u(
                r#"{"input_tokens":55,"output_tokens":4,"total_tokens":59,"input_tokens_cache_read":32}"#
            ),
            Usage {
                input: 55,
                cached_input: 32,
                output: 4,
                reasoning: 0
            }
        );
        // Cache writes are prompt tokens too.
        assert_eq!(
            u(
                r#"{"input_tokens":10,"output_tokens":2,"total_tokens":112,"input_tokens_cache_write":100}"#
            ),
            Usage {
                input: 110,
                cached_input: 0,
                output: 2,
                reasoning: 0
            }
        );
    }
}
