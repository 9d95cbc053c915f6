//! The planner and reader messages (App. A) and the parsing of their replies.
//!
//! Templates are `data/prompts/run/{planner,reader}_{system,user}.txt`, built in and
//! overridable file by file from a directory (`--prompt-dir`). The user templates' place-
//! holders are `{question}`, `{history}`, `{observations}` (planner) and `{question}`,
//! `{documents}` (reader); any other text in braces (the JSON reply format) is left as is.
//! Substitution is one pass, so a question that contains `{history}` is not expanded again.

use std::path::Path;

use serde_json::Value;

use super::packets::{cut_record, PACKET_SIZE};
use crate::search::SearchRecord;
use ragstats_core::io::read_text;
use ragstats_core::{Error, Result};

/// The four templates and where each came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Templates {
    pub planner_system: String,
    pub planner_user: String,
    pub reader_system: String,
    pub reader_user: String,
    /// The source of each (`builtin` or the file path), in the order above.
    pub sources: [String; 4],
}

const FILES: [&str; 4] = [
    "planner_system.txt",
    "planner_user.txt",
    "reader_system.txt",
    "reader_user.txt",
];

impl Templates {
    /// The shipped templates.
    pub fn builtin() -> Self {
        Templates {
            planner_system: include_str!("../../../../data/prompts/run/planner_system.txt").into(),
            planner_user: include_str!("../../../../data/prompts/run/planner_user.txt").into(),
            reader_system: include_str!("../../../../data/prompts/run/reader_system.txt").into(),
            reader_user: include_str!("../../../../data/prompts/run/reader_user.txt").into(),
            sources: std::array::from_fn(|_| "builtin".to_string()),
        }
    }

    /// The shipped templates with every `dir/<name>.txt` that exists used instead.
    ///
    /// # Errors
    /// [`Error::Setting`] (`prompt_dir`) when `dir` is not a directory; [`Error::Io`] for an unreadable file;
    /// [`Error::Input`] for a user template missing one of its placeholders.
    pub fn with_dir(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::setting(
                "prompt_dir",
                format!(
                    "{}: not a directory (expected some of {})",
                    dir.display(),
                    FILES.join(", ")
                ),
            ));
        }
        let mut t = Templates::builtin();
        for (i, name) in FILES.iter().enumerate() {
            let p = dir.join(name);
            if !p.is_file() {
                continue;
            }
            let text = read_text(&p)?;
            let need: &[&str] = match i {
                1 => &["{question}", "{history}", "{observations}"],
                3 => &["{question}", "{documents}"],
                _ => &[],
            };
            if let Some(m) = need.iter().find(|n| !text.contains(**n)) {
                return Err(Error::input(&p, None, format!("missing placeholder {m}")));
            }
            match i {
                0 => t.planner_system = text,
                1 => t.planner_user = text,
                2 => t.reader_system = text,
                _ => t.reader_user = text,
            }
            t.sources[i] = p.display().to_string();
        }
        Ok(t)
    }

    /// The placeholders of the templates in use ([`template_placeholders`]): the planner's
    /// from its system and user templates, the reader's from its own.
    pub fn placeholders(&self) -> Placeholders {
        let src = |i: usize| self.source_name(i);
        let mut planner = template_placeholders(&self.planner_system, &src(0));
        let mut reader = template_placeholders(&self.reader_system, &src(2));
        for (set, more) in [
            (
                &mut planner,
                template_placeholders(&self.planner_user, &src(1)),
            ),
            (
                &mut reader,
                template_placeholders(&self.reader_user, &src(3)),
            ),
        ] {
            for p in more {
                if !set.iter().any(|q| q.norm == p.norm) {
                    set.push(p);
                }
            }
        }
        Placeholders { planner, reader }
    }

    /// The section labels of the reader's user template in use ([`section_labels`]):
    /// `Question:` and `Documents:` for the built-in one.
    pub fn reader_labels(&self) -> Vec<SectionLabel> {
        section_labels(&self.reader_user, &self.source_name(3))
    }

    /// How refusal reasons name template `i` of [`FILES`]: `builtin planner_user.txt`, or
    /// the path of the `--prompt-dir` file that replaced it.
    fn source_name(&self, i: usize) -> String {
        if self.sources[i] == "builtin" {
            format!("builtin {}", FILES[i])
        } else {
            self.sources[i].clone()
        }
    }

    /// The planner's messages for `question` after the queries `history` (in order), with
    /// `observations` = for each earlier query, the records of its list (the first
    /// [`PACKET_SIZE`] are shown, texts cut). Open passes no observations.
    pub fn planner(
        &self,
        question: &str,
        history: &[&str],
        observations: &[(&str, &[SearchRecord])],
    ) -> Vec<Value> {
        let history = if history.is_empty() {
            "(none)".to_string()
        } else {
            history
                .iter()
                .enumerate()
                .map(|(i, q)| format!("{}. {q}", i + 1))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let observations = if observations.is_empty() {
            "(none)".to_string()
        } else {
            observations
                .iter()
                .enumerate()
                .map(|(i, (q, recs))| {
                    let n = recs.len().min(PACKET_SIZE);
                    let docs = if n == 0 {
                        "(no results)".to_string()
                    } else {
                        format_documents(&recs[..n])
                    };
                    format!("Query {}: {q}\n{docs}", i + 1)
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        vec![
            message("system", &self.planner_system),
            message(
                "user",
                &fill(
                    &self.planner_user,
                    &[
                        ("question", question),
                        ("history", &history),
                        ("observations", &observations),
                    ],
                ),
            ),
        ]
    }

    /// The reader's messages for `question` and its final packet.
    pub fn reader(&self, question: &str, packet: &[SearchRecord]) -> Vec<Value> {
        let docs = if packet.is_empty() {
            "(none)".to_string()
        } else {
            format_documents(packet)
        };
        vec![
            message("system", &self.reader_system),
            message(
                "user",
                &fill(
                    &self.reader_user,
                    &[("question", question), ("documents", &docs)],
                ),
            ),
        ]
    }
}

/// A value of a JSON format example in a template (`...` in `{"query": "..."}`): a reply
/// whose query or answer is this text copied the example instead of filling it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// The value as the template writes it.
    pub text: String,
    /// Its [`normalize_placeholder`] form, which replies are compared with.
    pub norm: String,
    /// The template it is in: `builtin planner_user.txt` or the file's path.
    pub source: String,
}

/// The placeholders of the planner's templates and of the reader's, each set checked
/// against its own replies (an example value in the reader's prompt is not one the planner
/// saw).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placeholders {
    pub planner: Vec<Placeholder>,
    pub reader: Vec<Placeholder>,
}

/// Where a refused reply's `failure` starts: `run-audit` counts the steps and reads whose
/// failure has this prefix as copied placeholders.
pub const PLACEHOLDER_FAILURE: &str = "copied placeholder";

impl Placeholders {
    /// The planner placeholder `query` equals after normalisation, if any.
    pub fn planner_copy(&self, query: &str) -> Option<&Placeholder> {
        find_copy(&self.planner, query)
    }

    /// The reader placeholder `answer` equals after normalisation, if any.
    pub fn reader_copy(&self, answer: &str) -> Option<&Placeholder> {
        find_copy(&self.reader, answer)
    }
}

fn find_copy<'a>(set: &'a [Placeholder], reply: &str) -> Option<&'a Placeholder> {
    let n = normalize_placeholder(reply);
    (!n.is_empty())
        .then(|| set.iter().find(|p| p.norm == n))
        .flatten()
}

