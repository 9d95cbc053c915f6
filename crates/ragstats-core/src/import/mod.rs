//! Reading the runs users already have: inspect_ai logs (`.eval` and `.json`),
//! lm-evaluation-harness samples (`samples_<task>_<date>.jsonl`) and Parquet panels, into the
//! panel records the CSV loader makes (and, for inspect_ai, cost-ledger rows of kind `eval`).
//!
//! Formats are told apart by content ([`detect`]), not by extension. The mapping of a log
//! onto a panel (dataset, question, trajectory, read, arm, one score column per scorer) is
//! set by [`ImportOptions`] and documented in `docs/import.md`. Every log row is read (or
//! refused) as a whole: a bad log is an [`Error::Input`] naming the file and the entry, and
//! samples that carry an error or no score are left out and listed in [`Imported::notes`],
//! never scored 0 unless the caller asks ([`ImportOptions::missing_as`]).

mod by_selector;
pub mod inspect;
pub mod lmeval;
mod log_set;
#[cfg(feature = "formats")]
pub mod parquet;
#[cfg(not(feature = "formats"))]
#[path = "parquet_off.rs"]
pub mod parquet;
mod settings;
mod view;

pub use by_selector::{by_selector, selector_choices, selector_names, By};
pub use settings::{dropped_notes, unpaired_counts, Balance, LogMapping, PanelSettings};

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use serde_json::{Map, Value};

use crate::io::clip;
use crate::ledger::LedgerRow;
use crate::panel::{LoadOptions, Panel};
use crate::{Error, Result};

/// Why a Parquet file or an inspect `.eval` log is refused by a core built without the
/// `formats` feature (`--no-default-features`).
#[cfg(not(feature = "formats"))]
const FORMATS_OFF: &str = "this build of ragstats reads no Parquet files or inspect .eval \
     logs: ragstats-core was built without its `formats` feature (it is on by default; \
     rebuild with it, or convert the file to CSV or JSONL)";

/// What a file holds, told by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An inspect_ai `.eval` log (a zip archive).
    InspectEval,
    /// An inspect_ai `.json` log (one JSON object with `eval` and `samples`).
    InspectJson,
    /// An lm-evaluation-harness `samples_*.jsonl` file (`--log_samples`).
    LmEvalSamples,
    /// A Parquet file (a panel or a table).
    Parquet,
    /// Anything else: a CSV or JSONL panel, read by the panel loader.
    Panel,
}

impl Format {
    /// Whether the format is an evaluation log (read through [`import_logs`]).
    pub fn is_log(self) -> bool {
        matches!(
            self,
            Format::InspectEval | Format::InspectJson | Format::LmEvalSamples
        )
    }

    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::InspectEval => "inspect_ai .eval log",
            Format::InspectJson => "inspect_ai .json log",
            Format::LmEvalSamples => "lm-evaluation-harness samples",
            Format::Parquet => "Parquet",
            Format::Panel => "panel",
        }
    }
}

/// How many leading bytes [`detect`] looks at: an lm-eval sample line holds the whole
/// document and prompt, so the first line may be long; it need not be complete.
const SNIFF_BYTES: usize = 1 << 16;

/// The format of the file at `path`, from its content: `PAR1` opens a Parquet file, `PK` a
/// zip archive (an inspect_ai `.eval` log); a JSON object whose first line is complete and
/// has `doc_id` with `filtered_resps`, `resps` or `metrics` is an lm-eval sample line; a
/// JSON object with `"eval"` among its first keys (pretty-printed or not) is an inspect_ai
/// `.json` log. A file that cannot be opened, and anything else, is [`Format::Panel`], so
/// the panel loader reports it as it always has.
pub fn detect(path: &Path) -> Format {
    let Ok(file) = std::fs::File::open(path) else {
        return Format::Panel;
    };
    let mut head = Vec::with_capacity(4096);
    if file
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return Format::Panel;
    }
    detect_bytes(&head)
}

/// [`detect`] of a file's first bytes.
fn detect_bytes(head: &[u8]) -> Format {
    if head.starts_with(b"PAR1") {
        return Format::Parquet;
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Format::InspectEval;
    }
    let text = String::from_utf8_lossy(head);
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if !body.starts_with('{') {
        return Format::Panel;
    }
    if let Some(first) = body.split('\n').next() {
        if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(first.trim()) {
            if obj.contains_key("doc_id")
                && ["filtered_resps", "resps", "metrics"]
                    .iter()
                    .any(|k| obj.contains_key(*k))
            {
                return Format::LmEvalSamples;
            }
            if obj
                .get("eval")
                .and_then(Value::as_object)
                .is_some_and(|e| e.contains_key("task"))
            {
                return Format::InspectJson;
            }
            return Format::Panel;
        }
    }
    // A pretty-printed or long object (inspect writes `{"version": 2, "status": …, "eval":
    // {… "task": …`; a rewritten log may have its keys sorted): an `"eval"` key holding an
    // object, and a `"task"`, near the start.
    let start: String = body.chars().take(8192).collect();
    let eval_object = start.match_indices("\"eval\"").any(|(i, k)| {
        let rest = start[i + k.len()..].trim_start();
        rest.strip_prefix(':')
            .is_some_and(|r| r.trim_start().starts_with('{'))
    });
    if eval_object && start.contains("\"task\"") {
        return Format::InspectJson;
    }
    Format::Panel
}

