//! `stats variance`: nested variance components per stratum, pooled, and the combined estimate.

use std::path::PathBuf;

use ragstats_core::components::variance::{
    analyse_panel, variance_of_panel, PanelVariance, VarianceReport,
};
use ragstats_core::panel::Panel;

use super::common::{By, Format, PanelOptions};
use super::render::{sections_by_selector, Figure, Finished};
use super::UsageError;

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
}

/// Runs the variance analysis of a loaded panel: ANOVA for balanced strata, REML for
/// unbalanced ones (also used by `forecast --audit`).
pub fn report_for(panel: &Panel) -> ragstats_core::Result<VarianceReport> {
    analyse_panel(panel)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats variance` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    // One figure shows one analysis; one per selector would overwrite each other in one file.
    if args.plot.is_some() && args.by.is_some() {
        return Err(UsageError(
            "--plot draws one analysis: use --selector NAME instead of --by selector".into(),
        )
        .into());
    }
    if args.by == Some(By::Selector) {
        let sections = sections_by_selector(&args.panel, &args.opts, |opts| {
            Ok(Box::new(compute(&Args {
                opts,
                by: None,
                ..args.clone()
            })?))
        })?;
        return Ok(Finished::new("variance", inputs(args), sections));
    }
    let out = compute(args)?;
    let figure = match &args.plot {
        Some(_) => {
            let v = &out.variance;
            let caption = super::figure::panel_caption(&args.panel, &v.outcome, None);
            let svg = ragstats_plot::variance(v, &caption)?;
            Some(Figure::new(
                svg,
                &super::common::panel_paths(&args.panel, &args.more),
            ))
        }
        None => None,
    };
    Ok(Finished::new("variance", inputs(args), out).with_figure(figure))
}

/// The envelope's inputs of `stats variance`.
fn inputs(args: &Args) -> ragstats_core::document::Inputs {
    super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
}

/// Loads the panel `args` names and runs the analysis.
pub fn compute(args: &Args) -> anyhow::Result<PanelVariance> {
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    Ok(variance_of_panel(&panel)?)
}
