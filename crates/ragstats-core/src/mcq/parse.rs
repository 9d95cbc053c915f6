//! Reading the chosen option labels out of what a model wrote.
//!
//! A response with `finish_reason` `length` is [`Failure::Truncated`] before any step,
//! whatever it holds. The prompts ask for the answer on the reply's **final** line, and a
//! reply cut by the token limit has no final line: an `Answer:` or `\boxed{…}` before the
//! cut belongs to text the model had not finished (a weak model's cut replies hold echoed
//! format lines, invented option lists and invented Q&A — issue #30), so it is never read.
//!
//! Otherwise, steps in order (docs/mcq.md "How answers are read" has the user-facing
//! version with an example per rule):
//!
//! 1. `<think>…</think>` blocks are removed (an unopened `…</think>` is cut at the closing
//!    tag, an unclosed `<think>` runs to the end).
//! 2. Normalisation: full-width forms (`：，；（）Ａ`) become ASCII; Markdown emphasis and
//!    code marks (`*`, `__`, `` ` ``) and `$` are removed; `\boxed{X}`, `\text{X}`,
//!    `\textbf{X}`, `\mathrm{X}`, `\mathbf{X}`, `\fbox{X}` become `X`.
//! 3. The answer segment is the text after the **last** answer marker — `Answer:`,
//!    `answer is`, `answers are`, `answer =`, `Answer (X)`, `answer - X`, `Final answer` at
//!    the end of a line, `答案：`, `答案是`, `答案为` (case-insensitive) — up to the end of that
//!    line, or the next non-empty line when the marker ends its line. A `\boxed{…}` after the
//!    last marker wins over it. With neither, the last non-empty line is the segment, read
//!    strictly (it must be nothing but an answer).
//! 4. With the prompt known ([`Context::prompt`]), an answer line copied from a prompt line
//!    that holds a marker, or equal to the answer of a format example there, fails.
//! 5. The segment is read as a list of labels: leading filler words (`the correct options
//!    are`, `选项`) are skipped; labels are separated by spaces, `, ; / & + 、 ( ) [ ] . :`
//!    and the words `and`, `和`, `与`, `及`, `以及`; a run of distinct labels written
//!    together (`ACD`) counts; lower-case letters count when they are single letters that
//!    name options. The list ends at the end of the segment, at punctuation followed by
//!    text (`B. Because…`, `B (the official page)`), or at an explaining word (`are`,
//!    `because`, …). A list followed by `or` (`A or B`, `A, C, or D`, `A或B`) is ambiguous
//!    and fails; so does a list that runs into other text without punctuation (`A lot
//!    of`). Upper-case letters that name no option are dropped (only labels that exist
//!    count); if none is left the parse fails.
//! 6. Otherwise, after a marker, options whose text the segment quotes (matched on words,
//!    case folded) are the answer; without a marker only a response that is, as a whole,
//!    one option's text.
//! 7. Otherwise `none`, `no option`, `n/a`, `[]`, `无`, `没有`, `都不` mean the empty answer
//!    (without a marker: only a response that is nothing but such a word) — accepted only
//!    for items that allow it.
//! 8. Anything else is a parse failure with a reason.

use serde::Serialize;

/// A successful parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parsed {
    /// Chosen labels in option order (may be empty for items that allow it).
    pub labels: Vec<String>,
    /// `letters`, `option_text` or `none`.
    pub how: &'static str,
    /// Letters that named no option and were dropped, if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
}

/// What is known about a response besides its text.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The prompt the response answers: an answer line copied from it is refused.
    pub prompt: Option<&'a str>,
    /// `choices[0].finish_reason`: `length` means the text was cut off, and is never read.
    pub finish_reason: Option<&'a str>,
}

/// Why no answer was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The text holds no readable answer (reason).
    Unreadable(String),
    /// The text was cut off (`finish_reason` `length`), so it has no final answer line.
    Truncated(String),
}

