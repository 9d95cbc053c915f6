//! `mcq run`: the calls for (item, run) pairs, and the result lines made from their records.
//!
//! Each (item, run k) is one call with request id `<item id>#run<k>` and sample index `k`
//! (so the response cache keeps runs apart and a seeded server gets `seed + k`). The calls
//! go through `ragstats_agent::llm::batch::run_batch`, which appends raw response records to a
//! responses file and resumes from it; the results file is then rebuilt from the responses
//! file by [`build_results`] (so it is always consistent with it, whatever was interrupted).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::item::{Group, Item, Task};
use super::parse::{parse_response, Context, Failure};
use super::prompt::{render, PromptKind, Templates};
use super::shuffle::{permutation, presented_labels};
use crate::chat::{CallError, CallRecord, ChatRequest, Message, SamplingParams, Usage};
use crate::error::{Error, Result};
use crate::io::clip;
use crate::io::jsonl::clip_error;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Model name.
    pub model: String,
    /// Prompt kind.
    pub prompt: PromptKind,
    /// Number of runs (≥ 1).
    pub runs: u32,
    /// Option shuffling seed; `None` keeps the file order.
    pub shuffle_seed: Option<u64>,
    /// Sampling parameters.
    pub params: SamplingParams,
    /// Extra body fields.
    pub extra: Map<String, Value>,
    /// Ask only the first this many items of the file (`mcq run --limit N`); `None`: all.
    pub limit: Option<usize>,
}

/// One planned call.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The call (id `<item>#run<k>`, sample `k`).
    pub request: ChatRequest,
    /// Index of the item in the items slice.
    pub item: usize,
    /// Run index `k` (0-based).
    pub run: u32,
    /// `perm[j]` = file-order index of the option shown at position `j`.
    pub perm: Vec<usize>,
    /// SHA-256 of the canonical request (model, messages, sampling, extra).
    pub fingerprint: String,
}

/// The request id of run `k` of `item`.
pub fn request_id(item: &str, run: u32) -> String {
    format!("{item}#run{run}")
}

/// The presentation order of an item's options under the config.
pub fn presentation(item: &Item, shuffle_seed: Option<u64>) -> Vec<usize> {
    match shuffle_seed {
        Some(s) => permutation(s, &item.id, item.options.len()),
        None => (0..item.options.len()).collect(),
    }
}

/// (label, text) pairs as shown: options in order `perm`, relabelled A, B, C, ... when
/// shuffled (unshuffled items keep their own labels).
pub fn shown_options(item: &Item, perm: &[usize], shuffled: bool) -> Vec<(String, String)> {
    let new = presented_labels(perm.len());
    perm.iter()
        .enumerate()
        .map(|(j, &i)| {
            let label = if shuffled {
                new[j].clone()
            } else {
                item.options[i].label.clone()
            };
            (label, item.options[i].text.clone())
        })
        .collect()
}

/// Builds the calls for every item and run, in item order then run order: the first
/// `cfg.limit` items only, when it is set.
pub fn plan_calls(items: &[Item], templates: &Templates, cfg: &RunConfig) -> Vec<Planned> {
    let n = cfg.limit.map_or(items.len(), |l| l.min(items.len()));
    let mut out = Vec::with_capacity(n * cfg.runs as usize);
    for (idx, item) in items.iter().enumerate().take(n) {
        let perm = presentation(item, cfg.shuffle_seed);
        let shown = shown_options(item, &perm, cfg.shuffle_seed.is_some());
        let (tpl, _) = templates.get(cfg.prompt, item.task);
        let text = render(
            tpl,
            &item.query,
            &item.context,
            &item.instruction,
            &shown,
            item.allow_empty,
        );
        let messages = vec![Message::user(text).to_value()];
        for k in 0..cfg.runs {
            let fingerprint = fingerprint(&cfg.model, &messages, &cfg.params, &cfg.extra);
            let request = ChatRequest {
                id: request_id(&item.id, k),
                sample: k,
                model: cfg.model.clone(),
                messages: messages.clone(),
                params: cfg.params.clone(),
                extra: cfg.extra.clone(),
                meta: Some(json!({"mcq": {
                    "item": item.id, "group": item.group().as_str(), "run": k,
                    "prompt": cfg.prompt.as_str(),
                    "shuffle_seed": cfg.shuffle_seed, "fingerprint": fingerprint,
                }})),
            };
            out.push(Planned {
                request,
                item: idx,
                run: k,
                perm: perm.clone(),
                fingerprint,
            });
        }
    }
    out
}

