//! `stats simulate`: write a synthetic panel (and optionally its cost ledger) with known
//! structure. The model is documented in `ragstats_core::sim::model` and docs/simulate.md;
//! the analysis is [`ragstats_core::sim::simulate()`].

use std::path::PathBuf;

use ragstats_core::document::Inputs;
use ragstats_core::io::{refuse_overwriting_inputs, write_atomic};
use ragstats_core::sim::io::{write_ledger_jsonl, write_panel_csv, write_panel_jsonl};
use ragstats_core::sim::{
    simulate, GaussianSpec, LedgerSpec, Sds, SimModel, SimSpec, SimulateReport, SimulateSettings,
    WrittenFile,
};

use super::common::Format;
use super::render::{emit, Finished};
use super::UsageError;

mod flags;

use flags::{is_jsonl, parse_means, parse_strata, resolve_means};
pub use flags::{Means, Strata};

/// Flags of this command.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file to write: JSONL when the name ends in .jsonl or .ndjson, CSV otherwise.
    #[arg(long)]
    pub out: PathBuf,
    /// Datasets (strata) and questions per dataset, `name=Q,...`, or one number for a single
    /// stratum named `all`.
    #[arg(long, default_value = "hotpotqa=223,musique=223", value_parser = parse_strata)]
    pub datasets: Strata,
    /// Trajectories per question and arm (T).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub trajectories: u32,
    /// Reads per trajectory (R).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub reads: u32,
    /// Arm names, baseline first; every later arm differs from the baseline by the contrast.
    #[arg(long, value_delimiter = ',', default_value = "open,adaptive")]
    pub arms: Vec<String>,
    /// Model parameters (means and SDs).
    #[command(flatten)]
    pub model_params: Box<ModelArgs>,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Name of the bounded score column.
    #[arg(long, default_value = "f1")]
    pub metric_name: String,
    /// Also write the matching cost ledger (JSONL) here.
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Model name on the ledger's planner and reader rows.
    #[arg(long, default_value = "deepseek-v4.1-flash")]
    pub model: String,
    /// Planner calls (and search requests) per trajectory and arm in the ledger.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub planner_calls: u32,
    /// Write the Gaussian nested panel y = μ + a_q + b_qt + e_qtr instead (one arm named
    /// `single`, no clamping; true components are exactly sigma_q², sigma_t², sigma_r²).
    /// Uses --mean (one number), --sigma-q/-t/-r; no ledger.
    #[arg(long)]
    pub gaussian: bool,
}

/// The model's means and standard deviations (boxed: they are many and the enum of
/// commands stays small).
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// Latent mean of the baseline arm: one number, or `name=value,...` per dataset.
    #[arg(long, default_value = "0.45", value_parser = parse_means)]
    pub mean: Means,
    /// Latent mean contrast (later arm − baseline).
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub effect: f64,
    /// SD of the question effect shared by the arms (latent scale).
    #[arg(long, default_value_t = 0.55, allow_negative_numbers = true)]
    pub sigma_q: f64,
    /// SD of the trajectory effect shared by the arms.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub sigma_t: f64,
    /// SD of the read effect shared by the arms.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub sigma_r: f64,
    /// SD of the contrast's own question effect.
    #[arg(long, default_value_t = 0.30, allow_negative_numbers = true)]
    pub contrast_sigma_q: f64,
    /// SD of the contrast's own trajectory effect.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub contrast_sigma_t: f64,
    /// SD of the contrast's own read effect.
    #[arg(long, default_value_t = 0.18, allow_negative_numbers = true)]
    pub contrast_sigma_r: f64,
}

/// The library's settings of the flags (the flag combinations checked first).
pub fn settings(args: &Args) -> anyhow::Result<SimulateSettings> {
    let m = &*args.model_params;
    let strata = args.datasets.0.clone();
    let means = resolve_means(&m.mean, &strata)?;
    let shared = Sds {
        q: m.sigma_q,
        t: m.sigma_t,
        r: m.sigma_r,
    };
    if args.gaussian {
        if args.ledger.is_some() {
            return Err(
                UsageError("--gaussian panels have no ledger; drop --ledger".into()).into(),
            );
        }
        if means.len() != 1 {
            return Err(UsageError("--gaussian takes one --mean value".into()).into());
        }
        return Ok(SimulateSettings {
            model: SimModel::Gaussian(GaussianSpec {
                strata,
                trajectories: args.trajectories as usize,
                reads: args.reads as usize,
                mean: means[0],
                sds: shared,
                seed: args.seed,
            }),
            ledger: None,
        });
    }
    Ok(SimulateSettings {
        model: SimModel::Bounded(SimSpec {
            strata,
            trajectories: args.trajectories as usize,
            reads: args.reads as usize,
            arms: args.arms.iter().map(|a| a.trim().to_string()).collect(),
            seed: args.seed,
            means,
            effect: m.effect,
            shared,
            contrast: Sds {
                q: m.contrast_sigma_q,
                t: m.contrast_sigma_t,
                r: m.contrast_sigma_r,
            },
        }),
        ledger: args.ledger.as_ref().map(|_| LedgerSpec {
            model: args.model.clone(),
            planner_calls: args.planner_calls as usize,
            ..LedgerSpec::default()
        }),
    })
}

/// Runs the command: checks the flags, simulates, writes the ledger, then the panel, and
/// says what it wrote (the ledger's line even when the panel then fails).
pub fn run(args: Args) -> anyhow::Result<u8> {
    let (out, failed) = write(&args)?;
    let code = emit(&out, Format::Table, "simulate", Inputs::new())?;
    match failed {
        Some(e) => Err(e),
        None => Ok(code),
    }
}

/// What `stats simulate` wrote, as a value (the Python bindings return it).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let (out, failed) = write(args)?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(crate::cmd::render::finished("simulate", Inputs::new(), out))
}

/// Checks the flags, simulates, and writes the ledger, then the panel: what was written,
/// and the panel's write error if it failed after the ledger was written.
fn write(args: &Args) -> anyhow::Result<(SimulateReport, Option<anyhow::Error>)> {
    if args.metric_name.is_empty()
        || ["dataset", "question", "trajectory", "read", "arm", "em"]
            .contains(&args.metric_name.as_str())
    {
        return Err(UsageError(format!(
            "--metric-name {:?} must be non-empty and differ from the other column names",
            args.metric_name
        ))
        .into());
    }
    if let Some(ledger) = &args.ledger {
        refuse_overwriting_inputs(&[("--out", &args.out), ("--ledger", ledger)], &[])?;
    }
    let sim = simulate(&settings(args)?)?;
    let mut out = SimulateReport::default();
    if let (Some(path), Some(ledger)) = (&args.ledger, &sim.ledger) {
        write_atomic(path, |w| write_ledger_jsonl(ledger, w))?;
        out.ledger = Some(written_file(path, ledger.len()));
    }
    let written = write_atomic(&args.out, |w| {
        if is_jsonl(&args.out) {
            write_panel_jsonl(&sim.panel, &args.metric_name, w)
        } else {
            write_panel_csv(&sim.panel, &args.metric_name, w)
        }
    });
    if let Err(e) = written {
        return Ok((out, Some(e.into())));
    }
    out.panel = Some(written_file(&args.out, sim.panel.len()));
    Ok((out, None))
}

/// The file at `path`, written with `rows` rows.
fn written_file(path: &std::path::Path, rows: usize) -> WrittenFile {
    WrittenFile {
        path: path.display().to_string(),
        rows,
    }
}