impl Failure {
    /// The one-line reason.
    pub fn reason(&self) -> &str {
        match self {
            Failure::Unreadable(s) | Failure::Truncated(s) => s,
        }
    }
}

/// Parses `text` against options `labels` (presentation order) with texts `texts`, without
/// knowing the prompt or how the generation ended ([`parse_response`] with no context).
///
/// # Errors
/// A one-line reason when no answer can be read.
pub fn parse_answer(
    text: &str,
    labels: &[String],
    texts: &[String],
    allow_empty: bool,
) -> Result<Parsed, String> {
    parse_response(text, labels, texts, allow_empty, &Context::default())
        .map_err(|f| f.reason().to_string())
}

/// Parses `text` as [`parse_answer`] does, and also: an answer line that copies a line of
/// `ctx.prompt` holding an answer marker (or the answer of a format example in it) is
/// refused, and a response cut off by the token limit (`finish_reason` `length`) is never
/// read: it has no final answer line (module docs).
///
/// # Errors
/// [`Failure::Truncated`] for every cut-off response;
/// [`Failure::Unreadable`] for any other response without a readable answer.
pub fn parse_response(
    text: &str,
    labels: &[String],
    texts: &[String],
    allow_empty: bool,
    ctx: &Context<'_>,
) -> Result<Parsed, Failure> {
    let body = strip_think(text);
    let (norm, boxed) = normalize(&body);
    let marker = find_marker(&norm);
    if ctx.finish_reason == Some("length") {
        return Err(Failure::Truncated(
            if marker.is_some() || !boxed.is_empty() {
                format!("{CUT}; the answer marker before the cut is not read")
            } else {
                CUT.to_string()
            },
        ));
    }
    let (segment, strict) = match (marker, boxed.last()) {
        (Some(m), Some(&(bpos, ref inner))) if bpos > m => (inner.clone(), false),
        (Some(m), _) => {
            let seg = segment_from(&norm, m);
            if let Some(p) = ctx.prompt {
                if let Some(line) = copies_prompt(&norm, m, &seg, p) {
                    return Err(Failure::Unreadable(format!(
                        "the answer line copies the prompt's {:?}",
                        snippet(&line, 60)
                    )));
                }
            }
            (seg, false)
        }
        (None, Some((_, inner))) => (inner.clone(), false),
        (None, None) => match norm.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(l) => (l.to_string(), true),
            None => return Err(Failure::Unreadable("empty response".into())),
        },
    };
    let fail = |s: String| Err(Failure::Unreadable(s));
    let seg = segment.trim();
    if seg.is_empty() {
        return fail("the answer line is empty".into());
    }
    let letters = match read_letters(seg, labels, strict) {
        Err(Ambiguous) => {
            return fail(format!(
                "answer {:?} joins labels with \"or\" (ambiguous)",
                snippet(seg, 60)
            ))
        }
        Ok(l) => l,
    };
    if let Some((found, dropped)) = &letters {
        if !found.is_empty() {
            return Ok(Parsed {
                labels: order(found, labels),
                how: "letters",
                dropped: dropped.clone(),
            });
        }
    }
    // Without a marker, option text counts only when the whole response is one option's
    // text: a closing question or remark that mentions an option is not an answer.
    let quoted = if strict {
        let whole = words(&norm);
        (0..texts.len())
            .filter(|&j| whole.trim().len() >= 2 && words(&texts[j]) == whole)
            .filter_map(|j| labels.get(j).cloned())
            .collect()
    } else {
        match_texts(seg, labels, texts)
    };
    if !quoted.is_empty() {
        return Ok(Parsed {
            labels: order(&quoted, labels),
            how: "option_text",
            dropped: vec![],
        });
    }
    let none = if strict {
        norm.trim() == seg && says_none_exactly(seg)
    } else {
        says_none(seg)
    };
    if none {
        return if allow_empty {
            Ok(Parsed {
                labels: vec![],
                how: "none",
                dropped: vec![],
            })
        } else {
            fail("says none of the options, but this item's answer is never empty".into())
        };
    }
    if let Some((_, dropped)) = letters.filter(|(_, d)| !d.is_empty()) {
        return fail(format!(
            "letter(s) {} name no option (options: {})",
            dropped.join(", "),
            labels.join(", ")
        ));
    }
    fail(format!(
        "{} {:?} is not a list of option labels",
        if strict {
            "no answer marker; the last line"
        } else {
            "answer"
        },
        snippet(seg, 60)
    ))
}