/// What the file at `path` looks like, in words, when its first bytes show it is not JSON
/// lines: a Parquet file, a zip archive (an inspect_ai `.eval` log when its first entry is
/// one of inspect's), gzip, other binary data (a NUL byte, or over 10% of it not text), an
/// lm-eval samples file, an inspect_ai `.json` log, or CSV (a first line with commas that
/// is not JSON). `None` for anything that may be JSON lines, and for a file that cannot be
/// read. For readers of JSONL files of their own (`mcq` results) to say what they were
/// given instead of a parse error.
pub fn looks_like(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::new();
    file.take(SNIFF_BYTES as u64).read_to_end(&mut head).ok()?;
    match detect_bytes(&head) {
        Format::Parquet => return Some("a Parquet file".into()),
        Format::InspectEval => {
            // A zip local header: the first entry's name length at 26, the name at 30.
            let name = head
                .get(26..28)
                .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
                .and_then(|n| head.get(30..30 + n))
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            let inspect = ["_journal/", "header.json", "samples/", "summaries.json"]
                .iter()
                .any(|p| name.starts_with(p));
            return Some(if inspect {
                "an inspect_ai .eval log (a zip archive)".into()
            } else if name.is_empty() {
                "a zip archive".into()
            } else {
                format!("a zip archive (first entry {})", clip(&name))
            });
        }
        Format::LmEvalSamples => return Some("an lm-evaluation-harness samples file".into()),
        Format::InspectJson => return Some("an inspect_ai .json log".into()),
        Format::Panel => {}
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Some("a gzip-compressed file".into());
    }
    // UTF-16 text is left to the reader, whose message says how to save it.
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return None;
    }
    // Binary: a NUL byte, or more than one character in ten that is not text (an invalid
    // UTF-8 sequence or a control character). A text file with one bad byte is not binary:
    // the reader names its line.
    let text = String::from_utf8_lossy(&head);
    let (mut chars, mut odd) = (0usize, 0usize);
    for c in text.chars() {
        chars += 1;
        if c == '\u{fffd}' || (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c')) {
            odd += 1;
        }
    }
    if head.contains(&0) || odd * 10 > chars {
        return Some("a binary file (not text)".into());
    }
    let first = text
        .trim_start_matches('\u{feff}')
        .lines()
        .find(|l| !l.trim().is_empty())?
        .trim();
    if !first.starts_with('{') && !first.starts_with('[') && first.contains(',') {
        return Some(format!("a CSV file (header: {})", clip(first)));
    }
    None
}

/// Where the panel's `dataset` comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatasetFrom {
    /// The task name (inspect's `eval.task`, lm-eval's task).
    Task,
    /// A metadata field of each sample (inspect) or document field (lm-eval `doc`).
    Metadata(String),
}

impl std::str::FromStr for DatasetFrom {
    type Err = Error;
    /// `task`, or `metadata:KEY` (a bare `KEY` is a metadata key too).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            // A value parser's error: the front end names the setting (clap: the flag).
            "" => Err(Error::Usage("expected task or metadata:KEY".into())),
            "task" => Ok(DatasetFrom::Task),
            other => Ok(DatasetFrom::Metadata(
                other.strip_prefix("metadata:").unwrap_or(other).to_string(),
            )),
        }
    }
}

/// Where the panel's `arm` comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ArmFrom {
    /// The model evaluated (inspect's `eval.model`; lm-eval's `model_name` in
    /// `results_*.json`).
    #[default]
    Model,
    /// The task name.
    Task,
    /// The solver chain (inspect's plan steps, joined with `+`).
    Solver,
    /// A metadata field of each sample.
    Metadata(String),
}

impl std::str::FromStr for ArmFrom {
    type Err = Error;
    /// `model`, `task`, `solver` or `metadata:KEY`.
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "model" => Ok(ArmFrom::Model),
            "task" => Ok(ArmFrom::Task),
            "solver" => Ok(ArmFrom::Solver),
            other => match other.strip_prefix("metadata:") {
                Some(k) if !k.is_empty() => Ok(ArmFrom::Metadata(k.to_string())),
                _ => Err(Error::Usage(format!(
                    "unknown source of the arm '{}'; expected model, task, solver or metadata:KEY",
                    clip(other)
                ))),
            },
        }
    }
}

/// How logs map onto a panel (`docs/import.md`).
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Where `dataset` comes from; `None`: the task, when every log is of one task (logs of
    /// several tasks are refused unless this is given, or the tasks are the arms).
    pub dataset_from: Option<DatasetFrom>,
    /// Where `arm` comes from.
    pub arm_from: ArmFrom,
    /// A fixed arm label for every row (lm-eval samples without their `results_*.json`).
    pub arm: Option<String>,
    /// The scorers (or score columns) to keep; empty: all.
    pub scores: Vec<String>,
    /// A metadata key whose value becomes a `cluster` column.
    pub cluster_from: Option<String>,
    /// The score given to samples with an error or without a score, instead of leaving
    /// them out (e.g. 0).
    pub missing_as: Option<f64>,
    /// lm-eval: the filter whose rows are read (needed when a file has several).
    pub filter: Option<String>,
}

/// A score as a number, or why it cannot be one (the message names the entry and scorer).
pub(crate) type ScoreValue = std::result::Result<f64, String>;

/// One evaluated sample of a log, as the log's reader hands it over.
#[derive(Debug, Clone)]
pub(crate) struct LogSample {
    /// The sample (inspect) or document (lm-eval) id.
    pub id: String,
    /// 1-based epoch (lm-eval: 1).
    pub epoch: u32,
    /// Where it is in the file: the zip entry, or `samples[i]`, or the line.
    pub entry: String,
    /// Score columns and values, in scorer order; `None` when the sample has no scores.
    pub scores: Option<Vec<(String, ScoreValue)>>,
    /// The sample's error message, when it failed.
    pub error: Option<String>,
    /// The sample's metadata (inspect) or document (lm-eval).
    pub metadata: Map<String, Value>,
    /// Token usage per model.
    pub usage: Vec<(String, Usage)>,
}

/// One model's token usage of a sample, in the ledger's convention (input includes cached
/// tokens).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub cached_input: u64,
    pub output: u64,
    pub reasoning: u64,
}

