//! Building RAGCap-Bench-style items from our own trajectory logs (docs/mcqgen.md).
//!
//! The runner's trajectory log and the correctness rule are [`ragstats_core::trajlog`].
//! - [`vanilla`]: items read straight off the log, no model involved: evidence extraction
//!   (gold = the records that are supporting paragraphs), noise abstain (packets with no
//!   supporting paragraph, and all-supporting controls), noise reliability (from a
//!   user-given credibility file).
//! - [`guided`]: error-guided items written by a model from the paper's error taxonomy:
//!   planning (correct trajectories' next queries against taxonomy errors) and grounded
//!   reasoning (statements from a correct packet and answer, some with injected errors);
//!   malformed generations are rejected with a recorded reason.
//! - [`tasks`]: which tasks `--tasks` names, the vanilla items of a log, counts per group.
//!
//! Every item carries its provenance in `meta.provenance` (source trajectory and step or
//! selector, strategy, model, prompt hash) and per option in `meta.options` (where the
//! option came from and, for error-guided options, the error type it instantiates).
//! Whatever could not become an item is returned as a [`Skip`] with its reason.

pub mod guided;
pub mod tasks;
pub mod vanilla;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::search::SearchRecord;
use ragstats_core::mcq::item::{Item, Task};
pub use ragstats_core::trajlog::{read_trajectories, Logged, Source, Trajectory};

/// Characters of a record's text kept in an option or a context line.
pub const RECORD_CHARS: usize = 1_500;

/// How an item was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Reformatted from the log; labels from the datasets.
    Vanilla,
    /// Options written by a model from the error taxonomy.
    ErrorGuided,
}

/// Where an item came from and how it was made (`meta.provenance`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: Source,
    pub strategy: Strategy,
    /// The model that wrote options (error-guided), else `None`.
    pub model: Option<String>,
    /// First 16 hex digits of SHA-256 of the generation prompt template (error-guided).
    pub prompt_sha256: Option<String>,
    /// The generation call's request id (error-guided).
    pub request_id: Option<String>,
    /// The rule that assigned the subtask, when there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub subtask_rule: Option<String>,
}

/// Something that did not become an item, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skip {
    pub task: Task,
    /// The subtask the item would have had.
    pub subtask: Option<String>,
    pub source: Source,
    pub reason: String,
}

/// Items and skips of one generation pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Generated {
    pub items: Vec<Item>,
    pub skipped: Vec<Skip>,
}

impl Generated {
    /// Appends `other`.
    pub fn extend(&mut self, other: Generated) {
        self.items.extend(other.items);
        self.skipped.extend(other.skipped);
    }
}

/// First 16 hex digits of SHA-256 of `text`.
pub fn short_hash(text: &str) -> String {
    ragstats_core::io::short_sha256(text)
}

/// The host of a URL (`https://en.wikipedia.org/wiki/X` → `en.wikipedia.org`), lower-cased;
/// the whole string when it has no scheme.
pub fn host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let h = &rest[..end];
    let h = h.rsplit_once('@').map_or(h, |(_, h)| h);
    h.split(':').next().unwrap_or(h).to_ascii_lowercase()
}

/// `text` cut to `n` characters (with `…` when cut), whitespace runs collapsed.
pub fn clip_text(text: &str, n: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= n {
        flat
    } else {
        let mut s: String = flat.chars().take(n).collect();
        s.push('…');
        s
    }
}

/// A record as shown in an option or a context line: `[host] title: text`.
pub fn record_line(r: &SearchRecord) -> String {
    format!(
        "[{}] {}: {}",
        host(&r.url),
        r.title.trim(),
        clip_text(&r.text, RECORD_CHARS)
    )
}

/// A numbered list of records: `  [1] [host] title: text` per line.
pub fn numbered(records: &[&SearchRecord]) -> String {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| format!("  [{}] {}", i + 1, record_line(r)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The option-text key two options collide on (trimmed, case-folded, whitespace collapsed),
/// the same equality `stats mcq validate` uses for duplicate option texts.
pub fn text_key(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Writes `values` as JSONL to `path` atomically (one compact JSON object per line).
///
/// # Errors
/// [`ragstats_core::Error::Io`] naming `path`.
pub fn write_jsonl<T: Serialize>(
    path: &std::path::Path,
    values: &[T],
) -> ragstats_core::Result<()> {
    ragstats_core::io::write_atomic(path, |w| {
        for v in values {
            serde_json::to_writer(&mut *w, v).map_err(std::io::Error::other)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// `meta` of a generated item: `{"provenance": ..., "options": [...]}`.
pub(crate) fn meta(p: &Provenance, options: Vec<Value>) -> Value {
    serde_json::json!({"provenance": p, "options": options})
}

/// Option labels `A`, `B`, ... for `n` options.
pub(crate) fn labels(n: usize) -> Vec<String> {
    ragstats_core::mcq::shuffle::presented_labels(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_clips() {
        assert_eq!(
            host("https://en.wikipedia.org/wiki/Leland,_North_Carolina"),
            "en.wikipedia.org"
        );
        assert_eq!(host("http://user@Blog.Example:8080/x?y"), "blog.example");
        assert_eq!(host("doc-7"), "doc-7");
        assert_eq!(clip_text("a  b\n c", 10), "a b c");
        assert_eq!(clip_text("abcdef", 3), "abc…");
        assert_eq!(text_key("  Foo\tBar "), "foo bar");
        assert_eq!(short_hash("abc"), "ba7816bf8f01cfea");
    }
}