/// Why a reply cut by the token limit is not read.
const CUT: &str = "cut off (finish_reason length) before its final answer line";

/// Whitespace collapsed, trimmed, trailing `.` removed: how copied lines are compared.
fn squash(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '。'])
        .to_string()
}

/// The prompt line the response's answer copies, if it does: the response's marker line
/// equals a prompt line that holds a marker, or its answer equals the answer of a format
/// example in the prompt (a marker on a line saying `example` or `e.g.`).
fn copies_prompt(norm: &str, m: usize, seg: &str, prompt: &str) -> Option<String> {
    let line_start = norm[..m].rfind('\n').map_or(0, |i| i + 1);
    let line_end = norm[m..].find('\n').map_or(norm.len(), |i| m + i);
    let line = squash(&norm[line_start..line_end]);
    let seg = squash(seg);
    let (p, _) = normalize(prompt);
    for pl in p.lines() {
        let starts = marker_starts(pl);
        if starts.is_empty() {
            continue;
        }
        if squash(pl) == line {
            return Some(pl.trim().to_string());
        }
        let lower = pl.to_ascii_lowercase();
        if (lower.contains("example") || lower.contains("e.g."))
            && starts.iter().any(|&s| squash(&pl[s..]) == seg)
        {
            return Some(pl.trim().to_string());
        }
    }
    None
}

