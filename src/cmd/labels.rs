//! `stats labels sample|agreement`: the random labelling sheet of a judged panel and
//! judge–human agreement on its labels (docs/judges.md; the analyses:
//! [`ragstats_core::analyses::labels_sample`] and [`ragstats_core::analyses::labels_agreement`]).

use std::path::PathBuf;

use clap::Subcommand;
use ragstats_core::analyses::{
    labels_agreement, labels_sample, LabelsAgreementSettings, LabelsSampleSettings,
};
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::{Emit as _, Finished};

/// Flags of `stats labels`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats labels` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Choose N questions uniformly at random (stratified) and write their cells as a labelling sheet with an empty score column.
    #[command(
        after_help = "Examples:\n  stats labels sample data/demo/judged.csv --metric judge_score --n 15 --seed 1 --label-metric correct --out sheet.csv\n  stats labels sample data/demo/panel.csv --contrast adaptive-open --n 10 --per-stratum --seed 7 --out sheet.jsonl\n\nThe subset must be random: a hand-picked one biases every correction (docs/judges.md)."
    )]
    Sample(SampleArgs),
    /// Judge–human agreement on the labelled cells: correlation, Cohen's kappa, the judge's bias with its interval, and the variance reduction PPI++ buys (effective labels).
    #[command(
        after_help = "Example:\n  stats labels agreement data/demo/judged.csv --metric judge_score --labels data/demo/judged-labels.csv --label-metric correct"
    )]
    Agreement(AgreementArgs),
}

/// Flags of `stats labels sample`.
#[derive(Debug, clap::Args)]
pub struct SampleArgs {
    /// Panel file (CSV, JSONL or Parquet, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Questions to label: in all, split over the strata in their question shares.
    #[arg(long, value_name = "N")]
    pub n: usize,
    /// N is the count in every stratum, not the total.
    #[arg(long)]
    pub per_stratum: bool,
    /// The seed of the random choice.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// The sheet's empty score column (default: the panel's metric).
    #[arg(long, value_name = "COLUMN")]
    pub label_metric: Option<String>,
    /// Where to write the sheet: CSV, or JSONL for a .jsonl/.json name.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Flags of `stats labels agreement`.
#[derive(Debug, clap::Args)]
pub struct AgreementArgs {
    /// Panel file (CSV, JSONL or Parquet, one row per read): the judge's scores.
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Human labels (CSV or JSONL: the panel's key columns and a score column).
    #[arg(long, value_name = "FILE")]
    pub labels: PathBuf,
    /// The labels' score column (default: the panel's metric).
    #[arg(long, value_name = "COLUMN")]
    pub label_metric: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `stats labels`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Sample(a) => {
            let done = sample_outcome(&a)?;
            for n in &done.notes_after {
                eprintln!("{n}");
            }
            eprintln!(
                "{}",
                done.result.text_with(&super::render::flag_of).trim_end()
            );
            Ok(0)
        }
        Sub::Agreement(a) => agreement_outcome(&a)?.emit(a.format),
    }
}

/// What `stats labels sample` wrote: the library's [`labels_sample`].
pub fn sample_outcome(a: &SampleArgs) -> anyhow::Result<Finished> {
    let settings = LabelsSampleSettings {
        panel: a.opts.settings(),
        n: a.n,
        per_stratum: a.per_stratum,
        seed: a.seed,
        label_metric: a.label_metric.clone(),
        out: a.out.clone(),
    };
    Ok(labels_sample(&Source::file(&a.panel), &settings)?)
}

/// What `stats labels agreement` prints: the library's [`labels_agreement`].
pub fn agreement_outcome(a: &AgreementArgs) -> anyhow::Result<Finished> {
    let settings = LabelsAgreementSettings {
        panel: a.opts.settings(),
        label_metric: a.label_metric.clone(),
    };
    Ok(labels_agreement(
        &Source::file(&a.panel),
        &Source::file(&a.labels),
        &settings,
    )?)
}
