//! LLM-as-judge step scores of trajectories (RAGCap-Bench §4.5): a model scores every step
//! 1–10 for grounded reasoning (thought → action) and evidence extraction (observation →
//! extraction); scores are averaged over the trajectory and set beside its correctness, for
//! `stats correlate --method pointbiserial`.
//!
//! Units of a trajectory with steps `0..n` (docs/mcqgen.md):
//! - reasoning, step i: the planner's output at step i (thought) and the query it issued
//!   (action), with the searches before it as context. A step whose query could not be
//!   parsed has no action and is not judged (recorded).
//! - extraction, step i < n−1: step i's results (observation) and the planner's output at
//!   step i+1 (what it took from them); extraction "read" (step index n): the selector's
//!   packet and the reader's output of its first read. A step with no results is not judged.
//!
//! A reply without a readable score, or with a score outside 1–10, is a recorded failure,
//! never a default value; means are over the scores that were read.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{CallRecord, ChatRequest, ModelConfig, CUT_NOTE};
use crate::mcqgen::guided::{fill, steps_context};
use crate::mcqgen::{clip_text, host, Logged};
use crate::search::SearchRecord;
use ragstats_core::mcq::parse::snippet;

/// The reasoning template (data/prompts/judge/reasoning.txt).
pub const REASONING_TEMPLATE: &str = include_str!("../../../../data/prompts/judge/reasoning.txt");
/// The extraction template (data/prompts/judge/extraction.txt).
pub const EXTRACTION_TEMPLATE: &str = include_str!("../../../../data/prompts/judge/extraction.txt");
/// Characters of a planner or reader output shown to the judge.
pub const OUTPUT_CHARS: usize = 4_000;
/// Characters of each observed record's text shown to the judge.
pub const OBSERVED_CHARS: usize = 600;

/// What a score grades.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    /// Thought → action.
    GroundedReasoning,
    /// Observation → extraction.
    EvidenceExtraction,
}

impl Dimension {
    fn short(self) -> &'static str {
        match self {
            Dimension::GroundedReasoning => "reasoning",
            Dimension::EvidenceExtraction => "extraction",
        }
    }
}

/// Model and call template of the judge calls.
#[derive(Debug, Clone)]
pub struct JudgeConfig {
    pub llm: ModelConfig,
    /// The selector whose reads decide correctness and whose packet and reader output form
    /// the final extraction unit.
    pub selector: String,
}

/// One judge call.
#[derive(Debug, Clone)]
pub struct JudgeCall {
    pub request: ChatRequest,
    /// Index of the trajectory in the log.
    pub traj: usize,
    pub step: u32,
    pub dimension: Dimension,
}

/// One step's score or failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepScore {
    /// Step index (the extraction of the read has index n, one past the last step).
    pub step: u32,
    pub dimension: Dimension,
    /// The score read from the reply.
    pub score: Option<f64>,
    /// Why there is no score (not judged, call failed, unreadable or out-of-range score).
    pub failure: Option<String>,
    /// The judge call's request id (absent for a unit that was not judged).
    pub request_id: Option<String>,
    /// True when the judge's reply was cut at `max_tokens` (finish_reason `length`); only
    /// written when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A trajectory's judged scores (one line of `judged.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// `question_id/arm/trajectory`.
    pub trajectory: String,
    pub run: String,
    pub question_id: String,
    pub arm: String,
    pub index: u32,
    pub selector: String,
    /// Correct under `selector` (mean em over its reads is 1); `None` without such reads.
    pub correct: Option<bool>,
    /// Mean reasoning score over the steps with one.
    pub reasoning_score: Option<f64>,
    /// Mean extraction score over the units with one.
    pub extraction_score: Option<f64>,
    /// Mean of the two dimension means (the one present when only one is).
    pub judge_score: Option<f64>,
    /// Units with no score.
    pub failures: usize,
    pub model: String,
    pub steps: Vec<StepScore>,
}

