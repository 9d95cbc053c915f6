//! The cost ledger: one JSONL row per model call or search request ([`LedgerRow`]), written
//! by `stats llm batch` / `stats mcq run` (`ragstats_agent::llm::ledger_rows`) and `stats simulate`
//! (`crate::sim::synthetic_ledger`), read by `stats cost`, `efficiency` and `allocate`
//! ([`read_ledger`]), and priced by a TOML tariff ([`Prices`]). The format, its units and
//! who writes what are in `docs/ledger.md`.
//!
//! The reader is lenient about who wrote the ledger (a user's own logging too): token
//! counts may be absent or `null` (unknown), label fields may be strings or numbers (a
//! label of another JSON type is ignored, as if absent), and unknown fields are ignored.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::io::{clip, read_text, JsonlReader};
use crate::{Error, Result};

/// What a ledger row bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum CallKind {
    /// A planner (query-writing) model call.
    Planner,
    /// A reader (answering) model call.
    Reader,
    /// A search request.
    Search,
    /// An MCQ item-generation model call (`stats mcq generate`).
    Generator,
    /// A judging model call (`stats judge`).
    Judge,
    /// An MCQ answering model call (`stats mcq run`).
    Mcq,
    /// A model call of an evaluation logged by another tool (`stats import`: an inspect_ai
    /// sample's usage of one model in one epoch); a read of the panel (part of c_R).
    Eval,
}

impl CallKind {
    /// The name written in the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Planner => "planner",
            CallKind::Reader => "reader",
            CallKind::Search => "search",
            CallKind::Generator => "generator",
            CallKind::Judge => "judge",
            CallKind::Mcq => "mcq",
            CallKind::Eval => "eval",
        }
    }

    /// Every kind, in the order the ledger documentation lists them.
    pub const ALL: [CallKind; 7] = [
        CallKind::Planner,
        CallKind::Reader,
        CallKind::Search,
        CallKind::Generator,
        CallKind::Judge,
        CallKind::Mcq,
        CallKind::Eval,
    ];

    /// Whether the row is part of a panel cell's cost: planner and search calls make a
    /// trajectory (c_T), reader and imported evaluation calls a read (c_R). Generator,
    /// judge and MCQ calls are billed in the totals but are no part of c_T or c_R.
    pub fn is_panel_cost(self) -> bool {
        matches!(
            self,
            CallKind::Planner | CallKind::Reader | CallKind::Search | CallKind::Eval
        )
    }

    /// Whether the row is part of a read's cost (c_R): reader and imported evaluation calls.
    pub fn is_read_cost(self) -> bool {
        matches!(self, CallKind::Reader | CallKind::Eval)
    }
}

/// The kinds as the messages list them.
const KINDS_EXPECTED: &str = "planner, reader, search, generator, judge, mcq or eval";

impl fmt::Display for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CallKind {
    type Err = Error;
    /// `planner`, `reader`, `search`, `generator`, `judge`, `mcq` or `eval`.
    fn from_str(s: &str) -> Result<Self> {
        CallKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "unknown kind '{}'; expected {KINDS_EXPECTED}",
                    clip(s)
                ))
            })
    }
}

impl TryFrom<String> for CallKind {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

/// A label of the panel cell a row belongs to (`dataset`, `question`, `arm`, `trajectory`,
/// `read`, `selector`) or a sharing `key`: a JSON string or number, kept as written. Rows are matched to
/// panel cells by [`Label::text`], so `0` and `"0"` are the same trajectory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Label {
    /// A JSON number (the simulator writes trajectory and read indices as numbers).
    Number(serde_json::Number),
    /// A JSON string.
    Text(String),
}

impl Label {
    /// The label as text: a string as is, a number as JSON writes it.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Label::Number(n) => Cow::Owned(n.to_string()),
            Label::Text(s) => Cow::Borrowed(s),
        }
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Self {
        Label::Text(s.to_string())
    }
}

impl From<String> for Label {
    fn from(s: String) -> Self {
        Label::Text(s)
    }
}

