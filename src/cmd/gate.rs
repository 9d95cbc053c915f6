//! `stats gate`: a release gate for CI pipelines (the analysis:
//! [`ragstats_core::analyses::gate`]). The library returns the verdict; this command turns
//! it into the exit code: 0 pass, 3 fail (a regression beyond the margin shown), 4
//! inconclusive (not enough data to say); 1 and 2 keep their meaning (a failure, bad input).

use std::path::PathBuf;

use ragstats_core::analyses::{gate_report, CpuEngines, GateSettings, ScoreRange, SequenceShape};
use ragstats_core::document::Inputs;
use ragstats_core::panel::Source;
use ragstats_core::sequential::gate::Verdict;
use ragstats_core::sequential::StrataRule;

use super::common::{Format, PanelOptions};
use super::compare::IntervalArg;

/// The exit code of a failing gate: a regression beyond the margin.
pub const EXIT_FAIL: u8 = 3;
/// The exit code of an inconclusive gate: not enough data to say.
pub const EXIT_INCONCLUSIVE: u8 = 4;

/// The gate's output formats: the usual three and a Markdown summary for a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GateFormat {
    /// Human-readable text.
    Table,
    /// One JSON document.
    Json,
    /// Comma-separated values.
    Csv,
    /// A Markdown summary for a pull-request comment.
    Markdown,
}

/// Flags of `stats gate`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel (CSV, JSONL, Parquet, or inspect_ai / lm-eval logs) with the candidate and
    /// baseline arms.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel.
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// The regression tolerated, in score units: pass when the interval for CAND-BASE lies
    /// above -M, fail when it lies below.
    #[arg(long, value_name = "M", default_value_t = 0.0)]
    pub margin: f64,
    /// Confidence level of the interval.
    #[arg(long, value_name = "LEVEL", default_value = "0.95")]
    pub confidence: super::resample::Confidence,
    /// Use the anytime-valid confidence sequence (for a pipeline that re-runs the gate as
    /// data accumulate) instead of compare's fixed-n interval.
    #[arg(long)]
    pub sequential: bool,
    /// Fixed-n intervals, as `stats compare --interval`.
    #[arg(long, value_enum, default_value_t = IntervalArg::Auto)]
    pub interval: IntervalArg,
    /// With --sequential: a numeric column giving the questions' arrival order.
    #[arg(long, value_name = "COLUMN", requires = "sequential")]
    pub order_by: Option<String>,
    /// With --sequential: the range every score lies in (default 0,1 when it fits).
    #[arg(
        long,
        value_name = "LO,HI",
        allow_hyphen_values = true,
        requires = "sequential"
    )]
    pub range: Option<ScoreRange>,
    /// With --sequential, for unbounded scores: a sub-Gaussian scale of the question means.
    #[arg(
        long,
        value_name = "SIGMA",
        requires = "sequential",
        conflicts_with = "range"
    )]
    pub sigma: Option<f64>,
    /// With --sequential: how the strata are combined, rounds (one sequence on rounds of
    /// every stratum; the default when the strata give 20 rounds or more and are predicted
    /// narrower) or union (each stratum's sequence at alpha/D).
    #[arg(long, value_name = "RULE", requires = "sequential")]
    pub strata: Option<StrataRule>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> GateSettings {
    GateSettings {
        panel: args.opts.settings(),
        margin: args.margin,
        confidence: args.confidence.get(),
        sequential: args.sequential,
        interval: args.interval.into(),
        shape: SequenceShape {
            order_by: args.order_by.clone(),
            range: args.range,
            sigma: args.sigma,
            strata: args.strata,
        },
    }
}

/// The exit code of a verdict.
pub fn exit_code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Pass => 0,
        Verdict::Fail => EXIT_FAIL,
        Verdict::Inconclusive => EXIT_INCONCLUSIVE,
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let source = Source::files(&args.panel, &args.more);
    let (report, notes) = gate_report(&source, &settings(&args), &CpuEngines, &|_, _, _| {})?;
    let inputs = ragstats_core::analyses::source_input(Inputs::new(), "panel", &source);
    match args.format {
        GateFormat::Markdown => super::out::write_bytes(report.markdown().as_bytes())?,
        GateFormat::Table => {
            super::render::emit(&report, Format::Table, "gate", inputs)?;
        }
        GateFormat::Json => {
            super::render::emit(&report, Format::Json, "gate", inputs)?;
        }
        GateFormat::Csv => {
            super::render::emit(&report, Format::Csv, "gate", inputs)?;
        }
    }
    for n in notes.iter().chain(&report.notes) {
        eprintln!("{n}");
    }
    Ok(exit_code(report.verdict))
}
