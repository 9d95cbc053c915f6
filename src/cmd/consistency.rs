//! `stats consistency`: answer disagreement across repeated reads by group, and the ratio
//! of one-read SEs between two groups (the analysis:
//! [`ragstats_core::components::consistency::consistency`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::components::consistency::{
    consistency, groups_of, read_answers, ConsistencyReport,
};
use ragstats_core::panel::{load_panel, LoadOptions};

use super::common::{Format, PanelOptions};
use super::render::{Figure, Finished};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

/// Flags of `stats consistency`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Reads with fixed packets (CSV or JSONL): dataset, question, trajectory, read, answer,
    /// the grouping column, and optionally arm and a score column.
    pub reads: PathBuf,
    /// Grouping column (e.g. temperature).
    #[arg(long, value_name = "COLUMN")]
    pub by: String,
    /// Column holding the answer text.
    #[arg(long, value_name = "COLUMN", default_value = "answer")]
    pub answer_column: String,
    /// The two groups whose one-read SEs to compare, as A,B (default: the first two in file order).
    #[arg(long, value_name = "A,B")]
    pub compare: Option<String>,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the disagreement rate and one-read SE by group and the SE ratio with its
    /// interval as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats consistency` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let figure = match &args.plot {
        Some(_) => Some(Figure::new(figure(args, &out)?, &[&args.reads])),
        None => None,
    };
    let inputs = ragstats_core::document::Inputs::new().with("reads", args.reads.display());
    Ok(crate::cmd::render::finished("consistency", inputs, out).with_figure(figure))
}

/// The figure `--plot` draws (and `stats report` shows): disagreement and one-read SE per
/// group, and the SE ratio.
pub fn figure(args: &Args, r: &ConsistencyReport) -> anyhow::Result<String> {
    let caption = super::figure::caption(
        Some(&args.reads),
        &args.opts,
        Some((r.seed, u64::from(r.replicates))),
    );
    Ok(ragstats_plot::consistency(
        &r.disagreement,
        &r.precision,
        r.se_ratio.as_ref(),
        &caption,
    )?)
}

/// The groups `--compare A,B` names (each must be in the file), or every group.
fn compared(args: &Args, groups: Vec<String>) -> Result<Vec<String>, UsageError> {
    let Some(s) = &args.compare else {
        return Ok(groups);
    };
    let v: Vec<String> = s.split(',').map(|x| x.trim().to_string()).collect();
    if v.len() != 2 {
        return Err(UsageError(format!(
            "--compare '{s}': expected two groups A,B"
        )));
    }
    if let Some(g) = v.iter().find(|g| !groups.contains(g)) {
        return Err(UsageError(format!(
            "--compare: no group '{g}' in column '{}' (groups: {})",
            args.by,
            groups.join(", ")
        )));
    }
    Ok(v)
}

/// Reads the answers and each compared group's panel, and runs the analysis.
pub fn compute(args: &Args) -> anyhow::Result<ConsistencyReport> {
    let columns = args.opts.shape.columns.clone().unwrap_or_default();
    // `--by` and `--answer-column` name the file's own columns; one that --columns also
    // gives a role would be renamed away before the groups are read.
    for (flag, column) in [("--by", &args.by), ("--answer-column", &args.answer_column)] {
        if let Some(role) = columns.role_of(column) {
            return Err(UsageError(format!(
                "{flag} {column}: --columns gives that column the role {role}; group by, and \
                 read answers from, a column that plays no panel role"
            ))
            .into());
        }
    }
    let reps = args.resample.replicates()?;
    let rows = read_answers(&args.reads, &args.by, &args.answer_column, &columns)?;
    if args.opts.metric.as_deref() == Some(args.by.as_str()) {
        return Err(UsageError(format!(
            "--metric {0} is the --by column: the score is constant within each group, so its one-read SE is 0 and the SE ratio is 0/0; choose a score column",
            args.by
        ))
        .into());
    }
    let mut panels = Vec::new();
    for g in compared(args, groups_of(&rows))? {
        // The panel flags as every panel command reads them (--columns, --weights, …),
        // keeping the group's rows.
        let opts = LoadOptions {
            filter: Some((args.by.clone(), g.clone())),
            ..args.opts.load_options(false)
        };
        let panel = load_panel(&args.reads, &opts)?;
        super::common::note_unpaired(&panel);
        panels.push((g, panel));
    }
    let questions: u64 = panels
        .iter()
        .flat_map(|p| p.1.strata.iter())
        .map(|s| s.q() as u64)
        .sum();
    let engine = args.resample.engine(2 * reps as u64 * questions)?;
    let progress = Progress::new(2 * reps as u64, "consistency");
    let resampling = args.resample.resampling_of(reps);
    let report = consistency(
        &args.by,
        &rows,
        &panels,
        &resampling,
        engine.as_ref(),
        &|d| progress.set(d),
    )?;
    progress.finish();
    Ok(report)
}