/// One log file, read.
#[derive(Debug, Clone)]
pub(crate) struct Log {
    pub path: PathBuf,
    pub format: Format,
    pub task: String,
    pub model: Option<String>,
    pub solver: Option<String>,
    pub samples: Vec<LogSample>,
    /// Notes about the log as a whole (status, repeats).
    pub notes: Vec<String>,
    /// An lm-eval run: what tells its runs of one model and task apart.
    pub run: Option<LmRun>,
}

/// What an lm-eval samples file says about its run: repeated runs of one model and task
/// with the same metrics and filter are that model's reads, in the order of their dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LmRun {
    /// The date of the file name (`2024-12-23T14-36-36.300029`: sorts as time does).
    pub date: String,
    /// The metrics read, in order.
    pub metrics: Vec<String>,
    /// The filter read.
    pub filter: String,
}

/// One panel row of an imported log: dataset, question, read (epoch − 1), arm, cluster and
/// the score columns (`None` where the sample lacks that scorer). The trajectory is 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub dataset: Option<String>,
    pub question: String,
    pub read: u32,
    pub arm: Option<String>,
    pub cluster: Option<String>,
    pub scores: Vec<Option<f64>>,
}

/// What one log contributed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LogSummary {
    pub path: PathBuf,
    pub format: &'static str,
    pub task: String,
    pub arm: Option<String>,
    /// Samples × epochs read as rows.
    pub rows: usize,
    /// `id epoch N` of each sample left out (an error or no score).
    pub left_out: Vec<String>,
}

/// Logs turned into panel rows and ledger rows.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The score columns, in order of first appearance.
    pub score_names: Vec<String>,
    pub rows: Vec<Row>,
    /// One `eval` row per sample and model with usage.
    pub ledger: Vec<LedgerRow>,
    pub logs: Vec<LogSummary>,
    /// What the user should know: samples left out (with their ids), log status, repeats.
    pub notes: Vec<String>,
    /// Files of the directories searched that are not logs.
    pub skipped: Vec<Skipped>,
}

/// What `import` wrote: the panel and ledger files, the rows and score columns, each log's
/// contribution and the notes (samples left out and why).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportReport {
    pub out: PathBuf,
    pub ledger_out: Option<PathBuf>,
    pub rows: usize,
    pub scores: Vec<String>,
    pub ledger_rows: usize,
    pub logs: Vec<LogSummary>,
    pub notes: Vec<String>,
    /// Files of the directories searched that are not logs, and why.
    pub skipped: Vec<Skipped>,
}

impl crate::document::Report for ImportReport {}

impl ImportReport {
    /// The report of `imported`, its panel written to `out` (and ledger to `ledger_out`).
    pub fn new(imported: &Imported, out: &Path, ledger_out: Option<&Path>) -> ImportReport {
        ImportReport {
            out: out.to_path_buf(),
            ledger_out: ledger_out.map(Path::to_path_buf),
            rows: imported.rows.len(),
            scores: imported.score_names.clone(),
            ledger_rows: imported.ledger.len(),
            logs: imported.logs.clone(),
            notes: imported.notes.clone(),
            skipped: imported.skipped.clone(),
        }
    }
}

/// A file under a searched directory that is not read as a log, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// The logs found (each with its format) and the other files of the directories searched.
type Found = (Vec<(PathBuf, Format)>, Vec<Skipped>);

/// Every file under `dir`, its subdirectories' included, sorted by path. Links to
/// directories are not followed (a link loop would never end); they are returned as
/// skipped.
fn walk(dir: &Path) -> Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| Error::io(&d, e))? {
            let e = e.map_err(|e| Error::io(&d, e))?;
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() && path.is_dir() {
                skipped.push(Skipped {
                    path,
                    reason: "a link to a directory (not followed)".into(),
                });
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok((files, skipped))
}

/// Why a file found in a directory is not read as a log.
fn skip_reason(path: &Path, format: Format) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("results_") && name.ends_with(".json") {
        "lm-eval results file (read beside its samples file)".into()
    } else {
        format!("not a log (reads as {})", format.name())
    }
}

/// The log files of `paths` (files, or directories searched recursively), each with its
/// format, and the files of the directories that are not logs.
fn expand_files(paths: &[PathBuf]) -> Result<Found> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        if p.is_dir() {
            let (files, mut skip) = walk(p)?;
            let before = out.len();
            for f in files {
                let fmt = detect(&f);
                if fmt.is_log() {
                    out.push((f, fmt));
                } else {
                    let reason = skip_reason(&f, fmt);
                    skip.push(Skipped { path: f, reason });
                }
            }
            if out.len() == before {
                let seen: Vec<String> = skip
                    .iter()
                    .take(3)
                    .map(|s| format!("{} ({})", s.path.display(), s.reason))
                    .collect();
                return Err(Error::input(
                    p,
                    None,
                    format!(
                        "the directory and its subdirectories hold no inspect_ai logs or \
                         lm-eval samples files ({} other file(s){}{})",
                        skip.len(),
                        if seen.is_empty() { "" } else { ": " },
                        seen.join(", ")
                    ),
                ));
            }
            skipped.extend(skip);
        } else {
            let fmt = detect(p);
            if !fmt.is_log() {
                if !p.exists() {
                    return Err(Error::io(
                        p,
                        std::io::Error::from(std::io::ErrorKind::NotFound),
                    ));
                }
                return Err(Error::input(
                    p,
                    None,
                    format!(
                        "not an inspect_ai log (.eval or .json) or lm-eval samples file (read as {})",
                        fmt.name()
                    ),
                ));
            }
            out.push((p.clone(), fmt));
        }
    }
    Ok((out, skipped))
}

