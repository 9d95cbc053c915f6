//! `stats mcq filter`: the difficulty filter (drop items every model answers alike) plus
//! the format rules; kept lines are copied unchanged.

use std::path::PathBuf;

use anyhow::Context;
use ragstats_core::io::{refuse_overwriting_inputs, write_atomic};
use ragstats_core::mcq::filter::filter;
use ragstats_core::mcq::results::read_results;
use ragstats_core::mcq::validate::read_items;
use serde_json::json;

use super::default_sidecar;
use crate::cmd::common::{print_json, write_csv, Format, Table};

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

pub fn run(a: Args) -> anyhow::Result<u8> {
    let file = read_items(&a.items)?;
    let total = file.lines;
    let mut preds = Vec::new();
    for p in &a.predictions {
        preds.extend(read_results(p)?);
    }
    let out = filter(file, &preds)?;
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
    let kept: String = out.kept.iter().map(|l| format!("{}\n", l.raw)).collect();
    write_atomic(&a.out, |w| w.write_all(kept.as_bytes()))?;
    let mut rep = String::new();
    for d in &out.dropped {
        rep.push_str(&serde_json::to_string(d)?);
        rep.push('\n');
    }
    write_atomic(&report, |w| w.write_all(rep.as_bytes()))?;
    let n_fmt = out.dropped.iter().filter(|d| d.reason == "format").count();
    let n_diff = out.dropped.len() - n_fmt;
    match a.format {
        Format::Json => print_json(&json!({
            "items": total, "kept": out.kept.len(), "dropped_format": n_fmt,
            "dropped_difficulty": n_diff, "untested": out.untested, "models": out.models,
            "out": a.out.display().to_string(), "report": report.display().to_string(),
            "dropped": out.dropped,
        }))?,
        Format::Csv => write_csv(
            &["line", "id", "reason", "detail", "models", "agreed_is_gold"],
            &out.dropped
                .iter()
                .map(|d| {
                    vec![
                        d.line.to_string(),
                        d.id.clone().unwrap_or_default(),
                        d.reason.to_string(),
                        d.detail.clone(),
                        d.models.join(" "),
                        d.agreed_is_gold.map(|b| b.to_string()).unwrap_or_default(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            outln!(
                "{} line(s): kept {}, dropped {} (format {}, difficulty {}); models: {}",
                total,
                out.kept.len(),
                out.dropped.len(),
                n_fmt,
                n_diff,
                out.models.join(", ")
            );
            let mut t = Table::new(&["line", "id", "reason", "detail"]);
            for d in &out.dropped {
                t.row(vec![
                    d.line.to_string(),
                    d.id.clone().unwrap_or_default(),
                    d.reason.into(),
                    d.detail.clone(),
                ]);
            }
            out!("{}", t.to_text());
            outln!("kept: {}; report: {}", a.out.display(), report.display());
        }
    }
    if !out.untested.is_empty() {
        eprintln!(
            "note: {} kept item(s) lack a parsed answer from some model and were not tested for difficulty: {}",
            out.untested.len(),
            out.untested.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(0)
}
