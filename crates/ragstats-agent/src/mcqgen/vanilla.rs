//! Vanilla items: the log reformatted, gold labels from the datasets' supporting paragraphs
//! (or a user's credibility file). No model is involved.
//!
//! | task | unit | options | gold |
//! |---|---|---|---|
//! | evidence extraction | a search step | the step's retrieved records in rank order | the records whose id is a supporting paragraph |
//! | noise abstain | a selector's packet | answer / admit the results are insufficient | insufficient when the packet holds no supporting paragraph; answer when it holds all (control) |
//! | noise reliability | a selector's packet | the packet's records the credibility file rates | the less-credible ones (polarity `incorrect`) |
//!
//! Masked records (no content shown) are never options and never count as evidence. A record
//! whose shown text repeats an earlier one of the same list is dropped (options must differ).
//! A unit whose content (question, query or packet, record ids) repeats one already made into
//! an item is skipped as a duplicate: trajectories often retrieve the same pages.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::path::Path;

use serde_json::{json, Value};

use super::{meta, numbered, record_line, text_key, Generated, Provenance, Skip, Strategy};
use crate::search::SearchRecord;
use ragstats_core::error::{Error, Result};
use ragstats_core::io::CsvReader;
use ragstats_core::mcq::item::{Item, McqOption, Polarity, Task};
use ragstats_core::trajlog::{Logged, Source};

/// Fewest options of an evidence-extraction item.
pub const MIN_EVIDENCE_OPTIONS: usize = 4;
/// Most options of any item (labels A–Z).
pub const MAX_OPTIONS: usize = 26;

/// Instruction of evidence-extraction items.
pub const EVIDENCE_INSTRUCTION: &str =
    "Which of the retrieved pages contain evidence needed to answer the query?";
/// Instruction of abstain items.
pub const ABSTAIN_INSTRUCTION: &str = "How should the system respond, given these search results?";
/// The abstain items' option "answer".
pub const ANSWER_OPTION: &str = "Answer the question from these search results.";
/// The abstain items' option "insufficient".
pub const INSUFFICIENT_OPTION: &str =
    "Admit that the search results are insufficient: the question cannot be answered from them.";
/// Instruction of reliability items.
pub const RELIABILITY_INSTRUCTION: &str = "Which of the following sources are low in credibility?";

/// The records of a list that can be options: not masked, first of their id, and with a
/// shown text no earlier record has. Returns them with their 1-based rank in the list.
fn visible(records: &[SearchRecord]) -> Vec<(usize, &SearchRecord)> {
    let mut ids = HashSet::new();
    let mut texts = HashSet::new();
    records
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.masked && !r.text.trim().is_empty())
        .filter(|(_, r)| ids.insert(r.id.as_str()) && texts.insert(text_key(&record_line(r))))
        .map(|(i, r)| (i + 1, r))
        .collect()
}

fn vanilla(source: Source) -> Provenance {
    Provenance {
        source,
        strategy: Strategy::Vanilla,
        model: None,
        prompt_sha256: None,
        request_id: None,
        subtask_rule: None,
    }
}

fn skip(out: &mut Generated, task: Task, subtask: Option<&str>, source: Source, reason: String) {
    out.skipped.push(Skip {
        task,
        subtask: subtask.map(str::to_string),
        source,
        reason,
    });
}

/// `prefix-question-arm-tN-tail`.
fn id_of(prefix: &str, l: &Logged, tail: &str) -> String {
    format!(
        "{prefix}-{}-{}-t{}-{tail}",
        l.t.question_id, l.t.arm, l.t.trajectory
    )
}

/// Records that the unit `key` became item `id` and returns `id`, or, when an item was
/// already made from the same unit, that item's id as the error (a repeated unit becomes no
/// second item).
fn claim<K: Eq + Hash>(
    made: &mut HashMap<K, String>,
    key: K,
    id: String,
) -> std::result::Result<String, String> {
    match made.entry(key) {
        Entry::Occupied(e) => Err(e.get().clone()),
        Entry::Vacant(e) => Ok(e.insert(id).clone()),
    }
}