/// Whether `path` is read as logs by the panel loader: an evaluation log, or a directory
/// holding at least one (in it or in a subdirectory).
pub fn is_log_input(path: &Path) -> bool {
    if path.is_dir() {
        return walk(path).is_ok_and(|(files, _)| files.iter().any(|f| detect(f).is_log()));
    }
    detect(path).is_log()
}

/// Reads the logs at `paths` (files, or directories of logs) into panel and ledger rows.
///
/// # Errors
/// [`Error::Input`] naming the file (and the entry) for: a file that is not a log, a
/// truncated or unreadable archive, a log still being written (no header), logs of several
/// tasks without [`ImportOptions::dataset_from`], a duplicate (sample, epoch), the same cell
/// in two logs, a score that cannot be mapped to a number, a missing metadata key asked for.
pub fn import_logs(paths: &[PathBuf], opts: &ImportOptions) -> Result<Imported> {
    let (files, skipped) = expand_files(paths)?;
    let mut logs = Vec::new();
    for (path, format) in &files {
        logs.push(match format {
            Format::InspectEval => inspect::read_eval(path)?,
            Format::InspectJson => inspect::read_json(path)?,
            Format::LmEvalSamples => lmeval::read_samples(path, opts)?,
            Format::Parquet | Format::Panel => unreachable!("expand keeps logs only"),
        });
    }
    let mut imported = assemble(logs, opts)?;
    imported.skipped = skipped;
    Ok(imported)
}

/// The text of a metadata value used as a label: strings as they are, numbers and booleans
/// printed; `None` for null, arrays and objects.
fn label_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Log {
    /// Sample `s` in the log's own terms: inspect's `sample ID epoch N`, lm-eval's
    /// `document ID` (an lm-eval run scores each document once; its repeats are runs).
    fn unit(&self, s: &LogSample) -> String {
        match self.run {
            Some(_) => format!("document {}", s.id),
            None => format!("sample {} epoch {}", s.id, s.epoch),
        }
    }
}

/// Sample `s` of `log`'s metadata field `key` as a label, or the error naming the entry.
fn metadata_label(log: &Log, s: &LogSample, key: &str, role: &str) -> Result<String> {
    match s.metadata.get(key).and_then(label_text) {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(Error::input(
            &log.path,
            None,
            format!(
                "{}: {} has no {} '{}' (a string or number) for the {role}",
                s.entry,
                log.unit(s),
                if log.run.is_some() {
                    "doc field"
                } else {
                    "metadata"
                },
                clip(key)
            ),
        )),
    }
}

/// Where an lm-eval run's rows go: the read its documents take, and the suffix of its arm
/// when it is kept apart from the model's other runs.
#[derive(Debug, Clone, Default)]
struct Placement {
    read: u32,
    arm_suffix: Option<String>,
}

/// Places lm-eval runs: the runs of one model and task with the same metrics and filter are
/// that model's reads (read index in the order of the runs' dates); runs of that model and
/// task that differ in metric or filter are kept apart as an arm of their own,
/// `MODEL [metric,filter]` (lm-eval's `metric,filter` key), except the group with the most
/// runs. Notes say what was done; inspect logs keep their epochs (read 0 offset).
///
/// # Errors
/// [`Error::Input`] when one run (the same date) is given twice.
fn place_runs(
    logs: &[Log],
    opts: &ImportOptions,
    notes: &mut Vec<String>,
) -> Result<Vec<Placement>> {
    let mut place = vec![Placement::default(); logs.len()];
    // (model, task) → (metrics, filter) → the runs' indices.
    type Groups<'a> = Vec<((&'a [String], &'a str), Vec<usize>)>;
    let mut by_model: Vec<((Option<String>, &str), Groups)> = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        let Some(run) = &log.run else { continue };
        let key = (
            opts.arm.clone().or_else(|| log.model.clone()),
            log.task.as_str(),
        );
        let sub = (run.metrics.as_slice(), run.filter.as_str());
        let at = match by_model.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                by_model.push((key, Vec::new()));
                by_model.len() - 1
            }
        };
        let groups = &mut by_model[at].1;
        match groups.iter_mut().find(|(k, _)| *k == sub) {
            Some((_, runs)) => runs.push(i),
            None => groups.push((sub, vec![i])),
        }
    }
    let date = |i: usize| logs[i].run.as_ref().map_or("", |r| r.date.as_str());
    for ((model, task), mut groups) in by_model {
        let who = format!("{} on {task}", model.as_deref().unwrap_or("(no model)"));
        for (_, runs) in &mut groups {
            runs.sort_by(|&a, &b| date(a).cmp(date(b)).then(logs[a].path.cmp(&logs[b].path)));
            for w in runs.windows(2) {
                if !date(w[0]).is_empty() && date(w[0]) == date(w[1]) {
                    return Err(Error::input(
                        &logs[w[1]].path,
                        None,
                        format!(
                            "the run of {} is also in {}: one run given twice",
                            date(w[1]),
                            logs[w[0]].path.display()
                        ),
                    ));
                }
            }
        }
        // The group kept under the model's name: the most runs, then the latest.
        let main = (0..groups.len())
            .max_by(|&a, &b| {
                let last = |g: usize| date(*groups[g].1.last().unwrap_or(&0));
                groups[a]
                    .1
                    .len()
                    .cmp(&groups[b].1.len())
                    .then(last(a).cmp(last(b)))
            })
            .unwrap_or(0);
        let label = |(m, f): (&[String], &str)| format!("[{},{f}]", m.join("+"));
        for (g, (sub, runs)) in groups.iter().enumerate() {
            let dates: Vec<&str> = runs.iter().map(|&i| date(i)).collect();
            let suffix = (g != main).then(|| label(*sub));
            for (r, &i) in runs.iter().enumerate() {
                place[i] = Placement {
                    read: r as u32,
                    arm_suffix: suffix.clone(),
                };
            }
            if runs.len() > 1 {
                notes.push(format!(
                    "{who}: {} runs ({}) are the reads 0-{} of each document, in the order of their dates",
                    runs.len(),
                    dates.join(", "),
                    runs.len() - 1
                ));
                let docs = |i: usize| -> BTreeSet<&str> {
                    logs[i].samples.iter().map(|s| s.id.as_str()).collect()
                };
                let first = docs(runs[0]);
                if runs[1..].iter().any(|&i| docs(i) != first) {
                    let counts: Vec<String> =
                        runs.iter().map(|&i| docs(i).len().to_string()).collect();
                    notes.push(format!(
                        "{who}: the runs cover different documents ({} documents); a document \
                         missing from a run has fewer reads",
                        counts.join(", ")
                    ));
                }
            }
            if let Some(sfx) = &suffix {
                let (mm, mf) = groups[main].0;
                notes.push(format!(
                    "{who}: the run(s) {} score {} with filter {}, unlike the {} run(s) of {} with \
                     filter {mf}: kept apart as arm '{}'",
                    dates.join(", "),
                    sub.0.join(", "),
                    sub.1,
                    groups[main].1.len(),
                    mm.join(", "),
                    model.as_deref().map_or(sfx.clone(), |m| format!("{m} {sfx}"))
                ));
            }
        }
    }
    Ok(place)
}