fn fingerprint(
    model: &str,
    messages: &[Value],
    p: &SamplingParams,
    extra: &Map<String, Value>,
) -> String {
    // serde_json maps are sorted (no preserve_order feature), so this is canonical.
    let v = json!({"model": model, "messages": messages, "params": p, "extra": extra});
    crate::io::sha256_hex(v.to_string())
}

/// Refuses to resume into a responses file that holds answers to different requests under
/// the same (id, run): another model, prompt, option order, sampling or item text. The batch
/// runner would otherwise skip them as already answered.
///
/// # Errors
/// [`Error::Usage`] naming the file, the request id and what differs.
pub fn check_resume(
    responses: &Path,
    records: &HashMap<(String, u32), CallRecord>,
    plan: &[Planned],
) -> Result<()> {
    for p in plan {
        let Some(rec) = records.get(&(p.request.id.clone(), p.request.sample)) else {
            continue;
        };
        let old = rec
            .meta
            .as_ref()
            .and_then(|m| m.get("mcq"))
            .and_then(|m| m.get("fingerprint"))
            .and_then(Value::as_str);
        if rec.model != p.request.model || old != Some(p.fingerprint.as_str()) {
            return Err(Error::Usage(format!(
                "{}: request {:?} was answered for a different request (model {:?}{}); \
                 write the results (or the responses) to another file for a new model, prompt, shuffle seed, sampling or item text",
                responses.display(),
                p.request.id,
                rec.model,
                if rec.model == p.request.model {
                    ", different prompt/options/sampling"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// How a result line's answer came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The answer was read.
    Ok,
    /// The call answered but no answer could be read from the text.
    ParseFailed,
    /// The reply was cut off by the token limit (`finish_reason` `length`), so it has no
    /// final answer line and is not read: a parse failure counted on its own.
    Truncated,
    /// The call failed (API error after every retry).
    Error,
}

/// One line of a results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Item id.
    pub id: String,
    /// Run index (0-based).
    pub run: u32,
    /// Model.
    pub model: String,
    /// `bare` or `informative`.
    pub prompt: String,
    /// Shuffle seed, `null` when unshuffled.
    pub shuffle_seed: Option<u64>,
    /// Task type.
    pub task: Task,
    /// Subtask.
    pub subtask: Option<String>,
    /// Scoring group.
    pub group: Group,
    /// Option labels in file order.
    pub labels: Vec<String>,
    /// Original labels in the order shown (position j showed `permutation[j]`).
    pub permutation: Vec<String>,
    /// Gold answer (original labels).
    pub gold: Vec<String>,
    /// Whether the empty answer is legitimate.
    pub allow_empty: bool,
    /// `ok`, `parse_failed`, `truncated` or `error`.
    pub outcome: Outcome,
    /// Parsed answer in ORIGINAL labels (`null` unless `ok`).
    pub answer: Option<Vec<String>>,
    /// Parsed answer as shown to the model (`null` unless `ok`).
    pub answer_shown: Option<Vec<String>>,
    /// How it was parsed (`letters`, `option_text`, `none`) or why it failed.
    pub parse_note: Option<String>,
    /// Raw answer text (`<think>` removed by the client), `null` on API error.
    pub text: Option<String>,
    /// `choices[0].finish_reason` as the server sent it (`stop`, `length`, ...); `null` when
    /// unknown (an API error, or a results file written before it was recorded).
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// API error, when the call failed.
    pub error: Option<CallError>,
    /// Token usage as reported.
    pub usage: Option<Usage>,
    /// True when the answer came from the response cache.
    pub cached: bool,
}

/// The outcomes of a results file, and its replies cut at the token cap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OutcomeCounts {
    /// Result lines.
    pub lines: usize,
    /// Lines per [`Outcome`].
    pub ok: usize,
    pub parse_failed: usize,
    pub truncated: usize,
    pub errors: usize,
    /// Lines with a reply text (every outcome but an API error).
    pub answered: usize,
    /// Of those, replies cut at `max_tokens` (`finish_reason` `length`).
    pub cut: usize,
}

impl OutcomeCounts {
    /// The counts of `results`.
    pub fn of(results: &[RunResult]) -> OutcomeCounts {
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        OutcomeCounts {
            lines: results.len(),
            ok: count(Outcome::Ok),
            parse_failed: count(Outcome::ParseFailed),
            truncated: count(Outcome::Truncated),
            errors: count(Outcome::Error),
            answered: results.iter().filter(|r| r.text.is_some()).count(),
            cut: results
                .iter()
                .filter(|r| r.text.is_some() && r.finish_reason.as_deref() == Some("length"))
                .count(),
        }
    }
}

/// The text of a request's messages, one after the other: the prompt as sent.
fn prompt_text(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The replies of a run cut at the token cap, and how many of them echo their prompt
/// ([`super::parse::echoes_prompt`]): a larger `max_tokens` gives those more room to copy,
/// not to answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CutReplies {
    /// Answered calls whose reply stopped at `max_tokens` (`finish_reason` `length`).
    pub cut: usize,
    /// Of those, replies that echo the prompt.
    pub echoes: usize,
}

impl CutReplies {
    /// The cut replies among the records of the planned calls.
    pub fn of(plan: &[Planned], records: &HashMap<(String, u32), CallRecord>) -> CutReplies {
        let mut c = CutReplies::default();
        for p in plan {
            let Some(rec) = records.get(&(p.request.id.clone(), p.request.sample)) else {
                continue;
            };
            let Some(text) = rec.text.as_deref().filter(|_| rec.is_truncated()) else {
                continue;
            };
            c.cut += 1;
            c.echoes += usize::from(super::parse::echoes_prompt(text, &prompt_text(&p.request)));
        }
        c
    }
}

/// Turns the record of a planned call into a result line.
pub fn to_result(item: &Item, p: &Planned, rec: &CallRecord, cfg: &RunConfig) -> RunResult {
    let shuffled = cfg.shuffle_seed.is_some();
    let shown = shown_options(item, &p.perm, shuffled);
    let shown_labels: Vec<String> = shown.iter().map(|(l, _)| l.clone()).collect();
    let shown_texts: Vec<String> = shown.iter().map(|(_, t)| t.clone()).collect();
    let permutation: Vec<String> = p
        .perm
        .iter()
        .map(|&i| item.options[i].label.clone())
        .collect();
    let mut r = RunResult {
        id: item.id.clone(),
        run: p.run,
        model: rec.model.clone(),
        prompt: cfg.prompt.as_str().to_string(),
        shuffle_seed: cfg.shuffle_seed,
        task: item.task,
        subtask: item.subtask.clone(),
        group: item.group(),
        labels: item.labels(),
        permutation: permutation.clone(),
        gold: item.answer.clone(),
        allow_empty: item.allow_empty,
        outcome: Outcome::Error,
        answer: None,
        answer_shown: None,
        parse_note: None,
        text: rec.text.clone(),
        finish_reason: rec.finish_reason.clone(),
        error: rec.error.clone(),
        usage: rec.usage.clone(),
        cached: rec.cached,
    };
    let Some(text) = &rec.text else {
        return r;
    };
    // The prompt as sent: an answer line copied from it is not the model's answer.
    let prompt = prompt_text(&p.request);
    let ctx = Context {
        prompt: Some(&prompt),
        finish_reason: rec.finish_reason.as_deref(),
    };
    match parse_response(text, &shown_labels, &shown_texts, item.allow_empty, &ctx) {
        Ok(parsed) => {
            let original: Vec<String> = parsed
                .labels
                .iter()
                .filter_map(|l| shown_labels.iter().position(|s| s == l))
                .map(|j| permutation[j].clone())
                .collect();
            r.outcome = Outcome::Ok;
            r.answer = Some(super::item::in_option_order(&original, &r.labels));
            r.answer_shown = Some(parsed.labels);
            r.parse_note = Some(if parsed.dropped.is_empty() {
                parsed.how.to_string()
            } else {
                format!(
                    "{} (ignored non-option letters {})",
                    parsed.how,
                    parsed.dropped.join(", ")
                )
            });
        }
        Err(Failure::Unreadable(why)) => {
            r.outcome = Outcome::ParseFailed;
            r.parse_note = Some(why);
        }
        Err(Failure::Truncated(why)) => {
            r.outcome = Outcome::Truncated;
            r.parse_note = Some(why);
        }
    }
    r
}

/// Result lines for every planned call that has a record, in plan order; and the number of
/// planned calls without one (not run yet).
pub fn build_results(
    items: &[Item],
    plan: &[Planned],
    records: &HashMap<(String, u32), CallRecord>,
    cfg: &RunConfig,
) -> (Vec<RunResult>, usize) {
    let mut out = Vec::new();
    let mut missing = 0;
    for p in plan {
        match records.get(&(p.request.id.clone(), p.request.sample)) {
            Some(rec) => out.push(to_result(&items[p.item], p, rec, cfg)),
            None => missing += 1,
        }
    }
    (out, missing)
}

/// Writes result lines to `path` atomically (temporary file, then rename).
///
/// # Errors
/// [`Error::Io`].
pub fn write_results(path: &Path, results: &[RunResult]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mut text = String::new();
    for r in results {
        text.push_str(&serde_json::to_string(r).map_err(|e| Error::Runtime(e.to_string()))?);
        text.push('\n');
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// Reads a results file; every line must be a result, (id, run) unique.
///
/// # Errors
/// [`Error::Io`]; [`Error::Input`] with file:line for a line that is not a result line or
/// repeats an (id, run), or for a file that is not JSON lines at all (binary, CSV, Parquet,
/// an evaluation log), saying what it looks like.
pub fn read_results(path: &Path) -> Result<Vec<RunResult>> {
    Ok(read_results_lines(path)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// [`read_results`] with each result's 1-based line.
///
/// # Errors
/// Those of [`read_results`].
pub fn read_results_lines(path: &Path) -> Result<Vec<(u64, RunResult)>> {
    read_results_lines_from(&crate::panel::Source::file(path))
}

/// [`read_results_lines`] of the results `source` holds (a file, a table or records).
///
/// # Errors
/// Those of [`read_results`].
pub fn read_results_lines_from(source: &crate::panel::Source) -> Result<Vec<(u64, RunResult)>> {
    let path = source.name();
    let on_disk = matches!(source, crate::panel::Source::Files(_));
    if on_disk {
        if let Some(what) = crate::import::looks_like(path) {
            return Err(Error::input(
                path,
                None,
                format!(
                    "this is {what}, not `mcq run` results; expected the JSONL file `stats mcq run` \
                     writes (one {{\"id\", \"run\", \"model\", \"group\", \"gold\", \"outcome\", \"answer\", ...}} per line)"
                ),
            ));
        }
    }
    let mut rdr = crate::panel::memory::jsonl_of(source)?;
    let mut out = Vec::new();
    let mut seen: HashSet<(String, u32)> = HashSet::new();
    while let Some((n, v)) = rdr.next_value()? {
        let r: RunResult = serde_json::from_value(v).map_err(|e| {
            Error::input(
                path,
                Some(n),
                format!("not an `mcq run` result line ({}); expected {{\"id\", \"run\", \"model\", \"group\", \"gold\", \"outcome\", \"answer\", ...}}", clip_error(&e.to_string())),
            )
        })?;
        if Group::of(r.task, r.subtask.as_deref()) != Some(r.group) {
            return Err(Error::input(
                path,
                Some(n),
                format!(
                    "id {:?}: group {} does not match task {} / subtask {:?}",
                    clip(&r.id),
                    r.group.as_str(),
                    r.task.as_str(),
                    r.subtask.as_deref().map(clip)
                ),
            ));
        }
        if r.outcome == Outcome::Ok && r.answer.is_none() {
            return Err(Error::input(
                path,
                Some(n),
                format!("id {:?}: outcome ok but no answer", clip(&r.id)),
            ));
        }
        if !seen.insert((r.id.clone(), r.run)) {
            return Err(Error::input(
                path,
                Some(n),
                format!("id {:?} run {} appears twice", clip(&r.id), r.run),
            ));
        }
        out.push((n, r));
    }
    if out.is_empty() {
        return Err(Error::input(path, None, "no result lines"));
    }
    Ok(out)
}

/// Reads a results file that holds one configuration (model, prompt, shuffle seed), with
/// gold answers, groups and labels replaced by those of `items` (the items file's path and
/// items) when given: what `mcq score` and `mcq compare` analyse.
///
/// # Errors
/// Those of [`read_results`]; [`Error::Usage`] when the file mixes configurations;
/// [`Error::Input`] naming the results file and line of a result whose id is not among the
/// items or whose options differ from the item's.
pub fn read_one_configuration(
    path: &Path,
    items: Option<(&Path, &[Item])>,
) -> Result<Vec<RunResult>> {
    read_one_configuration_from(&crate::panel::Source::file(path), items)
}

/// [`read_one_configuration`] of the results `source` holds.
///
/// # Errors
/// As [`read_one_configuration`].
pub fn read_one_configuration_from(
    source: &crate::panel::Source,
    items: Option<(&Path, &[Item])>,
) -> Result<Vec<RunResult>> {
    let path = source.name();
    let (lines, mut rs): (Vec<u64>, Vec<RunResult>) =
        read_results_lines_from(source)?.into_iter().unzip();
    let first = &rs[0];
    if let Some(r) = rs.iter().find(|r| {
        r.model != first.model || r.prompt != first.prompt || r.shuffle_seed != first.shuffle_seed
    }) {
        return Err(Error::Usage(format!(
            "{}: mixes runs of different configurations ({} / {} / seed {:?} and {} / {} / seed {:?}); score one model and prompt per file",
            path.display(),
            first.model,
            first.prompt,
            first.shuffle_seed,
            r.model,
            r.prompt,
            r.shuffle_seed
        )));
    }
    if let Some((p, its)) = items {
        if let Err((i, msg)) = apply_items(&mut rs, its, p) {
            return Err(Error::input(path, Some(lines[i]), msg));
        }
    }
    Ok(rs)
}

/// Replaces gold answers, groups and labels with those of `items` (of `file`), for
/// re-scoring with corrected gold, e.g. after annotation. Fails with the index of the first
/// result whose id is not among the items or whose labels differ, and what is wrong with
/// it ([`read_one_configuration`] names its line).
fn apply_items(
    results: &mut [RunResult],
    items: &[Item],
    file: &Path,
) -> std::result::Result<(), (usize, String)> {
    let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
    for (n, r) in results.iter_mut().enumerate() {
        let Some(it) = by_id.get(r.id.as_str()) else {
            return Err((
                n,
                format!(
                    "result for item {:?} has no item in {}",
                    clip(&r.id),
                    file.display()
                ),
            ));
        };
        let mut a = it.labels();
        let mut b = r.labels.clone();
        a.sort();
        b.sort();
        if a != b {
            return Err((
                n,
                format!(
                    "item {:?}: options in {} ({}) differ from those the run saw ({})",
                    clip(&r.id),
                    file.display(),
                    a.join(","),
                    b.join(",")
                ),
            ));
        }
        r.gold = it.answer.clone();
        r.task = it.task;
        r.subtask = it.subtask.clone();
        r.group = it.group();
        r.allow_empty = it.allow_empty;
    }
    Ok(())
}

#[cfg(test)]
mod outcome_tests {
    use super::*;

    fn line(outcome: Outcome, text: Option<&str>, finish: Option<&str>) -> RunResult {
        RunResult {
            id: "i".into(),
            run: 0,
            model: "m".into(),
            prompt: "bare".into(),
            shuffle_seed: None,
            task: Task::Planning,
            subtask: None,
            group: Group::EvidenceExtraction,
            labels: vec!["A".into(), "B".into()],
            permutation: vec!["A".into(), "B".into()],
            gold: vec!["A".into()],
            allow_empty: false,
            outcome,
            answer: None,
            answer_shown: None,
            parse_note: None,
            text: text.map(String::from),
            finish_reason: finish.map(String::from),
            error: None,
            usage: None,
            cached: false,
        }
    }

    /// Two read answers, a parse failure, a reply cut at the cap (truncated) and an API
    /// error: 4 replies of which 1 was cut.
    #[test]
    fn outcomes_counted() {
        let rs = [
            line(Outcome::Ok, Some("A"), Some("stop")),
            line(Outcome::Ok, Some("B"), Some("stop")),
            line(Outcome::ParseFailed, Some("?"), Some("stop")),
            line(Outcome::Truncated, Some("Let me"), Some("length")),
            line(Outcome::Error, None, None),
        ];
        assert_eq!(
            OutcomeCounts::of(&rs),
            OutcomeCounts {
                lines: 5,
                ok: 2,
                parse_failed: 1,
                truncated: 1,
                errors: 1,
                answered: 4,
                cut: 1,
            }
        );
    }
}
