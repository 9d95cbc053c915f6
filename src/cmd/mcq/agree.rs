//! `stats mcq agree`: annotator agreement (pairwise Jaccard) and majority-vote gold. The
//! analysis is [`ragstats_core::mcq::agree::agree`].

use std::path::PathBuf;

use ragstats_core::mcq::agree::{agree, read_annotations, AgreeReport, AgreeSettings};
use ragstats_core::mcq::validate::load_items;
use serde_json::{json, Value};

use crate::cmd::common::{csv_num, num, undefined_because, Format, Table};
use crate::cmd::render::{emit, Rendered};

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

/// What `stats mcq agree` found.
pub struct AgreeOutput {
    /// The analysis.
    pub report: AgreeReport,
}

/// Loads the annotations (and `--items`), computes agreement, and writes `--gold-out`.
pub fn compute(a: &Args) -> anyhow::Result<AgreeOutput> {
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
    let settings = AgreeSettings {
        per_option: a.per_option,
    };
    let report = agree(&anns, items.as_deref(), &settings);
    if let Some(p) = &a.gold_out {
        let mut s = String::new();
        for g in &report.gold {
            // Through a `Value`: its keys are sorted, as the file has always had them.
            s.push_str(&serde_json::to_string(&serde_json::to_value(g)?)?);
            s.push('\n');
        }
        ragstats_core::io::write_atomic(p, |w| std::io::Write::write_all(w, s.as_bytes()))?;
    }
    Ok(AgreeOutput { report })
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    let out = compute(&a)?;
    let inputs = ragstats_core::document::Inputs::new()
        .with("annotations", a.annotations.display())
        .with_opt("items", a.items.as_ref().map(|p| p.display()));
    emit(&out, a.format, "mcq agree", inputs)
}

impl Rendered for AgreeOutput {
    fn text(&self) -> String {
        let (s, rep) = (&self.report.settings, &self.report.agreement);
        let mut t = Table::new(&["task", "items", "mean pairwise Jaccard", "with majority"]);
        for r in &rep.rows {
            t.row([
                r.name.clone(),
                r.items.to_string(),
                num(r.jaccard),
                r.with_majority.to_string(),
            ]);
        }
        let mut out = t.to_text();
        let undefined: Vec<&str> = rep
            .rows
            .iter()
            .filter(|r| !r.jaccard.is_finite())
            .map(|r| r.name.as_str())
            .collect();
        if !undefined.is_empty() {
            out.push_str(&format!(
                "mean pairwise Jaccard of {}: {}\n",
                undefined.join(", "),
                undefined_because(JACCARD_UNDEFINED)
            ));
        }
        out.push('\n');
        let gold_head = if s.per_option {
            "gold (per option)"
        } else {
            "gold (majority)"
        };
        let mut t = Table::new(&["id", "task", "annotators", "jaccard", gold_head]);
        for i in &rep.items {
            t.row([
                i.id.clone(),
                i.task
                    .map(|t| t.as_str().to_string())
                    .unwrap_or_else(|| "-".into()),
                i.annotators.to_string(),
                i.jaccard.map(num).unwrap_or_else(|| "-".into()),
                match s.gold(i) {
                    Some([]) => "{}".into(),
                    Some(g) => g.join(","),
                    None => "no majority".into(),
                },
            ]);
        }
        out.push_str(&t.to_text());
        if !s.per_option && !rep.no_majority.is_empty() {
            out.push_str(&format!(
                "\nno majority (resolve by discussion): {}\n",
                rep.no_majority.join(", ")
            ));
        }
        out
    }

    fn csv(&self) -> Table {
        let (s, rep) = (&self.report.settings, &self.report.agreement);
        let mut t = Table::new(&["id", "task", "annotators", "jaccard", "gold", "votes"]);
        for i in &rep.items {
            t.row([
                i.id.clone(),
                i.task.map(|t| t.as_str().to_string()).unwrap_or_default(),
                i.annotators.to_string(),
                i.jaccard.map(csv_num).unwrap_or_default(),
                s.gold(i)
                    .map(|g| g.join(" "))
                    .unwrap_or_else(|| "NA".into()),
                i.votes.to_string(),
            ]);
        }
        t
    }

    fn body(&self) -> Value {
        let (s, rep) = (&self.report.settings, &self.report.agreement);
        json!({
            "method": s.method(),
            "agreement": rep.rows.iter().map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                if !r.jaccard.is_finite() {
                    v["undefined"] = JACCARD_UNDEFINED.into();
                }
                v
            }).collect::<Vec<_>>(),
            "items": rep.items, "no_majority": rep.no_majority,
        })
    }
}