/// Whether the score column `col` (of scorer `col` or `scorer.key`) is kept.
fn keep_score(opts: &ImportOptions, col: &str) -> bool {
    opts.scores.is_empty()
        || opts.scores.iter().any(|s| {
            s == col
                || col
                    .strip_prefix(s.as_str())
                    .is_some_and(|r| r.starts_with('.'))
        })
}

/// A panel cell of an imported row: (dataset, question, read, arm).
type CellKey = (Option<String>, String, u32, Option<String>);

/// The logs' samples as rows, with the checks across logs.
fn assemble(logs: Vec<Log>, opts: &ImportOptions) -> Result<Imported> {
    let tasks: BTreeSet<&str> = logs.iter().map(|l| l.task.as_str()).collect();
    if tasks.len() > 1 && opts.dataset_from.is_none() && opts.arm_from != ArmFrom::Task {
        let which: Vec<String> = logs
            .iter()
            .map(|l| format!("{} in {}", l.task, l.path.display()))
            .collect();
        return Err(Error::input(
            &logs[0].path,
            None,
            format!(
                "the logs are of {} tasks ({}); take the dataset from the task to make each \
                 task a stratum (or from a metadata key), or the arm from the task to compare \
                 them as arms",
                tasks.len(),
                which.join(", ")
            ),
        ));
    }
    let mut score_names: Vec<String> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut ledger = Vec::new();
    let mut summaries = Vec::new();
    let mut notes = Vec::new();
    // Where each cell was first seen: (file, entry).
    let mut seen: HashMap<CellKey, (usize, String)> = HashMap::new();
    let placements = place_runs(&logs, opts, &mut notes)?;
    for (li, log) in logs.iter().enumerate() {
        let place = &placements[li];
        for n in &log.notes {
            notes.push(format!("{}: {n}", log.path.display()));
        }
        let mut in_log: HashMap<(&str, u32), &str> = HashMap::new();
        let mut left_out = Vec::new();
        let mut n_rows = 0;
        let mut log_arm = None;
        for s in &log.samples {
            if let Some(first) = in_log.insert((s.id.as_str(), s.epoch), s.entry.as_str()) {
                return Err(Error::input(
                    &log.path,
                    None,
                    format!(
                        "{}: {} appears twice (first in {first})",
                        s.entry,
                        log.unit(s)
                    ),
                ));
            }
            let dataset = match &opts.dataset_from {
                Some(DatasetFrom::Metadata(k)) => Some(metadata_label(log, s, k, "dataset")?),
                Some(DatasetFrom::Task) => Some(log.task.clone()),
                None if opts.arm_from == ArmFrom::Task => None,
                None => Some(log.task.clone()),
            };
            let arm = match (&opts.arm, &opts.arm_from) {
                (Some(a), _) => Some(a.clone()),
                (None, ArmFrom::Model) => log.model.clone(),
                (None, ArmFrom::Task) => Some(log.task.clone()),
                (None, ArmFrom::Solver) => log.solver.clone(),
                (None, ArmFrom::Metadata(k)) => Some(metadata_label(log, s, k, "arm")?),
            };
            let arm = match (&place.arm_suffix, arm) {
                (Some(sfx), Some(a)) => Some(format!("{a} {sfx}")),
                (Some(sfx), None) => Some(sfx.clone()),
                (None, a) => a,
            };
            let cluster = match &opts.cluster_from {
                Some(k) => Some(metadata_label(log, s, k, "cluster")?),
                None => None,
            };
            let read = s.epoch.saturating_sub(1) + place.read;
            // Usage is billed whether or not the sample is scored: it was paid for.
            for (model, u) in &s.usage {
                let mut r = LedgerRow::new(crate::ledger::CallKind::Eval);
                r.dataset = dataset.clone().map(Into::into);
                r.question = Some(s.id.clone().into());
                r.arm = arm.clone().map(Into::into);
                r.trajectory = Some(0u32.into());
                r.read = Some(read.into());
                r.model = Some(model.clone());
                r.input_tokens = Some(u.input);
                r.cached_input_tokens = Some(u.cached_input);
                r.output_tokens = Some(u.output);
                r.reasoning_tokens = Some(u.reasoning);
                ledger.push(r);
            }
            let kept: Option<Vec<(&str, f64)>> = match (&s.error, &s.scores) {
                (None, Some(sc)) => {
                    let mut k = Vec::new();
                    for (c, v) in sc.iter().filter(|(c, _)| keep_score(opts, c)) {
                        match v {
                            Ok(v) => k.push((c.as_str(), *v)),
                            Err(m) => return Err(Error::input(&log.path, None, m.clone())),
                        }
                    }
                    (!k.is_empty()).then_some(k)
                }
                _ => None,
            };
            let kept = match (kept, opts.missing_as) {
                (Some(k), _) => k,
                (None, Some(_)) => Vec::new(),
                (None, None) => {
                    let who = match log.run {
                        Some(_) => format!("document {}", s.id),
                        None => format!("{} epoch {}", s.id, s.epoch),
                    };
                    left_out.push(match &s.error {
                        Some(e) => format!("{who} (error: {})", clip(e)),
                        None => format!("{who} (no score)"),
                    });
                    continue;
                }
            };
            let key = (dataset.clone(), s.id.clone(), read, arm.clone());
            if let Some((other, entry)) = seen.get(&key) {
                let (unit, what) = match log.run {
                    Some(_) => (format!("document {} read {read}", s.id), "two runs"),
                    None => (log.unit(s), "two logs"),
                };
                return Err(Error::input(
                    &log.path,
                    None,
                    format!(
                        "{}: {unit} (dataset {}, arm {}) is also in {} ({entry}); one cell, {what}",
                        s.entry,
                        dataset.as_deref().unwrap_or("-"),
                        arm.as_deref().unwrap_or("-"),
                        logs[*other].path.display()
                    ),
                ));
            }
            seen.insert(key, (li, s.entry.clone()));
            let mut scores = vec![None; score_names.len()];
            for (c, v) in kept {
                let i = match score_names.iter().position(|n| n == c) {
                    Some(i) => i,
                    None => {
                        score_names.push(c.to_string());
                        for r in &mut rows {
                            r.scores.push(None);
                        }
                        scores.push(None);
                        score_names.len() - 1
                    }
                };
                scores[i] = Some(v);
            }
            log_arm = log_arm.or(arm.clone());
            rows.push(Row {
                dataset,
                question: s.id.clone(),
                read,
                arm,
                cluster,
                scores,
            });
            n_rows += 1;
        }
        // A score that never varies (a run scored 0 everywhere: often a broken answer
        // extraction) has SE 0 and undefined variance shares; say so where it starts.
        let mine = &rows[rows.len() - n_rows..];
        for (i, name) in score_names.iter().enumerate() {
            let mut vals = mine
                .iter()
                .filter_map(|r| r.scores.get(i).copied().flatten());
            if let Some(first) = vals.next() {
                let n = 1 + vals.clone().count();
                if n > 1 && vals.all(|v| v == first) {
                    notes.push(format!(
                        "{}: every one of its {n} {} scored {first} on {name}: the outcome does \
                         not vary, so its SE is 0 and its variance shares are undefined (check \
                         the scorer or the answer extraction if that is unexpected)",
                        log.path.display(),
                        if log.run.is_some() {
                            "documents"
                        } else {
                            "scored samples"
                        },
                    ));
                }
            }
        }
        if !left_out.is_empty() {
            notes.push(format!(
                "{}: left out {} {} (score missing samples as 0 to keep them): {}",
                log.path.display(),
                left_out.len(),
                if log.run.is_some() {
                    "document(s)"
                } else {
                    "sample(s)"
                },
                left_out.join(", ")
            ));
        }
        summaries.push(LogSummary {
            path: log.path.clone(),
            format: log.format.name(),
            task: log.task.clone(),
            arm: log_arm,
            rows: n_rows,
            left_out,
        });
    }
    if let Some(v) = opts.missing_as {
        for r in &mut rows {
            for s in &mut r.scores {
                s.get_or_insert(v);
            }
        }
    }
    // `--missing-as` fills scores of samples left without one, but a log that names no
    // scorer at all (an unscored run) has no score column to fill.
    if rows.is_empty() || score_names.is_empty() {
        let p = logs.first().map(|l| l.path.clone()).unwrap_or_default();
        return Err(Error::input(
            p,
            None,
            if opts.scores.is_empty() {
                "no scored samples in the logs".to_string()
            } else {
                format!("no scored samples with score {}", opts.scores.join(", "))
            },
        ));
    }
    Ok(Imported {
        score_names,
        rows,
        ledger,
        logs: summaries,
        notes,
        skipped: Vec::new(),
    })
}

