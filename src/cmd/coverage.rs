//! `stats coverage`: how often each interval `variance`, `bootstrap` and `compare` print
//! covers the truth, and how often each test rejects under the null, on panels simulated
//! with the user's design (or, with `--grid`, on the grid of designs of docs/COVERAGE.md).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::coverage::grid::{designs, grid};
use ragstats_core::coverage::{
    coverage_of_file, work, Analysis, CoverageSettings, Generator, OutcomeChoice,
};
use ragstats_core::document::Inputs;
use ragstats_core::table::ToView;

use super::common::{Format, PanelOptions};
use super::render::{flag_of, Finished};
use super::resample::{BackendArg, Confidence, Progress};
use super::UsageError;
use ragstats_gpu::select::select_backend_for;

/// `--analysis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AnalysisArg {
    Variance,
    Bootstrap,
    Compare,
    All,
}

/// `--generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GeneratorArg {
    Gaussian,
    Bounded,
    Resample,
    All,
}

/// Flags of `stats coverage`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel whose design and fitted model are simulated (not with --grid).
    #[arg(required_unless_present = "grid")]
    pub panel: Option<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Which analysis's intervals and tests to measure.
    #[arg(long, value_enum, default_value_t = AnalysisArg::All)]
    pub analysis: AnalysisArg,
    /// How simulated panels are drawn: Gaussian or bounded (Beta/Bernoulli) from the fitted
    /// model, or questions resampled within strata.
    #[arg(long, value_enum, default_value_t = GeneratorArg::All)]
    pub generator: GeneratorArg,
    /// Simulated panels per generator (as many again under the null when tests are measured).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub panels: u32,
    /// Bootstrap replicates of every simulated panel's analyses.
    #[arg(long, default_value_t = 1000, value_name = "B")]
    pub replicates: u32,
    /// Seed of the simulated panels and of their bootstraps.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the resampling runs: auto picks a hardware GPU when wgpu finds one, else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Confidence level of the intervals (the tests' level is 1 − it).
    #[arg(long, default_value = "0.95", value_name = "LEVEL")]
    pub confidence: Confidence,
    /// Measure the grid of simulated designs of docs/COVERAGE.md instead of a panel
    /// (bounded generator, every analysis; about 10 minutes on 2 cores at the defaults).
    #[arg(long, conflicts_with = "panel")]
    pub grid: bool,
    /// With --grid: write the grid as Markdown to FILE (e.g. docs/COVERAGE.md).
    #[arg(long, value_name = "FILE", requires = "grid")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(None, args.format)
}

fn analyses(a: AnalysisArg) -> Vec<Analysis> {
    match a {
        AnalysisArg::Variance => vec![Analysis::Variance],
        AnalysisArg::Bootstrap => vec![Analysis::Bootstrap],
        AnalysisArg::Compare => vec![Analysis::Compare],
        AnalysisArg::All => Analysis::ALL.to_vec(),
    }
}

fn generators(g: GeneratorArg) -> Vec<Generator> {
    match g {
        GeneratorArg::Gaussian => vec![Generator::Gaussian],
        GeneratorArg::Bounded => vec![Generator::Bounded],
        GeneratorArg::Resample => vec![Generator::Resample],
        GeneratorArg::All => Generator::ALL.to_vec(),
    }
}

/// What `stats coverage` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let backend = || select_backend_for(args.backend.into(), u64::MAX);
    if args.grid {
        let all = designs();
        let progress = Progress::new(
            all.len() as u64 * u64::from(args.panels) * 2,
            "coverage grid",
        );
        let engine = backend()?;
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = grid(
            &all,
            args.panels,
            args.replicates,
            args.seed,
            args.confidence.get(),
            engine.as_ref(),
            &|_, _| progress.set(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1),
        )?;
        progress.finish();
        if let Some(path) = &args.out {
            // docs/COVERAGE.md names the command line that made it.
            let text = report.to_view().to_text_with(&flag_of);
            ragstats_core::io::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
        }
        return Ok(crate::cmd::render::finished(
            "coverage",
            Inputs::new(),
            report,
        ));
    }
    let panel = args
        .panel
        .as_ref()
        .ok_or_else(|| UsageError("coverage needs a PANEL, or --grid".into()))?;
    let settings = CoverageSettings {
        analyses: analyses(args.analysis),
        generators: generators(args.generator),
        panels: args.panels,
        replicates: args.replicates,
        seed: args.seed,
        confidence: args.confidence.get(),
    };
    settings.check()?;
    let choice = OutcomeChoice {
        contrast: args.opts.contrast.clone(),
        arm: args.opts.arm.clone(),
    };
    let opts = ragstats_core::panel::LoadOptions {
        contrast: None,
        arm: None,
        ..args.opts.load_options(true)
    };
    let engine = backend()?;
    let progress = Progress::new(work(&settings), "coverage");
    let report = super::common::with_panel_paths(panel, &[], || {
        Ok(ragstats_core::import::with_panel_table(
            panel,
            &opts,
            &args.opts.import.options(None),
            || {
                coverage_of_file(panel, &opts, &choice, &settings, engine.as_ref(), &|d| {
                    progress.set(d)
                })
            },
        )?)
    })?;
    progress.finish();
    let inputs = super::common::panel_input(Inputs::new(), "panel", panel, &[]);
    let notes = report.notes.clone();
    Ok(crate::cmd::render::finished("coverage", inputs, report).with_csv_notes(&notes))
}
