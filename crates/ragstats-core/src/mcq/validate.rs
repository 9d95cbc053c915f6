//! Reading an items file and checking every format rule, collecting all violations.
//!
//! Rules (each has a short name used in reports):
//!
//! | rule | what is checked |
//! |---|---|
//! | `json` | the line is a JSON object that names no key twice |
//! | `field` | required fields present with the right type (`id`, `task`, `language`, `query`, `context`, `instruction`, `polarity`, `options`, `answer`); no unknown fields |
//! | `duplicate_id` | ids are unique in the file |
//! | `task` | `task` is one of the four task types |
//! | `subtask` | the (task, subtask) pair exists: planning needs convergent/divergent, noise_robustness abstain/reliability, the others null or absent |
//! | `polarity` | `correct` or `incorrect` |
//! | `options` | at least two options, each `{"label", "text"}` |
//! | `label` | labels are single upper-case letters A–Z and unique |
//! | `option_text` | option texts are non-empty and unique (after trimming and case folding) |
//! | `answer` | answer labels are unique and among the options |
//! | `empty_answer` | the answer is non-empty unless `"allow_empty": true` |

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::item::{Group, Item, McqOption, Polarity, Task};
use crate::document::Report;
use crate::error::{Error, Result};
use crate::io::clip;
use crate::io::jsonl::{echo, kind, parse_value};

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// 1-based line in the file.
    pub line: u64,
    /// The item id, when the line has one.
    pub id: Option<String>,
    /// The rule's short name (see the module docs).
    pub rule: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Violation {
    /// `file:line: item "id": [rule] message`.
    pub fn display(&self, file: &Path) -> String {
        format!("{}:{}: {}", file.display(), self.line, self.what())
    }

    /// `item "id": [rule] message`, the id clipped.
    fn what(&self) -> String {
        format!(
            "{}[{}] {}",
            self.id
                .as_ref()
                .map(|i| format!("item {:?}: ", clip(i)))
                .unwrap_or_default(),
            self.rule,
            self.message
        )
    }
}

/// A line of an items file that passed every rule, with its raw text.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The item.
    pub item: Item,
    /// 1-based line number.
    pub line: u64,
    /// The line as it was in the file (written back unchanged by `mcq filter`).
    pub raw: String,
}

/// Everything read from an items file.
#[derive(Debug, Clone, Default)]
pub struct ItemsFile {
    /// Items that passed every rule, in file order.
    pub items: Vec<Loaded>,
    /// Every violation, in line order.
    pub violations: Vec<Violation>,
    /// Non-blank lines read.
    pub lines: u64,
}

/// What `mcq validate` reports of an items file: its size, the valid items per scoring
/// group, and every violation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidateReport {
    /// The items file as the caller names it (the violations' `FILE:LINE:` in text; the
    /// JSON document names it in `run.inputs`).
    #[serde(skip)]
    pub source: PathBuf,
    /// Non-blank lines read.
    pub lines: u64,
    /// Items that passed every rule.
    pub valid_items: usize,
    /// Valid items per scoring group, in benchmark order (every group, 0 included);
    /// serialized as an object from group name to count.
    #[serde(serialize_with = "group_counts")]
    pub groups: Vec<(Group, usize)>,
    /// Every violation, in line order.
    pub violations: Vec<Violation>,
}

/// Writes (group, count) pairs as `{"group name": count}`.
fn group_counts<S: Serializer>(
    groups: &[(Group, usize)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(groups.len()))?;
    for (g, n) in groups {
        m.serialize_entry(g.as_str(), n)?;
    }
    m.end()
}

/// Validation does not resample: the default (all `null`) engine.
/// Exit status 2 when the file has violations: it is not a valid items file.
impl Report for ValidateReport {
    fn exit_code(&self) -> u8 {
        if self.violations.is_empty() {
            0
        } else {
            2
        }
    }
}

impl ValidateReport {
    /// The distinct lines with a violation.
    pub fn lines_with_violations(&self) -> usize {
        self.violations
            .iter()
            .map(|v| v.line)
            .collect::<std::collections::BTreeSet<u64>>()
            .len()
    }
}

