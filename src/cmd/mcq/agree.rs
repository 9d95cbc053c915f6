//! `stats mcq agree`: annotator agreement (pairwise Jaccard) and majority-vote gold.

use std::collections::HashMap;
use std::path::PathBuf;

use ragstats_core::mcq::agree::{agreement, read_annotations};
use ragstats_core::mcq::validate::load_items;
use ragstats_core::mcq::Task;
use serde_json::json;

use crate::cmd::common::{csv_num, num, print_json, undefined_because, write_csv, Format, Table};

/// Why a task's mean pairwise Jaccard is `undefined`/`null`.
const JACCARD_UNDEFINED: &str =
    "no item has 2 or more annotators, and agreement needs a pair of annotators";

/// Flags of `stats mcq agree`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Annotations JSONL: {"id", "annotator", "answer": [...]} per line.
    pub annotations: PathBuf,
    /// Items JSONL: groups agreement by task and checks ids and labels.
    #[arg(long)]
    pub items: Option<PathBuf>,
    /// Gold by option: an option is gold when more than half of the annotators chose it.
    #[arg(long)]
    pub per_option: bool,
    /// Write the gold answers ({"id", "answer", "method", "votes", "annotators"}) here.
    #[arg(long, value_name = "PATH")]
    pub gold_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    if let Some(gold) = &a.gold_out {
        let mut inputs = vec![("annotations file", a.annotations.as_path())];
        inputs.extend(a.items.iter().map(|p| ("items file", p.as_path())));
        ragstats_core::io::refuse_overwriting_inputs(&[("--gold-out", gold)], &inputs)?;
    }
    let items = match &a.items {
        Some(p) => Some(load_items(p)?),
        None => None,
    };
    let anns = read_annotations(&a.annotations, items.as_deref())?;
    let tasks: Option<HashMap<String, Task>> = items
        .as_ref()
        .map(|its| its.iter().map(|i| (i.id.clone(), i.task)).collect());
    let rep = agreement(&anns, tasks.as_ref());
    let gold = |i: &ragstats_core::mcq::agree::ItemAgreement| -> Option<Vec<String>> {
        if a.per_option {
            Some(i.per_option.clone())
        } else {
            i.majority.clone()
        }
    };
    if let Some(p) = &a.gold_out {
        let mut s = String::new();
        for i in &rep.items {
            if let Some(g) = gold(i) {
                s.push_str(&serde_json::to_string(&json!({
                    "id": i.id, "answer": g,
                    "method": if a.per_option { "per_option" } else { "majority" },
                    "votes": i.votes, "annotators": i.annotators,
                }))?);
                s.push('\n');
            }
        }
        ragstats_core::io::write_atomic(p, |w| std::io::Write::write_all(w, s.as_bytes()))?;
    }
    match a.format {
        Format::Json => print_json(&json!({
            "method": if a.per_option { "per_option" } else { "majority" },
            "agreement": rep.rows.iter().map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                if !r.jaccard.is_finite() {
                    v["undefined"] = JACCARD_UNDEFINED.into();
                }
                v
            }).collect::<Vec<_>>(),
            "items": rep.items, "no_majority": rep.no_majority,
        }))?,
        Format::Csv => write_csv(
            &["id", "task", "annotators", "jaccard", "gold", "votes"],
            &rep.items
                .iter()
                .map(|i| {
                    vec![
                        i.id.clone(),
                        i.task.map(|t| t.as_str().to_string()).unwrap_or_default(),
                        i.annotators.to_string(),
                        i.jaccard.map(csv_num).unwrap_or_default(),
                        gold(i).map(|g| g.join(" ")).unwrap_or_else(|| "NA".into()),
                        i.votes.to_string(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            let mut t = Table::new(&["task", "items", "mean pairwise Jaccard", "with majority"]);
            for r in &rep.rows {
                t.row(vec![
                    r.name.clone(),
                    r.items.to_string(),
                    num(r.jaccard),
                    r.with_majority.to_string(),
                ]);
            }
            out!("{}", t.to_text());
            let undefined: Vec<&str> = rep
                .rows
                .iter()
                .filter(|r| !r.jaccard.is_finite())
                .map(|r| r.name.as_str())
                .collect();
            if !undefined.is_empty() {
                outln!(
                    "mean pairwise Jaccard of {}: {}",
                    undefined.join(", "),
                    undefined_because(JACCARD_UNDEFINED)
                );
            }
            outln!();
            let mut t = Table::new(&[
                "id",
                "task",
                "annotators",
                "jaccard",
                if a.per_option {
                    "gold (per option)"
                } else {
                    "gold (majority)"
                },
            ]);
            for i in &rep.items {
                t.row(vec![
                    i.id.clone(),
                    i.task
                        .map(|t| t.as_str().to_string())
                        .unwrap_or_else(|| "-".into()),
                    i.annotators.to_string(),
                    i.jaccard.map(num).unwrap_or_else(|| "-".into()),
                    match gold(i) {
                        Some(g) if g.is_empty() => "{}".into(),
                        Some(g) => g.join(","),
                        None => "no majority".into(),
                    },
                ]);
            }
            out!("{}", t.to_text());
            if !a.per_option && !rep.no_majority.is_empty() {
                outln!(
                    "\nno majority (resolve by discussion): {}",
                    rep.no_majority.join(", ")
                );
            }
        }
    }
    Ok(0)
}
