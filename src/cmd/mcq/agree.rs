//! `stats mcq agree`: annotator agreement (pairwise Jaccard) and majority-vote gold. The
//! analysis is [`ragstats_core::mcq::agree::agree`].

use std::path::PathBuf;

use ragstats_core::document::to_body;
use ragstats_core::mcq::agree::{
    agree, read_annotations, AgreeReport, AgreeSettings, JACCARD_UNDEFINED,
};
use ragstats_core::mcq::validate::load_items;
use ragstats_core::table::Cell;
use serde_json::Value;

use crate::cmd::common::{undefined_because, Format, Table};
use crate::cmd::render::{Finished, Rendered};

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
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq agree` prints for `a`.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new()
        .with("annotations", a.annotations.display())
        .with_opt("items", a.items.as_ref().map(|p| p.display()));
    Ok(Finished::new("mcq agree", inputs, out))
}

impl Rendered for AgreeOutput {
    fn text(&self) -> String {
        let (s, rep) = (&self.report.settings, &self.report.agreement);
        let mut t = Table::new(&["task", "items", "mean pairwise Jaccard", "with majority"]);
        for r in &rep.rows {
            t.row([
                Cell::text(&r.name),
                Cell::Count(r.items as u64),
                Cell::num(r.jaccard),
                Cell::Count(r.with_majority as u64),
            ]);
        }
        let mut out = t.to_text();
        let undefined: Vec<&str> = rep
            .rows
            .iter()
            .filter(|r| r.undefined.is_some())
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
                // Raw: an id that reads as a number (`"id": 12`) has always been
                // right-aligned, and so has a gold of one numeric label (labels are free
                // without --items).
                Cell::Raw(i.id.clone()),
                i.task.map_or(Cell::Missing, |t| Cell::text(t.as_str())),
                Cell::Count(i.annotators as u64),
                Cell::opt_num(i.jaccard),
                Cell::Raw(match s.gold(i) {
                    Some([]) => "{}".into(),
                    Some(g) => g.join(","),
                    None => "no majority".into(),
                }),
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
                Cell::text(&i.id),
                i.task.map_or(Cell::Missing, |t| Cell::text(t.as_str())),
                Cell::Count(i.annotators as u64),
                Cell::opt_num(i.jaccard),
                // `NA`, not an empty cell: no majority is an answer of its own, and an
                // empty cell is the empty gold set.
                Cell::text(
                    s.gold(i)
                        .map(|g| g.join(" "))
                        .unwrap_or_else(|| "NA".into()),
                ),
                Cell::Count(i.votes as u64),
            ]);
        }
        t
    }

    /// The report's fields ([`AgreeReport`]).
    fn body(&self) -> Value {
        to_body(&self.report)
    }
}