/// The validation report of the items file `source`, read as `f`: valid items counted per
/// group of [`Group::ALL`], violations as read.
pub fn validation_report(source: &Path, f: &ItemsFile) -> ValidateReport {
    ValidateReport {
        source: source.to_path_buf(),
        lines: f.lines,
        valid_items: f.items.len(),
        groups: Group::ALL
            .iter()
            .map(|g| (*g, f.items.iter().filter(|l| l.item.group() == *g).count()))
            .collect(),
        violations: f.violations.clone(),
    }
}

const FIELDS: [&str; 12] = [
    "id",
    "task",
    "subtask",
    "language",
    "query",
    "context",
    "instruction",
    "polarity",
    "options",
    "answer",
    "allow_empty",
    "meta",
];

/// Reads `path` and checks every line against every rule. A line with any violation is
/// left out of `items`; a duplicate id is a violation of the later line.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Input`] for text that is not UTF-8.
/// Rule violations are not errors: they are returned in [`ItemsFile::violations`].
pub fn read_items(path: &Path) -> Result<ItemsFile> {
    read_items_from(&crate::panel::Source::file(path))
}

/// [`read_items`] of the items `source` holds (a file, a table or records).
///
/// # Errors
/// As [`read_items`].
pub fn read_items_from(source: &crate::panel::Source) -> Result<ItemsFile> {
    let mut rdr = crate::panel::memory::jsonl_of(source)?;
    let mut out = ItemsFile::default();
    let mut seen: HashMap<String, u64> = HashMap::new();
    while let Some((n, line)) = rdr.next_line()? {
        out.lines += 1;
        let mut vs = Vec::new();
        let item = check_line(line, n, &mut vs);
        if let Some(id) = vs
            .first()
            .and_then(|v| v.id.clone())
            .or_else(|| item.as_ref().map(|it| it.id.clone()))
        {
            if let Some(first) = seen.get(&id) {
                vs.push(Violation {
                    line: n,
                    id: Some(id.clone()),
                    rule: "duplicate_id",
                    message: format!("id already used on line {first}"),
                });
            } else {
                seen.insert(id, n);
            }
        }
        match item {
            Some(item) if vs.is_empty() => out.items.push(Loaded {
                item,
                line: n,
                raw: line.to_string(),
            }),
            _ => out.violations.extend(vs),
        }
    }
    Ok(out)
}

/// Reads `path` and fails on the first violation (for commands that need clean items).
///
/// # Errors
/// [`Error::Io`]; [`Error::Input`] naming file, line and id of the first violation, with
/// the number of further violations.
pub fn load_items(path: &Path) -> Result<Vec<Item>> {
    load_items_from(&crate::panel::Source::file(path))
}

/// [`load_items`] of the items `source` holds.
///
/// # Errors
/// As [`load_items`].
pub fn load_items_from(source: &crate::panel::Source) -> Result<Vec<Item>> {
    Ok(load_items_lines_from(source)?
        .into_iter()
        .map(|l| l.item)
        .collect())
}

/// [`load_items`] with each item's line (and text) kept.
///
/// # Errors
/// Those of [`load_items`].
pub fn load_items_lines(path: &Path) -> Result<Vec<Loaded>> {
    load_items_lines_from(&crate::panel::Source::file(path))
}