impl Imported {
    fn has_dataset(&self) -> bool {
        self.rows.iter().any(|r| r.dataset.is_some())
    }
    fn has_arm(&self) -> bool {
        self.rows.iter().any(|r| r.arm.is_some())
    }
    fn has_cluster(&self) -> bool {
        self.rows.iter().any(|r| r.cluster.is_some())
    }

    /// The key columns written, in panel order.
    fn key_columns(&self) -> Vec<&'static str> {
        let mut cols = Vec::new();
        if self.has_dataset() {
            cols.push("dataset");
        }
        cols.extend(["question", "trajectory", "read"]);
        if self.has_arm() {
            cols.push("arm");
        }
        if self.has_cluster() {
            cols.push("cluster");
        }
        cols
    }

    /// The panel as CSV: `dataset,question,trajectory,read,arm[,cluster],<scores>` (columns
    /// without any value left out), scores in Rust's shortest round-trip form (so the CSV
    /// loader reads back the same bits), empty where a sample lacks a scorer.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<&str> = self.key_columns();
        header.extend(self.score_names.iter().map(String::as_str));
        let _ = w.write_record(&header);
        let (d, a, c) = (self.has_dataset(), self.has_arm(), self.has_cluster());
        let mut buf = String::new();
        for r in &self.rows {
            let mut rec: Vec<String> = Vec::with_capacity(header.len());
            if d {
                rec.push(r.dataset.clone().unwrap_or_default());
            }
            rec.push(r.question.clone());
            rec.push("0".into());
            rec.push(r.read.to_string());
            if a {
                rec.push(r.arm.clone().unwrap_or_default());
            }
            if c {
                rec.push(r.cluster.clone().unwrap_or_default());
            }
            for s in &r.scores {
                buf.clear();
                if let Some(v) = s {
                    let _ = write!(buf, "{v}");
                }
                rec.push(buf.clone());
            }
            let _ = w.write_record(&rec);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// The ledger as JSONL (one `eval` row per sample and model).
    pub fn ledger_jsonl(&self) -> String {
        let mut s = String::new();
        for r in &self.ledger {
            s.push_str(&serde_json::to_string(r).expect("a ledger row serialises"));
            s.push('\n');
        }
        s
    }

    /// The panel as one Arrow record batch (the columns of [`Imported::to_csv`]); rows that
    /// lack `metric` (when given) are left out and named in the returned notes.
    /// The score column a panel of these rows analyses: `opts.metric`, else `f1` if it is
    /// a score, else the only score; chosen as the panel loader would, but among the scores
    /// only (a `cluster` column is no candidate).
    fn score_column(&self, opts: &LoadOptions) -> Option<String> {
        opts.metric.clone().or_else(|| {
            if self.score_names.iter().any(|n| n == "f1") {
                Some("f1".into())
            } else if self.score_names.len() == 1 {
                Some(self.score_names[0].clone())
            } else {
                None
            }
        })
    }

    fn to_batch(&self, metric: Option<&str>) -> (Schema, RecordBatch, Vec<String>) {
        let mi = metric.and_then(|m| self.score_names.iter().position(|n| n == m));
        let mut missing = Vec::new();
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| match mi {
                Some(i) if r.scores[i].is_none() => {
                    missing.push(format!("{} read {}", r.question, r.read));
                    false
                }
                _ => true,
            })
            .collect();
        let mut fields = Vec::new();
        let mut cols: Vec<ArrayRef> = Vec::new();
        let text = |f: &dyn Fn(&Row) -> Option<String>| -> ArrayRef {
            Arc::new(rows.iter().map(|r| f(r)).collect::<StringArray>())
        };
        for c in self.key_columns() {
            let col: ArrayRef = match c {
                "dataset" => text(&|r| r.dataset.clone()),
                "question" => text(&|r| Some(r.question.clone())),
                "trajectory" => Arc::new(Int64Array::from(vec![0i64; rows.len()])),
                "read" => Arc::new(Int64Array::from_iter_values(
                    rows.iter().map(|r| i64::from(r.read)),
                )),
                "arm" => text(&|r| r.arm.clone()),
                _ => text(&|r| r.cluster.clone()),
            };
            fields.push(Field::new(c, col.data_type().clone(), true));
            cols.push(col);
        }
        for (i, n) in self.score_names.iter().enumerate() {
            let col: ArrayRef =
                Arc::new(rows.iter().map(|r| r.scores[i]).collect::<Float64Array>());
            fields.push(Field::new(n, DataType::Float64, true));
            cols.push(col);
        }
        let schema = Schema::new(fields);
        let batch = RecordBatch::try_new(Arc::new(schema.clone()), cols)
            .expect("columns of one length and their own types");
        let notes = if missing.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "left out {} row(s) without score '{}': {}",
                missing.len(),
                metric.unwrap_or_default(),
                missing.join(", ")
            )]
        };
        (schema, batch, notes)
    }
}

