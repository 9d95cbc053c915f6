//! Error-guided items: a model writes the wrong options (planning) or the erroneous
//! statements (grounded reasoning) from the paper's error taxonomy (RAGCap-Bench Table 2),
//! given context from a trajectory that reached a correct answer.
//!
//! - **Planning**, one item per search step of a correct trajectory. Context: the question
//!   and the searches before the step with what they returned. Correct options: the
//!   trajectory's actual next query and the model's reformulation of it. Wrong options:
//!   [`WRONG_OPTIONS`] next steps written by the model, each naming the error type it
//!   instantiates. Sub-type rule: **convergent** when the searches before the step already
//!   retrieved at least one gold supporting paragraph (the next step builds on found evidence
//!   to narrow in on the missing hop), **divergent** otherwise (nothing useful found yet: the
//!   next step must open new ground; this includes the first step).
//! - **Grounded reasoning**, one item per distinct packet of a correct trajectory (the
//!   selector that defines correctness). The model derives [`STATEMENTS`] statements from the
//!   packet and the reader's answer, [`GROUNDED`] of them supported and the rest each with one
//!   injected error. Polarity `incorrect`: gold = the erroneous statements.
//!
//! A generation is rejected, with the reason recorded, when its reply is not the JSON asked
//! for, a value in it is or contains one of the template's own placeholders (every `<…>`
//! example value of the template the prompt was filled from, such as `<search query>`: a
//! weak model copies the reply format verbatim — checked before anything else), an option
//! or statement is missing or empty, an error type is not in the taxonomy, a
//! wrong option repeats a correct one, or two options are the same text. Options are put in a
//! deterministic per-item order (the MCQ shuffle, seed [`ORDER_SEED`]) so the gold is not
//! always first.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{meta, numbered, short_hash, text_key, Generated, Provenance, Skip, Strategy};
use crate::llm::{CallRecord, ChatRequest, ModelConfig, CUT_NOTE};
use crate::search::SearchRecord;
use ragstats_core::mcq::item::{Item, McqOption, Polarity, Task};
use ragstats_core::mcq::shuffle::permutation;
use ragstats_core::trajlog::{Logged, Source};

/// Planning errors (Table 2), as named in data/prompts/generate/planning.txt.
pub const PLANNING_ERRORS: [&str; 4] = [
    "over_narrow_search",
    "redundant_search",
    "premature_conclusion",
    "ignored_constraint",
];
/// Grounded-reasoning errors (Table 2), as named in data/prompts/generate/grounded_reasoning.txt.
pub const GROUNDED_ERRORS: [&str; 3] = ["unsupported_claim", "misread_evidence", "logical_leap"];
/// Wrong options asked of the model per planning item.
pub const WRONG_OPTIONS: usize = 3;
/// Statements asked per grounded-reasoning item.
pub const STATEMENTS: usize = 5;
/// Of those, supported ones.
pub const GROUNDED: usize = 2;
/// Seed of the option order of error-guided items.
pub const ORDER_SEED: u64 = 0;
/// Results shown per earlier search in a planning context.
pub const RESULTS_PER_STEP: usize = 5;
/// Characters of a result's text in a planning context.
pub const STEP_RESULT_CHARS: usize = 200;

/// The planning generation template (data/prompts/generate/planning.txt).
pub const PLANNING_TEMPLATE: &str = include_str!("../../../../data/prompts/generate/planning.txt");
/// The grounded-reasoning generation template.
pub const GROUNDED_TEMPLATE: &str =
    include_str!("../../../../data/prompts/generate/grounded_reasoning.txt");

/// The convergent/divergent rule, as recorded in each planning item's provenance.
pub const SUBTASK_RULE: &str = "convergent when the searches before this step already retrieved a gold supporting paragraph, else divergent";

/// Instruction of convergent planning items.
pub const CONVERGENT_INSTRUCTION: &str =
    "Which of the following next steps move the search efficiently towards the answer?";
/// Instruction of divergent planning items.
pub const DIVERGENT_INSTRUCTION: &str =
    "Which of the following next steps open the search in a useful direction?";
