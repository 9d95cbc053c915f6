//! `stats subsets`: the measured SE of every trajectory × read subset of a depth panel,
//! configuration means beside the audit's nested and Q-only forecasts, the forecasts' MAEs
//! and a bootstrap interval for the MAE advantage (the analysis:
//! [`ragstats_core::allocation::subsets::analyse_subsets`]).

use crate::cmd::render::Emit as _;
use std::path::{Path, PathBuf};

use ragstats_core::allocation::subsets::{
    analyse_subsets, SubsetAnalysis, SubsetSettings, SubsetStudy,
};
use ragstats_core::components::forecast::Audit;

use super::common::{Format, PanelOptions};
use super::render::{Figure, Finished};
use super::resample::{Progress, ResampleArgs};
use super::variance::report_for;

/// Flags of `stats subsets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Depth panel (CSV or JSONL, one row per read): every trajectory and read subset is evaluated.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    /// Audit the forecasts come from: a panel (read with the same --metric/--contrast/--arm)
    /// or a components file written by `stats variance --format json`.
    #[arg(long, value_name = "FILE")]
    pub audit: PathBuf,
    /// Configurations with fewer trajectories t′ are shown but left out of the MAEs.
    #[arg(long, default_value_t = 1)]
    pub min_trajectories: usize,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// List every subset's measured SE (table and CSV: instead of the configurations; JSON: in addition).
    #[arg(long)]
    pub per_subset: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the configurations' SE against t′ as SVG: measured with intervals, nested
    /// and Q-only forecasts.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// An audit from a components JSON (an object with `strata`) or else from a panel.
fn load_audit(path: &Path, opts: &PanelOptions) -> anyhow::Result<Audit> {
    let text = ragstats_core::io::read_text(path)?;
    let is_components = serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| v.get("strata").is_some())
        .unwrap_or(false);
    if is_components {
        Ok(Audit::from_variance_json(&text, path)?)
    } else {
        Ok(Audit::from_report(&report_for(&opts.load(path)?)?))
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats subsets` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let figure = match &args.plot {
        Some(_) => {
            let r = &out.report;
            let caption = super::figure::panel_caption(
                &args.panel,
                &out.outcome,
                Some((r.seed, u64::from(r.range[1] - r.range[0]))),
            );
            let svg = ragstats_plot::subsets(r, &caption)?;
            Some(Figure::new(
                svg,
                &[
                    super::common::panel_paths(&args.panel, &args.more),
                    vec![args.audit.clone()],
                ]
                .concat(),
            ))
        }
        None => None,
    };
    let inputs = super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
    .with("audit", args.audit.display());
    let notes = out.report.notes.clone();
    Ok(crate::cmd::render::finished("subsets", inputs, out)
        .with_figure(figure)
        .with_notes_for_csv(args.format == crate::cmd::common::Format::Csv, &notes))
}

/// Loads the depth panel and the audit, and runs the subset study.
pub fn compute(args: &Args) -> anyhow::Result<SubsetAnalysis> {
    let resampling = args.resample.resampling()?;
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let audit = load_audit(&args.audit, &args.opts)?;
    // The depth panel's weights (`--weights`, resolved on its strata) combine both the
    // measured subset SEs and the audit's forecasts.
    let study =
        SubsetStudy::weighted(&panel.strata, &panel.weights, &audit, args.min_trajectories)?;
    let units = study.work_units(u64::from(resampling.replicates));
    let engine = args
        .resample
        .engine(units * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(units, "subsets");
    let settings = SubsetSettings {
        resampling,
        per_subset: args.per_subset,
    };
    let analysis = analyse_subsets(&panel.outcome, &study, &settings, engine.as_ref(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    Ok(analysis)
}
