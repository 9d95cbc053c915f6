//! `stats mcq filter`: the difficulty filter (drop items every model answers alike) plus
//! the format rules; kept lines are copied unchanged. The analysis is
//! [`ragstats_core::mcq::filter::filter_items`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use anyhow::Context;
use ragstats_core::io::{refuse_overwriting_inputs, write_atomic};
use ragstats_core::mcq::filter::{filter_items, FilterRun};
use ragstats_core::mcq::results::read_results;
use ragstats_core::mcq::validate::read_items;

use super::default_sidecar;
use crate::cmd::common::Format;
use crate::cmd::render::Finished;

/// Flags of `stats mcq filter`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Generated items JSONL.
    pub items: PathBuf,
    /// Results files of at least two models (`mcq run` output).
    #[arg(long, num_args = 1.., required = true)]
    pub predictions: Vec<PathBuf>,
    /// Kept items JSONL (lines copied unchanged).
    #[arg(long)]
    pub out: PathBuf,
    /// Report of dropped lines [default: <out stem>.dropped.jsonl].
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Loads the items and predictions, filters, and writes the kept lines and the report.
pub fn compute(a: &Args) -> anyhow::Result<FilterRun> {
    let file = read_items(&a.items)?;
    let mut preds = Vec::new();
    for p in &a.predictions {
        preds.extend(read_results(p)?);
    }
    let r = filter_items(file, &preds)?;
    let report = a
        .report
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "dropped"));
    let mut inputs = vec![("items file", a.items.as_path())];
    inputs.extend(
        a.predictions
            .iter()
            .map(|p| ("predictions file", p.as_path())),
    );
    refuse_overwriting_inputs(&[("--out", &a.out), ("--report", &report)], &inputs)?;
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let kept: String = r.kept.iter().map(|l| format!("{l}\n")).collect();
    write_atomic(&a.out, |w| w.write_all(kept.as_bytes()))?;
    let mut rep = String::new();
    for d in &r.dropped {
        rep.push_str(&serde_json::to_string(d)?);
        rep.push('\n');
    }
    write_atomic(&report, |w| w.write_all(rep.as_bytes()))?;
    Ok(FilterRun::new(r, &a.out, &report))
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq filter` prints for `a` (it has written the kept and dropped items).
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new()
        .with("items", a.items.display())
        .with_all("predictions", a.predictions.iter().map(|p| p.display()));
    let untested = &out.filter.untested;
    let notes = match untested.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "note: {} kept item(s) lack a parsed answer from some model and were not tested for difficulty: {}",
            untested.len(),
            untested.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        )],
    };
    Ok(crate::cmd::render::finished("mcq filter", inputs, out).with_notes_after(notes))
}
