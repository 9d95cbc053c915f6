//! `stats sequential`: the panel's questions in arrival order, an anytime-valid confidence
//! sequence for the contrast (or an arm's mean) at every look, the stop and the questions
//! it saves (the analysis: [`ragstats_core::analyses::sequential`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{sequential, ScoreRange, SequenceShape, SequentialSettings};
use ragstats_core::panel::Source;
use ragstats_core::sequential::StrataRule;

use super::common::{Format, PanelOptions};
use super::render::Finished;

/// Flags of `stats sequential`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel (CSV, JSONL, Parquet, or inspect_ai / lm-eval logs); its questions arrive in
    /// file order (the order of each question's first row) unless --order-by.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel.
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// A numeric column giving the questions' arrival order (a time or an index; a
    /// question arrives at its smallest value).
    #[arg(long, value_name = "COLUMN")]
    pub order_by: Option<String>,
    /// Look at the sequence every K questions (and after the last).
    #[arg(long, value_name = "K", default_value_t = 25)]
    pub look_every: u64,
    /// Confidence level of the sequence, simultaneous over every look.
    #[arg(long, value_name = "LEVEL", default_value = "0.95")]
    pub confidence: super::resample::Confidence,
    /// Resolved means a difference larger than M shown: the sequence wholly above M or below
    /// -M (default 0: it excludes 0).
    #[arg(long, value_name = "M", default_value_t = 0.0)]
    pub margin: f64,
    /// Stop when the sequence is as narrow as a fixed-n interval with this SE, instead of
    /// when it resolves the comparison.
    #[arg(long, value_name = "SE")]
    pub until_se: Option<f64>,
    /// The range every score lies in (default 0,1 when the question means fit; a
    /// contrast's is then -1,1).
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub range: Option<ScoreRange>,
    /// For unbounded scores: a sub-Gaussian scale of the question means (the
    /// normal-mixture sequence instead of the betting one).
    #[arg(long, value_name = "SIGMA", conflicts_with = "range")]
    pub sigma: Option<f64>,
    /// How the strata are combined: rounds (one sequence on rounds of m_d questions of every
    /// stratum, in proportion to their sizes; the default when they give 20 rounds or more
    /// and are predicted narrower, docs/sequential.md) or union (each stratum's own sequence
    /// at alpha/D, the ends added).
    #[arg(long, value_name = "RULE")]
    pub strata: Option<StrataRule>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> SequentialSettings {
    SequentialSettings {
        panel: args.opts.settings(),
        shape: SequenceShape {
            order_by: args.order_by.clone(),
            range: args.range,
            sigma: args.sigma,
            strata: args.strata,
        },
        look_every: args.look_every,
        confidence: args.confidence.get(),
        margin: args.margin,
        until_se: args.until_se,
    }
}

/// What `stats sequential` prints for `args`: the library's [`sequential`] of PANEL.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let source = Source::files(&args.panel, &args.more);
    Ok(sequential(&source, &settings(args))?)
}
