//! Prompt templates: a bare and an informative template per task type.
//!
//! Templates are plain text files `<dir>/<kind>/<task>.txt` (`kind` = `bare` or
//! `informative`, `task` = `planning`, `evidence_extraction`, `grounded_reasoning`,
//! `noise_robustness`). The defaults in `data/prompts/` are compiled into the binary;
//! `--prompt-dir DIR` replaces any of them with `DIR/<kind>/<task>.txt` where that file
//! exists. Placeholders: `{query}`, `{context}`, `{instruction}`, `{options}` (one
//! `A. text` block per option), `{empty_rule}` (a sentence saying whether `Answer: none` is
//! allowed). Text is substituted in one pass, so braces inside items are never expanded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::item::Task;
use crate::error::{Error, Result};
use crate::io::{clip, read_text};

/// Bare (format instructions only) or informative (with worked examples of common mistakes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptKind {
    /// Task description and output format only.
    Bare,
    /// Adds few-shot examples of each capability's common mistakes.
    Informative,
}

impl PromptKind {
    /// `bare` or `informative`.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptKind::Bare => "bare",
            PromptKind::Informative => "informative",
        }
    }
}

const PLACEHOLDERS: [&str; 5] = ["query", "context", "instruction", "options", "empty_rule"];

macro_rules! builtin {
    ($kind:literal, $task:literal) => {
        include_str!(concat!(
            "../../../../data/prompts/",
            $kind,
            "/",
            $task,
            ".txt"
        ))
    };
}

fn builtin(kind: PromptKind, task: Task) -> &'static str {
    match (kind, task) {
        (PromptKind::Bare, Task::Planning) => builtin!("bare", "planning"),
        (PromptKind::Bare, Task::EvidenceExtraction) => builtin!("bare", "evidence_extraction"),
        (PromptKind::Bare, Task::GroundedReasoning) => builtin!("bare", "grounded_reasoning"),
        (PromptKind::Bare, Task::NoiseRobustness) => builtin!("bare", "noise_robustness"),
        (PromptKind::Informative, Task::Planning) => builtin!("informative", "planning"),
        (PromptKind::Informative, Task::EvidenceExtraction) => {
            builtin!("informative", "evidence_extraction")
        }
        (PromptKind::Informative, Task::GroundedReasoning) => {
            builtin!("informative", "grounded_reasoning")
        }
        (PromptKind::Informative, Task::NoiseRobustness) => {
            builtin!("informative", "noise_robustness")
        }
    }
}

/// The eight templates in use, with where each came from.
#[derive(Debug, Clone)]
pub struct Templates {
    map: HashMap<(PromptKind, Task), (String, String)>,
}

impl Templates {
    /// The compiled-in defaults (the files in `data/prompts/`).
    pub fn builtin() -> Self {
        let mut map = HashMap::new();
        for kind in [PromptKind::Bare, PromptKind::Informative] {
            for task in Task::ALL {
                map.insert(
                    (kind, task),
                    (
                        builtin(kind, task).to_string(),
                        format!("builtin:{}/{}.txt", kind.as_str(), task.as_str()),
                    ),
                );
            }
        }
        Templates { map }
    }

    /// The defaults, with every `dir/<kind>/<task>.txt` that exists used instead.
    ///
    /// # Errors
    /// [`Error::Setting`] (`prompt_dir`) when `dir` is not a directory; [`Error::Io`] for an unreadable file;
    /// [`Error::Input`] for a template with an unknown placeholder or without `{query}` and
    /// `{options}`.
    pub fn with_dir(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::setting(
                "prompt_dir",
                format!(
                    "{}: not a directory (expected DIR/bare/<task>.txt and DIR/informative/<task>.txt)",
                    dir.display()
                ),
            ));
        }
        let mut t = Templates::builtin();
        for kind in [PromptKind::Bare, PromptKind::Informative] {
            for task in Task::ALL {
                let p: PathBuf = dir
                    .join(kind.as_str())
                    .join(format!("{}.txt", task.as_str()));
                if p.is_file() {
                    let text = read_text(&p)?;
                    check_template(&text).map_err(|m| Error::input(&p, None, m))?;
                    t.map.insert((kind, task), (text, p.display().to_string()));
                }
            }
        }
        Ok(t)
    }

    /// The template text and its source for (kind, task).
    pub fn get(&self, kind: PromptKind, task: Task) -> (&str, &str) {
        let (t, s) = &self.map[&(kind, task)];
        (t, s)
    }
}

