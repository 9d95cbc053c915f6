//! `stats coverage`: how often each interval `variance`, `bootstrap` and `compare` print
//! covers the truth, and how often each test rejects under the null, on panels simulated
//! with the user's design (or, with `--grid`, on the grid of designs of docs/COVERAGE.md).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{coverage, AnalysisChoice, CoverageSettings, GeneratorChoice};
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::{flag_of, Finished};
use super::resample::{with_bars, BackendArg, Confidence};

flag_enum! {
    /// `--analysis`.
    pub enum AnalysisArg => AnalysisChoice {
        Variance,
        Bootstrap,
        Compare,
        Sequential,
        All,
    }
}

flag_enum! {
    /// `--generator`.
    pub enum GeneratorArg => GeneratorChoice {
        Gaussian,
        Bounded,
        Resample,
        All,
    }
}

/// Flags of `stats coverage`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel whose design and fitted model are simulated (not with --grid or --clustered).
    #[arg(required_unless_present_any = ["grid", "clustered"])]
    pub panel: Option<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub labels: super::common::LabelOptions,
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
    /// With --analysis sequential: look at the sequence (and the Wald interval) every K
    /// questions, the monitoring design measured.
    #[arg(long, default_value_t = 25, value_name = "K")]
    pub look_every: u64,
    /// Measure the clustered designs of docs/COVERAGE.md (two strata of G clusters of 4
    /// binary questions, G from 6 to 48): the intervals of variance with --cluster, and of
    /// the same panels without it.
    #[arg(long, conflicts_with_all = ["panel", "grid"])]
    pub clustered: bool,
    /// With --grid: write the grid as Markdown to FILE (e.g. docs/COVERAGE.md).
    #[arg(long, value_name = "FILE", requires = "grid")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let done = outcome(&args)?;
    if let Some(path) = &args.out {
        // docs/COVERAGE.md names the command line that made it.
        let text = done.result.text_with(&flag_of);
        ragstats_core::io::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
    }
    done.print(None, args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> CoverageSettings {
    CoverageSettings {
        panel: args.opts.settings(),
        analysis: args.analysis.into(),
        generator: args.generator.into(),
        panels: args.panels,
        replicates: args.replicates,
        seed: args.seed,
        backend: args.backend.into(),
        confidence: args.confidence.get(),
        grid: args.grid,
        look_every: args.look_every,
        clustered: args.clustered,
        judged: args.labels.settings(),
    }
}

/// What `stats coverage` prints for `args`: the library's [`coverage`] of PANEL, or of the
/// grid.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let panel = args.panel.as_ref().map(Source::file);
    let labels = args.labels.labels.as_ref().map(Source::file);
    Ok(with_bars(|progress| {
        coverage(
            panel.as_ref(),
            labels.as_ref(),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
        )
    })?)
}
