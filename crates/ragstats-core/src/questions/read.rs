//! Question files as the datasets publish them, and our own JSONL.
//!
//! Formats:
//! * HotpotQA (a JSON array, as published): `_id`, `question`, `answer`, `supporting_facts`
//!   (`[title, sentence index]` pairs; may be absent, as in the test set), `context`
//!   (`[title, [sentences]]` pairs). A paragraph's text is its sentences concatenated (they
//!   carry their own leading spaces). The supporting paragraphs are the context paragraphs
//!   named by `supporting_facts`, in order of first mention; the question's cluster is the
//!   first of their titles (the article the question starts from).
//! * MuSiQue (a JSON array or JSONL): `id`, `question`, `answer`, `answer_aliases`,
//!   `paragraphs` (`title`, `paragraph_text`, `is_supporting`). Answers: `answer`, then the
//!   aliases that differ from it, in order. The supporting paragraphs are those with
//!   `is_supporting`, in the file's paragraph order; the cluster is the first one's title.
//! * Ours (JSONL, or a JSON array of the same objects): `id`, `dataset` (`hotpotqa` |
//!   `musique`), `question`, `answers` (non-empty), optional `supporting` (corpus ids),
//!   optional `cluster` (a non-empty string).
//!
//! Detection: a file whose first non-blank character (after a byte-order mark) is `[` is a
//! JSON array, else JSONL. The format is then decided by the first record's keys: `_id` and
//! `context` → HotpotQA; `paragraphs` → MuSiQue; `answers` and `dataset` → ours. Every
//! record must then have that format's fields; errors name the file and the line (JSONL) or
//! the record's 0-based index and id (JSON arrays).
//!
//! Paragraphs of every file read together get corpus ids by [`super::corpus::assign_ids`];
//! the documents returned are the distinct paragraphs in order of first appearance.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::corpus::{assign_ids, wikipedia_url, Paragraph};
use super::{Dataset, Document, Question};
use crate::io::JsonlReader;
use crate::{Error, Result};

/// The format of a question file (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Hotpotqa,
    Musique,
    /// Our JSONL: [`Question`] objects.
    Ours,
}

impl Format {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Hotpotqa => "HotpotQA",
            Format::Musique => "MuSiQue",
            Format::Ours => "questions JSONL",
        }
    }
}

/// Questions and the corpus documents their files carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub questions: Vec<Question>,
    /// Distinct paragraphs in order of first appearance (empty for our JSONL).
    pub documents: Vec<Document>,
}

#[derive(Deserialize)]
struct HotpotRaw {
    #[serde(rename = "_id")]
    id: String,
    question: String,
    answer: String,
    #[serde(default)]
    supporting_facts: Vec<(String, Value)>,
    context: Vec<(String, Vec<String>)>,
}

#[derive(Deserialize)]
struct MusiqueParagraph {
    title: String,
    paragraph_text: String,
    #[serde(default)]
    is_supporting: bool,
}

#[derive(Deserialize)]
struct MusiqueRaw {
    id: String,
    question: String,
    answer: String,
    #[serde(default)]
    answer_aliases: Vec<String>,
    paragraphs: Vec<MusiqueParagraph>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OursRaw {
    id: String,
    dataset: Dataset,
    question: String,
    answers: Vec<String>,
    #[serde(default)]
    supporting: Vec<String>,
    #[serde(default)]
    cluster: Option<String>,
}

/// A question before its paragraphs have ids.
struct Pending {
    q: Question,
    /// Supporting paragraphs (HotpotQA, MuSiQue) to turn into ids.
    supporting: Vec<Paragraph>,
    paragraphs: Vec<Paragraph>,
}

/// Where a record came from, for messages.
#[derive(Clone)]
struct At {
    file: PathBuf,
    line: Option<u64>,
    record: Option<usize>,
}

impl At {
    fn err(&self, id: Option<&str>, msg: impl Into<String>) -> Error {
        let msg = msg.into();
        let msg = match (self.record, id) {
            (Some(i), Some(id)) => format!("record {i} (id '{}'): {msg}", crate::io::clip(id)),
            (Some(i), None) => format!("record {i}: {msg}"),
            (None, _) => msg,
        };
        Error::input(&self.file, self.line, msg)
    }
}

/// The records of a file: (where, JSON value).
fn records(path: &Path) -> Result<Vec<(At, Value)>> {
    let at = |line, record| At {
        file: path.to_path_buf(),
        line,
        record,
    };
    if starts_with_bracket(path)? {
        // A JSON array is read whole (HotpotQA as published), up to its own limit.
        let text = crate::io::read_text_up_to(path, crate::io::MAX_ARRAY_FILE_BYTES)?;
        let values: Vec<Value> =
            crate::io::jsonl::parse_document(path, &text, "a JSON array of questions")?;
        Ok(values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (at(None, Some(i)), v))
            .collect())
    } else {
        let mut r = JsonlReader::open(path)?;
        let mut out = Vec::new();
        while let Some((line, v)) = r.next_value()? {
            out.push((at(Some(line), None), v));
        }
        Ok(out)
    }
}