/// Whether a reply echoes its prompt instead of answering: a line of it repeats a prompt
/// line of at least 20 characters that is not an option line (`A. …`), whitespace collapsed
/// and case ignored; or it writes a `<placeholder>` of the prompt (`<letters>`). A weak
/// model's cut replies are mostly such echoes (118 of gemma3-270m's 135, issue #51): more
/// room to write only lets it copy more.
pub fn echoes_prompt(text: &str, prompt: &str) -> bool {
    let line = |l: &str| {
        l.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let option_line = |l: &str| {
        let l = l.strip_prefix('(').unwrap_or(l);
        let mut c = l.chars();
        matches!(
            (c.next(), c.find(|x| *x != ' ')),
            (Some(a), Some('.' | ')')) if a.is_ascii_alphabetic()
        )
    };
    let prompt_lines: std::collections::HashSet<String> = prompt
        .lines()
        .map(line)
        .filter(|l| l.chars().count() >= 20 && !option_line(l.as_str()))
        .collect();
    if text.lines().map(line).any(|l| prompt_lines.contains(&l)) {
        return true;
    }
    placeholders(prompt)
        .iter()
        .any(|p| text.contains(p.as_str()))
}

/// The `<placeholder>`s of a prompt: `<` an ASCII letter, then up to 30 ASCII letters,
/// digits, `_`, `-` or spaces, then `>`.
fn placeholders(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in prompt.match_indices('<') {
        let rest = &prompt[i + 1..];
        let Some(end) = rest.find('>') else { continue };
        let inner = &rest[..end];
        let ok = inner
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && inner.len() <= 31
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '));
        let p = format!("<{inner}>");
        if ok && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The first `n` characters of `s`, with `…` when cut.
pub fn snippet(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

fn order(found: &[String], labels: &[String]) -> Vec<String> {
    labels
        .iter()
        .filter(|l| found.contains(l))
        .cloned()
        .collect()
}

/// Removes `<think>` blocks (see the module docs).
pub fn strip_think(text: &str) -> String {
    let mut s = text.to_string();
    // An unopened closing tag: everything before the last one is reasoning.
    if let Some(end) = s.rfind("</think>") {
        if !s[..end].contains("<think>") {
            s = s[end + "</think>".len()..].to_string();
        }
    }
    while let Some(a) = s.find("<think>") {
        match s[a..].find("</think>") {
            Some(b) => s.replace_range(a..a + b + "</think>".len(), ""),
            None => {
                s.truncate(a);
                break;
            }
        }
    }
    s
}

/// Normalises the text (step 2); returns it and the (byte position, content) of every
/// `\boxed{…}` in the normalised text.
fn normalize(text: &str) -> (String, Vec<(usize, String)>) {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        let c = match c {
            '：' => ':',
            '，' => ',',
            '；' => ';',
            '（' => '(',
            '）' => ')',
            '【' => '[',
            '】' => ']',
            '＆' => '&',
            '　' => ' ',
            'Ａ'..='Ｚ' | 'ａ'..='ｚ' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        };
        if matches!(c, '*' | '`' | '$') {
            continue;
        }
        s.push(c);
    }
    let s = s.replace("__", "");
    let mut s = s;
    let mut boxed = Vec::new();
    const CMDS: [&str; 6] = ["boxed", "textbf", "text", "mathrm", "mathbf", "fbox"];
    loop {
        let hit = CMDS
            .iter()
            .filter_map(|c| s.find(&format!("\\{c}{{")).map(|p| (p, *c)))
            .min();
        let Some((start, cmd)) = hit else { break };
        let open = start + cmd.len() + 2; // after '{'
        let mut depth = 1;
        let mut close = None;
        for (i, ch) in s[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            // Unbalanced: drop the command word so the loop ends.
            s.replace_range(start..open, "");
            continue;
        };
        let inner = s[open..close].to_string();
        s.replace_range(start..close + 1, &inner);
        if cmd == "boxed" {
            boxed.push(start);
        }
    }
    // Contents are read after all replacements (nested commands resolved).
    let boxed = boxed
        .into_iter()
        .map(|p| {
            let rest = &s[p..];
            let line = rest.lines().next().unwrap_or("");
            (p, line.to_string())
        })
        .collect();
    (s, boxed)
}

/// Byte position where the segment after the last answer marker starts.
fn find_marker(s: &str) -> Option<usize> {
    marker_starts(s).into_iter().max()
}

/// Byte positions where a segment after an answer marker starts, for every marker.
fn marker_starts(s: &str) -> Vec<usize> {
    let lower = s.to_ascii_lowercase();
    let mut best: Vec<usize> = Vec::new();
    for (i, _) in lower.match_indices("answer") {
        if lower[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        let mut j = i + "answer".len();
        let rest = &lower[j..];
        if rest.starts_with("(s)") {
            j += 3;
        } else if rest.starts_with('s') {
            j += 1;
        }
        j += skip_spaces(&lower[j..]);
        let rest = &lower[j..];
        let word = |w: &str| {
            rest.starts_with(w)
                && !rest[w.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
        };
        // `answer - X` and `Answer (X)` count only when a lone letter follows, so that an
        // aside (`the answer - as I said -`, `answer (see above)`) does not hide an earlier
        // marker.
        let dash = ["- ", "– ", "— "]
            .iter()
            .find(|d| rest.starts_with(**d) && lone_letter(&rest[d.len()..]))
            .map(|d| d.len());
        let start = if rest.starts_with(':') || rest.starts_with('=') {
            Some(j + 1)
        } else if let Some(d) = dash {
            // `Final answer - C`.
            Some(j + d)
        } else if rest.starts_with('(') && lone_letter(&rest[1..]) {
            // `Answer (A) is correct.`: the segment starts at the bracket.
            Some(j)
        } else if word("is") || word("are") {
            let w = if word("is") { 2 } else { 3 };
            let mut k = j + w;
            k += skip_spaces(&lower[k..]);
            if lower[k..].starts_with(':') {
                k += 1;
            }
            Some(k)
        } else if (rest.is_empty() || rest.starts_with('\n') || rest.starts_with('\r'))
            && lower[..i].trim_end().ends_with("final")
        {
            Some(j)
        } else {
            None
        };
        if let Some(p) = start {
            best.push(p);
        }
    }
    for (i, _) in s.match_indices("答案") {
        let mut j = i + "答案".len();
        j += skip_spaces(&s[j..]);
        let mut took = false;
        for w in ["是", "为", "為"] {
            if s[j..].starts_with(w) {
                j += w.len();
                took = true;
                break;
            }
        }
        j += skip_spaces(&s[j..]);
        if s[j..].starts_with(':') {
            j += 1;
            took = true;
        }
        if took {
            best.push(j);
        }
    }
    best
}

/// `s` starts (after spaces) with one ASCII letter that no letter or digit follows.
fn lone_letter(s: &str) -> bool {
    let mut c = s.trim_start().chars();
    c.next().is_some_and(|a| a.is_ascii_alphabetic())
        && !c.next().is_some_and(|b| b.is_ascii_alphanumeric())
}

fn skip_spaces(s: &str) -> usize {
    s.len() - s.trim_start_matches([' ', '\t']).len()
}

/// The rest of the marker's line, or the next non-empty line when that is empty.
fn segment_from(s: &str, start: usize) -> String {
    s[start..]
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Cjk(String),
    Sep(String),
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

fn tokenize(s: &str) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::new();
    for c in s.chars() {
        let class = if c.is_ascii_alphanumeric() {
            0
        } else if is_cjk(c) {
            1
        } else {
            2
        };
        let same = matches!(
            (out.last(), class),
            (Some(Tok::Word(_)), 0) | (Some(Tok::Cjk(_)), 1) | (Some(Tok::Sep(_)), 2)
        );
        if same {
            match out.last_mut() {
                Some(Tok::Word(w)) | Some(Tok::Cjk(w)) | Some(Tok::Sep(w)) => w.push(c),
                None => {}
            }
        } else {
            out.push(match class {
                0 => Tok::Word(c.to_string()),
                1 => Tok::Cjk(c.to_string()),
                _ => Tok::Sep(c.to_string()),
            });
        }
    }
    out
}

const FILLER: [&str; 24] = [
    "the",
    "option",
    "options",
    "choice",
    "choices",
    "letter",
    "letters",
    "correct",
    "incorrect",
    "ones",
    "are",
    "is",
    "answer",
    "answers",
    "final",
    "statement",
    "statements",
    "source",
    "sources",
    "page",
    "pages",
    "both",
    "i",
    "choose",
];
const FILLER_CJK: [&str; 6] = ["选项", "选", "应选", "是", "为", "选择"];
const CONNECT: [&str; 1] = ["and"];
const CONNECT_CJK: [&str; 4] = ["和", "与", "及", "以及"];
const EXPLAIN: [&str; 17] = [
    "because",
    "since",
    "as",
    "is",
    "are",
    "was",
    "were",
    "which",
    "that",
    "correct",
    "incorrect",
    "wrong",
    "right",
    "only",
    "according",
    "based",
    "both",
];
const SEPARATORS: &str = " \t,;/&+、()[].:。-—–";

/// A label list joined by `or` (`A, C, or D`): never read as any subset.
struct Ambiguous;

/// The labels read, and the upper-case letters that name no option.
type Letters = (Vec<String>, Vec<String>);

/// Reads a label list from the segment (step 4). `Ok(None)`: not a label list.
/// `Ok(Some((found, dropped)))`: the labels, and single upper-case letters that name no
/// option. `Err(Ambiguous)`: labels followed by `or`.
fn read_letters(seg: &str, labels: &[String], strict: bool) -> Result<Option<Letters>, Ambiguous> {
    let toks = tokenize(seg);
    let is_label = |w: &str| labels.iter().any(|l| l == w);
    let mut i = 0;
    // Leading filler words (only before the first label).
    while i < toks.len() {
        match &toks[i] {
            Tok::Sep(_) => i += 1,
            Tok::Word(w) if FILLER.contains(&w.to_ascii_lowercase().as_str()) && !is_label(w) => {
                i += 1
            }
            Tok::Cjk(w) if FILLER_CJK.contains(&w.as_str()) => i += 1,
            _ => break,
        }
    }
    let mut found: Vec<String> = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    let mut last_sep_punct = false;
    let mut any = false;
    while i < toks.len() {
        match &toks[i] {
            Tok::Sep(s) => {
                if !s.chars().all(|c| SEPARATORS.contains(c)) {
                    // Quotes, '<', '=' and the like: not part of a list.
                    return Ok(finish(found, dropped, any, true, strict, true));
                }
                last_sep_punct = s.chars().any(|c| !c.is_whitespace());
            }
            Tok::Word(w) => {
                let lw = w.to_ascii_lowercase();
                if w.len() == 1 && w.as_bytes()[0].is_ascii_uppercase() {
                    if is_label(w) {
                        found.push(w.clone());
                    } else {
                        dropped.push(w.clone());
                    }
                    any = true;
                } else if w.len() == 1
                    && w.as_bytes()[0].is_ascii_lowercase()
                    && is_label(&w.to_ascii_uppercase())
                {
                    found.push(w.to_ascii_uppercase());
                    any = true;
                } else if w.len() > 1
                    && w.len() <= labels.len()
                    && w.bytes().all(|b| b.is_ascii_uppercase())
                    && w.chars().all(|c| is_label(&c.to_string()))
                    && distinct(w)
                {
                    found.extend(w.chars().map(|c| c.to_string()));
                    any = true;
                } else if !((any && CONNECT.contains(&lw.as_str()))
                    || matches!(lw.as_str(), "option" | "options" | "choice" | "choices"))
                {
                    if any && matches!(lw.as_str(), "or" | "nor") {
                        // `A, C, or D` and `A or B` alike: which one is meant is unknown.
                        return Err(Ambiguous);
                    }
                    // The list ends here.
                    let ok = last_sep_punct || EXPLAIN.contains(&lw.as_str());
                    return Ok(finish(found, dropped, any, ok, strict, false));
                }
                last_sep_punct = false;
            }
            Tok::Cjk(w) => {
                if !((any && CONNECT_CJK.contains(&w.as_str())) || FILLER_CJK.contains(&w.as_str()))
                {
                    if any && w.starts_with('或') {
                        return Err(Ambiguous);
                    }
                    // Chinese text after the letters ("B是正确的") needs no punctuation.
                    return Ok(finish(found, dropped, any, true, strict, false));
                }
                last_sep_punct = false;
            }
        }
        i += 1;
    }
    Ok(finish(found, dropped, any, true, strict, true))
}

fn distinct(w: &str) -> bool {
    let mut v: Vec<char> = w.chars().collect();
    v.sort_unstable();
    v.windows(2).all(|p| p[0] != p[1])
}

fn finish(
    found: Vec<String>,
    dropped: Vec<String>,
    any: bool,
    clean_stop: bool,
    strict: bool,
    at_end: bool,
) -> Option<(Vec<String>, Vec<String>)> {
    if !any || !clean_stop || (strict && !at_end) {
        return None;
    }
    Some((found, dropped))
}

/// Lower-cased words of `s` (letters, digits, CJK) joined by single spaces, padded: how
/// option texts are matched, and how the judge compares a reply with its rubric.
pub fn words(s: &str) -> String {
    let mut out = String::from(" ");
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// Options whose text appears (as whole words) in the segment; an option whose text lies
/// inside another matched option's text is not counted on its own.
fn match_texts(seg: &str, labels: &[String], texts: &[String]) -> Vec<String> {
    let s = words(seg);
    let norm: Vec<String> = texts.iter().map(|t| words(t)).collect();
    let hits: Vec<usize> = (0..texts.len())
        .filter(|&j| norm[j].trim().len() >= 2 && s.contains(&norm[j]))
        .collect();
    hits.iter()
        .filter(|&&j| {
            !hits
                .iter()
                .any(|&k| k != j && norm[k].len() > norm[j].len() && norm[k].contains(&norm[j]))
        })
        .filter_map(|&j| labels.get(j).cloned())
        .collect()
}

/// The whole line is nothing but a word for "none" (no marker: nothing else may follow).
fn says_none_exactly(seg: &str) -> bool {
    let t = seg
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '.' | '。' | '!' | '(' | ')'))
        .to_lowercase();
    [
        "none",
        "none of the options",
        "none of them",
        "none of the above",
        "no option",
        "no options",
        "n/a",
        "[]",
        "∅",
        "无",
        "没有",
        "都不是",
    ]
    .contains(&t.as_str())
}

fn says_none(seg: &str) -> bool {
    let t = seg
        .trim_matches(|c: char| {
            !c.is_alphanumeric() && !is_cjk(c) && c != '[' && c != ']' && c != '∅'
        })
        .to_lowercase();
    let t = t.trim();
    t == "[]"
        || t == "∅"
        || [
            "none",
            "no option",
            "no options",
            "no correct",
            "no incorrect",
            "n/a",
            "empty",
            "nothing",
        ]
        .iter()
        .any(|p| t.starts_with(p))
        || ["无", "没有", "都不", "均不", "全都不"]
            .iter()
            .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// gemma3-270m's real MCQ replies (tests/fixtures/real/README.md).
    const REAL: &str = include_str!("../../../../tests/fixtures/real/mcq.jsonl");
    const ITEMS: &str = include_str!("../../../../data/mcq/sample.jsonl");

    /// Record `i` of the recording: its reply, its finish_reason, its prompt, and the
    /// labels and texts of item `id` (unshuffled, as `mcq run` showed them).
    fn real(i: usize, id: &str) -> (String, String, String, Vec<String>, Vec<String>) {
        let rec: Value = serde_json::from_str(REAL.lines().nth(i).unwrap()).unwrap();
        let choice = &rec["response"]["choices"][0];
        let item: Value = ITEMS
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["id"] == id)
            .unwrap();
        let opts = item["options"].as_array().unwrap();
        let field = |k: &str| -> Vec<String> {
            opts.iter()
                .map(|o| o[k].as_str().unwrap().to_string())
                .collect()
        };
        (
            choice["message"]["content"].as_str().unwrap().to_string(),
            choice["finish_reason"].as_str().unwrap().to_string(),
            rec["request"]["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string(),
            field("label"),
            field("text"),
        )
    }

    /// The four cut replies the old rule ("read from a marker whose line ended before the
    /// cut") read as answers, all spurious: each is now refused as truncated, and the
    /// same text with an unknown finish reason still reads as it did, so it is the cut
    /// alone that refuses it.
    #[test]
    fn real_cut_replies_with_an_early_answer_line_are_truncated() {
        let cases = [
            // (record, item, a piece of the text, what the text reads as when not cut)
            (
                44,
                "na-003",
                "Answer: [4] [www.example.com.au] A 150-year old building",
                "A",
            ),
            (66, "ee-001", "Answer:\nB. April 24, 1990\n", "B"),
            (134, "na-001", "Reasoning: A does not contain", "D"),
            (148, "nr-004", "# Answers:\nA. [H] | [N] | [S]", "A"),
        ];
        for (i, id, piece, uncut) in cases {
            let (text, finish, prompt, labels, texts) = real(i, id);
            assert!(text.contains(piece), "record {i}: {text}");
            assert_eq!(finish, "length", "record {i}");
            let cut = Context {
                prompt: Some(&prompt),
                finish_reason: Some("length"),
            };
            assert_eq!(
                parse_response(&text, &labels, &texts, false, &cut),
                Err(Failure::Truncated(
                    "cut off (finish_reason length) before its final answer line; the answer \
                     marker before the cut is not read"
                        .into()
                )),
                "record {i}"
            );
            let unknown = Context {
                prompt: Some(&prompt),
                finish_reason: None,
            };
            let read = parse_response(&text, &labels, &texts, false, &unknown).unwrap();
            assert_eq!(read.labels.concat(), uncut, "record {i}");
        }
    }

    /// Of the recording's 135 cut replies, 118 repeat a prompt line or placeholder; no
    /// reasoning that quotes an option line or a short line of the prompt is an echo.
    #[test]
    fn echoes_of_the_prompt_are_told_from_cut_reasoning() {
        let mut echoes = 0;
        let mut cut = 0;
        for (i, l) in REAL.lines().enumerate() {
            let rec: Value = serde_json::from_str(l).unwrap();
            let choice = &rec["response"]["choices"][0];
            if choice["finish_reason"] != "length" {
                continue;
            }
            cut += 1;
            let text = choice["message"]["content"].as_str().unwrap();
            let prompt = rec["request"]["messages"][0]["content"].as_str().unwrap();
            echoes += usize::from(echoes_prompt(text, prompt));
            if i == 0 {
                // It starts with the prompt's "# User query" section, copied.
                assert!(echoes_prompt(text, prompt));
            }
        }
        assert_eq!((echoes, cut), (118, 135));
        let prompt = "Which city is the capital of France?\nA. Paris is the capital city\nB. Rome is a city in Italy\nEnd your reply with a final line of the form\nAnswer: <letters>";
        // Reasoning that quotes an option line (any case) is not an echo.
        assert!(!echoes_prompt(
            "Let me think.\na. paris is the capital city\nThat sounds right, so the",
            prompt
        ));
        // A copied long line or the placeholder is.
        assert!(echoes_prompt(
            "which city is  the capital of France?\nA. Paris",
            prompt
        ));
        assert!(echoes_prompt("Answer: <letters>", prompt));
        assert!(!echoes_prompt("Answer: <b>", prompt));
        assert_eq!(placeholders("a <x> <x> <1> <a b> < c> <"), ["<x>", "<a b>"]);
    }

    #[test]
    fn a_cut_reply_is_truncated_whatever_it_holds() {
        let labels: Vec<String> = ["A", "B", "C"].iter().map(|s| s.to_string()).collect();
        let texts: Vec<String> = ["Paris", "Rome", "Oslo"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cut = Context {
            prompt: None,
            finish_reason: Some("length"),
        };
        let parse = |t: &str| parse_response(t, &labels, &texts, true, &cut);
        assert_eq!(
            parse("Let me look at each option.\nA."),
            Err(Failure::Truncated(CUT.into()))
        );
        assert_eq!(parse(""), Err(Failure::Truncated(CUT.into())));
        for t in [
            "Answer: B\nBecause the",
            "\\boxed{B} since the",
            "Answer: none\nThe pages",
        ] {
            assert_eq!(
                parse(t),
                Err(Failure::Truncated(format!(
                    "{CUT}; the answer marker before the cut is not read"
                ))),
                "{t}"
            );
        }
        // Finished normally, the same texts read.
        let stop = Context {
            prompt: None,
            finish_reason: Some("stop"),
        };
        let read = |t: &str| {
            parse_response(t, &labels, &texts, true, &stop)
                .unwrap()
                .labels
                .concat()
        };
        assert_eq!(read("Answer: B\nBecause the"), "B");
        assert_eq!(read("\\boxed{B} since the"), "B");
        assert_eq!(read("Answer: none\nThe pages"), "");
    }
}
