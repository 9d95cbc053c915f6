//! `stats mcq agree`: annotator agreement (pairwise Jaccard) and majority-vote gold. The
//! analysis is [`ragstats_core::mcq::agree::agree`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::mcq::agree::{agree, read_annotations, AgreeReport, AgreeSettings};
use ragstats_core::mcq::validate::load_items;

use crate::cmd::common::Format;
use crate::cmd::render::Finished;

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

/// Loads the annotations (and `--items`), computes agreement, and writes `--gold-out`.
pub fn compute(a: &Args) -> anyhow::Result<AgreeReport> {
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
    Ok(report)
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
    Ok(crate::cmd::render::finished("mcq agree", inputs, out))
}
