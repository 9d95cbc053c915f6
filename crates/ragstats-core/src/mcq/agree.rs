//! Annotator agreement: average pairwise Jaccard per item, per task and overall; majority
//! gold (whole answer set, or per option).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::item::{Item, Task};
use super::metrics::jaccard;
use crate::document::Report;
use crate::error::{Error, Result};
use crate::io::clip;
use crate::io::jsonl::echo;

/// One annotation line `{"id", "annotator", "answer": [...]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// Item id.
    pub id: String,
    /// Annotator name.
    pub annotator: String,
    /// Chosen labels, sorted and unique.
    pub answer: Vec<String>,
    /// 1-based line.
    pub line: u64,
}

/// Reads annotations. With `items`, ids must be items and labels their options.
///
/// # Errors
/// [`Error::Io`]; [`Error::Input`] with file:line for a malformed line, an unknown id or
/// label, or the same (id, annotator) twice.
pub fn read_annotations(path: &Path, items: Option<&[Item]>) -> Result<Vec<Annotation>> {
    read_annotations_from(&crate::panel::Source::file(path), items)
}

/// [`read_annotations`] of the annotations `source` holds (a file, a table or records).
///
/// # Errors
/// As [`read_annotations`].
pub fn read_annotations_from(
    source: &crate::panel::Source,
    items: Option<&[Item]>,
) -> Result<Vec<Annotation>> {
    let path = source.name();
    let mut rdr = crate::panel::memory::jsonl_of(source)?;
    let by_id: Option<HashMap<&str, &Item>> =
        items.map(|its| its.iter().map(|i| (i.id.as_str(), i)).collect());
    let mut out = Vec::new();
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    while let Some((n, v)) = rdr.next_value()? {
        let bad = |m: String| Error::input(path, Some(n), m);
        let expected = "expected {\"id\": string, \"annotator\": string, \"answer\": [labels]}";
        let id = match v.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(x)) => x.to_string(),
            _ => return Err(bad(format!("missing or empty \"id\"; {expected}"))),
        };
        let shown = format!("id {:?}", clip(&id));
        let annotator = match v.get("annotator") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(x)) => x.to_string(),
            _ => return Err(bad(format!("{shown}: missing \"annotator\"; {expected}"))),
        };
        let Some(arr) = v.get("answer").and_then(Value::as_array) else {
            return Err(bad(format!(
                "{shown}: \"answer\" must be an array of labels; {expected}"
            )));
        };
        let mut answer = Vec::new();
        for a in arr {
            let Some(l) = a.as_str() else {
                return Err(bad(format!(
                    "{shown}: answer entry {} is not a label string",
                    echo(a)
                )));
            };
            answer.push(l.to_string());
        }
        answer.sort();
        answer.dedup();
        if let Some(map) = &by_id {
            let Some(item) = map.get(id.as_str()) else {
                return Err(bad(format!("{shown} is not in the items file")));
            };
            if let Some(l) = answer
                .iter()
                .find(|l| !item.options.iter().any(|o| &o.label == *l))
            {
                return Err(bad(format!(
                    "{shown}: label {:?} is not an option of the item",
                    clip(l)
                )));
            }
        }
        if let Some(first) = seen.insert((id.clone(), annotator.clone()), n) {
            return Err(bad(format!(
                "{shown}: annotator {:?} already annotated it on line {first}",
                clip(&annotator)
            )));
        }
        out.push(Annotation {
            id,
            annotator,
            answer,
            line: n,
        });
    }
    if out.is_empty() {
        return Err(Error::input(path, None, "no annotations"));
    }
    Ok(out)
}

/// Agreement on one item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemAgreement {
    /// Item id.
    pub id: String,
    /// Task (from the items file), if known.
    pub task: Option<Task>,
    /// Annotators.
    pub annotators: usize,
    /// Mean Jaccard over the n(n−1)/2 annotator pairs (`None` with one annotator).
    pub jaccard: Option<f64>,
    /// The answer set chosen by more than half of the annotators, if any.
    pub majority: Option<Vec<String>>,
    /// Annotators who chose `majority` (or the most common set when there is none).
    pub votes: usize,
    /// Labels chosen by more than half of the annotators.
    pub per_option: Vec<String>,
}

/// Mean agreement of a task or overall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementRow {
    /// Task name, `ungrouped` (no items file) or `overall`.
    pub name: String,
    /// Items with at least two annotators.
    pub items: usize,
    /// Mean over those items of their mean pairwise Jaccard.
    pub jaccard: f64,
    /// Items with a majority answer set.
    pub with_majority: usize,
    /// Why `jaccard` is undefined (NaN, `null` in JSON): [`JACCARD_UNDEFINED`]; absent
    /// when it is defined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined: Option<&'static str>,
}

/// Why a task's mean pairwise Jaccard is undefined.
pub const JACCARD_UNDEFINED: &str =
    "no item has 2 or more annotators, and agreement needs a pair of annotators";

