//! Finding the report's inputs: the flags, or the files found by name in a directory; and
//! the capability file's columns.

use std::path::{Path, PathBuf};

use super::Args;
use crate::cmd::UsageError;

/// What the report reads: the panel, and the optional inputs given by flag or found by name
/// in the directory.
pub(super) struct Inputs {
    pub(super) panel: PathBuf,
    pub(super) ledger: Option<PathBuf>,
    pub(super) prices: Option<PathBuf>,
    pub(super) reads: Option<PathBuf>,
    pub(super) mcq: Vec<PathBuf>,
    pub(super) capability: Option<PathBuf>,
    pub(super) trajectories: Option<PathBuf>,
}

impl Inputs {
    /// Every input file with what it is (so `--out` is refused when it names one of them).
    pub(super) fn named(&self) -> Vec<(&'static str, &Path)> {
        let mut ins: Vec<(&str, &Path)> = vec![("panel", self.panel.as_path())];
        if let Some(l) = &self.ledger {
            ins.push(("ledger", l));
        }
        if let Some(p) = &self.prices {
            ins.push(("prices file", p));
        }
        if let Some(r) = &self.reads {
            ins.push(("reads file", r));
        }
        for m in &self.mcq {
            ins.push(("MCQ results", m));
        }
        if let Some(c) = &self.capability {
            ins.push(("capability file", c));
        }
        if let Some(t) = &self.trajectories {
            ins.push(("trajectory log", t));
        }
        ins
    }
}

/// The inputs `stats report` reads: the panel, and the others when given or found beside
/// the panel in a directory (a flag wins over the file found).
pub(super) fn inputs(args: &Args) -> anyhow::Result<Inputs> {
    // Several paths are logs read as one panel, not a directory of inputs.
    if !args.input.is_dir() || !args.more.is_empty() {
        return Ok(Inputs {
            panel: args.input.clone(),
            ledger: args.ledger.clone(),
            prices: args.prices.clone(),
            reads: args.reads.clone(),
            mcq: args.mcq_results.clone(),
            capability: args.capability.clone(),
            trajectories: args.trajectories.clone(),
        });
    }
    let d = &args.input;
    let panel = ["panel.csv", "panel.jsonl"]
        .iter()
        .map(|n| d.join(n))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            UsageError(format!(
                "{}: no panel.csv or panel.jsonl in this directory; give the panel file",
                d.display()
            ))
        })?;
    let found = |n: &str| Some(d.join(n)).filter(|p| p.is_file());
    let mcq = if args.mcq_results.is_empty() {
        mcq_files(d)?
    } else {
        args.mcq_results.clone()
    };
    Ok(Inputs {
        panel,
        ledger: args.ledger.clone().or_else(|| found("ledger.jsonl")),
        prices: args.prices.clone().or_else(|| found("prices.toml")),
        reads: args
            .reads
            .clone()
            .or_else(|| found("reads.csv"))
            .or_else(|| found("reads.jsonl")),
        mcq,
        capability: args.capability.clone().or_else(|| found("capability.csv")),
        trajectories: args
            .trajectories
            .clone()
            .or_else(|| found("trajectories.jsonl")),
    })
}

/// The MCQ results files of a directory: `mcq-*.jsonl` but not the `mcq run` sidecars
/// (`*.responses.jsonl`, `*.ledger.jsonl`), sorted by name.
fn mcq_files(d: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("mcq-")
            && name.ends_with(".jsonl")
            && !name.ends_with(".responses.jsonl")
            && !name.ends_with(".ledger.jsonl")
            && p.is_file()
        {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// The RAGCap capability columns (RAGCap Fig. 5's rows).
const CAPABILITIES: [&str; 4] = ["planning", "evidence", "reasoning", "noise"];

/// The heatmap's x and y columns: the flags, else the capability columns the file has and
/// every other column after the first (the first names the model).
pub(super) fn capability_columns(
    args: &Args,
    file: &Path,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    // Through the CSV reader, so the file gets the rules of every input (line limit,
    // UTF-8, a directory refused).
    let header: Vec<String> = ragstats_core::io::CsvReader::open(file)?.headers().to_vec();
    let x: Vec<String> = if args.capability_x.is_empty() {
        header
            .iter()
            .filter(|c| CAPABILITIES.contains(&c.as_str()))
            .cloned()
            .collect()
    } else {
        args.capability_x.clone()
    };
    let y: Vec<String> = if args.capability_y.is_empty() {
        header
            .iter()
            .skip(1)
            .filter(|c| !x.contains(c))
            .cloned()
            .collect()
    } else {
        args.capability_y.clone()
    };
    if x.is_empty() || y.is_empty() {
        return Err(UsageError(format!(
            "{}:1: expected capability columns ({}) and outcome columns; name them with --capability-x and --capability-y",
            file.display(),
            CAPABILITIES.join(", ")
        ))
        .into());
    }
    Ok((x, y))
}
