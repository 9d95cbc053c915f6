//! Items from one source treated as a cluster (issue #35, item 4).
//!
//! RAGCap-Bench-style items are built from agent trajectories: one question's trajectory
//! gives an evidence-extraction item per search step, a planning item per step, an abstain
//! and a grounded-reasoning item per packet. Such items are not independent, and intervals
//! that resample them one by one are too narrow. The results files of `mcq run` do not carry
//! provenance; the items file does (`meta.provenance`, written by `stats mcq generate`), so
//! clusters come from `--items`.
//!
//! - [`ClusterBy`]: the rule (`auto`, `question`, `trajectory`, `none`).
//! - [`item_clusters`]: the cluster of every item of an items file under a rule.
//!
//! The cluster-adjusted McNemar test is [`super::paired_tests::obuchowski`].
//!
//! The cluster bootstrap itself is [`super::score::bootstrap_group_means`] with units: each
//! replicate draws clusters once, jointly across groups.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::item::Group;
use super::validate::Loaded;
use crate::error::{Error, Result};
use crate::io::jsonl::kind;
use crate::resample::clusters::number_by_first_appearance;

/// Which provenance makes items one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ClusterBy {
    /// `question` when any item carries provenance, else no clustering (with a note).
    #[default]
    Auto,
    /// Items made from the same source question (`question_id`), over every run, arm and
    /// trajectory of it: the coarsest unit that makes items dependent.
    Question,
    /// Items made from the same trajectory (`run`, `question_id`, `arm`, `trajectory`).
    Trajectory,
    /// Every item is its own unit (the item bootstrap of before).
    None,
}

/// The clusters of an items file under a rule: what the report's `clusters` block says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clusters {
    /// The rule in force: `question` or `trajectory`.
    pub rule: &'static str,
    /// The items file the provenance came from.
    pub items_file: String,
    /// Items in the file.
    pub items: usize,
    /// Distinct clusters over the file's items (an item without provenance counts as one).
    pub clusters: usize,
    /// Items without the provenance the rule needs: each is its own cluster.
    pub without_provenance: usize,
    /// Clusters with items in more than one scoring group (the bootstrap draws each whole,
    /// with its items in every group).
    pub spanning_groups: usize,
    /// Largest number of items in one cluster.
    pub largest: usize,
    /// What the reader should know about these clusters.
    pub notes: Vec<String>,
    /// Item id → cluster key.
    #[serde(skip)]
    key: HashMap<String, String>,
}

impl Clusters {
    /// The cluster key of item `id` (an id without a cluster is its own).
    pub fn key<'a>(&'a self, id: &'a str) -> &'a str {
        self.key.get(id).map_or(id, String::as_str)
    }

    /// These clusters with `notes` added after their own (what one bootstrap of them found,
    /// [`super::score::GroupReplicates::notes`]; an `Option` is a list of 0 or 1).
    pub fn with_notes(&self, notes: impl IntoIterator<Item = String>) -> Clusters {
        let mut c = self.clone();
        c.notes.extend(notes);
        c
    }

    /// Dense cluster indices of `ids`, numbered in order of first appearance.
    /// (The numbering of the shared cluster draw,
    /// [`crate::resample::clusters::number_by_first_appearance`].)
    pub fn indices<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
        number_by_first_appearance(ids.into_iter().map(|id| self.key(id)))
            .0
            .into_iter()
            .map(|c| c as usize)
            .collect()
    }
}

/// A provenance value as a key part: a string, or an integer written in decimal.
fn part(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

/// The cluster key of one item's `meta`, or `None` without provenance.
///
/// Provenance is `meta.provenance.source` (what `stats mcq generate` writes) or, for
/// hand-made files, `meta.provenance` itself; its `question_id` (and for `trajectory` its
/// `run`, `arm` and `trajectory`) are strings or integers.
fn key_of(meta: Option<&Value>, rule: ClusterBy) -> std::result::Result<Option<String>, String> {
    let Some(p) = meta.and_then(|m| m.get("provenance")) else {
        return Ok(None);
    };
    if p.is_null() {
        return Ok(None);
    }
    let Value::Object(po) = p else {
        return Err(format!(
            "meta.provenance is {}; expected an object with `source` (as `stats mcq generate` writes) or `question_id`",
            kind(p)
        ));
    };
    let (src, at) = match po.get("source") {
        Some(Value::Object(s)) => (s, "meta.provenance.source"),
        Some(v) if !v.is_null() => {
            return Err(format!(
                "meta.provenance.source is {}; expected an object with `question_id`",
                kind(v)
            ))
        }
        _ => (po, "meta.provenance"),
    };
    let field = |name: &str| -> std::result::Result<Option<String>, String> {
        match src.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => part(v).map(Some).ok_or_else(|| {
                format!(
                    "{at}.{name} is {}; expected a string or an integer",
                    kind(v)
                )
            }),
        }
    };
    let q = field("question_id")?;
    match rule {
        ClusterBy::Question | ClusterBy::Auto => Ok(q.map(|q| format!("question {q}"))),
        ClusterBy::Trajectory => {
            let (run, arm, t) = (field("run")?, field("arm")?, field("trajectory")?);
            Ok(match (q, t) {
                (Some(q), Some(t)) => Some(format!(
                    "trajectory {}/{q}/{}/{t}",
                    run.unwrap_or_default(),
                    arm.unwrap_or_default()
                )),
                _ => None,
            })
        }
        ClusterBy::None => Ok(None),
    }
}

/// The clusters of the items of `file` under `by`; `None` when the rule is `none`, or
/// `auto` and no item carries provenance.
///
/// # Errors
/// [`Error::Input`] naming `file` and the line of an item whose `meta.provenance` (or its
/// `source`, `question_id`, `run`, `arm`, `trajectory`) has the wrong type.
pub fn item_clusters(file: &Path, items: &[Loaded], by: ClusterBy) -> Result<Option<Clusters>> {
    if by == ClusterBy::None {
        return Ok(None);
    }
    let mut key = HashMap::new();
    let mut groups: HashMap<String, Vec<Group>> = HashMap::new();
    let mut sizes: HashMap<String, usize> = HashMap::new();
    let mut without = 0usize;
    for l in items {
        let k = key_of(l.item.meta.as_ref(), by)
            .map_err(|m| Error::input(file, Some(l.line), format!("item {:?}: {m}", l.item.id)))?;
        let k = match k {
            Some(k) => k,
            None => {
                without += 1;
                format!("item {}", l.item.id)
            }
        };
        let g = groups.entry(k.clone()).or_default();
        if !g.contains(&l.item.group()) {
            g.push(l.item.group());
        }
        *sizes.entry(k.clone()).or_default() += 1;
        key.insert(l.item.id.clone(), k);
    }
    if by == ClusterBy::Auto && without == items.len() {
        return Ok(None);
    }
    let rule = if by == ClusterBy::Trajectory {
        "trajectory"
    } else {
        "question"
    };
    let spanning = groups.values().filter(|g| g.len() > 1).count();
    let mut notes = Vec::new();
    if without > 0 {
        notes.push(format!(
            "{without} of {} item(s) carry no {rule} provenance; each is its own cluster",
            items.len()
        ));
    }
    Ok(Some(Clusters {
        rule,
        items_file: file.display().to_string(),
        items: items.len(),
        clusters: sizes.len(),
        without_provenance: without,
        spanning_groups: spanning,
        largest: sizes.values().copied().max().unwrap_or(0),
        notes,
        key,
    }))
}