/// Loads a panel from `path` whatever its format: a Parquet file, an inspect_ai log, an
/// lm-eval samples file or a directory of logs (told by content, [`detect`]) through this
/// module with `import`'s mapping; a CSV or JSONL panel, or an in-memory table registered
/// through [`crate::panel::load_panel`]. What every panel command of the
/// CLI loads a path with.
///
/// # Errors
/// Those of [`import_logs`], [`parquet::load_parquet_panel`] and the panel loader.
pub fn load_panel(path: &Path, opts: &LoadOptions, import: &ImportOptions) -> Result<Panel> {
    if is_log_input(path) {
        return load_logs_panel(path, opts, import);
    }
    if detect(path) == Format::Parquet {
        return parquet::load_parquet_panel(path, opts);
    }
    crate::panel::load_panel(path, opts)
}

/// The rows of the panel `source` holds, read once for analyses that assemble one panel
/// several times (`compare`): a CSV or JSONL file as it is read; a Parquet file, evaluation
/// logs (one file or directory, or several read as one set, with `import`'s mapping) or a
/// table in memory through the Arrow reader. The import's notes are not kept.
///
/// # Errors
/// Those of reading the file, the logs or the table; records are refused (a panel is a
/// file or a table); with several files, [`Error::Input`] naming the first that is not an
/// evaluation log.
pub fn panel_rows(
    source: &crate::panel::Source,
    opts: &LoadOptions,
    import: &ImportOptions,
) -> Result<crate::panel::PanelRows> {
    use crate::panel::{PanelRows, Source};
    let logs = |paths: &[PathBuf]| -> Result<PanelRows> {
        let imported = import_logs(paths, import)?;
        let metric = imported.score_column(opts);
        let (schema, batch, _) = imported.to_batch(metric.as_deref());
        let table = crate::panel::memory::MemoryTable {
            schema: std::sync::Arc::new(schema),
            batches: vec![batch],
        };
        PanelRows::from_table(&paths[0].to_string_lossy(), &table, opts)
    };
    match source {
        Source::Table { name, table } => PanelRows::from_table(name, table, opts),
        Source::Records { .. } => Err(source.records_refused()),
        Source::Files(paths) => match paths.as_slice() {
            [one] if is_log_input(one) => logs(paths),
            [one] if detect(one) == Format::Parquet => {
                PanelRows::from_table(&one.to_string_lossy(), &parquet::parquet_table(one)?, opts)
            }
            [one] => PanelRows::from_file(one, opts),
            _ => {
                for p in paths {
                    log_set::check_member(p)?;
                }
                logs(paths)
            }
        },
    }
}