fn observed(records: &[SearchRecord]) -> String {
    let shown: Vec<&SearchRecord> = records.iter().filter(|r| !r.masked).collect();
    if shown.is_empty() {
        return "(no results)".into();
    }
    shown
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "[{}] [{}] {}: {}",
                i + 1,
                host(&r.url),
                r.title.trim(),
                clip_text(&r.text, OBSERVED_CHARS)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn clip_output(s: &str) -> String {
    let t = s.trim();
    if t.chars().count() <= OUTPUT_CHARS {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(OUTPUT_CHARS).collect::<String>())
    }
}

/// The judge calls for every trajectory, and the units that cannot be judged (as
/// [`StepScore`]s with a failure, per trajectory index).
pub fn plan(
    trajs: &[Logged],
    cfg: &JudgeConfig,
) -> (Vec<JudgeCall>, HashMap<usize, Vec<StepScore>>) {
    let mut calls = Vec::new();
    let mut unjudged: HashMap<usize, Vec<StepScore>> = HashMap::new();
    for (ti, l) in trajs.iter().enumerate() {
        let n = l.t.steps.len();
        let mut not = |step: u32, dimension: Dimension, why: &str| {
            unjudged.entry(ti).or_default().push(StepScore {
                step,
                dimension,
                score: None,
                failure: Some(format!("not judged: {why}")),
                request_id: None,
                truncated: false,
            });
        };
        let mut call = |step: u32, dimension: Dimension, prompt: String| {
            let id = format!("judge:{}:s{step}:{}", l.key(), dimension.short());
            let r = cfg.llm.user_request(id, prompt);
            calls.push(JudgeCall {
                request: r,
                traj: ti,
                step,
                dimension,
            });
        };
        for (i, s) in l.t.steps.iter().enumerate() {
            let q = l.t.question.trim();
            match s.query.as_deref().filter(|q| !q.trim().is_empty()) {
                None => not(
                    s.step,
                    Dimension::GroundedReasoning,
                    "the step has no parsed action",
                ),
                Some(query) => {
                    let ctx = steps_context(l, i);
                    let thought = clip_output(&s.planner_text);
                    let action = format!("search \"{}\"", query.trim());
                    call(
                        s.step,
                        Dimension::GroundedReasoning,
                        fill(
                            REASONING_TEMPLATE,
                            &[
                                ("question", q),
                                ("steps", &ctx),
                                ("thought", &thought),
                                ("action", &action),
                            ],
                        ),
                    );
                }
            }
            if i + 1 < n {
                if s.results.is_empty() {
                    not(
                        s.step,
                        Dimension::EvidenceExtraction,
                        "the step has no results",
                    );
                } else {
                    let obs = observed(&s.results);
                    let next = clip_output(&l.t.steps[i + 1].planner_text);
                    call(
                        s.step,
                        Dimension::EvidenceExtraction,
                        fill(
                            EXTRACTION_TEMPLATE,
                            &[
                                ("question", q),
                                ("observation", &obs),
                                ("extraction", &next),
                            ],
                        ),
                    );
                }
            }
        }
        let read = l.t.reads.iter().find(|r| r.selector == cfg.selector);
        match (l.t.packets.get(&cfg.selector), read) {
            (Some(p), Some(r)) if !p.is_empty() => {
                let obs = observed(p);
                let out = clip_output(&r.reader_text);
                call(
                    n as u32,
                    Dimension::EvidenceExtraction,
                    fill(
                        EXTRACTION_TEMPLATE,
                        &[
                            ("question", l.t.question.trim()),
                            ("observation", &obs),
                            ("extraction", &out),
                        ],
                    ),
                );
            }
            _ => not(
                n as u32,
                Dimension::EvidenceExtraction,
                "no packet or no read of the selector",
            ),
        }
    }
    (calls, unjudged)
}