/// The full agreement report (serialized with `rows` as `agreement`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementReport {
    /// Per task (or `ungrouped`), then `overall`.
    #[serde(rename = "agreement")]
    pub rows: Vec<AgreementRow>,
    /// Per item, in id order.
    pub items: Vec<ItemAgreement>,
    /// Items without a majority answer set: to resolve by discussion.
    pub no_majority: Vec<String>,
}

/// Computes agreement; `tasks` maps ids to tasks when an items file is given.
pub fn agreement(anns: &[Annotation], tasks: Option<&HashMap<String, Task>>) -> AgreementReport {
    let mut by_item: BTreeMap<&str, Vec<&Annotation>> = BTreeMap::new();
    for a in anns {
        by_item.entry(a.id.as_str()).or_default().push(a);
    }
    let mut items = Vec::new();
    for (id, list) in by_item {
        let n = list.len();
        let mut sum = 0.0;
        let mut pairs = 0usize;
        for i in 0..n {
            for j in i + 1..n {
                sum += jaccard(&list[i].answer, &list[j].answer);
                pairs += 1;
            }
        }
        let mut counts: BTreeMap<&Vec<String>, usize> = BTreeMap::new();
        for a in &list {
            *counts.entry(&a.answer).or_default() += 1;
        }
        let (top, votes) = counts
            .iter()
            .max_by_key(|(_, c)| **c)
            .map(|(s, c)| ((*s).clone(), *c))
            .unwrap_or_default();
        let mut label_counts: BTreeMap<&str, usize> = BTreeMap::new();
        for a in &list {
            for l in &a.answer {
                *label_counts.entry(l.as_str()).or_default() += 1;
            }
        }
        items.push(ItemAgreement {
            id: id.to_string(),
            task: tasks.and_then(|t| t.get(id).copied()),
            annotators: n,
            jaccard: (pairs > 0).then(|| sum / pairs as f64),
            majority: (2 * votes > n).then_some(top),
            votes,
            per_option: label_counts
                .into_iter()
                .filter(|(_, c)| 2 * c > n)
                .map(|(l, _)| l.to_string())
                .collect(),
        });
    }
    let row = |name: String, its: &[&ItemAgreement]| {
        let js: Vec<f64> = its.iter().filter_map(|i| i.jaccard).collect();
        AgreementRow {
            name,
            items: js.len(),
            jaccard: if js.is_empty() {
                f64::NAN
            } else {
                js.iter().sum::<f64>() / js.len() as f64
            },
            with_majority: its.iter().filter(|i| i.majority.is_some()).count(),
            undefined: js.is_empty().then_some(JACCARD_UNDEFINED),
        }
    };
    let mut rows = Vec::new();
    if tasks.is_some() {
        for t in Task::ALL {
            let its: Vec<&ItemAgreement> = items.iter().filter(|i| i.task == Some(t)).collect();
            if !its.is_empty() {
                rows.push(row(t.as_str().into(), &its));
            }
        }
    }
    let all: Vec<&ItemAgreement> = items.iter().collect();
    rows.push(row("overall".into(), &all));
    let no_majority = items
        .iter()
        .filter(|i| i.majority.is_none())
        .map(|i| i.id.clone())
        .collect();
    AgreementReport {
        rows,
        items,
        no_majority,
    }
}

/// Settings of `mcq agree`: which gold answer an item gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct AgreeSettings {
    /// Gold by option (an option is gold when more than half of the annotators chose it)
    /// instead of the majority answer set.
    pub per_option: bool,
}

impl AgreeSettings {
    /// `per_option` or `majority`: how gold answers were chosen.
    pub fn method(&self) -> &'static str {
        if self.per_option {
            "per_option"
        } else {
            "majority"
        }
    }

    /// The gold answer of an item under these settings (`None`: no majority).
    pub fn gold<'a>(&self, i: &'a ItemAgreement) -> Option<&'a [String]> {
        if self.per_option {
            Some(&i.per_option)
        } else {
            i.majority.as_deref()
        }
    }
}

/// One gold answer, as `mcq agree --gold-out` writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoldAnswer {
    /// Item id.
    pub id: String,
    /// The gold answer set.
    pub answer: Vec<String>,
    /// `majority` or `per_option`.
    pub method: &'static str,
    /// Annotators who chose the majority set.
    pub votes: usize,
    /// Annotators of the item.
    pub annotators: usize,
}

/// What `mcq agree` reports: agreement per item, task and overall, and the gold answers.
/// Its document (docs/json.md) is `method` (the settings), the [`AgreementReport`]'s
/// keys, and no gold answers (they are each item's `majority` or `per_option`, and the
/// `--gold-out` file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreeReport {
    /// The settings the analysis ran with.
    #[serde(rename = "method", serialize_with = "method")]
    pub settings: AgreeSettings,
    /// Agreement ([`agreement`]).
    #[serde(flatten)]
    pub agreement: AgreementReport,
    /// Gold answers of the items that have one, in item order.
    #[serde(skip)]
    pub gold: Vec<GoldAnswer>,
}

/// Writes the settings as their [`AgreeSettings::method`].
fn method<S: Serializer>(a: &AgreeSettings, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(a.method())
}

/// Agreement does not resample: the default (all `null`) engine.
impl Report for AgreeReport {}

