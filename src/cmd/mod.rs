//! One handler module per subcommand. Handlers load, call the library, and print.

pub mod allocate;
pub mod bench;
pub mod bootstrap;
pub mod common;
pub mod consistency;
pub mod correlate;
pub mod cost;
pub mod efficiency;
pub mod forecast;
pub mod llm;
pub mod mcq;
pub mod merge;
pub mod score_answers;
pub mod simulate;
pub mod subsets;
pub mod variance;

use crate::cli::{Cli, Command};

/// A bad flag or flag combination found by a handler (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Runs the chosen command; returns the process exit code on success.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Variance(a) => variance::run(a),
        Command::Forecast(a) => forecast::run(a),
        Command::ScoreAnswers(a) => score_answers::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Bootstrap(a) => bootstrap::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Cost(a) => cost::run(a),
        Command::Efficiency(a) => efficiency::run(a),
        Command::Allocate(a) => allocate::run(a),
        Command::Consistency(a) => consistency::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Llm(a) => llm::run(a),
        Command::Correlate(a) => correlate::run(a),
        Command::Mcq(a) => mcq::run(a),
        Command::Subsets(a) => subsets::run(a),
    }
}
