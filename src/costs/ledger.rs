//! Reading a cost ledger (JSONL, one row per model call or search request) and its prices.
//!
//! The reader is deliberately lenient about who wrote the ledger (`stats simulate`,
//! `stats llm batch`, or a user's own logging): token counts may be absent or `null`
//! (unknown), key fields may be strings or integers, and unknown fields are ignored.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::{Error, Result};

/// What a ledger row bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Planner,
    Reader,
    Search,
}

/// One ledger row as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 1-based line in the ledger file.
    pub line: u64,
    pub kind: Kind,
    pub model: Option<String>,
    /// Prompt tokens, cached included; `None` when unknown.
    pub input_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub dataset: Option<String>,
    pub question: Option<String>,
    pub arm: Option<String>,
    pub trajectory: Option<String>,
    pub read: Option<String>,
    /// Rows sharing a key are one call, billed once.
    pub key: Option<String>,
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads every row of a ledger.
///
/// # Errors
/// [`Error::Input`] naming the file and line for a row that is not a JSON object, has an
/// unknown `kind`, a model call without `model`, a negative or non-integer token count, or
/// more cached than input tokens.
pub fn read_ledger(path: &Path) -> Result<Vec<Entry>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let n = i as u64 + 1;
        let line =
            line.map_err(|e| Error::input(path, Some(n), format!("cannot read line: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| Error::input(path, Some(n), msg);
        let v: serde_json::Map<String, Value> =
            serde_json::from_str(&line).map_err(|e| bad(format!("expected a JSON object: {e}")))?;
        let kind = match v.get("kind").and_then(Value::as_str) {
            Some("planner") => Kind::Planner,
            Some("reader") => Kind::Reader,
            Some("search") => Kind::Search,
            Some(other) => {
                return Err(bad(format!(
                    "unknown kind '{other}'; expected planner, reader or search"
                )))
            }
            None => {
                return Err(bad(
                    "missing field 'kind' (planner, reader or search)".into()
                ))
            }
        };
        let tokens = |name: &str| -> Result<Option<u64>> {
            match v.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(x)) => x.as_u64().map(Some).ok_or_else(|| {
                    bad(format!("'{name}' is {x}; expected a non-negative integer"))
                }),
                Some(other) => Err(bad(format!(
                    "'{name}' is {other}; expected a non-negative integer"
                ))),
            }
        };
        let e = Entry {
            line: n,
            kind,
            model: text(v.get("model")),
            input_tokens: tokens("input_tokens")?,
            cached_input_tokens: tokens("cached_input_tokens")?,
            output_tokens: tokens("output_tokens")?,
            dataset: text(v.get("dataset")),
            question: text(v.get("question")),
            arm: text(v.get("arm")),
            trajectory: text(v.get("trajectory")),
            read: text(v.get("read")),
            key: text(v.get("key")),
        };
        if e.kind != Kind::Search && e.model.is_none() {
            return Err(bad("a model call needs a 'model' field".into()));
        }
        if let (Some(c), Some(i)) = (e.cached_input_tokens, e.input_tokens) {
            if c > i {
                return Err(bad(format!(
                    "cached_input_tokens ({c}) exceed input_tokens ({i}); input_tokens must include the cached ones"
                )));
            }
        }
        out.push(e);
    }
    Ok(out)
}

/// Model tariff: USD per 1M tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input: f64,
    /// Defaults to the input price (no cache discount).
    pub cached_input: Option<f64>,
    pub output: f64,
}

/// Search tariff: USD per 1,000 unique requests.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SearchPrice {
    #[serde(default)]
    pub usd_per_1000: f64,
    /// Prices to sweep over.
    #[serde(default)]
    pub sweep_usd_per_1000: Vec<f64>,
}

/// A prices file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    pub models: BTreeMap<String, ModelPrice>,
    #[serde(default)]
    pub search: SearchPrice,
}

impl Prices {
    /// Reads a prices TOML file.
    ///
    /// # Errors
    /// [`Error::Input`] naming the file (and line, when TOML reports one) for bad syntax,
    /// unknown keys or negative prices.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let p: Prices = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start].lines().count().max(1) as u64);
            Error::input(path, line, format!("bad prices file: {}", e.message()))
        })?;
        for (name, m) in &p.models {
            if m.input < 0.0 || m.output < 0.0 || m.cached_input.is_some_and(|c| c < 0.0) {
                return Err(Error::input(
                    path,
                    None,
                    format!("model '{name}' has a negative price"),
                ));
            }
        }
        Ok(p)
    }
}