/// Evidence-extraction items, one per search step that has at least
/// [`MIN_EVIDENCE_OPTIONS`] visible records, at least one of them supporting and at least one
/// not. Options in rank order; gold = the supporting ones.
pub fn evidence_extraction(trajs: &[Logged]) -> Generated {
    let mut out = Generated::default();
    let mut made: HashMap<(String, String, Vec<String>), String> = HashMap::new();
    let task = Task::EvidenceExtraction;
    for l in trajs {
        let sup = l.supporting();
        for s in &l.t.steps {
            let source = Source {
                step: Some(s.step),
                ..l.source()
            };
            let Some(query) = s.query.as_deref().filter(|q| !q.trim().is_empty()) else {
                let why = s.failure.as_deref().unwrap_or("no reason recorded");
                skip(
                    &mut out,
                    task,
                    None,
                    source,
                    format!("the step has no query ({why})"),
                );
                continue;
            };
            if sup.is_empty() {
                skip(
                    &mut out,
                    task,
                    None,
                    source,
                    "the question lists no supporting paragraphs".into(),
                );
                continue;
            }
            let mut recs = visible(&s.results);
            recs.truncate(MAX_OPTIONS);
            let n_sup = recs
                .iter()
                .filter(|(_, r)| sup.contains(r.id.as_str()))
                .count();
            let reason = if recs.is_empty() {
                Some(format!("no visible record ({} retrieved)", s.results.len()))
            } else if n_sup == 0 {
                Some(format!(
                    "no supporting record among the {} shown",
                    recs.len()
                ))
            } else if n_sup == recs.len() {
                Some(format!(
                    "no non-supporting record: all {} shown are supporting",
                    recs.len()
                ))
            } else if recs.len() < MIN_EVIDENCE_OPTIONS {
                Some(format!(
                    "{} visible record(s); an item needs at least {MIN_EVIDENCE_OPTIONS}",
                    recs.len()
                ))
            } else {
                None
            };
            if let Some(r) = reason {
                skip(&mut out, task, None, source, r);
                continue;
            }
            let key = (
                l.t.question_id.clone(),
                text_key(query),
                recs.iter().map(|(_, r)| r.id.clone()).collect::<Vec<_>>(),
            );
            let id = match claim(&mut made, key, id_of("ee", l, &format!("s{}", s.step))) {
                Ok(id) => id,
                Err(first) => {
                    skip(
                        &mut out,
                        task,
                        None,
                        source,
                        format!("same query and results as item {first}"),
                    );
                    continue;
                }
            };
            let labels = super::labels(recs.len());
            let options = recs
                .iter()
                .zip(&labels)
                .map(|((_, r), lab)| McqOption {
                    label: lab.clone(),
                    text: record_line(r),
                })
                .collect();
            let answer = recs
                .iter()
                .zip(&labels)
                .filter(|((_, r), _)| sup.contains(r.id.as_str()))
                .map(|(_, lab)| lab.clone())
                .collect();
            let opt_meta = recs
                .iter()
                .zip(&labels)
                .map(|((rank, r), lab)| {
                    json!({"label": lab, "origin": "retrieved", "doc_id": r.id, "url": r.url,
                           "rank": rank, "supporting": sup.contains(r.id.as_str())})
                })
                .collect();
            out.items.push(Item {
                id,
                task,
                subtask: None,
                language: "en".into(),
                query: l.t.question.clone(),
                context: format!("Search query issued: \"{}\"", query.trim()),
                instruction: EVIDENCE_INSTRUCTION.into(),
                polarity: Polarity::Correct,
                options,
                answer,
                allow_empty: false,
                meta: Some(meta(&vanilla(source), opt_meta)),
            });
        }
    }
    out
}