/// Annotator agreement of `anns` (mean pairwise Jaccard |S∩T|/|S∪T| per item, per task and
/// overall; grouped by task when `items` are given) and each item's gold answer: the
/// majority set (chosen by more than half of the annotators) or, with
/// [`AgreeSettings::per_option`], every option chosen by more than half.
pub fn agree(anns: &[Annotation], items: Option<&[Item]>, settings: &AgreeSettings) -> AgreeReport {
    let tasks: Option<HashMap<String, Task>> =
        items.map(|its| its.iter().map(|i| (i.id.clone(), i.task)).collect());
    let agreement = agreement(anns, tasks.as_ref());
    let gold = agreement
        .items
        .iter()
        .filter_map(|i| {
            settings.gold(i).map(|g| GoldAnswer {
                id: i.id.clone(),
                answer: g.to_vec(),
                method: settings.method(),
                votes: i.votes,
                annotators: i.annotators,
            })
        })
        .collect();
    AgreeReport {
        settings: *settings,
        agreement,
        gold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-computed agreement of the shipped annotations in tests/it/mcq_cli.rs
    /// `agreement_by_hand_on_the_sample_annotations` (per-item Jaccards in its comments),
    /// through the library.
    #[test]
    fn agree_by_hand_on_the_sample_annotations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let items =
            super::super::validate::load_items(&root.join("data/mcq/sample.jsonl")).unwrap();
        let anns =
            read_annotations(&root.join("data/mcq/annotations.jsonl"), Some(&items)).unwrap();
        let r = agree(&anns, Some(&items), &AgreeSettings::default());
        let want = [
            ("planning", (2.0 / 3.0 + 5.0 / 9.0) / 2.0, 1),
            ("evidence_extraction", 1.0, 1),
            ("grounded_reasoning", (7.0 / 9.0 + 1.0 / 3.0) / 2.0, 2),
            ("noise_robustness", (1.0 + 1.0 / 3.0 + 1.0) / 3.0, 2),
            ("overall", 51.0 / 72.0, 6),
        ];
        for (name, j, maj) in want {
            let row = r.agreement.rows.iter().find(|x| x.name == name).unwrap();
            assert!((row.jaccard - j).abs() < 1e-12, "{name}: {row:?}");
            assert_eq!(row.with_majority, maj, "{name}");
        }
        assert_eq!(r.agreement.no_majority, ["nr-001", "pd-001"]);
        // Majority gold: every item but the two without a majority; gr-003's is empty.
        assert_eq!(r.gold.len(), 6);
        let gold = |id: &str| r.gold.iter().find(|g| g.id == id).map(|g| g.answer.clone());
        assert_eq!(gold("gr-003"), Some(vec![]));
        assert_eq!(gold("pc-001"), Some(vec!["A".to_string(), "D".to_string()]));
        assert_eq!(gold("pd-001"), None);
        // Per option: always defined.
        let r = agree(&anns, None, &AgreeSettings { per_option: true });
        assert_eq!(r.gold.len(), 8);
        let pd = r.gold.iter().find(|g| g.id == "pd-001").unwrap();
        assert_eq!(
            (pd.answer.join(","), pd.method, pd.votes, pd.annotators),
            ("A,B,D".into(), "per_option", 1, 3)
        );
    }

    /// One item with two annotators (Jaccard |{A}|/|{A, B}| = 1/2, majority: none of the
    /// two sets has more than half of the votes) and, in a second report, one with a single
    /// annotator (no pair: undefined, with its reason).
    #[test]
    fn an_agree_document_is_the_method_rows_and_items() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let ann = |id: &str, who: &str, answer: &[&str]| Annotation {
            id: id.into(),
            annotator: who.into(),
            answer: answer.iter().map(|s| s.to_string()).collect(),
            line: 1,
        };
        let anns = [ann("q1", "x", &["A"]), ann("q1", "y", &["A", "B"])];
        let r = agree(&anns, None, &AgreeSettings { per_option: true });
        let d = document(
            "mcq agree",
            Inputs::new().with("annotations", "a.jsonl"),
            &r,
        );
        assert_eq!(
            d["agreement"],
            json!([{"name": "overall", "items": 1, "jaccard": 0.5, "with_majority": 0}])
        );
        assert_eq!(
            d["items"],
            json!([{"id": "q1", "task": null, "annotators": 2, "jaccard": 0.5,
                    "majority": null, "votes": 1, "per_option": ["A"]}])
        );
        assert_eq!(
            (&d["method"], &d["no_majority"]),
            (&json!("per_option"), &json!(["q1"]))
        );
        let mut keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["agreement", "items", "method", "no_majority", "run"]);
        for k in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(d["run"][k], Value::Null, "{k}");
        }

        let r = agree(&anns[..1], None, &AgreeSettings::default());
        let d = document("mcq agree", Inputs::new(), &r);
        assert_eq!(
            d["agreement"],
            json!([{"name": "overall", "items": 0, "jaccard": null, "with_majority": 1,
                    "undefined": JACCARD_UNDEFINED}])
        );
        assert_eq!(d["method"], "majority");
    }
}
