//! `stats forecast`: nested D-study and Q-only SE forecasts for one or more allocations.

use crate::cmd::render::Emit as _;
use std::path::{Path, PathBuf};

use ragstats_core::components::forecast::{
    forecast_designs, Audit, DesignSpec, ForecastError, ForecastReport, ForecastSettings,
    MeasuredPanel,
};

use super::common::{Format, PanelOptions};
use super::render::{Figure, Finished};
use super::variance::report_for;
use super::UsageError;

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
    /// or per stratum, e.g. hotpotqa=300,musique=146:2:1. Repeat for several.
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

/// What `stats forecast` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_audit_paths(&args.audit, || outcome_of(args))
}

/// [`outcome`] with the audit (and the logs read with it) readable by its first path.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let (audit, report) = compute(args)?;
    let figure = match &args.plot {
        Some(_) => {
            let input = args.audit.first().or(args.components.as_ref());
            let designs = &report.designs;
            let svg = super::figure::forecast_figure(
                &audit,
                report.pooled,
                &designs
                    .iter()
                    .map(|r| (r.forecast.clone(), r.se_measured))
                    .collect::<Vec<_>>(),
                &super::figure::caption(input, &args.opts, None),
            )?;
            let inputs: Vec<&std::path::Path> = designs
                .iter()
                .filter_map(|r| r.measured_panel.as_deref())
                .chain(input.map(|p| p.as_path()))
                .chain(args.audit.iter().skip(1).map(|p| p.as_path()))
                .collect();
            Some(Figure::new(svg, &inputs))
        }
        None => None,
    };
    let notes = report.notes.clone();
    let inputs = super::common::audit_input(&args.audit);
    let inputs = inputs.with_opt("components", args.components.as_ref().map(|p| p.display()));
    Ok(crate::cmd::render::finished("forecast", inputs, report)
        .with_figure(figure)
        .with_notes_for_csv(args.format == crate::cmd::common::Format::Csv, &notes))
}

/// Loads the audit (a panel fitted as `stats variance` fits it, or a components file),
/// forecasts every `--design`, and compares each `--measured` panel with its design: the
/// audit (the figure draws curves from it) and the report.
pub fn compute(args: &Args) -> anyhow::Result<(Audit, ForecastReport)> {
    let audit = match (args.audit.first(), &args.components) {
        (Some(path), _) => Audit::from_report(&report_for(&args.opts.load_unbalanced(path)?)?),
        (None, Some(path)) => args
            .opts
            .weigh_components(Audit::read_components(path)?, path)?,
        (None, None) => {
            return Err(UsageError("give --audit PANEL or --components FILE".into()).into())
        }
    };
    let settings = ForecastSettings {
        designs: args.designs.clone(),
        pooled: args.pooled,
    };
    let mut report = forecast_designs(&audit, &settings).map_err(chained)?;
    for m in &args.measured {
        // DESIGN=PANEL splits at the last '=' (a per-stratum design holds '=' itself); a
        // left side that is not a design means the whole argument is a path.
        let (design, path) = match m.rsplit_once('=') {
            Some((d, p)) if d.parse::<DesignSpec>().is_ok() => (Some(d), Path::new(p)),
            _ => (None, Path::new(m.as_str())),
        };
        let panel = args.opts.load(path)?;
        let measured = MeasuredPanel {
            label: m,
            design,
            path,
            panel: &panel,
        };
        report
            .compare_measured(&audit, &measured)
            .map_err(chained)?;
    }
    Ok((audit, report))
}

/// The library's error as the CLI reports it: a design that cannot be forecast is
/// `design D`, caused by why.
fn chained(e: ForecastError) -> anyhow::Error {
    match e {
        ForecastError::Input(e) => e.into(),
        ForecastError::Design { design, source } => {
            anyhow::Error::from(source).context(format!("design {design}"))
        }
    }
}