/// Instruction of grounded-reasoning items.
pub const GROUNDED_INSTRUCTION: &str =
    "Which of the following statements are NOT supported by the evidence?";

/// Model and call template of the generation calls.
#[derive(Debug, Clone)]
pub struct GuidedConfig {
    pub llm: ModelConfig,
    /// The selector whose reads decide correctness (and whose packet grounded items use).
    pub selector: String,
}

/// What an error-guided item is built from.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A planning step: the trajectory's actual next query.
    Planning { next_query: String },
    /// A packet and the answer reached from it.
    Grounded,
}

/// One generation call and everything needed to turn its reply into an item.
#[derive(Debug, Clone)]
pub struct Planned {
    pub request: ChatRequest,
    pub item_id: String,
    pub task: Task,
    pub subtask: Option<String>,
    pub source: Source,
    /// The item's `query` (the question).
    pub query: String,
    /// The item's `context`.
    pub context: String,
    pub spec: Spec,
    /// Hash of the template the prompt was filled from.
    pub prompt_sha256: String,
    /// The `<…>` placeholders of that template ([`template_placeholders`]): a reply value
    /// holding one is a copy of the reply format, not an option.
    pub placeholders: Vec<String>,
}

/// Every `<…>` span of `template` (one line, nothing nested, at most 200 characters inside),
/// once each, in template order: the example values of its reply format (`<search query>`,
/// `<one of over_narrow_search, …>`) and of its instructions (`Search "<query>".`).
pub fn template_placeholders(template: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in template.lines() {
        let mut rest = line;
        while let Some(a) = rest.find('<') {
            let after = &rest[a + 1..];
            let Some(b) = after.find(['<', '>']) else {
                break;
            };
            if after.as_bytes()[b] == b'>' {
                let inner = &after[..b];
                if !inner.trim().is_empty() && inner.chars().count() <= 200 {
                    let ph = format!("<{inner}>");
                    if !out.contains(&ph) {
                        out.push(ph);
                    }
                }
                rest = &after[b + 1..];
            } else {
                rest = &after[b..];
            }
        }
    }
    out
}

/// The first string value of `v` (depth first, keys in the map's order) that is or contains
/// one of `placeholders` (case-folded, whitespace collapsed), with its path
/// (`reformulation`, `wrong_options[0].text`; indexes from 0).
pub fn copied_placeholder(v: &Value, placeholders: &[String]) -> Option<(String, String)> {
    fn walk(v: &Value, path: &str, phs: &[(String, &String)]) -> Option<(String, String)> {
        match v {
            Value::String(s) => {
                let f = text_key(s);
                phs.iter()
                    .find(|(k, _)| f.contains(k.as_str()))
                    .map(|(_, p)| (path.to_string(), (*p).clone()))
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, &format!("{path}[{i}]"), phs)),
            Value::Object(m) => m.iter().find_map(|(k, x)| {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, &p, phs)
            }),
            _ => None,
        }
    }
    let phs: Vec<(String, &String)> = placeholders.iter().map(|p| (text_key(p), p)).collect();
    walk(v, "", &phs)
}