/// Checks that a template uses only known placeholders and has `{query}` and `{options}`.
///
/// # Errors
/// A message naming the unknown or missing placeholder.
pub fn check_template(text: &str) -> std::result::Result<(), String> {
    for name in placeholders(text) {
        if !PLACEHOLDERS.contains(&name.as_str()) {
            return Err(format!(
                "unknown placeholder {{{}}} (known: {})",
                clip(&name),
                PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
            ));
        }
    }
    for need in ["query", "options"] {
        if !text.contains(&format!("{{{need}}}")) {
            return Err(format!("the template has no {{{need}}} placeholder"));
        }
    }
    Ok(())
}

/// `{name}` tokens whose name is lower-case letters and underscores.
fn placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find('{') {
        let after = &rest[a + 1..];
        match after.find('}') {
            Some(b)
                if b > 0
                    && after[..b]
                        .bytes()
                        .all(|c| c.is_ascii_lowercase() || c == b'_') =>
            {
                out.push(after[..b].to_string());
                rest = &after[b + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// The options block: `A. text` per option, separated by a blank line when any text spans
/// several lines (retrieved pages), else one per line.
pub fn format_options(options: &[(String, String)]) -> String {
    let multi = options.iter().any(|(_, t)| t.contains('\n'));
    let sep = if multi { "\n\n" } else { "\n" };
    options
        .iter()
        .map(|(l, t)| format!("{l}. {}", t.trim_end()))
        .collect::<Vec<_>>()
        .join(sep)
}

/// The `{empty_rule}` sentence.
pub fn empty_rule(allow_empty: bool) -> &'static str {
    if allow_empty {
        "If no option qualifies, the final line must be `Answer: none`."
    } else {
        "At least one option qualifies."
    }
}

/// Fills a template in one pass.
pub fn render(
    template: &str,
    query: &str,
    context: &str,
    instruction: &str,
    options: &[(String, String)],
    allow_empty: bool,
) -> String {
    let opts = format_options(options);
    let mut out = String::with_capacity(template.len() + context.len() + opts.len() + 256);
    let mut rest = template;
    while let Some(a) = rest.find('{') {
        out.push_str(&rest[..a]);
        let after = &rest[a + 1..];
        let value = PLACEHOLDERS.iter().find_map(|p| {
            after
                .strip_prefix(p)
                .and_then(|r| r.strip_prefix('}'))
                .map(|r| (*p, r))
        });
        match value {
            Some((name, r)) => {
                out.push_str(match name {
                    "query" => query,
                    "context" => context,
                    "instruction" => instruction,
                    "options" => &opts,
                    _ => empty_rule(allow_empty),
                });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_templates_are_valid() {
        let t = Templates::builtin();
        for kind in [PromptKind::Bare, PromptKind::Informative] {
            for task in Task::ALL {
                let (text, src) = t.get(kind, task);
                check_template(text).unwrap_or_else(|e| panic!("{src}: {e}"));
                assert!(
                    text.contains("Answer:"),
                    "{src} must ask for an Answer: line"
                );
            }
        }
    }

    #[test]
    fn render_substitutes_once() {
        let o = vec![
            ("A".to_string(), "x {query}".to_string()),
            ("B".into(), "y".into()),
        ];
        let s = render(
            "Q={query}\n{options}\n{empty_rule} {other}",
            "what {context}",
            "c",
            "i",
            &o,
            true,
        );
        assert_eq!(
            s,
            "Q=what {context}\nA. x {query}\nB. y\nIf no option qualifies, the final line must be `Answer: none`. {other}"
        );
        assert!(check_template("{query} {options} {bogus}")
            .unwrap_err()
            .contains("{bogus}"));
        assert!(check_template("{query}").unwrap_err().contains("{options}"));
    }
}
