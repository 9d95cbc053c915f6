//! `stats mcq compare`: paired deltas (B − A) of two result files with intervals, the test
//! of each level's ΔEM, and (`--mcnemar`) McNemar's exact test on EM over (id, run) pairs
//! taken as independent. The analysis is
//! [`ragstats_core::mcq::compare::compare_results`]; its view is the library's.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{mcq_compare, Draw, McqCompareSettings};
use ragstats_core::mcq::compare::CompareReport;
use ragstats_core::panel::Source;

use super::boot::BootArgs;
use crate::cmd::common::Format;
use crate::cmd::render::Finished;
use crate::cmd::resample::with_bars;

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

/// The library's settings for `a`.
pub fn settings(a: &Args) -> McqCompareSettings {
    McqCompareSettings {
        boot: a.boot.settings_of(),
        mcnemar: a.mcnemar,
    }
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.print(a.plot.as_deref(), a.format)
}

/// What `stats mcq compare` prints for `a` (and the figure `--plot` asks for): the library's
/// [`mcq_compare`] of A, B and MORE.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let files: Vec<Source> = [&a.a, &a.b]
        .into_iter()
        .chain(&a.more)
        .map(Source::file)
        .collect();
    let draw = |r: &CompareReport| figure(a, r);
    let draw: Draw<'_, CompareReport> = match a.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let items = a.boot.items.as_ref().map(Source::file);
    let done = with_bars(|progress| {
        mcq_compare(
            &files,
            items.as_ref(),
            &settings(a),
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    });
    Ok(done?)
}

/// The figure `--plot` draws (and `stats report` shows): both sides' scores and the paired
/// deltas B − A with their intervals.
pub fn figure(a: &Args, r: &CompareReport) -> ragstats_core::Result<String> {
    let caption = ragstats_plot::Caption::for_mcq(
        format!("{} vs {}", a.a.display(), a.b.display()),
        String::new(),
        &a.boot.settings_of(),
    );
    ragstats_plot::mcq_compare_report(r, &caption)
}