/// Fills `{name}` placeholders of `template` in one pass (a value's own braces are never
/// expanded); unknown placeholders are left as they are.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 1024);
    let mut rest = template;
    while let Some(a) = rest.find('{') {
        out.push_str(&rest[..a]);
        let after = &rest[a + 1..];
        let hit = values.iter().find_map(|(k, v)| {
            after
                .strip_prefix(k)
                .and_then(|r| r.strip_prefix('}'))
                .map(|r| (*v, r))
        });
        match hit {
            Some((v, r)) => {
                out.push_str(v);
                rest = r;
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The searches of `steps[..upto]` as a planning context: `Step k — search: "q"` and up to
/// [`RESULTS_PER_STEP`] result lines each (`No searches yet.` when there are none).
pub fn steps_context(l: &Logged, upto: usize) -> String {
    let mut lines = Vec::new();
    for s in &l.t.steps[..upto] {
        match s.query.as_deref() {
            Some(q) => lines.push(format!("Step {} — search: \"{}\"", s.step + 1, q.trim())),
            None => {
                lines.push(format!(
                    "Step {} — no search (the planner's output could not be read)",
                    s.step + 1
                ));
                continue;
            }
        }
        let shown: Vec<&SearchRecord> = s
            .results
            .iter()
            .filter(|r| !r.masked)
            .take(RESULTS_PER_STEP)
            .collect();
        if shown.is_empty() {
            lines.push("  (no results)".into());
        }
        for r in shown {
            lines.push(format!(
                "  [{}] {}: {}",
                super::host(&r.url),
                r.title.trim(),
                super::clip_text(&r.text, STEP_RESULT_CHARS)
            ));
        }
    }
    if lines.is_empty() {
        "No searches yet.".into()
    } else {
        lines.join("\n")
    }
}

fn request(id: &str, prompt: String, cfg: &GuidedConfig, task: Task) -> ChatRequest {
    let mut r = cfg.llm.user_request(id, prompt);
    r.meta = Some(json!({"task": task.as_str()}));
    r
}

fn skip(
    skipped: &mut Vec<Skip>,
    task: Task,
    subtask: Option<&str>,
    source: Source,
    reason: String,
) {
    skipped.push(Skip {
        task,
        subtask: subtask.map(str::to_string),
        source,
        reason,
    });
}

/// The generation calls for `tasks` (planning and/or grounded reasoning) over the
/// trajectories correct under `cfg.selector`; the others, and units that cannot be asked,
/// are returned as skips.
pub fn plan(trajs: &[Logged], tasks: &[Task], cfg: &GuidedConfig) -> (Vec<Planned>, Vec<Skip>) {
    let mut planned = Vec::new();
    let mut skipped = Vec::new();
    let mut packets: HashMap<(String, Vec<String>), String> = HashMap::new();
    for l in trajs {
        let verdict = match l.correct(&cfg.selector) {
            Some(true) => None,
            Some(false) => Some(format!(
                "the trajectory is not correct under selector {:?} (mean em < 1)",
                cfg.selector
            )),
            None => Some(format!(
                "the trajectory has no read of selector {:?}",
                cfg.selector
            )),
        };
        if tasks.contains(&Task::Planning) {
            match &verdict {
                Some(why) => skip(&mut skipped, Task::Planning, None, l.source(), why.clone()),
                None => plan_steps(l, cfg, &mut planned, &mut skipped),
            }
        }
        if tasks.contains(&Task::GroundedReasoning) {
            let source = Source {
                selector: Some(cfg.selector.clone()),
                ..l.source()
            };
            match &verdict {
                Some(why) => skip(
                    &mut skipped,
                    Task::GroundedReasoning,
                    None,
                    source,
                    why.clone(),
                ),
                None => plan_grounded(l, cfg, source, &mut packets, &mut planned, &mut skipped),
            }
        }
    }
    (planned, skipped)
}

fn plan_steps(l: &Logged, cfg: &GuidedConfig, planned: &mut Vec<Planned>, skipped: &mut Vec<Skip>) {
    let sup = l.supporting();
    let mut found = false;
    for (i, s) in l.t.steps.iter().enumerate() {
        let source = Source {
            step: Some(s.step),
            ..l.source()
        };
        let subtask = if found { "convergent" } else { "divergent" };
        // The rule looks only at searches before this step.
        found = found
            || s.results
                .iter()
                .any(|r| !r.masked && sup.contains(r.id.as_str()));
        let Some(next) = s.query.as_deref().filter(|q| !q.trim().is_empty()) else {
            let why = s.failure.as_deref().unwrap_or("no reason recorded");
            skip(
                skipped,
                Task::Planning,
                Some(subtask),
                source,
                format!("the step has no query ({why})"),
            );
            continue;
        };
        let context = steps_context(l, i);
        let rule = if subtask == "convergent" {
            "The searches so far have already found part of the evidence; a good next step narrows in on what is still missing."
        } else {
            "The searches so far have found none of the evidence needed; a good next step opens the search in a direction that can find it."
        };
        let prompt = fill(
            PLANNING_TEMPLATE,
            &[
                ("subtask", subtask),
                ("subtask_rule", rule),
                ("question", l.t.question.trim()),
                ("steps", &context),
                ("next_query", next.trim()),
                ("n_wrong", &WRONG_OPTIONS.to_string()),
            ],
        );
        let item_id = format!(
            "p{}-{}-{}-t{}-s{}",
            &subtask[..1],
            l.t.question_id,
            l.t.arm,
            l.t.trajectory,
            s.step
        );
        planned.push(Planned {
            request: request(&format!("gen:{item_id}"), prompt, cfg, Task::Planning),
            item_id,
            task: Task::Planning,
            subtask: Some(subtask.into()),
            source,
            query: l.t.question.clone(),
            context,
            spec: Spec::Planning {
                next_query: next.trim().to_string(),
            },
            prompt_sha256: short_hash(PLANNING_TEMPLATE),
            placeholders: template_placeholders(PLANNING_TEMPLATE),
        });
    }
}

fn plan_grounded(
    l: &Logged,
    cfg: &GuidedConfig,
    source: Source,
    made: &mut HashMap<(String, Vec<String>), String>,
    planned: &mut Vec<Planned>,
    skipped: &mut Vec<Skip>,
) {
    let task = Task::GroundedReasoning;
    let Some(packet) = l.t.packets.get(&cfg.selector) else {
        skip(
            skipped,
            task,
            None,
            source,
            format!("no packet for selector {:?}", cfg.selector),
        );
        return;
    };
    let shown: Vec<&SearchRecord> = packet
        .iter()
        .filter(|r| !r.masked && !r.text.trim().is_empty())
        .collect();
    if shown.is_empty() {
        skip(
            skipped,
            task,
            None,
            source,
            "no visible record in the packet".into(),
        );
        return;
    }
    let Some(read) =
        l.t.reads
            .iter()
            .find(|r| r.selector == cfg.selector && r.em >= 1.0)
    else {
        skip(skipped, task, None, source, "no exact read".into());
        return;
    };
    let answer = if read.answer.trim().is_empty() {
        l.t.answers[0].clone()
    } else {
        read.answer.clone()
    };
    let mut ids: Vec<String> = shown.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    let key = (l.t.question_id.clone(), ids);
    let item_id = format!(
        "gr-{}-{}-t{}-{}",
        l.t.question_id, l.t.arm, l.t.trajectory, cfg.selector
    );
    if let Some(first) = made.get(&key) {
        skip(
            skipped,
            task,
            None,
            source,
            format!("same packet as item {first}"),
        );
        return;
    }
    made.insert(key, item_id.clone());
    let evidence = numbered(&shown);
    let prompt = fill(
        GROUNDED_TEMPLATE,
        &[
            ("question", l.t.question.trim()),
            ("evidence", &evidence),
            ("answer", answer.trim()),
            ("n_statements", &STATEMENTS.to_string()),
            ("n_grounded", &GROUNDED.to_string()),
        ],
    );
    let context = format!(
        "Evidence:\n{evidence}\nAnswer reached: {}\nReasoning so far: the agent wrote the statements below.",
        answer.trim()
    );
    planned.push(Planned {
        request: request(&format!("gen:{item_id}"), prompt, cfg, task),
        item_id,
        task,
        subtask: None,
        source,
        query: l.t.question.clone(),
        context,
        spec: Spec::Grounded,
        prompt_sha256: short_hash(GROUNDED_TEMPLATE),
        placeholders: template_placeholders(GROUNDED_TEMPLATE),
    });
}

/// The JSON object of a reply: the whole text, else the text inside a ``` fence, else the
/// span from the first `{` to the last `}`.
pub fn reply_json(text: &str) -> Result<Value, String> {
    let t = text.trim();
    let mut tries: Vec<&str> = vec![t];
    if let Some(a) = t.find("```") {
        let inner = &t[a + 3..];
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        if let Some(b) = inner.find("```") {
            tries.push(inner[..b].trim());
        }
    }
    if let (Some(a), Some(b)) = (t.find('{'), t.rfind('}')) {
        if a < b {
            tries.push(&t[a..=b]);
        }
    }
    for s in tries {
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
            return Ok(v);
        }
    }
    Err("the reply is not the JSON object asked for".into())
}

/// A planning option's comparable core: case-folded, whitespace collapsed, without a leading
/// `search`, quotes and final punctuation (so `Search "X".` and `x` are the same step).
fn core(s: &str) -> String {
    let k = text_key(s);
    let k = k
        .strip_prefix("search")
        .map_or(k.as_str(), str::trim_start)
        .to_string();
    k.trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == ':' || c.is_whitespace())
        .to_string()
}

fn string_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// An option with its origin and error type before ordering.
struct Draft {
    text: String,
    origin: &'static str,
    error_type: Option<String>,
    gold: bool,
}

/// Planning options from a reply: actual next query, reformulation, wrong options.
fn planning_drafts(next_query: &str, v: &Value) -> Result<Vec<Draft>, String> {
    let reform = string_field(v, "reformulation").ok_or("missing option: no reformulation")?;
    let wrong = v
        .get("wrong_options")
        .and_then(Value::as_array)
        .ok_or("missing options: no wrong_options list")?;
    if wrong.len() != WRONG_OPTIONS {
        return Err(format!(
            "missing options: {} wrong option(s), expected {WRONG_OPTIONS}",
            wrong.len()
        ));
    }
    let quoted = |q: &str| format!("Search \"{}\".", q.trim_matches('"'));
    let mut drafts = vec![
        Draft {
            text: quoted(next_query),
            origin: "trajectory",
            error_type: None,
            gold: true,
        },
        Draft {
            text: quoted(reform),
            origin: "reformulation",
            error_type: None,
            gold: true,
        },
    ];
    if core(reform) == core(next_query) {
        return Err("duplicate options: the reformulation repeats the actual next query".into());
    }
    for (k, w) in wrong.iter().enumerate() {
        let text = string_field(w, "text").ok_or(format!(
            "missing option: wrong option {} has no text",
            k + 1
        ))?;
        let et = string_field(w, "error_type")
            .ok_or(format!("wrong option {} has no error_type", k + 1))?;
        if !PLANNING_ERRORS.contains(&et) {
            return Err(format!(
                "wrong option {}: error type {et:?} is not in the planning taxonomy",
                k + 1
            ));
        }
        if core(text) == core(next_query) || core(text) == core(reform) {
            return Err(format!(
                "wrong option {} ({et}) is identical to a correct option",
                k + 1
            ));
        }
        drafts.push(Draft {
            text: text.to_string(),
            origin: "generated_wrong",
            error_type: Some(et.into()),
            gold: false,
        });
    }
    Ok(drafts)
}

/// Grounded-reasoning statements from a reply.
fn grounded_drafts(v: &Value) -> Result<Vec<Draft>, String> {
    let st = v
        .get("statements")
        .and_then(Value::as_array)
        .ok_or("missing options: no statements list")?;
    if st.len() != STATEMENTS {
        return Err(format!(
            "missing options: {} statement(s), expected {STATEMENTS}",
            st.len()
        ));
    }
    let mut drafts = Vec::new();
    for (k, s) in st.iter().enumerate() {
        let text = string_field(s, "text")
            .ok_or(format!("missing option: statement {} has no text", k + 1))?;
        let et = match s.get("error_type") {
            None | Some(Value::Null) => None,
            Some(Value::String(e))
                if e.trim().is_empty() || e.trim() == "null" || e.trim() == "none" =>
            {
                None
            }
            Some(Value::String(e)) if GROUNDED_ERRORS.contains(&e.trim()) => {
                Some(e.trim().to_string())
            }
            Some(other) => {
                return Err(format!(
                    "statement {}: error type {other} is not in the grounded-reasoning taxonomy",
                    k + 1
                ))
            }
        };
        let gold = et.is_some();
        drafts.push(Draft {
            text: text.to_string(),
            origin: if gold {
                "generated_error"
            } else {
                "generated_grounded"
            },
            error_type: et,
            gold,
        });
    }
    let wrong = drafts.iter().filter(|d| d.gold).count();
    if wrong != STATEMENTS - GROUNDED {
        return Err(format!(
            "{} supported and {wrong} erroneous statement(s); expected {GROUNDED} and {}",
            STATEMENTS - wrong,
            STATEMENTS - GROUNDED
        ));
    }
    for (i, a) in drafts.iter().enumerate() {
        for b in &drafts[..i] {
            if text_key(&a.text) == text_key(&b.text) && a.gold != b.gold {
                return Err(format!(
                    "statement {} (erroneous) is identical to a supported one",
                    i + 1
                ));
            }
        }
    }
    Ok(drafts)
}

/// Turns one reply into an item, or the reason it was rejected.
///
/// # Errors
/// The rejection reason (see the module docs).
pub fn build_item(p: &Planned, model: &str, text: &str) -> Result<Item, String> {
    let v = reply_json(text)?;
    // Before the option checks: a copied reply format is often short of options too, and
    // "missing options" would hide that nothing in it was written for this item.
    if let Some((path, ph)) = copied_placeholder(&v, &p.placeholders) {
        return Err(format!(
            "the reply copies the template's placeholder {ph:?} in {path}"
        ));
    }
    let drafts = match &p.spec {
        Spec::Planning { next_query } => planning_drafts(next_query, &v)?,
        Spec::Grounded => grounded_drafts(&v)?,
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, d) in drafts.iter().enumerate() {
        if let Some(j) = seen.insert(text_key(&d.text), i) {
            return Err(format!(
                "duplicate options: option {} repeats option {}",
                i + 1,
                j + 1
            ));
        }
    }
    let order = permutation(ORDER_SEED, &p.item_id, drafts.len());
    let labels = super::labels(drafts.len());
    let mut options = Vec::new();
    let mut answer = Vec::new();
    let mut opt_meta = Vec::new();
    for (lab, &k) in labels.iter().zip(&order) {
        let d = &drafts[k];
        options.push(McqOption {
            label: lab.clone(),
            text: d.text.clone(),
        });
        if d.gold {
            answer.push(lab.clone());
        }
        opt_meta.push(json!({"label": lab, "origin": d.origin, "error_type": d.error_type}));
    }
    let (instruction, polarity) = match (&p.spec, p.subtask.as_deref()) {
        (Spec::Grounded, _) => (GROUNDED_INSTRUCTION, Polarity::Incorrect),
        (_, Some("convergent")) => (CONVERGENT_INSTRUCTION, Polarity::Correct),
        _ => (DIVERGENT_INSTRUCTION, Polarity::Correct),
    };
    let prov = Provenance {
        source: p.source.clone(),
        strategy: Strategy::ErrorGuided,
        model: Some(model.to_string()),
        prompt_sha256: Some(p.prompt_sha256.clone()),
        request_id: Some(p.request.id.clone()),
        subtask_rule: p.subtask.as_ref().map(|_| SUBTASK_RULE.to_string()),
    };
    Ok(Item {
        id: p.item_id.clone(),
        task: p.task,
        subtask: p.subtask.clone(),
        language: "en".into(),
        query: p.query.clone(),
        context: p.context.clone(),
        instruction: instruction.into(),
        polarity,
        options,
        answer,
        allow_empty: false,
        meta: Some(meta(&prov, opt_meta)),
    })
}

/// Items from the generation records (latest record per request id, sample 0), planning
/// items first, each task in log order: a missing
/// record is a skip ("not generated yet"), a failed call or a rejected reply a skip with its
/// reason.
pub fn build(planned: &[Planned], records: &HashMap<(String, u32), CallRecord>) -> Generated {
    let mut out = Generated::default();
    let mut ids = HashSet::new();
    // Items grouped by task (planning first), each in log order.
    let mut order: Vec<&Planned> = planned.iter().collect();
    order.sort_by_key(|p| p.task);
    for p in order {
        debug_assert!(ids.insert(p.item_id.clone()));
        let rec = records.get(&(p.request.id.clone(), 0));
        let result = match rec {
            None => Err(
                "not generated yet (the generation call did not run; run again to resume)"
                    .to_string(),
            ),
            Some(r) => match (&r.text, &r.error) {
                (_, Some(e)) => Err(format!(
                    "generation call failed ({}): {}",
                    e.kind.as_str(),
                    e.message
                )),
                (Some(t), None) => build_item(p, &r.model, t).map_err(|e| {
                    if r.is_truncated() {
                        format!("rejected: {e} ({CUT_NOTE})")
                    } else {
                        format!("rejected: {e}")
                    }
                }),
                (None, None) => Err("generation call returned no text".into()),
            },
        };
        match result {
            Ok(item) => out.items.push(item),
            Err(reason) => out.skipped.push(Skip {
                task: p.task,
                subtask: p.subtask.clone(),
                source: p.source.clone(),
                reason,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_name_every_error_type_and_placeholder() {
        for e in PLANNING_ERRORS {
            assert!(PLANNING_TEMPLATE.contains(&format!("- {e}:")), "{e}");
        }
        for e in GROUNDED_ERRORS {
            assert!(GROUNDED_TEMPLATE.contains(&format!("- {e}:")), "{e}");
        }
        for p in [
            "{question}",
            "{steps}",
            "{next_query}",
            "{subtask}",
            "{subtask_rule}",
            "{n_wrong}",
        ] {
            assert!(PLANNING_TEMPLATE.contains(p), "{p}");
        }
        for p in [
            "{question}",
            "{evidence}",
            "{answer}",
            "{n_statements}",
            "{n_grounded}",
        ] {
            assert!(GROUNDED_TEMPLATE.contains(p), "{p}");
        }
    }

    #[test]
    fn placeholders_are_read_off_the_templates() {
        assert_eq!(
            template_placeholders(PLANNING_TEMPLATE),
            [
                "<query>",
                "<answer>",
                "<search query>",
                "<next step>",
                "<one of over_narrow_search, redundant_search, premature_conclusion, ignored_constraint>",
            ]
        );
        assert_eq!(
            template_placeholders(GROUNDED_TEMPLATE),
            [
                "<statement>",
                "<one of unsupported_claim, misread_evidence, logical_leap>"
            ]
        );
        // Unclosed or nested brackets are no placeholder; a repeated one is listed once.
        assert_eq!(
            template_placeholders("a < b, <x <y> z>\n<y> and <>"),
            ["<y>"]
        );
    }

    /// A planning unit as `plan` makes it, for a step whose actual next query is `next`.
    fn planning_unit(next: &str) -> Planned {
        Planned {
            request: ChatRequest::new("gen:pd-q-adaptive-t0-s0", "m", vec![]),
            item_id: "pd-q-adaptive-t0-s0".into(),
            task: Task::Planning,
            subtask: Some("divergent".into()),
            source: Source {
                run: "r".into(),
                question_id: "q".into(),
                arm: "adaptive".into(),
                trajectory: 0,
                step: Some(0),
                selector: None,
                line: 1,
            },
            query: "Who directed the film shot around Leland, North Carolina in 1986?".into(),
            context: "No searches yet.".into(),
            spec: Spec::Planning {
                next_query: next.into(),
            },
            prompt_sha256: short_hash(PLANNING_TEMPLATE),
            placeholders: template_placeholders(PLANNING_TEMPLATE),
        }
    }

    /// The reply text of record `i` of gemma3-270m's real generator replies.
    fn real_reply(i: usize) -> String {
        let rec: Value = serde_json::from_str(
            include_str!("../../../../tests/fixtures/real/generate.jsonl")
                .lines()
                .nth(i)
                .unwrap(),
        )
        .unwrap();
        rec["response"]["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn real_replies_that_copy_the_reply_format_are_refused_as_placeholders() {
        let p = planning_unit("Leland North Carolina film 1986");
        // 48 copies the format verbatim; 11 nearly (`"<answer> now?"`). Both parse as JSON
        // with one wrong option, which was all they were rejected for.
        for (i, piece) in [
            (
                48,
                "{\"reformulation\": \"<search query>\", \"wrong_options\": [{\"text\": \"<next step>\"",
            ),
            (11, "[{\"text\": \"<answer> now?\", \"error_type\""),
        ] {
            let text = real_reply(i);
            assert!(text.contains(piece), "record {i}: {text}");
            let v = reply_json(&text).unwrap();
            assert_eq!(v["wrong_options"].as_array().unwrap().len(), 1, "record {i}");
            assert_eq!(
                build_item(&p, "gemma3-270m", &text).unwrap_err(),
                "the reply copies the template's placeholder \"<search query>\" in reformulation",
                "record {i}"
            );
        }
        // Record 11 with its reformulation written: its wrong option still holds `<answer>`.
        let mut v = reply_json(&real_reply(11)).unwrap();
        v["reformulation"] = json!("film shot in Leland North Carolina 1986 director");
        assert_eq!(
            copied_placeholder(&v, &p.placeholders),
            Some((
                "wrong_options[0].error_type".to_string(),
                "<one of over_narrow_search, redundant_search, premature_conclusion, ignored_constraint>"
                    .to_string()
            ))
        );
        v["wrong_options"][0]["error_type"] = json!("premature_conclusion");
        assert_eq!(
            copied_placeholder(&v, &p.placeholders),
            Some(("wrong_options[0].text".to_string(), "<answer>".to_string()))
        );
        // Case and spacing do not hide a copy; text around it does not either.
        let v = json!({"reformulation": "Leland film <Search  Query>"});
        assert_eq!(
            copied_placeholder(&v, &p.placeholders).map(|(_, ph)| ph),
            Some("<search query>".to_string())
        );
    }

    #[test]
    fn a_reply_written_for_the_item_passes_the_placeholder_check() {
        let p = planning_unit("Leland North Carolina film 1986");
        let reply = json!({
            "reformulation": "film shot in Leland North Carolina in 1986",
            "wrong_options": [
                {"text": "Search \"Leland North Carolina\".", "error_type": "over_narrow_search"},
                {"text": "Answer \"John Carpenter\" now.", "error_type": "premature_conclusion"},
                {"text": "Search \"film director 1986\".", "error_type": "ignored_constraint"}
            ]
        });
        assert_eq!(copied_placeholder(&reply, &p.placeholders), None);
        let item = build_item(&p, "m", &reply.to_string()).unwrap();
        assert_eq!(item.options.len(), 5);
        // The same reply with one value left as the template's: refused.
        let mut copied = reply.clone();
        copied["wrong_options"][2]["text"] = json!("Search \"<query>\".");
        assert_eq!(
            build_item(&p, "m", &copied.to_string()).unwrap_err(),
            "the reply copies the template's placeholder \"<query>\" in wrong_options[2].text"
        );
    }

    #[test]
    fn fill_is_one_pass() {
        assert_eq!(
            fill("a {x} {y} {z}", &[("x", "{y}"), ("y", "2")]),
            "a {y} 2 {z}"
        );
    }

    #[test]
    fn reply_json_finds_the_object() {
        assert_eq!(reply_json("{\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(
            reply_json("Here:\n```json\n{\"a\": 2}\n```\n").unwrap()["a"],
            2
        );
        assert_eq!(
            reply_json("Sure! {\"a\": 3} Hope it helps.").unwrap()["a"],
            3
        );
        assert!(reply_json("no json here").is_err());
        assert!(reply_json("[1, 2]").is_err());
    }

    #[test]
    fn cores_compare_steps() {
        assert_eq!(
            core("Search \"Maximum Overdrive director\"."),
            "maximum overdrive director"
        );
        assert_eq!(
            core("maximum  overdrive DIRECTOR"),
            "maximum overdrive director"
        );
    }
}