impl From<u64> for Label {
    fn from(n: u64) -> Self {
        Label::Number(n.into())
    }
}

impl From<u32> for Label {
    fn from(n: u32) -> Self {
        Label::Number(n.into())
    }
}

/// One model call or search request (`docs/ledger.md`). Rows sharing a `key` are one call,
/// billed once. Every field but `kind` is optional; absent fields are not written, so the
/// simulator's rows carry no `id` and the LLM client's no `step` or `key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerRow {
    pub kind: CallKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Label>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Label>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<Label>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Label>,
    /// Read index within the trajectory (reader rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<Label>,
    /// The selector (e.g. `rrf`, `rr`) whose packet the call read; absent on calls every
    /// selector shares (planner calls, searches). With `--selector NAME`, cost matching
    /// bills only rows whose selector is NAME or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Label>,
    /// Planner step / search index within the trajectory, 0-based (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// The model billed (the name price tables use); required on planner and reader rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Prompt tokens, cached ones included; `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Prompt tokens served from the provider's prompt cache (part of `input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Completion tokens, reasoning included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Reasoning tokens (part of `output_tokens`; informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Rows sharing a key are one call, billed once (see `costs::accounting` for how it is
    /// attributed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Label>,
    /// The request id (LLM client rows; informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The sample index of the request (LLM client rows; informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u32>,
    /// The MCQ item id (`mcq run` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// The MCQ scoring group of the item, e.g. `planning-convergent` (`mcq run` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The MCQ run index, 0-based (`mcq run` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// The MCQ prompt kind, `bare` or `informative` (`mcq run` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

impl LedgerRow {
    /// A row of `kind` with every other field absent.
    pub fn new(kind: CallKind) -> Self {
        LedgerRow {
            kind,
            dataset: None,
            question: None,
            arm: None,
            trajectory: None,
            read: None,
            selector: None,
            step: None,
            model: None,
            input_tokens: None,
            cached_input_tokens: None,
            output_tokens: None,
            reasoning_tokens: None,
            key: None,
            id: None,
            sample: None,
            item: None,
            group: None,
            run: None,
            prompt: None,
        }
    }
}

/// One row as read, with its 1-based line in the ledger file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub line: u64,
    pub row: LedgerRow,
}

/// The label fields, and the text fields that may be written as numbers.
const LABELS: [&str; 7] = [
    "dataset",
    "question",
    "arm",
    "trajectory",
    "read",
    "selector",
    "key",
];
const TEXTS: [&str; 5] = ["model", "id", "item", "group", "prompt"];
const TOKENS: [&str; 4] = [
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_tokens",
];

/// Reads every row of a ledger (through [`JsonlReader`]: blank lines skipped, duplicate keys
/// refused), or of the data frame registered under that name on this thread
/// ([`crate::panel::memory`]; a row's number stands for the line).
///
/// # Errors
/// [`Error::Input`] naming the file and line for a row that is not a JSON object, has a
/// missing or unknown `kind`, a model call without `model`, a negative or non-integer token
/// count, or more cached than input tokens.
pub fn read_ledger(path: &Path) -> Result<Vec<Entry>> {
    read_ledger_from(&crate::panel::Source::file(path))
}

/// [`read_ledger`] of the rows `source` holds: a file, a table (its rows the objects,
/// numbered from 1) or records.
///
/// # Errors
/// As [`read_ledger`].
pub fn read_ledger_from(source: &crate::panel::Source) -> Result<Vec<Entry>> {
    use crate::panel::Source;
    let path = source.name();
    let rows = match source {
        Source::Table { table, .. } => {
            Some(table.json_rows().map_err(|m| Error::input(path, None, m))?)
        }
        Source::Records { rows, .. } => Some(rows.clone()),
        Source::Files(paths) => match paths.as_slice() {
            [_] => None,
            _ => {
                return Err(Error::input(
                    path,
                    None,
                    "one ledger file expected, not several",
                ))
            }
        },
    };
    if let Some(rows) = rows {
        // A table's or records' rows are the objects, numbered from 1.
        return rows
            .into_iter()
            .zip(1..)
            .map(|(obj, line)| {
                let row = parse_row(obj).map_err(|msg| Error::input(path, Some(line), msg))?;
                Ok(Entry { line, row })
            })
            .collect();
    }
    let mut reader = JsonlReader::open(path)?;
    let mut out = Vec::new();
    while let Some((line, obj)) = reader.next_object()? {
        let row = parse_row(obj).map_err(|msg| Error::input(path, Some(line), msg))?;
        out.push(Entry { line, row });
    }
    Ok(out)
}

