//! The `stats` binary: everything is in the `ragstats-cli` library ([`ragstats_cli::run`]),
//! which the Python package's `stats` entry point calls too.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(ragstats_cli::run(std::env::args_os()))
}