/// Whether the first character of `path` that is not white space (after a UTF-8 byte-order
/// mark) is `[`. Only the start is read, so that a JSONL file is read line by line, under
/// the line limit, and never whole.
fn starts_with_bracket(path: &Path) -> Result<bool> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut r = BufReader::new(file);
    let mut first = true;
    let mut blank = 0usize;
    loop {
        let buf = r.fill_buf().map_err(|e| Error::io(path, e))?;
        // White space without end is left to the JSONL reader's line limit.
        if buf.is_empty() || blank > crate::io::MAX_LINE_BYTES {
            return Ok(false);
        }
        let mut skip = 0;
        if first && buf.starts_with(crate::io::text::UTF8_BOM) {
            skip = crate::io::text::UTF8_BOM.len();
        }
        first = false;
        match buf[skip..].iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => return Ok(buf[skip + i] == b'['),
            None => {
                let n = buf.len();
                blank += n;
                r.consume(n);
            }
        }
    }
}

/// Detects the format from a record's keys (module docs).
fn detect(at: &At, v: &Value) -> Result<Format> {
    let Value::Object(m) = v else {
        return Err(at.err(
            None,
            format!(
                "expected a question object, found {}",
                crate::io::jsonl::kind(v)
            ),
        ));
    };
    if m.contains_key("_id") && m.contains_key("context") {
        Ok(Format::Hotpotqa)
    } else if m.contains_key("paragraphs") {
        Ok(Format::Musique)
    } else if m.contains_key("answers") && m.contains_key("dataset") {
        Ok(Format::Ours)
    } else {
        Err(at.err(
            None,
            "cannot tell the question format: expected HotpotQA (`_id`, `context`), MuSiQue \
             (`paragraphs`) or our JSONL (`dataset`, `answers`) fields",
        ))
    }
}