/// Noise-abstain items, one per distinct packet: gold "insufficient" when the packet holds
/// no supporting paragraph, gold "answer" (a control) when it holds every one; packets with
/// some but not all are skipped.
pub fn abstain(trajs: &[Logged]) -> Generated {
    let mut out = Generated::default();
    let mut made: HashMap<(String, Vec<String>), String> = HashMap::new();
    let (task, sub) = (Task::NoiseRobustness, Some("abstain"));
    for l in trajs {
        let sup = l.supporting();
        for (sel, packet) in &l.t.packets {
            let source = Source {
                selector: Some(sel.clone()),
                ..l.source()
            };
            if sup.is_empty() {
                skip(
                    &mut out,
                    task,
                    sub,
                    source,
                    "the question lists no supporting paragraphs".into(),
                );
                continue;
            }
            let recs = visible(packet);
            if recs.is_empty() {
                skip(
                    &mut out,
                    task,
                    sub,
                    source,
                    format!("no visible record in the packet ({} given)", packet.len()),
                );
                continue;
            }
            let found: HashSet<&str> = recs
                .iter()
                .map(|(_, r)| r.id.as_str())
                .filter(|id| sup.contains(id))
                .collect();
            let insufficient = match found.len() {
                0 => true,
                n if n == sup.len() => false,
                n => {
                    skip(&mut out, task, sub, source, format!(
                        "the packet holds {n} of the {} supporting paragraphs (an item needs none, or all as a control)",
                        sup.len()
                    ));
                    continue;
                }
            };
            let mut ids: Vec<String> = recs.iter().map(|(_, r)| r.id.clone()).collect();
            ids.sort();
            let key = (l.t.question_id.clone(), ids);
            let id = match claim(&mut made, key, id_of("na", l, sel)) {
                Ok(id) => id,
                Err(first) => {
                    skip(
                        &mut out,
                        task,
                        sub,
                        source,
                        format!("same packet as item {first}"),
                    );
                    continue;
                }
            };
            let shown: Vec<&SearchRecord> = recs.iter().map(|(_, r)| *r).collect();
            let opt_meta = vec![
                json!({"label": "A", "origin": "answer"}),
                json!({"label": "B", "origin": "abstain"}),
            ];
            let mut m = meta(&vanilla(source), opt_meta);
            m["packet"] = json!({
                "doc_ids": shown.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
                "supporting_found": found.len(),
                "supporting_total": sup.len(),
                "control": !insufficient,
            });
            out.items.push(Item {
                id,
                task,
                subtask: sub.map(str::to_string),
                language: "en".into(),
                query: l.t.question.clone(),
                context: format!("Search results:\n{}", numbered(&shown)),
                instruction: ABSTAIN_INSTRUCTION.into(),
                polarity: Polarity::Correct,
                options: vec![
                    McqOption {
                        label: "A".into(),
                        text: ANSWER_OPTION.into(),
                    },
                    McqOption {
                        label: "B".into(),
                        text: INSUFFICIENT_OPTION.into(),
                    },
                ],
                answer: vec![if insufficient { "B" } else { "A" }.into()],
                allow_empty: false,
                meta: Some(m),
            });
        }
    }
    out
}

/// A credibility label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credibility {
    Credible,
    LessCredible,
}

impl Credibility {
    fn as_str(self) -> &'static str {
        match self {
            Credibility::Credible => "credible",
            Credibility::LessCredible => "less_credible",
        }
    }
}

/// URL or domain patterns with credibility labels (`--credibility FILE`).
///
/// File: CSV with header `pattern,label`, label `credible` or `less_credible`. A pattern
/// with a `/` is a URL prefix, compared with the URL without its scheme
/// (`example.com/blog/` matches `https://example.com/blog/post-1`); any other pattern is a
/// domain matching that host and its subdomains (`example.com` matches `www.example.com`;
/// a leading `*.` is ignored). Matching ignores case. The longest matching pattern wins,
/// the first in the file among equally long ones; an unmatched record has no label.
#[derive(Debug, Clone, Default)]
pub struct CredibilityMap {
    rules: Vec<(String, Credibility)>,
}

impl CredibilityMap {
    /// Builds a map from (pattern, label) pairs.
    pub fn new(rules: Vec<(String, Credibility)>) -> Self {
        let rules = rules
            .into_iter()
            .map(|(p, c)| {
                let p = p.trim().to_lowercase();
                (p.strip_prefix("*.").map(str::to_string).unwrap_or(p), c)
            })
            .collect();
        CredibilityMap { rules }
    }

