//! `stats forecast`: nested D-study and Q-only SE forecasts for one or more allocations
//! (the analysis: [`ragstats_core::analyses::forecast`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{forecast, DrawForecast, ForecastSettings};
use ragstats_core::components::forecast::{Audit, ForecastReport};
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::Finished;

/// Flags of `stats forecast`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Audit panel the components are estimated from.
    /// Several evaluation logs are read as one audit (`--audit logs/*.eval`).
    #[arg(
        long,
        value_name = "PANEL",
        required_unless_present = "components",
        conflicts_with = "components",
        num_args = 1..
    )]
    pub audit: Vec<PathBuf>,
    /// Components file written by `stats variance --format json`, instead of --audit.
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    /// Allocation to forecast: Q:T:R (total Q split over strata in the audit's proportions)
    /// or per stratum, e.g. hotpotqa=300,musique=146:2:1; with an audit read with --cluster,
    /// also GxM:T:R (G clusters of M questions, e.g. 100x4:2:1). Repeat for several.
    #[arg(long = "design", value_name = "Q:T:R", required = true)]
    pub designs: Vec<String>,
    /// A measured panel for one design, DESIGN=PANEL (e.g. 446:2:1=a.csv): its SE is compared
    /// with that design's forecasts, after checking that the panel has that design. A bare
    /// PANEL is matched to the --design with its shape. Repeat for several designs.
    #[arg(long, value_name = "DESIGN=PANEL")]
    pub measured: Vec<String>,
    /// Use the pooled (dataset-adjusted) components for every stratum.
    #[arg(long)]
    pub pooled: bool,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw SE against Q as SVG: nested and Q-only forecast curves, the designs and
    /// their measured SEs.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Runs `stats forecast`, draws `--plot`, and prints the forecasts (the notes on stderr
/// after a CSV).
pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> ForecastSettings {
    ForecastSettings {
        panel: args.opts.settings(),
        design: args.designs.clone(),
        measured: args.measured.clone(),
        pooled: args.pooled,
    }
}

/// What `stats forecast` prints for `args` (and the figure `--plot` asks for): the
/// library's [`forecast`] from `--audit` (the logs read as one audit) or `--components`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let audit = args
        .audit
        .split_first()
        .map(|(first, more)| Source::files(first, more));
    let components = args.components.as_ref().map(Source::file);
    let input = args.audit.first().or(args.components.as_ref());
    let draw = |audit: &Audit, report: &ForecastReport| {
        ragstats_plot::forecast_report(
            audit,
            report,
            &super::figure::caption(input, &args.opts, None),
        )
    };
    let draw: DrawForecast<'_> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    Ok(forecast(
        audit.as_ref(),
        components.as_ref(),
        &settings(args),
        draw,
    )?)
}