fn shape<T: DeserializeOwned>(at: &At, v: Value, format: Format) -> Result<T> {
    let id = v
        .get("_id")
        .or_else(|| v.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    serde_json::from_value(v).map_err(|e| {
        at.err(
            id.as_deref(),
            format!(
                "not a {} question: {}",
                format.name(),
                crate::io::jsonl::clip_error(&e.to_string())
            ),
        )
    })
}

fn pending(at: &At, v: Value, format: Format) -> Result<Pending> {
    match format {
        Format::Hotpotqa => {
            let r: HotpotRaw = shape(at, v, format)?;
            let paragraphs: Vec<Paragraph> = r
                .context
                .iter()
                .map(|(title, sents)| Paragraph {
                    title: title.clone(),
                    text: sents.concat(),
                })
                .collect();
            let mut supporting = Vec::new();
            for (title, _) in &r.supporting_facts {
                let Some(p) = paragraphs.iter().find(|p| &p.title == title) else {
                    return Err(at.err(
                        Some(&r.id),
                        format!(
                            "supporting fact title '{}' is not in its context",
                            crate::io::clip(title)
                        ),
                    ));
                };
                if !supporting.contains(p) {
                    supporting.push(p.clone());
                }
            }
            if r.answer.trim().is_empty() {
                return Err(at.err(Some(&r.id), "empty answer"));
            }
            Ok(Pending {
                q: Question {
                    id: r.id,
                    dataset: Dataset::Hotpotqa,
                    question: r.question,
                    answers: vec![r.answer],
                    supporting: Vec::new(),
                    cluster: supporting.first().map(|p: &Paragraph| p.title.clone()),
                },
                supporting,
                paragraphs,
            })
        }
        Format::Musique => {
            let r: MusiqueRaw = shape(at, v, format)?;
            if r.answer.trim().is_empty() {
                return Err(at.err(Some(&r.id), "empty answer"));
            }
            let mut answers = vec![r.answer];
            for a in r.answer_aliases {
                if !answers.contains(&a) {
                    answers.push(a);
                }
            }
            let para = |p: &MusiqueParagraph| Paragraph {
                title: p.title.clone(),
                text: p.paragraph_text.clone(),
            };
            let cluster = r
                .paragraphs
                .iter()
                .find(|p| p.is_supporting)
                .map(|p| p.title.clone());
            Ok(Pending {
                q: Question {
                    id: r.id,
                    dataset: Dataset::Musique,
                    question: r.question,
                    answers,
                    supporting: Vec::new(),
                    cluster,
                },
                supporting: r
                    .paragraphs
                    .iter()
                    .filter(|p| p.is_supporting)
                    .map(para)
                    .collect(),
                paragraphs: r.paragraphs.iter().map(para).collect(),
            })
        }
        Format::Ours => {
            let r: OursRaw = shape(at, v, format)?;
            if r.answers.is_empty() || r.answers.iter().all(|a| a.trim().is_empty()) {
                return Err(at.err(
                    Some(&r.id),
                    "`answers` must hold at least one non-empty answer",
                ));
            }
            if r.cluster.as_deref().is_some_and(|c| c.trim().is_empty()) {
                return Err(at.err(
                    Some(&r.id),
                    "`cluster` is empty; give the cluster's name or leave the field out",
                ));
            }
            Ok(Pending {
                q: Question {
                    id: r.id,
                    dataset: r.dataset,
                    question: r.question,
                    answers: r.answers,
                    supporting: r.supporting,
                    cluster: r.cluster,
                },
                supporting: Vec::new(),
                paragraphs: Vec::new(),
            })
        }
    }
}

/// The format of `path` (module docs), from its first record.
///
/// # Errors
/// As [`read_questions`]; [`Error::Input`] for a file with no record.
pub fn detect_format(path: &Path) -> Result<Format> {
    let recs = records(path)?;
    let Some((at, v)) = recs.first() else {
        return Err(Error::input(path, None, "no questions in the file"));
    };
    detect(at, v)
}

/// Reads question files of any supported format (module docs), together: paragraph ids are
/// assigned over all of them, and question ids must be unique across them.
///
/// # Errors
/// [`Error::Input`] naming the file and the line or record: not JSON, an unknown format, a
/// record without its format's fields, a supporting title missing from the context, an
/// empty answer, a question id given twice, or an empty file.
pub fn read_questions<P: AsRef<Path>>(paths: &[P]) -> Result<Loaded> {
    let mut all = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for path in paths {
        let path = path.as_ref();
        let recs = records(path)?;
        let Some((at0, v0)) = recs.first() else {
            return Err(Error::input(path, None, "no questions in the file"));
        };
        let format = detect(at0, v0)?;
        for (at, v) in recs {
            let p = pending(&at, v, format)?;
            let here = match (at.line, at.record) {
                (Some(l), _) => format!("{}:{l}", path.display()),
                (None, Some(i)) => format!("{} record {i}", path.display()),
                _ => path.display().to_string(),
            };
            if let Some(first) = seen.insert(p.q.id.clone(), here) {
                return Err(at.err(
                    Some(&p.q.id),
                    format!("question id already given at {first}"),
                ));
            }
            all.push(p);
        }
    }
    let ids: BTreeMap<Paragraph, String> = assign_ids(all.iter().flat_map(|p| p.paragraphs.iter()));
    let mut documents = Vec::new();
    let mut emitted = HashSet::new();
    for p in &all {
        for para in &p.paragraphs {
            let id = &ids[para];
            if emitted.insert(id.clone()) {
                documents.push(Document {
                    id: id.clone(),
                    url: wikipedia_url(&para.title),
                    title: para.title.clone(),
                    text: para.text.clone(),
                });
            }
        }
    }
    let questions = all
        .into_iter()
        .map(|mut p| {
            if !p.supporting.is_empty() {
                p.q.supporting = p.supporting.iter().map(|s| ids[s].clone()).collect();
            }
            p.q
        })
        .collect();
    Ok(Loaded {
        questions,
        documents,
    })
}

/// Writes questions as our JSONL (one [`Question`] per line), atomically.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub fn write_questions(path: &Path, questions: &[Question]) -> Result<()> {
    crate::io::write_atomic(path, |w| {
        for q in questions {
            serde_json::to_writer(&mut *w, q)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}