    /// Reads the CSV file described on [`CredibilityMap`].
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Input`] naming file and line for a missing column, an empty
    /// pattern or an unknown label, or a file with no rules.
    pub fn read(path: &Path) -> Result<Self> {
        let mut rdr = CsvReader::open(path)?;
        let pc = rdr.require("pattern", "the URL or domain pattern")?;
        let lc = rdr.require("label", "credible or less_credible")?;
        let mut rules = Vec::new();
        while let Some((line, rec)) = rdr.next_record()? {
            let pattern = rec.get(pc).unwrap_or("").trim().to_string();
            if pattern.is_empty() {
                return Err(Error::input(path, Some(line), "empty pattern"));
            }
            let label = match rec.get(lc).unwrap_or("").trim() {
                "credible" => Credibility::Credible,
                "less_credible" | "less-credible" => Credibility::LessCredible,
                other => {
                    return Err(Error::input(
                        path,
                        Some(line),
                        format!("label {other:?}: expected credible or less_credible"),
                    ))
                }
            };
            rules.push((pattern, label));
        }
        if rules.is_empty() {
            return Err(Error::input(
                path,
                None,
                "no rules (expected lines pattern,label)",
            ));
        }
        Ok(CredibilityMap::new(rules))
    }

    /// The label of `url`, if a pattern matches it.
    pub fn label(&self, url: &str) -> Option<Credibility> {
        let lower = url.to_lowercase();
        let bare = lower.split_once("://").map_or(lower.as_str(), |(_, r)| r);
        let host = super::host(url);
        let mut best: Option<(usize, Credibility)> = None;
        for (p, c) in &self.rules {
            let hit = if p.contains('/') {
                bare.starts_with(p.as_str())
            } else {
                host == *p || host.ends_with(&format!(".{p}"))
            };
            if hit && best.is_none_or(|(n, _)| p.len() > n) {
                best = Some((p.len(), *c));
            }
        }
        best.map(|(_, c)| c)
    }
}

/// Noise-reliability items, one per distinct packet that has at least one credible and one
/// less-credible rated record: options = the rated records (unrated ones are left out),
/// polarity `incorrect`, gold = the less-credible ones.
pub fn reliability(trajs: &[Logged], cred: &CredibilityMap) -> Generated {
    let mut out = Generated::default();
    let mut made: HashMap<(String, Vec<String>), String> = HashMap::new();
    let (task, sub) = (Task::NoiseRobustness, Some("reliability"));
    for l in trajs {
        for (sel, packet) in &l.t.packets {
            let source = Source {
                selector: Some(sel.clone()),
                ..l.source()
            };
            let recs = visible(packet);
            let rated: Vec<(&SearchRecord, Credibility)> = recs
                .iter()
                .filter_map(|(_, r)| cred.label(&r.url).map(|c| (*r, c)))
                .take(MAX_OPTIONS)
                .collect();
            let less = rated
                .iter()
                .filter(|(_, c)| *c == Credibility::LessCredible)
                .count();
            if less == 0 || less == rated.len() {
                skip(&mut out, task, sub, source, format!(
                    "the packet has {} rated record(s), {less} less credible; an item needs both kinds ({} unrated)",
                    rated.len(),
                    recs.len() - rated.len()
                ));
                continue;
            }
            let mut ids: Vec<String> = rated.iter().map(|(r, _)| r.id.clone()).collect();
            ids.sort();
            let key = (l.t.question_id.clone(), ids);
            let id = match claim(&mut made, key, id_of("nr", l, sel)) {
                Ok(id) => id,
                Err(first) => {
                    skip(
                        &mut out,
                        task,
                        sub,
                        source,
                        format!("same rated records as item {first}"),
                    );
                    continue;
                }
            };
            let labels = super::labels(rated.len());
            let queries: Vec<String> =
                l.t.steps
                    .iter()
                    .filter_map(|s| s.query.as_deref())
                    .map(|q| format!("\"{}\"", q.trim()))
                    .collect();
            let opt_meta = rated
                .iter()
                .zip(&labels)
                .map(|((r, c), lab)| json!({"label": lab, "origin": "retrieved", "doc_id": r.id, "url": r.url, "credibility": c.as_str()}))
                .collect();
            let mut m = meta(&vanilla(source), opt_meta);
            m["unrated_records"] = Value::from(recs.len() - rated.len());
            out.items.push(Item {
                id,
                task,
                subtask: sub.map(str::to_string),
                language: "en".into(),
                query: l.t.question.clone(),
                context: format!("Search queries issued: {}", queries.join(", ")),
                instruction: RELIABILITY_INSTRUCTION.into(),
                polarity: Polarity::Incorrect,
                options: rated
                    .iter()
                    .zip(&labels)
                    .map(|((r, _), lab)| McqOption {
                        label: lab.clone(),
                        text: record_line(r),
                    })
                    .collect(),
                answer: rated
                    .iter()
                    .zip(&labels)
                    .filter(|((_, c), _)| *c == Credibility::LessCredible)
                    .map(|(_, lab)| lab.clone())
                    .collect(),
                allow_empty: false,
                meta: Some(m),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credibility_patterns() {
        let m = CredibilityMap::new(vec![
            ("wikipedia.org".into(), Credibility::Credible),
            ("*.Example".into(), Credibility::LessCredible),
            (
                "en.wikipedia.org/wiki/user:".into(),
                Credibility::LessCredible,
            ),
        ]);
        assert_eq!(
            m.label("https://en.wikipedia.org/wiki/Leland"),
            Some(Credibility::Credible)
        );
        assert_eq!(
            m.label("https://en.wikipedia.org/wiki/User:Bob"),
            Some(Credibility::LessCredible)
        );
        assert_eq!(
            m.label("http://blog.example/post"),
            Some(Credibility::LessCredible)
        );
        assert_eq!(
            m.label("http://example/post"),
            Some(Credibility::LessCredible)
        );
        assert_eq!(m.label("http://notexample/post"), None);
        assert_eq!(m.label("https://wikipedia.org.evil.net/"), None);
    }
}