/// Loads the logs at `path` (a log file, or a directory of logs) as a panel, with
/// `import`'s mapping: the panel loader's rules and errors apply to the imported rows,
/// and the import's notes (samples left out) are added to the first stratum's notes.
///
/// # Errors
/// Those of [`import_logs`] and of the panel loader.
pub fn load_logs_panel(path: &Path, opts: &LoadOptions, import: &ImportOptions) -> Result<Panel> {
    load_log_set_panel(std::slice::from_ref(&path.to_path_buf()), opts, import)
}

/// Loads the panel `source` holds: a table in memory through the Arrow loader (its name in
/// messages); one file as [`load_panel`] reads it; several files (evaluation logs or
/// directories of them, nothing else) as one set of logs, as a directory holding them.
///
/// # Errors
/// Those of [`load_panel`]; with several files, [`Error::Input`] naming the first that is
/// not an evaluation log.
pub fn load_source(
    source: &crate::panel::Source,
    opts: &LoadOptions,
    import: &ImportOptions,
) -> Result<Panel> {
    use crate::panel::Source;
    match source {
        Source::Table { name, table } => crate::panel::arrow::load_panel_arrow(
            name,
            &table.schema,
            table.batches.iter().cloned().map(Ok),
            opts,
        ),
        Source::Records { .. } => Err(source.records_refused()),
        Source::Files(paths) => match paths.as_slice() {
            [one] => load_panel(one, opts, import),
            _ => {
                for p in paths {
                    log_set::check_member(p)?;
                }
                load_log_set_panel(paths, opts, import)
            }
        },
    }
}

/// [`load_logs_panel`] of the logs at `paths` read as one set; the panel is named by the
/// first.
fn load_log_set_panel(
    paths: &[PathBuf],
    opts: &LoadOptions,
    import: &ImportOptions,
) -> Result<Panel> {
    let path = &paths[0];
    let imported = import_logs(paths, import)?;
    let metric = imported.score_column(opts);
    let (schema, batch, mut notes) = imported.to_batch(metric.as_deref());
    let name = path.to_string_lossy();
    let opts = LoadOptions {
        metric: metric.or_else(|| opts.metric.clone()),
        ..opts.clone()
    };
    let mut panel = crate::panel::arrow::load_panel_arrow(&name, &schema, [Ok(batch)], &opts)?;
    panel.source = path.to_path_buf();
    notes.splice(0..0, imported.notes);
    if let Some(s) = panel.strata.first_mut() {
        s.notes.extend(notes);
    }
    Ok(panel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core built without `formats` (`cargo test -p ragstats-core --no-default-features`,
    /// which CI runs) refuses a real Parquet panel and a real `.eval` log, naming the
    /// feature, rather than failing to build or misreading them.
    #[cfg(not(feature = "formats"))]
    #[test]
    fn without_formats_parquet_and_eval_logs_are_refused_naming_the_feature() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import");
        let parquet = root.join("parquet/panel-pyarrow.parquet");
        let eval = root.join("logs/eval/arith-model-b.eval");
        let errors = [
            parquet::load_parquet_panel(&parquet, &LoadOptions::default()).map(|_| ()),
            parquet::parquet_table(&parquet).map(|_| ()),
            inspect::read_eval(&eval).map(|_| ()),
        ];
        for e in errors {
            let msg = e.expect_err("refused").to_string();
            assert!(msg.contains("without its `formats` feature"), "{msg}");
        }
        assert_eq!(detect(&parquet), Format::Parquet);
    }

    #[test]
    fn formats_are_told_by_content() {
        assert_eq!(detect_bytes(b"PAR1\x15\x04"), Format::Parquet);
        assert_eq!(detect_bytes(b"PK\x03\x04\x14\x00"), Format::InspectEval);
        let pretty = b"{\n  \"version\": 2,\n  \"status\": \"success\",\n  \"eval\": {\n    \"task\": \"x\",";
        assert_eq!(detect_bytes(pretty), Format::InspectJson);
        // Keys sorted, one long line cut off by the sniff: still the log.
        let sorted =
            b"{\"eval\":{\"created\":\"2026\",\"task\":\"arith\",\"dataset\":{\"samples\":";
        assert_eq!(detect_bytes(sorted), Format::InspectJson);
        let lm = br#"{"doc_id": 0, "doc": {}, "filter": "none", "metrics": ["acc"], "acc": 1.0}"#;
        assert_eq!(detect_bytes(lm), Format::LmEvalSamples);
        // Panels stay panels: CSV, JSONL rows (even with an `eval` field), empty files.
        assert_eq!(detect_bytes(b"dataset,question,f1\n"), Format::Panel);
        assert_eq!(
            detect_bytes(b"{\"question\": \"q1\", \"eval\": \"x\", \"f1\": 1}\n"),
            Format::Panel
        );
        assert_eq!(detect_bytes(b""), Format::Panel);
    }

    #[test]
    fn mapping_flags_parse() {
        assert_eq!("task".parse::<DatasetFrom>().unwrap(), DatasetFrom::Task);
        assert_eq!(
            "metadata:topic".parse::<DatasetFrom>().unwrap(),
            DatasetFrom::Metadata("topic".into())
        );
        assert_eq!("solver".parse::<ArmFrom>().unwrap(), ArmFrom::Solver);
        assert_eq!(
            "metadata:variant".parse::<ArmFrom>().unwrap(),
            ArmFrom::Metadata("variant".into())
        );
        assert!("variant".parse::<ArmFrom>().is_err());
    }
}