/// The rubric of a judge prompt: the lines of `template` that hold no placeholder (the
/// instructions, the scale, the format line) and appear, whole, in the `prompt` sent. A
/// reply that copies them is not a judgement ([`parse_reply`]).
pub fn rubric_lines(template: &str, prompt: &str) -> Vec<String> {
    let sent: std::collections::HashSet<&str> = prompt.lines().map(str::trim).collect();
    template
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !has_placeholder(l) && sent.contains(l))
        .map(str::to_string)
        .collect()
}

/// Whether `line` holds a `{name}` placeholder of [`fill`].
fn has_placeholder(line: &str) -> bool {
    line.split('{').skip(1).any(|rest| {
        rest.find('}').is_some_and(|end| {
            end > 0
                && rest[..end]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// A run of at least this many words around the score, copied from one rubric line, makes
/// the score line a copy: `10 when the` (the scale's wording), `1 to 10` (its range).
const COPIED_WORDS: usize = 3;

/// Reads the 1–10 score of a judge reply, without knowing the prompt ([`parse_reply`] with
/// no rubric).
///
/// # Errors
/// As [`parse_reply`].
pub fn parse_score(text: &str) -> Result<f64, String> {
    parse_reply(text, &[])
}

/// Reads the 1–10 score of a judge reply to a prompt whose rubric is `rubric`
/// ([`rubric_lines`]).
///
/// The score is the number after the last `score` on a line (`Score: 7`, `**Score:** 7/10`,
/// `Final score = 8 out of 10`, `score of 6`; markdown `*`, `_`, `` ` ``, `#` ignored) whose
/// words around that number do not copy a rubric line (`COPIED_WORDS` or more in a row:
/// `score 10 when the action follows directly…` repeats the scale, it does not use it; such
/// a line is passed over). Else the last non-empty line when it is only a number (`7`,
/// `7/10`) and is the whole reply or comes right after a score marker line (`Score:`,
/// `**Final score**`); a list item (`2.`, `2)`, `2. ...`) is never a score. Decimals are
/// kept.
///
/// # Errors
/// The reason, recorded as the step's failure: `score X is outside 1–10`; `the score line
/// copies the judge prompt's rubric …`; `the last line … is a list item, not a score`; `the
/// last line … is a bare number without a score marker …`; `no score found in the reply`
/// (with `: its last line copies the prompt's …` for an echo of a rubric line, such as the
/// format line `Score: <integer from 1 to 10>`).
pub fn parse_reply(text: &str, rubric: &[String]) -> Result<f64, String> {
    let clean = |l: &str| -> String {
        l.chars()
            .filter(|c| !matches!(c, '*' | '_' | '`' | '#'))
            .collect::<String>()
            .to_lowercase()
    };
    let rubric_text = rubric;
    let rubric: Vec<Vec<String>> = rubric.iter().map(|l| tokens(&clean(l))).collect();
    let lines: Vec<String> = text.lines().map(clean).collect();
    let mut found: Option<f64> = None;
    let mut copied: Option<String> = None;
    'lines: for l in lines.iter().rev() {
        let mut from = l.len();
        while let Some(p) = l[..from].rfind("score") {
            if let Some((x, end)) = number_after(&l[p + 5..]) {
                let at = tokens(&l[..p + 5 + end]).len().saturating_sub(1);
                match copied_run(&tokens(l), at, &rubric) {
                    Some(run) => {
                        copied.get_or_insert(run);
                    }
                    None => {
                        found = Some(x);
                        break 'lines;
                    }
                }
            }
            from = p;
        }
    }
    if found.is_none() {
        let mut rest = lines.iter().rev().filter(|l| !l.trim().is_empty());
        if let Some(last) = rest.next() {
            let t = last.trim();
            let before = rest.next();
            match bare_number(t) {
                Some(x) if before.is_none_or(|b| ends_with_marker(b)) => found = Some(x),
                // `8` after `7. …`: a numbered list cut off, not a score.
                Some(_) if before.is_some_and(|b| is_list_item(b.trim())) => {
                    return Err(format!(
                        "the last line {:?} is a list item, not a score",
                        snippet(t, 40)
                    ))
                }
                Some(_) => {
                    return Err(format!(
                        "the last line {:?} is a bare number without a score marker (`Score:`) on the line before it",
                        snippet(t, 40)
                    ))
                }
                None if copied.is_none() && is_list_item(t) => {
                    return Err(format!(
                        "the last line {:?} is a list item, not a score",
                        snippet(t, 40)
                    ))
                }
                None => {}
            }
        }
    }
    let Some(x) = found else {
        return Err(match copied {
            Some(run) => format!(
                "the score line copies the judge prompt's rubric ({:?}), it does not score the step",
                snippet(&run, 60)
            ),
            None => {
                // An echo of the prompt's own lines (its format line, most often) says
                // why there is no score.
                let last = lines.iter().rev().find(|l| !l.trim().is_empty());
                let echoed = last.and_then(|l| {
                    let t = tokens(l);
                    (t.len() >= 2)
                        .then(|| rubric.iter().position(|r| *r == t))
                        .flatten()
                });
                match echoed {
                    Some(i) => format!(
                        "no score found in the reply: its last line copies the prompt's {:?}",
                        snippet(&rubric_text[i], 60)
                    ),
                    None => "no score found in the reply".into(),
                }
            }
        });
    };
    if !(1.0..=10.0).contains(&x) {
        return Err(format!("score {x} is outside 1–10"));
    }
    Ok(x)
}

/// The lower-cased words of `s` (see [`ragstats_core::mcq::parse::words`]).
fn tokens(s: &str) -> Vec<String> {
    ragstats_core::mcq::parse::words(s)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Where the score line `line` (words) copies a rubric line, with the score at word `at`:
/// the longest run of at least [`COPIED_WORDS`] words that a rubric line holds in the same
/// order, either through the score itself (`1 to 10`, `10 when the`) or right after it
/// where the rubric has a number (any) before the same words: the scale's clause with
/// another number put in (`5 when the action contradicts the thought`, from `1 when the
/// action contradicts the thought`).
fn copied_run(line: &[String], at: usize, rubric: &[Vec<String>]) -> Option<String> {
    let same_after = |r: &[String], j: usize| {
        (1..)
            .take_while(|&k| at + k < line.len() && j + k < r.len() && line[at + k] == r[j + k])
            .count()
    };
    // The copied run as word indexes [from, to] of `line`.
    let mut best: Option<(usize, usize)> = None;
    let mut keep = |from: usize, to: usize| {
        if to + 1 - from >= COPIED_WORDS && best.is_none_or(|(a, b)| to - from > b - a) {
            best = Some((from, to));
        }
    };
    for r in rubric {
        for j in 0..r.len() {
            if line.get(at) == Some(&r[j]) {
                let left = (1..=at.min(j))
                    .take_while(|&k| line[at - k] == r[j - k])
                    .count();
                keep(at - left, at + same_after(r, j));
            } else if r[j].bytes().all(|b| b.is_ascii_digit()) {
                let right = same_after(r, j);
                if right >= COPIED_WORDS {
                    keep(at, at + right);
                }
            }
        }
    }
    best.map(|(a, b)| line[a..=b].join(" "))
}

/// `7`, `7.5`, `7/10`, `7 / 10`: a line that is only a score.
fn bare_number(t: &str) -> Option<f64> {
    let t = match t.split_once('/') {
        Some((a, b)) if b.trim() == "10" => a.trim(),
        Some(_) => return None,
        None => t,
    };
    let digits = !t.is_empty()
        && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !t.starts_with('.')
        && !t.ends_with('.');
    digits
        .then(|| t.parse::<f64>().ok())
        .flatten()
        .filter(|x| x.is_finite())
}

/// `2.`, `2)`, `2. text`, `2) text`: a numbered list item.
fn is_list_item(t: &str) -> bool {
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    n > 0
        && matches!(t.as_bytes().get(n), Some(b'.' | b')'))
        && t[n + 1..].chars().next().is_none_or(char::is_whitespace)
}

/// A line that ends in a score marker: `score:`, `final score`, `score =` (cleaned).
fn ends_with_marker(l: &str) -> bool {
    l.trim()
        .trim_end_matches([':', '=', '-', ' '])
        .trim_end()
        .ends_with("score")
}

/// The number that directly follows `score` in `rest` (after optional `:`, `=`, `is`,
/// `of`), and the byte index in `rest` where it ends.
fn number_after(rest: &str) -> Option<(f64, usize)> {
    let mut r = rest.trim_start();
    for sep in [":", "=", "is", "of", ":"] {
        r = r.strip_prefix(sep).unwrap_or(r).trim_start();
    }
    let end = r
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || (c == '.' && i > 0 && r[i + 1..].starts_with(|d: char| d.is_ascii_digit())))
        })
        .map_or(r.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    let x = r[..end].parse::<f64>().ok()?;
    Some((x, rest.len() - r.len() + end))
}

/// The rubric of the prompt `c` sent: its template's fixed lines found in its messages.
fn rubric_of(c: &JudgeCall) -> Vec<String> {
    let template = match c.dimension {
        Dimension::GroundedReasoning => REASONING_TEMPLATE,
        Dimension::EvidenceExtraction => EXTRACTION_TEMPLATE,
    };
    let sent: Vec<&str> = c
        .request
        .messages
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .collect();
    rubric_lines(template, &sent.join("\n"))
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Scores from the judge records (latest per request id, sample 0), averaged per
/// trajectory, in log order.
pub fn build(
    trajs: &[Logged],
    calls: &[JudgeCall],
    mut unjudged: HashMap<usize, Vec<StepScore>>,
    records: &HashMap<(String, u32), CallRecord>,
    cfg: &JudgeConfig,
) -> Vec<Judged> {
    let mut per: HashMap<usize, Vec<StepScore>> = HashMap::new();
    for c in calls {
        let rec = records.get(&(c.request.id.clone(), 0));
        let (score, failure) = match rec {
            None => (
                None,
                Some("not judged yet (the call did not run; run again to resume)".to_string()),
            ),
            Some(r) => match (&r.text, &r.error) {
                (_, Some(e)) => (
                    None,
                    Some(format!(
                        "judge call failed ({}): {}",
                        e.kind.as_str(),
                        e.message
                    )),
                ),
                (Some(t), None) => match parse_reply(t, &rubric_of(c)) {
                    Ok(x) => (Some(x), None),
                    Err(e) => (None, Some(e)),
                },
                (None, None) => (None, Some("the judge call returned no text".into())),
            },
        };
        let truncated = rec.is_some_and(CallRecord::is_truncated);
        // A reply cut before its score line says so, so the fix (a larger cap) is visible.
        let failure = match failure {
            Some(f) if truncated => Some(format!("{f} ({CUT_NOTE})")),
            f => f,
        };
        per.entry(c.traj).or_default().push(StepScore {
            step: c.step,
            dimension: c.dimension,
            score,
            failure,
            request_id: Some(c.request.id.clone()),
            truncated,
        });
    }
    trajs
        .iter()
        .enumerate()
        .map(|(ti, l)| {
            let mut steps = per.remove(&ti).unwrap_or_default();
            steps.extend(unjudged.remove(&ti).unwrap_or_default());
            steps.sort_by_key(|s| (s.step, s.dimension == Dimension::EvidenceExtraction));
            let of = |d: Dimension| -> Vec<f64> {
                steps
                    .iter()
                    .filter(|s| s.dimension == d)
                    .filter_map(|s| s.score)
                    .collect()
            };
            let r = mean(&of(Dimension::GroundedReasoning));
            let e = mean(&of(Dimension::EvidenceExtraction));
            let both: Vec<f64> = [r, e].into_iter().flatten().collect();
            Judged {
                trajectory: l.key(),
                run: l.t.run.clone(),
                question_id: l.t.question_id.clone(),
                arm: l.t.arm.clone(),
                index: l.t.trajectory,
                selector: cfg.selector.clone(),
                correct: l.correct(&cfg.selector),
                reasoning_score: r,
                extraction_score: e,
                judge_score: mean(&both),
                failures: steps.iter().filter(|s| s.score.is_none()).count(),
                model: cfg.llm.model.clone(),
                steps,
            }
        })
        .collect()
}

/// Header of the judged table.
pub const TABLE_HEADER: [&str; 10] = [
    "trajectory",
    "question_id",
    "arm",
    "index",
    "reasoning_score",
    "extraction_score",
    "judge_score",
    "correct",
    "scored",
    "failures",
];

/// One row per trajectory; a missing mean or correctness is an empty cell.
pub fn table_rows(judged: &[Judged]) -> Vec<Vec<String>> {
    let num = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v}"));
    judged
        .iter()
        .map(|j| {
            vec![
                j.trajectory.clone(),
                j.question_id.clone(),
                j.arm.clone(),
                j.index.to_string(),
                num(j.reasoning_score),
                num(j.extraction_score),
                num(j.judge_score),
                j.correct
                    .map_or_else(String::new, |c| u8::from(c).to_string()),
                (j.steps.len() - j.failures).to_string(),
                j.failures.to_string(),
            ]
        })
        .collect()
}

/// The JSON line of one judged trajectory.
pub fn to_json(j: &Judged) -> Value {
    json!(j)
}

/// What a `stats judge` run found, counted from its judged trajectories and the calls'
/// records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct JudgeCounts {
    /// Trajectories judged.
    pub trajectories: usize,
    /// Step units (reasoning steps and extractions) over all trajectories.
    pub units: usize,
    /// Units without a score (not judged, call failed, or no 1–10 score in the reply).
    pub failures: usize,
    /// Judge calls whose record is an answer (not an error).
    pub answered: usize,
    /// Units whose reply was cut at `max_tokens`.
    pub cut: usize,
}

/// The counts of `judged` (from `calls`, whose records by (request id, sample) are `records`).
pub fn counts(
    judged: &[Judged],
    calls: &[JudgeCall],
    records: &HashMap<(String, u32), CallRecord>,
) -> JudgeCounts {
    JudgeCounts {
        trajectories: judged.len(),
        units: judged.iter().map(|j| j.steps.len()).sum(),
        failures: judged.iter().map(|j| j.failures).sum(),
        answered: calls
            .iter()
            .filter_map(|c| records.get(&(c.request.id.clone(), 0)))
            .filter(|r| r.is_ok())
            .count(),
        cut: judged
            .iter()
            .flat_map(|j| &j.steps)
            .filter(|s| s.truncated)
            .count(),
    }
}

/// The score columns of the judge table that a point-biserial correlation against
/// `correct` can use, `judge_score` first: over the trajectories with both a judge score and
/// a correctness, a column is named only when every such trajectory has it and it varies,
/// so that listwise deletion keeps every such row. `Err` says why no correlation can be
/// computed: fewer than 3 such trajectories (no interval), one correctness for all, or one
/// mean judge score for all.
pub fn correlate_columns(judged: &[Judged]) -> std::result::Result<Vec<&'static str>, String> {
    let rows: Vec<&Judged> = judged
        .iter()
        .filter(|j| j.judge_score.is_some() && j.correct.is_some())
        .collect();
    // Fewer than three pairs give no interval (correlate refuses them).
    if rows.len() < 3 {
        return Err(format!(
            "{} trajectory(ies) have both a judge score and a correctness (at least 3 are needed)",
            rows.len()
        ));
    }
    let both = |f: fn(&Judged) -> Option<bool>| {
        rows.iter().any(|j| f(j) == Some(true)) && rows.iter().any(|j| f(j) == Some(false))
    };
    if !both(|j| j.correct) {
        return Err("every scored trajectory has the same correctness".into());
    }
    let mut cols = vec!["judge_score"];
    let varies = |f: fn(&Judged) -> Option<f64>| {
        let v: Vec<f64> = rows.iter().filter_map(|j| f(j)).collect();
        v.len() == rows.len() && v.iter().any(|x| *x != v[0])
    };
    if !varies(|j| j.judge_score) {
        return Err("the judge gave every scored trajectory the same mean score".into());
    }
    if varies(|j| j.reasoning_score) {
        cols.push("reasoning_score");
    }
    if varies(|j| j.extraction_score) {
        cols.push("extraction_score");
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasoning prompt as `plan` fills it, and its rubric.
    fn reasoning_rubric() -> Vec<String> {
        let prompt = fill(
            REASONING_TEMPLATE,
            &[
                ("question", "Where was the film shot?"),
                ("steps", "(none)"),
                ("thought", "I need the film shot in Leland."),
                ("action", "search \"Leland film\""),
            ],
        );
        rubric_lines(REASONING_TEMPLATE, &prompt)
    }

    #[test]
    fn the_rubric_is_the_templates_fixed_lines_as_sent() {
        let r = reasoning_rubric();
        assert_eq!(r.len(), 8, "{r:#?}");
        assert!(r[0].starts_with("You are grading one step"));
        assert_eq!(r[1], "# Question");
        assert!(
            r[5].starts_with("Score the step from 1 to 10: 10 when the action follows directly")
        );
        assert_eq!(r[7], "Score: <integer from 1 to 10>");
        assert!(r.iter().all(|l| !l.contains('{')));
        // A line the prompt does not hold is not its rubric.
        assert!(rubric_lines(REASONING_TEMPLATE, "Score: <integer from 1 to 10>").len() == 1);
    }

    #[test]
    fn scores_read_from_real_looking_replies() {
        let rubric = reasoning_rubric();
        let ok = [
            ("The action follows from the thought.\nScore: 8", 8.0),
            ("**Score:** 7/10", 7.0),
            (
                "Reasoning: ... the step is fine.\n\nFinal score = 9 out of 10.",
                9.0,
            ),
            ("I'd give it a score of 6.", 6.0),
            ("Score: 10.", 10.0),
            ("Score: 7.5", 7.5),
            ("Score: 3\nOn reflection, Score: 4", 4.0),
            ("### Score\n\nScore: 5", 5.0),
            // A bare number: the whole reply, or right after a score marker line.
            ("7", 7.0),
            ("  8/10 ", 8.0),
            ("The thought is grounded.\nScore:\n6", 6.0),
            ("**Final score**\n\n9", 9.0),
            // The scale's words beside a score of the model's own are not a copy.
            ("Score: 10 - the action follows directly from the thought.", 10.0),
            ("Score: 10 out of 10", 10.0),
            (
                "Score: 9 - the action follows directly from a thought that is grounded",
                9.0,
            ),
            ("Score: 7 when considering what was found", 7.0),
            ("Score: 1", 1.0),
            // A copied rubric line after the model's own score is passed over.
            (
                "Score: 7\n\nScore the step from 1 to 10: 10 when the action follows directly from a thought",
                7.0,
            ),
            (
                "Good step. Score: 6\nscore 10 when the action follows directly from a thought",
                6.0,
            ),
        ];
        for (t, x) in ok {
            assert_eq!(parse_reply(t, &rubric), Ok(x), "{t:?}");
        }
        let copy = |run: &str| {
            format!("the score line copies the judge prompt's rubric ({run:?}), it does not score the step")
        };
        let bare = |l: &str| {
            format!("the last line {l:?} is a bare number without a score marker (`Score:`) on the line before it")
        };
        let list = |l: &str| format!("the last line {l:?} is a list item, not a score");
        let bad = [
            // Issue #30 item 5: the two false scores of 256 judged steps.
            (
                "score 10 when the action follows directly…".to_string(),
                copy("10 when the action follows directly"),
            ),
            (
                "1. The thought names the film.\n2. ...".into(),
                list("2. ..."),
            ),
            ("2. ...".into(), list("2. ...")),
            ("Steps:\n1.".into(), list("1.")),
            ("2)".into(), list("2)")),
            ("Reasonable.\n6".into(), bare("6")),
            ("Analysis...\n7".into(), bare("7")),
            (
                "Score: 1 when the action contradicts the thought".into(),
                copy("1 when the action contradicts the thought"),
            ),
            ("Score: 1 to 10".into(), copy("1 to 10")),
            // The scale's clause with another number put in.
            (
                "Score: 5 when the action contradicts the thought, or the thought is not supported".into(),
                copy("5 when the action contradicts the thought or the thought"),
            ),
            ("1. Grounded.\n2. Searched.\n3".into(), list("3")),
            (
                "Score: <integer from 1 to 10>".into(),
                "no score found in the reply: its last line copies the prompt's \"Score: <integer from 1 to 10>\"".into(),
            ),
            (
                "You may reason briefly first. Then end your reply with a single final line of the form\n**Score: <integer from 1 to 10>**".into(),
                "no score found in the reply: its last line copies the prompt's \"Score: <integer from 1 to 10>\"".into(),
            ),
            (
                "The step is good.".into(),
                "no score found in the reply".into(),
            ),
            ("".into(), "no score found in the reply".into()),
            ("Score: 11".into(), "score 11 is outside 1–10".into()),
            ("Score: 0".into(), "score 0 is outside 1–10".into()),
            ("Score: 85\n".into(), "score 85 is outside 1–10".into()),
        ];
        for (t, e) in bad {
            assert_eq!(parse_reply(&t, &rubric), Err(e), "{t:?}");
        }
        // Without the prompt there is no rubric to compare with.
        assert_eq!(
            parse_score("score 10 when the action follows directly…"),
            Ok(10.0)
        );
    }

    fn judged(correct: Option<bool>, judge: Option<f64>, reasoning: Option<f64>) -> Judged {
        Judged {
            trajectory: "q/open/0".into(),
            run: "r".into(),
            question_id: "q".into(),
            arm: "open".into(),
            index: 0,
            selector: "rrf".into(),
            correct,
            reasoning_score: reasoning,
            extraction_score: Some(5.0),
            judge_score: judge,
            failures: 1,
            model: "m".into(),
            steps: vec![StepScore {
                step: 0,
                dimension: Dimension::GroundedReasoning,
                score: reasoning,
                failure: None,
                request_id: None,
                truncated: correct == Some(true),
            }],
        }
    }

    /// Three scored trajectories, one right and two wrong, with different judge and
    /// reasoning scores and the same extraction score: judge_score and reasoning_score are
    /// named, extraction_score (constant) is not; a row without correctness is ignored.
    #[test]
    fn correlate_columns_name_what_varies() {
        let mut js = vec![
            judged(Some(true), Some(8.0), Some(9.0)),
            judged(Some(false), Some(4.0), Some(3.0)),
            judged(Some(false), Some(5.0), Some(5.0)),
            judged(None, Some(1.0), Some(1.0)),
        ];
        assert_eq!(
            correlate_columns(&js),
            Ok(vec!["judge_score", "reasoning_score"])
        );
        assert_eq!(
            counts(&js, &[], &HashMap::new()),
            JudgeCounts {
                trajectories: 4,
                units: 4,
                failures: 4,
                answered: 0,
                cut: 1,
            }
        );
        js[0].correct = Some(false);
        assert_eq!(
            correlate_columns(&js),
            Err("every scored trajectory has the same correctness".into())
        );
        js.truncate(2);
        assert_eq!(
            correlate_columns(&js),
            Err("2 trajectory(ies) have both a judge score and a correctness (at least 3 are needed)".into())
        );
    }
}