/// The `failure` of a reply (`what` = `query` or `answer`) that copied placeholder `p`.
pub fn placeholder_failure(what: &str, p: &Placeholder) -> String {
    format!(
        "{PLACEHOLDER_FAILURE} {:?} from {}: the {what} is the prompt's format example, not filled in",
        p.text, p.source
    )
}

/// The form in which replies and placeholders are compared: surrounding whitespace and
/// quotes (`"`, `'`, `` ` ``, curly quotes) removed, `…` read as `...`, one pair of enclosing
/// `<…>` or `[…]` removed (a model writing `your answer` for `<your answer>` copied it too),
/// whitespace collapsed, lower-cased; a text of dots only (`.`, `…`, `....`) is `...`.
pub fn normalize_placeholder(s: &str) -> String {
    const QUOTES: &[char] = &[
        '"', '\'', '`', '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}',
    ];
    let strip = |s: &str| -> String {
        s.trim()
            .trim_matches(|c: char| QUOTES.contains(&c) || c.is_whitespace())
            .to_string()
    };
    let mut t = strip(s).replace('\u{2026}', "...");
    for (a, b) in [('<', '>'), ('[', ']')] {
        if t.len() >= 2 && t.starts_with(a) && t.ends_with(b) {
            t = strip(&t[1..t.len() - 1]);
            break;
        }
    }
    if !t.is_empty() && t.chars().all(|c| c == '.') {
        return "...".into();
    }
    t.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Every value of a JSON format example in `template`: each `{…}` span without nested braces
/// that holds a `:` is read as `key: value` pairs separated by commas (as JSON, else
/// leniently: quotes optional), and each non-empty value is a placeholder. Substitution
/// markers such as `{question}` hold no `:` and are not examples.
pub fn template_placeholders(template: &str, source: &str) -> Vec<Placeholder> {
    let mut out: Vec<Placeholder> = Vec::new();
    let mut rest = template;
    while let Some(a) = rest.find('{') {
        let tail = &rest[a + 1..];
        let Some(b) = tail.find(['{', '}']) else {
            break;
        };
        if tail.as_bytes()[b] == b'{' {
            rest = &tail[b..];
            continue;
        }
        let inner = &tail[..b];
        rest = &tail[b + 1..];
        if !inner.contains(':') {
            continue;
        }
        let values: Vec<String> = match serde_json::from_str::<Value>(&format!("{{{inner}}}")) {
            Ok(Value::Object(m)) => m
                .values()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            _ => inner
                .split(',')
                .filter_map(|kv| kv.split_once(':').map(|(_, v)| v.to_string()))
                .collect(),
        };
        for v in values {
            let norm = normalize_placeholder(&v);
            if !norm.is_empty() && !out.iter().any(|p| p.norm == norm) {
                out.push(Placeholder {
                    text: v.trim().to_string(),
                    norm,
                    source: source.to_string(),
                });
            }
        }
    }
    out
}

/// A section label of a template (`Question:`): a reply line that starts with one lays out
/// the prompt again instead of answering it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionLabel {
    /// The label with its colon, as the template writes it.
    pub text: String,
    /// The template it is in: `builtin reader_user.txt` or the file's path.
    pub source: String,
}

