//! `stats variance`: nested variance components per stratum, pooled, and the combined estimate.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{variance, Draw, VarianceSettings};
use ragstats_core::components::variance::{analyse_panel, PanelVariance, VarianceReport};
use ragstats_core::panel::{Panel, Source};

use super::common::{By, Format, LabelOptions, PanelOptions};
use super::render::Finished;

/// Flags of `stats variance`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Report each selector of the panel's `selector` column, then their average.
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the component shares (per stratum, pooled, of SE²) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub labels: LabelOptions,
}

/// Runs the variance analysis of a loaded panel: ANOVA for balanced strata, REML for
/// unbalanced ones (also used by `forecast --audit`).
pub fn report_for(panel: &Panel) -> ragstats_core::Result<VarianceReport> {
    analyse_panel(panel)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> VarianceSettings {
    VarianceSettings {
        panel: args.opts.settings(),
        by: args
            .by
            .map(|By::Selector| ragstats_core::import::By::Selector),
        judged: args.labels.settings(),
    }
}

/// What `stats variance` prints for `args` (and the figure `--plot` asks for): the library's
/// [`variance`] of PANEL (and the logs read with it).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let source = Source::files(&args.panel, &args.more);
    let draw = |v: &PanelVariance| {
        let caption = super::figure::panel_caption(&args.panel, &v.variance.outcome, None);
        ragstats_plot::variance(&v.variance, &caption)
    };
    let draw: Draw<'_, PanelVariance> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let labels = args.labels.labels.as_ref().map(Source::file);
    Ok(variance(&source, labels.as_ref(), &settings(args), draw)?)
}
