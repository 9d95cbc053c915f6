//! `stats mcq compare`: paired deltas (B − A) of two result files with intervals, the test
//! of each level's ΔEM, and (`--mcnemar`) McNemar's exact test on EM over (id, run) pairs
//! taken as independent. The analysis is
//! [`ragstats_core::mcq::compare::compare_results`]; its view is the library's.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::mcq::compare::{
    compare_results_clustered, paired_items, CompareReport, CompareSettings, Side,
};

use super::boot::{load_results, BootArgs};
use crate::cmd::common::Format;
use crate::cmd::render::{Figure, Finished};

mod leaderboard;

/// Flags of `stats mcq compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results of model A (the baseline).
    pub a: PathBuf,
    /// Results of model B; deltas are B − A.
    pub b: PathBuf,
    /// Further results files: with three or more files, every file is scored and every
    /// pair compared, the tests' p-values adjusted over the pairs (Holm and BH).
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Also McNemar's exact test (and mid-p) on EM over the (id, run) pairs, which assumes
    /// every pair independent: with several runs per item it is too optimistic, and it
    /// weights tasks by their pairs, not as the printed ΔEM does.
    #[arg(long)]
    pub mcnemar: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw both sides' EM and F1 per task and the deltas with intervals as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

impl Args {
    /// The library's settings of these flags.
    pub fn settings(&self) -> anyhow::Result<CompareSettings> {
        Ok(CompareSettings {
            boot: self.boot.settings()?,
            independent_pairs: self.mcnemar,
        })
    }
}

/// Loads both results files (applying `--items`) and compares them.
pub fn compute(a: &Args) -> anyhow::Result<CompareReport> {
    let settings = a.settings()?;
    let (items, clusters) = a.boot.load_items()?;
    let ra = load_results(&a.a, items.as_ref())?;
    let rb = load_results(&a.b, items.as_ref())?;
    let rows = paired_items(&ra, &rb, settings.boot.failures)?;
    let mut report = a.boot.with_engine(rows, |engine, progress| {
        Ok(compare_results_clustered(
            &ra,
            &rb,
            &settings,
            clusters.as_ref(),
            engine,
            progress,
        )?)
    })?;
    report.files = [a.a.clone(), a.b.clone()];
    Ok(report)
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.print(a.plot.as_deref(), a.format)
}

/// What `stats mcq compare` prints for `a` (and the figure `--plot` asks for).
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    if !a.more.is_empty() {
        return leaderboard::outcome(a);
    }
    let out = compute(a)?;
    let figure = match &a.plot {
        Some(_) => Some(Figure::new(figure(a, &out)?, &[&a.a, &a.b])),
        None => None,
    };
    let inputs = ragstats_core::document::Inputs::new()
        .with("a", a.a.display())
        .with("b", a.b.display());
    Ok(crate::cmd::render::finished("mcq compare", inputs, out).with_figure(figure))
}

/// The figure `--plot` draws (and `stats report` shows): both sides' scores and the paired
/// deltas B − A with their intervals.
pub fn figure(a: &Args, r: &CompareReport) -> anyhow::Result<String> {
    let table: Vec<_> = r.deltas.iter().map(|d| d.delta.clone()).collect();
    let side = |s: &Side, tag: &str, b: bool| ragstats_plot::McqSide {
        name: format!("{tag}: {}, {}", s.model, s.prompt),
        scores: r.deltas.iter().map(|d| if b { d.b } else { d.a }).collect(),
    };
    let (sa, sb) = (side(&r.a, "A", false), side(&r.b, "B", true));
    let caption = ragstats_plot::Caption {
        panel: format!("{} vs {}", a.a.display(), a.b.display()),
        outcome: String::new(),
        bootstrap: Some((a.boot.resample.seed, u64::from(a.boot.resample.replicates))),
    };
    Ok(ragstats_plot::mcq_compare(&table, [&sa, &sb], &caption)?)
}