/// [`load_items_lines`] of the items `source` holds.
///
/// # Errors
/// As [`load_items`].
pub fn load_items_lines_from(source: &crate::panel::Source) -> Result<Vec<Loaded>> {
    let path = source.name();
    let f = read_items_from(source)?;
    if let Some(v) = f.violations.first() {
        let more = f.violations.len() - 1;
        return Err(Error::input(
            path,
            Some(v.line),
            format!(
                "{}{}",
                v.what(),
                if more > 0 {
                    format!(" (and {more} more violation(s); run `stats mcq validate`)")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(f.items)
}

/// Checks one line; pushes every violation to `vs` and returns the item if it could be built.
fn check_line(line: &str, n: u64, vs: &mut Vec<Violation>) -> Option<Item> {
    let v: Value = match parse_value(line) {
        Ok(v) => v,
        Err(e) => {
            vs.push(Violation {
                line: n,
                id: None,
                rule: "json",
                message: e.to_string(),
            });
            return None;
        }
    };
    let Value::Object(obj) = v else {
        vs.push(Violation {
            line: n,
            id: None,
            rule: "json",
            message: "expected a JSON object (one item per line)".into(),
        });
        return None;
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Number(x)) if x.is_u64() || x.is_i64() => Some(x.to_string()),
        _ => None,
    };
    let mut push = |rule: &'static str, message: String| {
        vs.push(Violation {
            line: n,
            id: id.clone(),
            rule,
            message,
        })
    };
    if id.is_none() {
        push("field", "\"id\" must be a non-empty string".into());
    }
    for k in obj.keys() {
        if !FIELDS.contains(&k.as_str()) {
            push(
                "field",
                format!(
                    "unknown field {:?} (expected {})",
                    clip(k),
                    FIELDS.join(", ")
                ),
            );
        }
    }
    let text_field = |name: &str,
                      allow_empty: bool,
                      push: &mut dyn FnMut(&'static str, String)|
     -> Option<String> {
        match obj.get(name) {
            Some(Value::String(s)) if allow_empty || !s.trim().is_empty() => Some(s.clone()),
            Some(Value::String(_)) => {
                push("field", format!("{name:?} is empty"));
                None
            }
            Some(other) => {
                push(
                    "field",
                    format!("{name:?} must be a string, got {}", kind(other)),
                );
                None
            }
            None => {
                push("field", format!("missing {name:?}"));
                None
            }
        }
    };
    let language = text_field("language", false, &mut push);
    let query = text_field("query", false, &mut push);
    let context = text_field("context", true, &mut push);
    let instruction = text_field("instruction", false, &mut push);

    let task = match obj.get("task") {
        Some(Value::String(s)) => match Task::parse(s) {
            Some(t) => Some(t),
            None => {
                push(
                    "task",
                    format!("unknown task {:?} (expected planning, evidence_extraction, grounded_reasoning or noise_robustness)", clip(s)),
                );
                None
            }
        },
        Some(other) => {
            push(
                "field",
                format!("\"task\" must be a string, got {}", kind(other)),
            );
            None
        }
        None => {
            push("field", "missing \"task\"".into());
            None
        }
    };
    let subtask = match obj.get("subtask") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            push(
                "subtask",
                format!("\"subtask\" must be a string or null, got {}", kind(other)),
            );
            return None;
        }
    };
    if let Some(t) = task {
        let allowed = t.subtasks();
        match (&subtask, allowed.is_empty()) {
            (None, false) => push(
                "subtask",
                format!(
                    "task {} needs a subtask: {}",
                    t.as_str(),
                    allowed.join(" or ")
                ),
            ),
            (Some(s), false) if !allowed.contains(&s.as_str()) => push(
                "subtask",
                format!(
                    "task {} has no subtask {:?} (expected {})",
                    t.as_str(),
                    clip(s),
                    allowed.join(" or ")
                ),
            ),
            (Some(s), true) => push(
                "subtask",
                format!(
                    "task {} has no subtasks; got {:?} (expected null or no field)",
                    t.as_str(),
                    clip(s)
                ),
            ),
            _ => {}
        }
    }
    let polarity = match obj.get("polarity") {
        Some(Value::String(s)) if s == "correct" => Some(Polarity::Correct),
        Some(Value::String(s)) if s == "incorrect" => Some(Polarity::Incorrect),
        Some(other) => {
            push(
                "polarity",
                format!(
                    "\"polarity\" must be \"correct\" or \"incorrect\", got {}",
                    echo(other)
                ),
            );
            None
        }
        None => {
            push("field", "missing \"polarity\"".into());
            None
        }
    };
    let allow_empty = match obj.get("allow_empty") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            push(
                "field",
                format!("\"allow_empty\" must be true or false, got {}", echo(other)),
            );
            false
        }
    };
    let options = check_options(&obj, &mut push);
    let answer = check_answer(&obj, options.as_deref(), allow_empty, &mut push);
    Some(Item {
        id: id?,
        task: task?,
        subtask,
        language: language?,
        query: query?,
        context: context?,
        instruction: instruction?,
        polarity: polarity?,
        options: options?,
        answer: answer?,
        allow_empty,
        meta: obj.get("meta").cloned().filter(|m| !m.is_null()),
    })
}