/// One ledger object as a row, or the message for the user (without file and line).
fn parse_row(mut obj: Map<String, Value>) -> std::result::Result<LedgerRow, String> {
    match obj.get("kind") {
        None | Some(Value::Null) => return Err(format!("missing field 'kind' ({KINDS_EXPECTED})")),
        Some(Value::String(_)) => {}
        Some(other) => {
            return Err(format!(
                "'kind' is {}; expected {KINDS_EXPECTED}",
                clip(&other.to_string())
            ))
        }
    }
    // Leniency of the format: labels of another JSON type count as absent, and a model or
    // id written as a number is its text.
    for name in LABELS {
        if !matches!(
            obj.get(name),
            None | Some(Value::String(_) | Value::Number(_))
        ) {
            obj.remove(name);
        }
    }
    for name in TEXTS {
        match obj.get(name) {
            Some(Value::Number(n)) => {
                let s = n.to_string();
                obj.insert(name.to_string(), Value::String(s));
            }
            None | Some(Value::String(_)) => {}
            Some(_) => {
                obj.remove(name);
            }
        }
    }
    // `run` is informational: a value that is not a small non-negative integer counts as
    // absent (like a label of another type).
    for name in ["run"] {
        if !matches!(obj.get(name), None | Some(Value::Null))
            && obj
                .get(name)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .is_none()
        {
            obj.remove(name);
        }
    }
    for name in TOKENS {
        match obj.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Number(x)) if x.is_u64() => {}
            Some(other) => {
                return Err(format!(
                    "'{name}' is {}; expected a non-negative integer",
                    clip(&other.to_string())
                ))
            }
        }
    }
    let row: LedgerRow =
        // Twice the echo length: the message is ours (the kinds listed) around a value that
        // is clipped already.
        serde_json::from_value(Value::Object(obj)).map_err(|e| {
            crate::io::text::clip_to(&e.to_string(), 2 * crate::io::text::ECHO_CHARS)
        })?;
    if row.kind != CallKind::Search && row.model.is_none() {
        return Err("a model call needs a 'model' field".into());
    }
    if let (Some(c), Some(i)) = (row.cached_input_tokens, row.input_tokens) {
        if c > i {
            return Err(format!(
                "cached_input_tokens ({c}) exceed input_tokens ({i}); input_tokens must include the cached ones"
            ));
        }
    }
    Ok(row)
}

/// The largest price accepted anywhere (USD per 1M tokens or per 1,000 requests). Far above
/// any real tariff, and small enough that a fee (price × at most 2^64 tokens) stays finite.
pub const MAX_PRICE: f64 = 1e9;

/// The most search prices a sweep may hold (a prices file's `sweep_usd_per_1000`, or
/// `--search-price START:STOP:STEP`): each adds a column to every cost table.
pub const MAX_SWEEP_PRICES: usize = 10_000;

