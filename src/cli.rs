//! The top-level command line (clap derive): the program's name, version and about text.
//! The subcommands, with their flags, live beside their handlers in `cmd/`.

use clap::Parser;

use crate::cmd;

/// Statistics for evaluating agentic RAG systems: variance components, D-study forecasts,
/// the stratified question bootstrap on CPU or GPU, and capability scoring.
#[derive(Debug, Parser)]
#[command(name = "stats", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: cmd::Command,
}
