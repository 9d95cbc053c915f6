//! `stats slice`: the sub-panel of a design Q:T:R written as a panel file (every arm,
//! selector and column of the kept rows), so a measured allocation is analysed like any panel.

use std::path::PathBuf;

use anyhow::Context;
use ragstats_core::allocation::slice::{slice_panel, SliceSettings};
use ragstats_core::allocation::slice_report::SliceReport;
use ragstats_core::components::forecast::DesignSpec;
use ragstats_core::io::{clip, is_jsonl};
use ragstats_core::panel::Panel;

use super::common::PanelOptions;
use super::render::Finished;
use super::UsageError;

mod file;

/// Flags of `stats slice`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Design Q:T:R (Q split over strata in the panel's question shares, by largest
    /// remainder) or per-stratum counts, e.g. hotpotqa=150,musique=24:2:1.
    #[arg(long, value_name = "Q:T:R")]
    pub design: String,
    /// Q of a Q:T:R design is the count in every stratum, not the total.
    #[arg(long)]
    pub per_stratum: bool,
    /// Seeded choice: questions in the seeded order of `allocate --order-seed S`, and for
    /// each question a seeded choice of T of its trajectories and of R reads of each.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Keep the first T trajectories and R reads (label order) of each question (the default
    /// without --seed, where the questions are the first in file order too; with --seed the
    /// sub-panel `allocate --order-seed S` measures).
    #[arg(long)]
    pub first: bool,
    /// Where to write the sub-panel, in the input's format (CSV, or JSONL for a .jsonl/.json
    /// input; the name must say the same).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Runs `stats slice` and says on stderr what it wrote.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let out = compute(&args)?;
    eprintln!("{}", out.summary());
    Ok(0)
}

/// What `stats slice` wrote, as a value (the Python bindings return it): the sub-panel is
/// written, and the result says what it holds.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let inputs = super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    );
    Ok(crate::cmd::render::finished("slice", inputs, out))
}

/// The panel whose cells the slice chooses from. A slice cuts questions, trajectories and
/// reads, never arms: a panel of several arms with neither `--contrast` nor `--arm` is cut
/// as it is, by the cells of its first arm, after checking that every arm has the same
/// cells (strata, questions in order, trajectory and read labels), so each arm keeps the
/// same questions, trajectories and reads and a paired contrast of the sub-panel stays
/// paired.
///
/// # Errors
/// The loader's; an input error (exit 2) naming the first difference when the arms' cells
/// differ: then `--contrast B-A` (the cells both arms have) or `--arm NAME` chooses them.
fn load(args: &Args) -> anyhow::Result<Panel> {
    let arms = match (&args.opts.contrast, &args.opts.arm) {
        (None, None) => file::arms(&args.panel)?,
        _ => Vec::new(),
    };
    let Some((first, rest)) = arms.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        return Ok(args.opts.load_noting_drops(&args.panel)?);
    };
    let one = |arm: &str| PanelOptions {
        arm: Some(arm.to_string()),
        ..args.opts.clone()
    };
    let panel = one(first).load_noting_drops(&args.panel)?;
    let cells = layout(&panel);
    for arm in rest {
        let other = one(arm).load(&args.panel)?;
        if let Some(diff) = first_difference(&cells, &layout(&other)) {
            return Err(ragstats_core::Error::input(
                &args.panel,
                None,
                format!(
                    "the arms have different cells ({diff} in arm '{}' and arm '{}'); a slice \
                     keeps the same questions, trajectories and reads for every arm: choose \
                     them with --contrast B-A (the cells both arms have) or --arm NAME",
                    clip(first),
                    clip(arm)
                ),
            )
            .into());
        }
    }
    Ok(panel)
}

/// A panel's cells by label: per stratum its name and, per question in panel order, its id
/// with each trajectory's label and read labels.
type Layout<'a> = Vec<(&'a str, Vec<(&'a str, Vec<(&'a str, Vec<&'a str>)>)>)>;

/// The [`Layout`] of `panel`.
fn layout(panel: &Panel) -> Layout<'_> {
    panel
        .strata
        .iter()
        .map(|s| {
            let questions = s
                .questions
                .iter()
                .enumerate()
                .map(|(q, name)| {
                    let traj = s
                        .trajectories_of(q)
                        .iter()
                        .enumerate()
                        .map(|(t, reads)| {
                            let label = |r| s.cell_label(q, t, r).unwrap_or(("", ""));
                            (label(0).0, (0..reads.len()).map(|r| label(r).1).collect())
                        })
                        .collect();
                    (name.as_str(), traj)
                })
                .collect();
            (s.name.as_str(), questions)
        })
        .collect()
}

/// Where two layouts first differ, in words (`None` when they are the same).
fn first_difference(a: &Layout<'_>, b: &Layout<'_>) -> Option<String> {
    if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.0 != y.0) {
        let names = |l: &Layout<'_>| l.iter().map(|s| clip(s.0)).collect::<Vec<_>>().join(", ");
        return Some(format!("strata {} and {}", names(a), names(b)));
    }
    for ((name, qa), (_, qb)) in a.iter().zip(b) {
        if qa.len() != qb.len() {
            return Some(format!(
                "{} and {} questions in stratum '{}'",
                qa.len(),
                qb.len(),
                clip(name)
            ));
        }
        for (x, y) in qa.iter().zip(qb) {
            if x.0 != y.0 {
                return Some(format!(
                    "question '{}' and question '{}' at the same place in stratum '{}'",
                    clip(x.0),
                    clip(y.0),
                    clip(name)
                ));
            }
            if x.1 != y.1 {
                return Some(format!(
                    "other trajectories or reads of question '{}' in stratum '{}'",
                    clip(x.0),
                    clip(name)
                ));
            }
        }
    }
    None
}

/// Checks the flags, loads the panel, chooses the cells and writes their rows to `--out`.
pub fn compute(args: &Args) -> anyhow::Result<SliceReport> {
    args.opts.shape.refuse_weights(
        "slice",
        "copies a sub-panel's rows to a file and combines no strata (it estimates nothing): \
         give --weights to the command that analyses the slice",
    )?;
    if is_jsonl(&args.panel) != is_jsonl(&args.out) {
        return Err(UsageError(format!(
            "--out {}: the sub-panel is written in the input's format ({}); give a name ending in {}",
            args.out.display(),
            if is_jsonl(&args.panel) { "JSONL" } else { "CSV" },
            if is_jsonl(&args.panel) { ".jsonl" } else { ".csv" }
        ))
        .into());
    }
    let design: DesignSpec = args.design.parse()?;
    let settings = SliceSettings {
        design,
        per_stratum: args.per_stratum,
        seed: args.seed,
        first: args.first,
    };
    let panel = load(args)?;
    let mut slice = slice_panel(&panel, &settings)?;
    // Trajectories are nested in questions: the chosen positions are named by each
    // question's own labels in the file.
    slice.bind(&file::labels(&args.panel)?)?;
    let rows = file::write_rows(&args.panel, &slice, &args.out)
        .with_context(|| format!("writing {}", args.out.display()))?;
    Ok(SliceReport::new(
        &settings,
        &slice,
        rows,
        &args.out.display().to_string(),
    ))
}