/// The one validation of a price, wherever it comes from (prices file, sweep, flag): a
/// finite number in `[0, MAX_PRICE]`. `what` names the price in the message.
///
/// # Errors
/// A message saying what the price is and what was expected.
pub fn check_price(what: &str, v: f64) -> std::result::Result<f64, String> {
    if v.is_finite() && (0.0..=MAX_PRICE).contains(&v) {
        Ok(v)
    } else {
        // Scientific notation for huge values: `1e308` is not echoed as 309 digits.
        let shown = if v.abs() >= 1e15 {
            format!("{v:e}")
        } else {
            v.to_string()
        };
        Err(format!(
            "{what} is {shown}; expected a finite price between 0 and {MAX_PRICE:e} USD"
        ))
    }
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
    /// Reads a prices TOML file (through [`read_text`]).
    ///
    /// # Errors
    /// [`Error::Input`] naming the file (and line, when TOML reports one) for bad syntax,
    /// unknown keys, or a price that fails [`check_price`] (NaN, infinite, negative, huge),
    /// or a sweep longer than [`MAX_SWEEP_PRICES`].
    pub fn read(path: &Path) -> Result<Self> {
        let text = read_text(path)?;
        let p: Prices = toml::from_str(&text).map_err(|e| {
            // Lines before the span's start, plus one (`lines()` would miss a span that
            // starts a line).
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() as u64 + 1);
            Error::input(
                path,
                line,
                format!(
                    "bad prices file: {}",
                    crate::io::jsonl::clip_error(e.message())
                ),
            )
        })?;
        p.checked(path)
    }

    /// The prices `source` holds: a TOML file ([`Prices::read`]), or in memory one record
    /// holding the file's tables (a Python dict `{"models": {…}, "search": {…}}`).
    ///
    /// # Errors
    /// As [`Prices::read`]; [`Error::Input`] for a table or several records.
    pub fn from_source(source: &crate::panel::Source) -> Result<Self> {
        use crate::panel::Source;
        let path = source.name();
        match source {
            Source::Files(paths) if paths.len() == 1 => Prices::read(&paths[0]),
            Source::Records { rows, .. } if rows.len() == 1 => {
                let p: Prices = serde_json::from_value(serde_json::Value::Object(rows[0].clone()))
                    .map_err(|e| Error::input(path, None, format!("bad prices: {e}")))?;
                p.checked(path)
            }
            _ => Err(Error::input(
                path,
                None,
                "prices are a TOML file or one mapping {\"models\": …, \"search\": …}",
            )),
        }
    }

    /// These prices, each checked by [`check_price`] (NaN, infinite, negative, huge), the
    /// sweep no longer than [`MAX_SWEEP_PRICES`]; errors name `path`.
    fn checked(self, path: &Path) -> Result<Self> {
        let p = self;
        let bad = |msg: String| Error::input(path, None, msg);
        for (name, m) in &p.models {
            let name = clip(name);
            check_price(&format!("model '{name}' input"), m.input).map_err(bad)?;
            check_price(&format!("model '{name}' output"), m.output).map_err(bad)?;
            if let Some(c) = m.cached_input {
                check_price(&format!("model '{name}' cached_input"), c).map_err(bad)?;
            }
        }
        check_price("search usd_per_1000", p.search.usd_per_1000).map_err(bad)?;
        if p.search.sweep_usd_per_1000.len() > MAX_SWEEP_PRICES {
            return Err(bad(format!(
                "search sweep_usd_per_1000 has {} prices; at most {MAX_SWEEP_PRICES} are allowed",
                p.search.sweep_usd_per_1000.len()
            )));
        }
        for (i, v) in p.search.sweep_usd_per_1000.iter().enumerate() {
            check_price(&format!("search sweep_usd_per_1000[{i}]"), *v).map_err(bad)?;
        }
        Ok(p)
    }
}