fn check_options(
    obj: &Map<String, Value>,
    push: &mut dyn FnMut(&'static str, String),
) -> Option<Vec<McqOption>> {
    let arr = match obj.get("options") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            push(
                "options",
                format!("\"options\" must be an array, got {}", kind(other)),
            );
            return None;
        }
        None => {
            push("field", "missing \"options\"".into());
            return None;
        }
    };
    let mut ok = true;
    if arr.len() < 2 {
        push(
            "options",
            format!("{} option(s); at least two are needed", arr.len()),
        );
        ok = false;
    }
    let mut out = Vec::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut texts: HashMap<String, usize> = HashMap::new();
    for (j, o) in arr.iter().enumerate() {
        let (label, text) = match o {
            Value::Object(m) => (m.get("label"), m.get("text")),
            _ => {
                push(
                    "options",
                    format!("options[{j}] must be an object {{\"label\", \"text\"}}"),
                );
                ok = false;
                continue;
            }
        };
        if let Value::Object(m) = o {
            if let Some(k) = m.keys().find(|k| *k != "label" && *k != "text") {
                push(
                    "options",
                    format!(
                        "options[{j}] has unknown field {:?} (expected label, text)",
                        clip(k)
                    ),
                );
                ok = false;
            }
        }
        let label = match label {
            Some(Value::String(s)) if s.len() == 1 && s.as_bytes()[0].is_ascii_uppercase() => {
                s.clone()
            }
            Some(other) => {
                push(
                    "label",
                    format!(
                        "options[{j}] label {} is not a single upper-case letter A-Z",
                        echo(other)
                    ),
                );
                ok = false;
                continue;
            }
            None => {
                push("options", format!("options[{j}] has no \"label\""));
                ok = false;
                continue;
            }
        };
        if let Some(first) = labels.insert(label.clone(), j) {
            push(
                "label",
                format!("label {label:?} is used by options[{first}] and options[{j}]"),
            );
            ok = false;
        }
        let text = match text {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => {
                push("option_text", format!("option {label} has an empty text"));
                ok = false;
                continue;
            }
            _ => {
                push("options", format!("option {label} needs a string \"text\""));
                ok = false;
                continue;
            }
        };
        let key = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        if let Some(first) = texts.insert(key, j) {
            push(
                "option_text",
                format!(
                    "option {label} has the same text as option {}",
                    out.get(first)
                        .map_or("?".to_string(), |o: &McqOption| o.label.clone())
                ),
            );
            ok = false;
        }
        out.push(McqOption { label, text });
    }
    ok.then_some(out)
}