/// The section labels of `template`: for each line, the text before its first `:` when that
/// is one to three words of letters, digits, `-`, `_` or `'` (`Question`, `Query history`)
/// and the colon ends the line or is followed by a space, with the colon. A line such as `Answer as {"answer": "..."}.` (a brace before the colon)
/// or a sentence is not a label.
pub fn section_labels(template: &str, source: &str) -> Vec<SectionLabel> {
    let mut out: Vec<SectionLabel> = Vec::new();
    for line in template.lines() {
        let Some((head, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        // `https://…`, `10:30`: a colon inside a word.
        if rest.starts_with(|c: char| !c.is_whitespace()) {
            continue;
        }
        let words: Vec<&str> = head.split_whitespace().collect();
        let wordy = |w: &&str| {
            w.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '\''))
        };
        if words.is_empty() || words.len() > 3 || head.ends_with(char::is_whitespace) {
            continue;
        }
        if !words.iter().all(wordy) || !head.chars().any(char::is_alphabetic) {
            continue;
        }
        let text = format!("{}:", words.join(" "));
        if !out.iter().any(|l| l.text.eq_ignore_ascii_case(&text)) {
            out.push(SectionLabel {
                text,
                source: source.to_string(),
            });
        }
    }
    out
}

/// The lines of a reader prompt that its reply's first-line fallback must not copy: every
/// non-empty line (trimmed, whitespace collapsed) of `messages`, except the lines of the
/// packet's document texts (a document line that is the answer is evidence, not an echo).
pub fn echo_lines(messages: &[Value], packet: &[SearchRecord]) -> Vec<String> {
    let collapse = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let evidence: std::collections::HashSet<String> = packet
        .iter()
        .flat_map(|r| {
            let r = cut_record(r.clone());
            r.text.lines().map(collapse).collect::<Vec<_>>()
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    for m in messages {
        let Some(content) = m.get("content").and_then(Value::as_str) else {
            continue;
        };
        for l in content.lines().map(collapse) {
            if !l.is_empty() && !evidence.contains(&l) && !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// What a reader reply is checked against: the placeholders of the reader's templates
/// ([`Placeholders::reader`]), the section labels of its user template
/// ([`Templates::reader_labels`]), the prompt's lines ([`echo_lines`]), and whether the reply
/// was cut at the token cap.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReaderCheck<'a> {
    pub placeholders: &'a [Placeholder],
    pub labels: &'a [SectionLabel],
    pub prompt_lines: &'a [String],
    pub truncated: bool,
}

/// Where the `failure` of a reply whose fallback line copies the prompt starts:
/// `run-audit` counts them as prompt echoes.
pub const ECHO_FAILURE: &str = "copied prompt";

fn message(role: &str, content: &str) -> Value {
    serde_json::json!({"role": role, "content": content})
}

/// Replaces each `{name}` of `vars` in one left-to-right pass.
pub fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    'outer: while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        for (name, value) in vars {
            let tok = format!("{{{name}}}");
            if tail.starts_with(&tok) {
                out.push_str(value);
                rest = &tail[tok.len()..];
                continue 'outer;
            }
        }
        out.push('{');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

/// Documents as the planner and reader see them: a numbered block per record with its
/// rank, id, URL, title and character count, then its text cut to 5,000 characters. A
/// masked record keeps its slot with no content.
pub fn format_documents(records: &[SearchRecord]) -> String {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.masked {
                return format!("[{}] (excluded: benchmark URL)", i + 1);
            }
            let r = cut_record(r.clone());
            format!(
                "[{}] id: {}\nurl: {}\ntitle: {}\nchars: {}\n{}",
                i + 1,
                r.id,
                r.url,
                r.title,
                r.text.chars().count(),
                r.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The mean characters a document adds to a prompt: its [`format_documents`] block (text
/// cut to 5,000 characters) and the blank line that separates blocks; `None` for no
/// records.
pub fn mean_document_chars(records: &[SearchRecord]) -> Option<f64> {
    if records.is_empty() {
        return None;
    }
    let total: usize = records
        .iter()
        .map(|r| format_documents(std::slice::from_ref(r)).chars().count() + 2)
        .sum();
    Some(total as f64 / records.len() as f64)
}

/// The JSON objects in `text`, in order: the whole text when it is one; else every object
/// that starts at a `{` outside an object already found (prose, a ``` fence or an echo of
/// the prompt around them is skipped).
fn json_objects(text: &str) -> Vec<serde_json::Map<String, Value>> {
    let t = text.trim();
    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(t) {
        return vec![m];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = t[i..].find('{') {
        let start = i + off;
        let mut values = serde_json::Deserializer::from_str(&t[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(m))) => {
                out.push(m);
                i = start + values.byte_offset();
            }
            _ => i = start + 1,
        }
    }
    out
}

/// The planning failure of a reply with no JSON object ([`read_query`]); the planner has no
/// fallback, so a reply cut before its object closed gives this too.
pub const NO_PLANNER_JSON: &str = "no JSON object in the planner reply";

/// The query of a planner reply, or why there is none (a planning failure): the first
/// JSON object's `query` (whitespace collapsed) that is not one of `placeholders`
/// ([`Placeholders::planner`]) and has a letter or digit. When every `query` found is a
/// placeholder, empty, without a letter or digit, or not a string, the reason is the first
/// one's.
pub fn read_query(text: &str, placeholders: &[Placeholder]) -> std::result::Result<String, String> {
    let objects = json_objects(text);
    if objects.is_empty() {
        return Err(NO_PLANNER_JSON.into());
    }
    let mut why: Option<String> = None;
    for obj in &objects {
        let reason = match obj.get("query") {
            Some(Value::String(q)) => {
                let q = q.split_whitespace().collect::<Vec<_>>().join(" ");
                if q.is_empty() {
                    "empty query".to_string()
                } else if let Some(p) = find_copy(placeholders, &q) {
                    placeholder_failure("query", p)
                } else if !q.chars().any(char::is_alphanumeric) {
                    // `?`, `-`: a garbled copy of the example, with nothing a search could
                    // match (the analyser keeps letters and digits only).
                    format!("query {q:?} has no letter or digit")
                } else {
                    return Ok(q);
                }
            }
            Some(_) => "'query' is not a string".to_string(),
            None => continue,
        };
        why.get_or_insert(reason);
    }
    Err(why.unwrap_or_else(|| "no 'query' field in the planner reply".into()))
}

/// [`read_query`] with no placeholders.
pub fn parse_query(text: &str) -> std::result::Result<String, String> {
    read_query(text, &[])
}

/// The answer of a reader reply, or why there is none: the first JSON object's `answer`
/// (trimmed; a number or boolean as its JSON text) that is not one of `check.placeholders`,
/// used also when the reply was cut at the cap (the object is complete); else, when the
/// reply has no such field, its first non-empty line (the fallback), `UNKNOWN` for an empty
/// reply. The second value says whether the JSON form was found.
///
/// Refused (the reason): a reply whose every `answer` is a placeholder (an echo of the
/// prompt's `{"answer": "..."}`), or whose fallback line is one; a fallback line that copies
/// the prompt ([`ECHO_FAILURE`]: it starts with a section label of `check.labels`, any case,
/// or equals a line of `check.prompt_lines`, whitespace collapsed); and, for a cut reply, a
/// fallback line the cut ended (no line break after it).
pub fn read_answer(
    text: &str,
    check: &ReaderCheck<'_>,
) -> std::result::Result<(String, bool), String> {
    let mut copied: Option<&Placeholder> = None;
    for obj in json_objects(text) {
        let a = match obj.get("answer") {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
            _ => continue,
        };
        match find_copy(check.placeholders, &a) {
            Some(p) => {
                copied.get_or_insert(p);
            }
            None => return Ok((a, true)),
        }
    }
    let first = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i, l.trim()))
        .find(|(_, l)| !l.is_empty());
    let Some((i, line)) = first else {
        return match copied {
            Some(p) => Err(placeholder_failure("answer", p)),
            None => Ok(("UNKNOWN".into(), false)),
        };
    };
    if let Some(p) = copied.or_else(|| find_copy(check.placeholders, line)) {
        return Err(placeholder_failure("answer", p));
    }
    if let Some(why) = echo_failure(line, check) {
        return Err(why);
    }
    // `lines()` drops a final line break: the line ended before the cut only when a line
    // break follows it in the text.
    if check.truncated && text.lines().nth(i + 1).is_none() && !text.ends_with('\n') {
        return Err(
            "the reply was cut at max_tokens (finish_reason length) inside its first line, with no JSON answer"
                .into(),
        );
    }
    Ok((line.to_string(), false))
}

/// Why the fallback `line` copies the prompt, if it does.
fn echo_failure(line: &str, check: &ReaderCheck<'_>) -> Option<String> {
    let shown = ragstats_core::io::clip(line);
    let lower = line.to_lowercase();
    if let Some(l) = check
        .labels
        .iter()
        .find(|l| lower.starts_with(&l.text.to_lowercase()))
    {
        return Some(format!(
            "{ECHO_FAILURE}: the answer line {shown:?} starts with the section label {:?} of {}; the reply lays out the prompt again instead of answering",
            l.text, l.source
        ));
    }
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    check.prompt_lines.contains(&collapsed).then(|| {
        format!(
            "{ECHO_FAILURE}: the answer line {shown:?} is a line of the prompt sent, not an answer"
        )
    })
}

/// [`read_answer`] with no placeholders, labels or prompt lines (it then always gives an
/// answer).
pub fn parse_answer(text: &str) -> (String, bool) {
    read_answer(text, &ReaderCheck::default()).unwrap_or_else(|_| ("UNKNOWN".into(), false))
}

/// Whether an answer is the reader's abstention (`UNKNOWN`, any case, surrounding
/// punctuation ignored).
pub fn is_unknown(answer: &str) -> bool {
    answer
        .trim_matches(|c: char| !c.is_alphanumeric())
        .eq_ignore_ascii_case("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, text: &str) -> SearchRecord {
        SearchRecord {
            id: id.into(),
            url: format!("https://w/{id}"),
            title: format!("T{id}"),
            text: text.into(),
            score: None,
            masked: false,
        }
    }

    #[test]
    fn planner_messages_first_step_and_adaptive_observations() {
        let t = Templates::builtin();
        let m = t.planner("Who {history}?", &[], &[]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["role"], "system");
        assert_eq!(m[0]["content"], t.planner_system.as_str());
        assert_eq!(
            m[1]["content"],
            "Question: Who {history}?\n\nQuery history:\n(none)\n\nObservations:\n(none)\n\nWrite the next search query as {\"query\": \"...\"}.\n"
        );
        let mut masked = rec("m", "");
        masked.masked = true;
        let l1 = vec![rec("a", "alpha"), masked];
        let l2: Vec<SearchRecord> = (0..7).map(|i| rec(&format!("b{i}"), "x")).collect();
        let m = t.planner("Q?", &["one", "two"], &[("one", &l1), ("two", &l2)]);
        let user = m[1]["content"].as_str().unwrap();
        assert!(user.contains("Query history:\n1. one\n2. two\n\nObservations:\nQuery 1: one\n[1] id: a\nurl: https://w/a\ntitle: Ta\nchars: 5\nalpha\n\n[2] (excluded: benchmark URL)\n\nQuery 2: two\n[1] id: b0"));
        // Five records of each list are shown.
        assert!(user.contains("[5] id: b4") && !user.contains("b5"));
    }

    #[test]
    fn reader_messages_show_the_packet() {
        let t = Templates::builtin();
        let m = t.reader("Q?", &[rec("a", "alpha")]);
        assert_eq!(
            m[1]["content"],
            "Question: Q?\n\nDocuments:\n[1] id: a\nurl: https://w/a\ntitle: Ta\nchars: 5\nalpha\n\nAnswer as {\"answer\": \"...\"}.\n"
        );
        assert!(t.reader("Q?", &[])[1]["content"]
            .as_str()
            .unwrap()
            .contains("Documents:\n(none)\n"));
    }

    #[test]
    fn replies_are_parsed_and_failures_named() {
        assert_eq!(
            parse_query(r#"{"query": "  Ed  Wood\nnationality "}"#),
            Ok("Ed Wood nationality".into())
        );
        assert_eq!(
            parse_query("Sure!\n```json\n{\"query\": \"x y\"}\n```"),
            Ok("x y".into())
        );
        assert_eq!(
            parse_query("Ed Wood"),
            Err("no JSON object in the planner reply".into())
        );
        assert_eq!(
            parse_query(r#"{"q": "x"}"#),
            Err("no 'query' field in the planner reply".into())
        );
        assert_eq!(parse_query(r#"{"query": " "}"#), Err("empty query".into()));
        assert_eq!(parse_answer(r#"{"answer": " yes "}"#), ("yes".into(), true));
        assert_eq!(parse_answer(r#"{"answer": 1998}"#), ("1998".into(), true));
        assert_eq!(parse_answer("\n  Paris\nbecause"), ("Paris".into(), false));
        assert_eq!(parse_answer(""), ("UNKNOWN".into(), false));
        assert!(is_unknown("UNKNOWN") && is_unknown("unknown.") && !is_unknown("unknowns"));
    }

    #[test]
    fn placeholders_come_from_the_templates_in_use() {
        let t = Templates::builtin();
        let p = t.placeholders();
        let texts = |v: &[Placeholder]| v.iter().map(|p| p.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&p.planner), ["<your next search query>", "..."]);
        assert_eq!(texts(&p.reader), ["<your answer>", "..."]);
        assert_eq!(p.planner[0].source, "builtin planner_system.txt");
        assert_eq!(p.planner[1].source, "builtin planner_user.txt");
        // Copies, whatever their case, quotes, ellipsis character or brackets.
        for copy in [
            "...",
            " \"...\" ",
            "\u{2026}",
            "....",
            "<your next search query>",
            "Your next  search query",
            "[your next search query]",
        ] {
            assert!(p.planner_copy(copy).is_some(), "{copy:?}");
        }
        assert_eq!(p.planner_copy("\u{2026}").unwrap().text, "...");
        assert!(p.reader_copy("<YOUR ANSWER>").is_some());
        // Real queries and answers, and the reader's placeholder on the planner side.
        for real in ["Ed Wood", "who directed ...?", "your", "", "<your answer>"] {
            assert!(p.planner_copy(real).is_none(), "{real:?}");
        }
        assert!(p.reader_copy("Paris").is_none() && p.reader_copy("UNKNOWN").is_none());
        let f = placeholder_failure("query", p.planner_copy("...").unwrap());
        assert_eq!(
            f,
            "copied placeholder \"...\" from builtin planner_user.txt: the query is the prompt's format example, not filled in"
        );
        assert!(f.starts_with(PLACEHOLDER_FAILURE));
    }

    #[test]
    fn replies_that_copy_or_echo_the_format_example_are_refused() {
        let p = Templates::builtin().placeholders();
        let reader = ReaderCheck {
            placeholders: &p.reader,
            ..ReaderCheck::default()
        };
        let copied_q = "copied placeholder \"...\" from builtin planner_user.txt: the query is the prompt's format example, not filled in";
        let copied_a = "copied placeholder \"...\" from builtin reader_user.txt: the answer is the prompt's format example, not filled in";
        // The issue's replies, exactly.
        assert_eq!(
            read_query(r#"{"query": "..."}"#, &p.planner),
            Err(copied_q.into())
        );
        assert_eq!(
            read_answer(r#"{"answer": "..."}"#, &reader),
            Err(copied_a.into())
        );
        assert_eq!(
            read_query(r#"{"query": "<your next search query>"}"#, &p.planner),
            Err("copied placeholder \"<your next search query>\" from builtin planner_system.txt: the query is the prompt's format example, not filled in".into())
        );
        // An echo of the prompt (as gemma3-270m writes them): every object in it is the
        // template's example, so the reply is refused, not read by its first line.
        let echo = "Question: Who is older?\n\nQuery history:\n(none)\n\nObservations:\n(none)\n\nWrite the next search query as {\"query\": \"...\"}.\n\nQuestion: Who is older?\nWrite the next search query as {\"query\": \"...\"}.";
        assert_eq!(read_query(echo, &p.planner), Err(copied_q.into()));
        let echo = "Question: Who?\n\nDocuments:\n(none)\n\nAnswer as {\"answer\": \"...\"}.\nmodel\nAnswer as {\"answer\": \"...\"}.";
        assert_eq!(read_answer(echo, &reader), Err(copied_a.into()));
        // Without placeholders, the echoed example would be read as the answer.
        assert_eq!(parse_answer(echo), ("...".into(), true));
        // A real query or answer after a copied example is used.
        assert_eq!(
            read_query(r#"as {"query": "..."}: {"query": "Ed Wood"}"#, &p.planner),
            Ok("Ed Wood".into())
        );
        assert_eq!(
            read_answer(
                r#"{"answer": "<your answer>"} {"answer": "Paris"}"#,
                &reader
            ),
            Ok(("Paris".into(), true))
        );
        // A bare placeholder line is refused too; an ordinary first line is still read.
        assert!(read_answer("<your answer>\n", &reader).is_err());
        assert_eq!(
            read_answer("Paris\nbecause", &reader),
            Ok(("Paris".into(), false))
        );
        // Objects after prose, or beside a stray brace, are found.
        assert_eq!(
            read_query("Sure } {\"query\": \"x\"} hope that helps}", &p.planner),
            Ok("x".into())
        );
        assert_eq!(
            read_query(r#"{"query": ""} {"q": 1}"#, &p.planner),
            Err("empty query".into())
        );
        // A real reply (planner.jsonl): a garbled copy with nothing to search.
        assert_eq!(
            read_query(r#"as {"query": "?"}, which"#, &p.planner),
            Err("query \"?\" has no letter or digit".into())
        );
        assert_eq!(
            read_query(r#"{"query": "?"} {"query": "1998 film"}"#, &p.planner),
            Ok("1998 film".into())
        );
    }

    /// Record `i` of tests/fixtures/real/reader.jsonl: the messages sent, the reply and
    /// whether it was cut (finish_reason length).
    fn real_reader(i: usize) -> (Vec<Value>, String, bool) {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/reader.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let r: Value = serde_json::from_str(text.lines().nth(i).unwrap()).unwrap();
        let choice = &r["response"]["choices"][0];
        (
            r["request"]["messages"].as_array().unwrap().clone(),
            choice["message"]["content"].as_str().unwrap().to_string(),
            choice["finish_reason"] == "length",
        )
    }

    #[test]
    fn section_labels_come_from_the_template_in_use() {
        let t = Templates::builtin();
        let texts = |v: Vec<SectionLabel>| v.into_iter().map(|l| l.text).collect::<Vec<_>>();
        assert_eq!(texts(t.reader_labels()), ["Question:", "Documents:"]);
        assert_eq!(t.reader_labels()[0].source, "builtin reader_user.txt");
        // The planner's template has a two-word label; the format line is none.
        assert_eq!(
            texts(section_labels(&t.planner_user, "p")),
            ["Question:", "Query history:", "Observations:"]
        );
        // Sentences, braces before the colon and a colon with nothing before it are not labels.
        assert!(section_labels(
            "Reply with a JSON object only, exactly: {\"answer\": \"x\"}\nAnswer as {\"answer\": \"...\"}.\n: x\nsee https://a",
            "s"
        )
        .is_empty());
        // A --prompt-dir reader template replaces the labels.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("reader_user.txt");
        std::fs::write(
            &f,
            "Q: {question}\n  Evidence list:\n{documents}\nReply now.",
        )
        .unwrap();
        let t = Templates::with_dir(dir.path()).unwrap();
        let labels = t.reader_labels();
        assert_eq!(texts(labels.clone()), ["Q:", "Evidence list:"]);
        assert_eq!(labels[0].source, f.display().to_string());
        let check = ReaderCheck {
            labels: &labels,
            ..ReaderCheck::default()
        };
        assert!(read_answer("evidence LIST: none\n", &check)
            .unwrap_err()
            .starts_with(ECHO_FAILURE));
        // "Question:" is not a label of this template.
        assert_eq!(
            read_answer("Question: who?\n", &check),
            Ok(("Question: who?".into(), false))
        );
    }

    #[test]
    fn real_replies_that_lay_out_the_prompt_again_are_refused() {
        // The 4 recorded reader replies with no `{"answer": "..."}`: invented questions in
        // the prompt's layout, which the first-line fallback read as answers.
        let t = Templates::builtin();
        let (p, labels) = (t.placeholders(), t.reader_labels());
        for (i, first) in [
            (11, "Question: Which of the following is a \"true\" statement?"),
            (19, "Question: What is the official sport of Canada?"),
            (32, "Question: Who was the first black woman to be featured in a magazine?"),
            (
                38,
                "Question: Which actor did the character \"Fletcher\" in The Little Red Rooster play?",
            ),
        ] {
            let (messages, reply, cut) = real_reader(i);
            assert!(cut, "record {i} was cut at max_tokens");
            let lines = echo_lines(&messages, &[]);
            let check = ReaderCheck {
                placeholders: &p.reader,
                labels: &labels,
                prompt_lines: &lines,
                truncated: cut,
            };
            assert_eq!(
                read_answer(&reply, &check),
                Err(format!(
                    "copied prompt: the answer line {:?} starts with the section label \"Question:\" of builtin reader_user.txt; the reply lays out the prompt again instead of answering",
                    ragstats_core::io::clip(first)
                )),
                "record {i}"
            );
            // Before: read as the answer.
            assert_eq!(parse_answer(&reply), (first.to_string(), false));
        }
        // A recorded reply that holds the placeholder is still refused as that.
        let (messages, reply, _) = real_reader(0);
        assert!(reply.contains("{\"answer\": \"...\"}"));
        let lines = echo_lines(&messages, &[]);
        let check = ReaderCheck {
            placeholders: &p.reader,
            labels: &labels,
            prompt_lines: &lines,
            truncated: true,
        };
        assert!(read_answer(&reply, &check)
            .unwrap_err()
            .starts_with(PLACEHOLDER_FAILURE));
    }

    #[test]
    fn a_fallback_line_equal_to_a_prompt_line_is_refused_but_not_a_document_line() {
        let t = Templates::builtin();
        let packet = [rec("a", "Founded in Paris.\nParis\n1998")];
        let messages = t.reader("Where?", &packet);
        let lines = echo_lines(&messages, &packet);
        // The system and user templates' lines and the document headers, not its text.
        assert!(lines.contains(&"title: Ta".to_string()));
        assert!(lines.contains(&"Answer as {\"answer\": \"...\"}.".to_string()));
        assert!(!lines.iter().any(|l| l == "Paris" || l == "1998"));
        let labels = t.reader_labels();
        let check = ReaderCheck {
            labels: &labels,
            prompt_lines: &lines,
            ..ReaderCheck::default()
        };
        let echo = read_answer(
            "You answer questions   from retrieved evidence. Use only the documents supplied.\nParis",
            &check,
        )
        .unwrap_err();
        assert_eq!(
            echo,
            "copied prompt: the answer line \"You answer questions   from retrieved evidence. Use only the documents supplied.\" is a line of the prompt sent, not an answer"
        );
        assert!(read_answer("title: Ta\n", &check).is_err());
        // An answer that is a line of a document's text is evidence, used.
        assert_eq!(read_answer("Paris\n", &check), Ok(("Paris".into(), false)));
        // With no packet, the empty documents' "(none)" is a prompt line.
        let none = t.reader("Where?", &[]);
        let lines = echo_lines(&none, &[]);
        let check = ReaderCheck {
            prompt_lines: &lines,
            ..ReaderCheck::default()
        };
        assert!(read_answer("(none)", &check)
            .unwrap_err()
            .starts_with(ECHO_FAILURE));
        // The JSON form is never refused as an echo.
        assert_eq!(
            read_answer("{\"answer\": \"(none)\"}", &check),
            Ok(("(none)".into(), true))
        );
    }

    #[test]
    fn a_cut_reply_is_used_when_its_answer_is_complete() {
        let check = ReaderCheck {
            truncated: true,
            ..ReaderCheck::default()
        };
        // A complete object, then the cut: used.
        assert_eq!(
            read_answer("{\"answer\": \"Paris\"} because the documents say", &check),
            Ok(("Paris".into(), true))
        );
        // A first line that ended before the cut: used.
        assert_eq!(
            read_answer("\n Paris \nbecause the", &check),
            Ok(("Paris".into(), false))
        );
        assert_eq!(read_answer("Paris\n", &check), Ok(("Paris".into(), false)));
        // The cut inside the only line (an unclosed object is no object): refused.
        let why = "the reply was cut at max_tokens (finish_reason length) inside its first line, with no JSON answer";
        assert_eq!(read_answer("{\"answer\": \"Par", &check), Err(why.into()));
        assert_eq!(read_answer("  The answer is Par", &check), Err(why.into()));
        // Not cut: the same line is read.
        assert_eq!(
            read_answer("The answer is Par", &ReaderCheck::default()),
            Ok(("The answer is Par".into(), false))
        );
    }

    #[test]
    fn placeholders_of_a_prompt_dir_template() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("reader_user.txt"),
            "Q: {question}\nD: {documents}\nReply {answer: ANSWER HERE, note: 'optional'} or {\"answer\": 42}.",
        )
        .unwrap();
        let t = Templates::with_dir(dir.path()).unwrap();
        let p = t.placeholders();
        let texts: Vec<&str> = p.reader.iter().map(|p| p.text.as_str()).collect();
        // The built-in system template's, then the file's (lenient and JSON examples);
        // `{question}` and `{documents}` are substitutions, not examples.
        assert_eq!(texts, ["<your answer>", "ANSWER HERE", "'optional'", "42"]);
        assert_eq!(
            p.reader[1].source,
            dir.path().join("reader_user.txt").display().to_string()
        );
        assert!(p.reader_copy("answer here").is_some() && p.reader_copy("optional").is_some());
        // The built-in user template is replaced, so its "..." is no longer a placeholder.
        assert!(p.reader_copy("...").is_none());
        assert_eq!(p.planner.len(), 2);
    }

    #[test]
    fn mean_document_chars_is_the_shown_block() {
        let r = rec("a", "alpha");
        // "[1] id: a\nurl: https://w/a\ntitle: Ta\nchars: 5\nalpha": 10 + 17 + 10 + 9 + 5 = 51
        // characters, + 2 for the blank line.
        assert_eq!(
            format_documents(std::slice::from_ref(&r)).chars().count(),
            51
        );
        let long = rec("b", &"é".repeat(6_000));
        let shown = format_documents(std::slice::from_ref(&long))
            .chars()
            .count();
        // Cut to 5,000 characters, counted as such ("chars: 5000").
        assert_eq!(shown, 51 - 5 + 3 + 5_000);
        assert_eq!(
            mean_document_chars(&[r, long]),
            Some((53.0 + shown as f64 + 2.0) / 2.0)
        );
        assert_eq!(mean_document_chars(&[]), None);
    }

    #[test]
    fn fill_is_one_pass() {
        assert_eq!(
            fill("{a}-{b}-{c}", &[("a", "{b}"), ("b", "B")]),
            "{b}-B-{c}"
        );
    }
}