/// A sweep of search prices (USD per 1,000 requests) from its text: `START:STOP:STEP`
/// (e.g. `0:1:0.25`, STOP included) or a list `0,0.5,1`; at most [`MAX_SWEEP_PRICES`].
///
/// # Errors
/// [`Error::Setting`] naming `search_price` for text of neither form, a bad price, or too
/// many prices.
pub fn parse_sweep(s: &str) -> Result<Vec<f64>> {
    let bad = || {
        Error::setting(
            "search_price",
            format!(
                "'{}': expected START:STOP:STEP (e.g. 0:1:0.25) or a list like 0,0.5,1 (USD per 1,000 requests)",
                clip(s)
            ),
        )
    };
    let nums = |parts: Vec<&str>| -> Result<Vec<f64>> {
        parts
            .iter()
            .map(|p| {
                let v = p.trim().parse::<f64>().map_err(|_| bad())?;
                check_price("the search price", v).map_err(|m| Error::setting("search_price", m))
            })
            .collect()
    };
    let too_many = |n: f64| {
        Error::setting(
            "search_price",
            format!(
                "'{}' holds {n:.0} prices; at most {MAX_SWEEP_PRICES} are allowed",
                clip(s)
            ),
        )
    };
    if s.contains(':') {
        let v = nums(s.split(':').collect())?;
        let [a, b, step] = v[..] else {
            return Err(bad());
        };
        if step <= 0.0 || b < a {
            return Err(bad());
        }
        // Counted in f64 and bounded before anything is allocated (never NaN: a, b and step
        // are finite and step > 0; an infinite count is refused here too).
        let n = ((b - a) / step + 1e-9).floor();
        if n >= MAX_SWEEP_PRICES as f64 {
            return Err(too_many(n + 1.0));
        }
        Ok((0..=n as usize).map(|i| a + i as f64 * step).collect())
    } else {
        let n = s.split(',').count();
        if n > MAX_SWEEP_PRICES {
            return Err(too_many(n as f64));
        }
        nums(s.split(',').collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_are_ranges_or_lists() {
        assert_eq!(
            parse_sweep("0:1:0.25").unwrap(),
            [0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(parse_sweep("0, 0.5,1").unwrap(), [0.0, 0.5, 1.0]);
        for bad in ["1:0:0.5", "0:1:0", "0:1", "a,b", "-1"] {
            let e = parse_sweep(bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Setting {
                        setting: "search_price",
                        ..
                    }
                ),
                "{bad}: {e}"
            );
        }
        let e = parse_sweep("0:20000:1").unwrap_err().to_string();
        assert!(e.contains("holds 20001 prices; at most 10000"), "{e}");
    }

    fn parse(line: &str) -> std::result::Result<LedgerRow, String> {
        match serde_json::from_str(line).unwrap() {
            Value::Object(m) => parse_row(m),
            _ => unreachable!(),
        }
    }

    /// The first line of data/demo/ledger.jsonl, as `stats simulate` writes it.
    const DEMO_LINE: &str = r#"{"kind":"planner","dataset":"hotpotqa","question":"hotpotqa-0001","arm":"open","trajectory":0,"step":0,"model":"deepseek-v4.1-flash","input_tokens":1320,"cached_input_tokens":1024,"output_tokens":66,"key":"plan0:hotpotqa-0001:0"}"#;

    #[test]
    fn a_simulated_row_writes_and_reads_back_byte_for_byte() {
        let row = LedgerRow {
            dataset: Some("hotpotqa".into()),
            question: Some("hotpotqa-0001".into()),
            arm: Some("open".into()),
            trajectory: Some(0u32.into()),
            step: Some(0),
            model: Some("deepseek-v4.1-flash".into()),
            input_tokens: Some(1320),
            cached_input_tokens: Some(1024),
            output_tokens: Some(66),
            key: Some("plan0:hotpotqa-0001:0".into()),
            ..LedgerRow::new(CallKind::Planner)
        };
        assert_eq!(serde_json::to_string(&row).unwrap(), DEMO_LINE);
        assert_eq!(parse(DEMO_LINE).unwrap(), row);
    }

    #[test]
    fn unknown_tokens_are_absent_or_null_and_labels_strings_or_numbers() {
        let r = parse(r#"{"kind":"reader","model":7,"input_tokens":null,"trajectory":"t1","read":2.0,"dataset":true,"extra":[1]}"#).unwrap();
        assert_eq!(r.model.as_deref(), Some("7"));
        assert_eq!((r.input_tokens, r.output_tokens), (None, None));
        assert_eq!(r.trajectory.unwrap().text(), "t1");
        assert_eq!(r.read.unwrap().text(), "2.0");
        assert_eq!(r.dataset, None);
        let s = parse(r#"{"kind":"search"}"#).unwrap();
        assert_eq!(s, LedgerRow::new(CallKind::Search));
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"kind":"search"}"#);
    }

    #[test]
    fn bad_rows_are_named() {
        let cases = [
            (
                r#"{"model":"m"}"#,
                "missing field 'kind' (planner, reader, search, generator, judge, mcq or eval)",
            ),
            (
                r#"{"kind":"x"}"#,
                "unknown kind 'x'; expected planner, reader, search, generator, judge, mcq or eval",
            ),
            (
                r#"{"kind":1}"#,
                "'kind' is 1; expected planner, reader, search, generator, judge, mcq or eval",
            ),
            (r#"{"kind":"reader"}"#, "a model call needs a 'model' field"),
            (
                r#"{"kind":"reader","model":"m","output_tokens":-3}"#,
                "'output_tokens' is -3; expected a non-negative integer",
            ),
            (
                r#"{"kind":"reader","model":"m","input_tokens":"9"}"#,
                "'input_tokens' is \"9\"; expected a non-negative integer",
            ),
            (
                r#"{"kind":"reader","model":"m","input_tokens":5,"cached_input_tokens":9}"#,
                "cached_input_tokens (9) exceed input_tokens (5); input_tokens must include the cached ones",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line).unwrap_err(), want, "{line}");
        }
    }

    #[test]
    fn read_ledger_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.jsonl");
        std::fs::write(
            &p,
            format!("{DEMO_LINE}\n\n{{\"kind\":\"search\",\"key\":1}}\n[1]\n"),
        )
        .unwrap();
        let e = read_ledger(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("l.jsonl:4: expected a JSON object, found an array"),
            "{e}"
        );
        std::fs::write(
            &p,
            format!("{DEMO_LINE}\n\n{{\"kind\":\"search\",\"key\":1}}\n"),
        )
        .unwrap();
        let rows = read_ledger(&p).unwrap();
        assert_eq!(rows.iter().map(|e| e.line).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(rows[1].row.key.as_ref().unwrap().text(), "1");
    }

    #[test]
    fn kinds_parse_and_print() {
        for k in CallKind::ALL {
            assert_eq!(k.to_string().parse::<CallKind>().unwrap(), k);
        }
        assert_eq!(
            CallKind::ALL.map(CallKind::as_str),
            [
                "planner",
                "reader",
                "search",
                "generator",
                "judge",
                "mcq",
                "eval"
            ]
        );
        assert!("Reader".parse::<CallKind>().is_err());
        // Only the kinds of the runner's cells are part of c_T and c_R.
        let panel: Vec<CallKind> = CallKind::ALL
            .into_iter()
            .filter(|k| k.is_panel_cost())
            .collect();
        assert_eq!(
            panel,
            [
                CallKind::Planner,
                CallKind::Reader,
                CallKind::Search,
                CallKind::Eval
            ]
        );
        // A model call of a new kind still needs its model.
        assert_eq!(
            parse(r#"{"kind":"judge"}"#).unwrap_err(),
            "a model call needs a 'model' field"
        );
    }

    #[test]
    fn a_selector_is_a_label_written_only_when_present() {
        let r = parse(r#"{"kind":"reader","model":"m","selector":"rrf","read":0}"#).unwrap();
        assert_eq!(r.selector.as_ref().unwrap().text(), "rrf");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"kind":"reader","read":0,"selector":"rrf","model":"m"}"#
        );
        // A number is its text; another JSON type counts as absent.
        let n = parse(r#"{"kind":"reader","model":"m","selector":2}"#).unwrap();
        assert_eq!(n.selector.unwrap().text(), "2");
        let b = parse(r#"{"kind":"reader","model":"m","selector":[1]}"#).unwrap();
        assert_eq!(b.selector, None);
    }
}