fn check_answer(
    obj: &Map<String, Value>,
    options: Option<&[McqOption]>,
    allow_empty: bool,
    push: &mut dyn FnMut(&'static str, String),
) -> Option<Vec<String>> {
    let arr = match obj.get("answer") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            push(
                "answer",
                format!("\"answer\" must be an array of labels, got {}", kind(other)),
            );
            return None;
        }
        None => {
            push("field", "missing \"answer\"".into());
            return None;
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut ok = true;
    let mut seen = HashSet::new();
    for a in arr {
        let Some(l) = a.as_str() else {
            push(
                "answer",
                format!("answer entry {} is not a label string", echo(a)),
            );
            ok = false;
            continue;
        };
        if !seen.insert(l.to_string()) {
            push(
                "answer",
                format!("label {:?} appears twice in the answer", clip(l)),
            );
            ok = false;
            continue;
        }
        if let Some(opts) = options {
            if !opts.iter().any(|o| o.label == l) {
                let have: Vec<&str> = opts.iter().map(|o| o.label.as_str()).collect();
                push(
                    "answer",
                    format!(
                        "answer label {:?} is not an option (options: {})",
                        clip(l),
                        have.join(", ")
                    ),
                );
                ok = false;
                continue;
            }
        }
        out.push(l.to_string());
    }
    if arr.is_empty() && !allow_empty {
        push(
            "empty_answer",
            "the answer is empty; set \"allow_empty\": true if \"none of the options\" is the intended answer".into(),
        );
        ok = false;
    }
    let order: Vec<String> = options
        .map(|o| o.iter().map(|o| o.label.clone()).collect())
        .unwrap_or_default();
    (ok && options.is_some()).then(|| super::item::in_option_order(&out, &order))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped sample (tests/golden/text/mcq-validate.txt records its counts: 25 items,
    /// no violations), and a file with one valid item, one line that is not JSON and one
    /// that lacks `query` (the rules of tests/it/mcq_cli.rs `validate_reports_every_rule…`).
    #[test]
    fn validation_report_counts_groups_and_violations() {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mcq/sample.jsonl");
        let r = validation_report(&sample, &read_items(&sample).unwrap());
        assert_eq!((r.lines, r.valid_items, r.violations.len()), (25, 25, 0));
        let counts: Vec<usize> = r.groups.iter().map(|(_, n)| *n).collect();
        assert_eq!(counts, [4, 4, 4, 5, 4, 4]);
        assert_eq!(r.groups[0].0, Group::ALL[0]);

        let dir = tempfile::tempdir().unwrap();
        let good = r#"{"id": "ok-1", "task": "evidence_extraction", "subtask": null, "language": "en", "query": "q", "context": "c", "instruction": "i", "polarity": "correct", "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}], "answer": ["A"]}"#;
        let no_query = good.replace(r#""query": "q", "#, "").replace("ok-1", "f-1");
        let p = dir.path().join("items.jsonl");
        std::fs::write(&p, format!("{good}\n{{not json\n{no_query}\n")).unwrap();
        let r = validation_report(&p, &read_items(&p).unwrap());
        assert_eq!((r.lines, r.valid_items), (3, 1));
        let rules: Vec<(u64, &str)> = r.violations.iter().map(|v| (v.line, v.rule)).collect();
        assert_eq!(rules, [(2, "json"), (3, "field")]);
        assert_eq!(r.violations[1].id.as_deref(), Some("f-1"));
        assert_eq!(r.lines_with_violations(), 2);
        let evidence = r
            .groups
            .iter()
            .find(|(g, _)| g.as_str() == "evidence_extraction");
        assert_eq!(evidence.unwrap().1, 1);
    }

    #[test]
    fn a_validate_document_is_counts_by_group_and_the_violations() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let r = ValidateReport {
            source: PathBuf::from("items.jsonl"),
            lines: 3,
            valid_items: 2,
            groups: vec![(Group::ALL[0], 2), (Group::ALL[5], 0)],
            violations: vec![Violation {
                line: 2,
                id: Some("x".into()),
                rule: "task",
                message: "bad".into(),
            }],
        };
        let d = document("mcq validate", Inputs::new().with("items", "i.jsonl"), &r);
        let mut run = d["run"].clone();
        assert_eq!(
            d,
            json!({
                "lines": 3, "valid_items": 2,
                "groups": {Group::ALL[0].as_str(): 2, Group::ALL[5].as_str(): 0},
                "violations": [{"line": 2, "id": "x", "rule": "task", "message": "bad"}],
                "run": run.clone(),
            })
        );
        assert_eq!(run["inputs"], json!({"items": "i.jsonl"}));
        for k in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(run[k], Value::Null, "{k}");
            run.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(
            run,
            json!({"command": "mcq validate", "ragstats": env!("CARGO_PKG_VERSION"),
                   "inputs": {"items": "i.jsonl"}})
        );
        assert!(d.get("file").is_none());
    }
}
