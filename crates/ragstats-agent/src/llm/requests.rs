//! Reading `requests.jsonl` and expanding it into calls.
//!
//! One request per line: `{"id": "q1", "messages": [{"role": "user", "content": "..."}],
//! "sample": 3, "meta": {...}}`. `id` is a non-empty string (an integer is accepted and
//! used as its decimal string); `sample` (default 1) is how many independent answers to
//! draw; `meta` is echoed into each response record, and its `dataset`, `question`, `arm`,
//! `trajectory` and `read` fields are copied into ledger rows. Blank lines are skipped; any
//! other key is an error (it catches typos such as `samples`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use ragstats_core::chat::{ChatRequest, SamplingParams};
use ragstats_core::error::{Error, Result};
use ragstats_core::io::jsonl::echo;
use ragstats_core::io::{clip, JsonlReader};

/// One line of a requests file.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestLine {
    /// Request id.
    pub id: String,
    /// Messages, as given.
    pub messages: Vec<Value>,
    /// Number of samples (≥ 1).
    pub samples: u32,
    /// Caller data.
    pub meta: Option<Value>,
    /// 1-based line number in the file.
    pub line: u64,
}

/// Reads and validates a requests file.
///
/// # Errors
/// [`Error::Io`] if unreadable; [`Error::Input`] with file:line for a malformed line or a
/// duplicate id.
pub fn read_requests(path: &Path) -> Result<Vec<RequestLine>> {
    let mut rdr = JsonlReader::open(path)?;
    let mut out = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    while let Some((n, v)) = rdr.next_value()? {
        let req = parse_line(v, n).map_err(|msg| Error::input(path, Some(n), msg))?;
        if let Some(first) = seen.insert(req.id.clone(), n) {
            return Err(Error::input(
                path,
                Some(n),
                format!("duplicate id {:?} (first on line {first})", clip(&req.id)),
            ));
        }
        out.push(req);
    }
    Ok(out)
}

fn parse_line(v: Value, n: u64) -> std::result::Result<RequestLine, String> {
    let Value::Object(mut obj) = v else {
        return Err("expected a JSON object {\"id\", \"messages\", \"sample\"?, \"meta\"?}".into());
    };
    for k in obj.keys() {
        if !["id", "messages", "sample", "meta"].contains(&k.as_str()) {
            return Err(format!(
                "unknown field {:?} (expected id, messages, sample, meta)",
                clip(k)
            ));
        }
    }
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(x)) if x.is_u64() || x.is_i64() => x.to_string(),
        Some(other) => {
            return Err(format!(
                "\"id\" must be a non-empty string, got {}",
                echo(other)
            ))
        }
        None => return Err("missing \"id\"".into()),
    };
    let req = format!("request {:?}", clip(&id));
    let messages = match obj.remove("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(format!("{req}: \"messages\" is empty")),
        Some(_) => return Err(format!("{req}: \"messages\" must be an array")),
        None => return Err(format!("{req}: missing \"messages\"")),
    };
    for (j, m) in messages.iter().enumerate() {
        check_message(m).map_err(|e| format!("{req}: messages[{j}] {e}"))?;
    }
    let samples = match obj.get("sample") {
        None | Some(Value::Null) => 1,
        Some(v) => match v.as_u64() {
            Some(s) if (1..=u64::from(u32::MAX)).contains(&s) => s as u32,
            _ => {
                return Err(format!(
                    "{req}: \"sample\" must be a positive integer (number of samples), got {}",
                    echo(v)
                ))
            }
        },
    };
    Ok(RequestLine {
        id,
        messages,
        samples,
        meta: obj.remove("meta"),
        line: n,
    })
}

fn check_message(m: &Value) -> std::result::Result<(), String> {
    let Value::Object(o) = m else {
        return Err("must be an object {\"role\", \"content\"}".into());
    };
    match o.get("role") {
        Some(Value::String(r)) if !r.is_empty() => {}
        _ => return Err("needs a string \"role\"".into()),
    }
    match o.get("content") {
        Some(Value::String(_)) | Some(Value::Array(_)) => Ok(()),
        // An assistant turn that only called tools has null content.
        Some(Value::Null) | None if o.contains_key("tool_calls") => Ok(()),
        Some(other) => Err(format!(
            "\"content\" must be a string or array, got {}",
            echo(other)
        )),
        None => Err("needs \"content\"".into()),
    }
}

/// Expands requests into calls (one per sample), in file order, all with the same model,
/// sampling parameters and extra body.
pub fn expand(
    lines: &[RequestLine],
    model: &str,
    params: &SamplingParams,
    extra: &Map<String, Value>,
) -> Vec<ChatRequest> {
    lines
        .iter()
        .flat_map(|l| {
            (0..l.samples).map(move |s| ChatRequest {
                id: l.id.clone(),
                sample: s,
                model: model.to_string(),
                messages: l.messages.clone(),
                params: params.clone(),
                extra: extra.clone(),
                meta: l.meta.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<RequestLine>> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("requests.jsonl");
        std::fs::write(&p, text).unwrap();
        read_requests(&p)
    }

    #[test]
    fn good_lines_and_expansion() {
        let r = read(concat!(
            r#"{"id":"a","messages":[{"role":"user","content":"hi"}]}"#,
            "\n\n",
            r#"{"id":7,"messages":[{"role":"user","content":"x"}],"sample":3,"meta":{"dataset":"d"}}"#,
            "\n"
        ))
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].id, "7");
        assert_eq!(r[1].line, 3);
        let calls = expand(&r, "m", &SamplingParams::default(), &Map::new());
        let keys: Vec<(String, u32)> = calls.iter().map(|c| (c.id.clone(), c.sample)).collect();
        assert_eq!(
            keys,
            vec![
                ("a".into(), 0),
                ("7".into(), 0),
                ("7".into(), 1),
                ("7".into(), 2)
            ]
        );
    }

    #[test]
    fn bad_lines_name_file_line_and_problem() {
        let cases = [
            ("not json", "not valid JSON"),
            (
                r#"{"messages":[{"role":"user","content":"x"}]}"#,
                "missing \"id\"",
            ),
            (r#"{"id":"a","messages":[]}"#, "\"messages\" is empty"),
            (
                r#"{"id":"a","messages":[{"content":"x"}]}"#,
                "messages[0] needs a string \"role\"",
            ),
            (
                r#"{"id":"a","messages":[{"role":"user","content":"x"}],"sample":0}"#,
                "positive integer",
            ),
            (
                r#"{"id":"a","messages":[{"role":"user","content":"x"}],"samples":2}"#,
                "unknown field \"samples\"",
            ),
        ];
        for (line, want) in cases {
            let e = read(&format!("\n{line}\n")).unwrap_err().to_string();
            assert!(e.contains("requests.jsonl:2: "), "{e}");
            assert!(e.contains(want), "{e} should contain {want}");
        }
        let e = read(concat!(
            r#"{"id":"a","messages":[{"role":"user","content":"x"}]}"#,
            "\n",
            r#"{"id":"a","messages":[{"role":"user","content":"y"}]}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(":2: duplicate id \"a\" (first on line 1)"),
            "{e}"
        );
    }
}
