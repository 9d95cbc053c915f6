//! The `stats` binary: parse the command line, run one command, print errors with their causes.
//!
//! Command handlers live in `cmd/`, one module per subcommand; they are the only code that
//! prints. Everything they compute comes from the `ragstats` library.

// The doc comments of the command layer are clap's `--help` text, where placeholders such
// as `<id>#run<k>` are meant literally; rustdoc would read them as HTML tags, and escaping
// them would change what `--help` prints.
#![allow(rustdoc::invalid_html_tags)]

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // Output is flushed here so that a failed last write is an error, not lost at exit.
    match cmd::run(cli.command).and_then(|code| Ok(cmd::out::flush().map(|()| code)?)) {
        Ok(code) => ExitCode::from(code),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(exit_code(&err))
        }
    }
}

/// Output piped into `head` and closed early is not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// 2 for bad input or usage, 1 for runtime failures; the library's error decides. A
/// directory where a file is expected is bad usage wherever it was met.
fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| {
        e.downcast_ref::<cmd::UsageError>().is_some()
            || e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::IsADirectory)
    }) {
        return 2;
    }
    err.chain()
        .find_map(|e| e.downcast_ref::<ragstats_core::Error>())
        .map(|e| e.exit_code() as u8)
        .unwrap_or(1)
}
