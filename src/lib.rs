//! `ragstats-cli`: the `stats` command as a library — the command line (clap), one handler
//! per subcommand in `cmd/`, and [`run`], which the `stats` binary and the Python package's
//! `stats` entry point both call, so the two behave the same and exit with the same codes.
//!
//! Command handlers are the only code of the workspace that prints. Everything they compute
//! comes from the library crates (`ragstats-core` and the crates above it).

// The doc comments of the command layer are clap's `--help` text, where placeholders such
// as `<id>#run<k>` are meant literally; rustdoc would read them as HTML tags, and escaping
// them would change what `--help` prints.
#![allow(rustdoc::invalid_html_tags)]
// Its modules' docs are for the people working on the commands (with
// `--document-private-items`), so they link to the private modules beside them.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod cmd;
pub mod settings;

use std::ffi::OsString;

use clap::Parser;

/// Runs the command line `args` (the program name first), printing what the command prints
/// and any error with its causes on stderr, and returns the exit code: 0 ok, 1 runtime
/// failure, 2 bad input or usage (clap's own errors included; `--help` and `--version` are 0).
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout, usage errors to stderr.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    // Output is flushed here so that a failed last write is an error, not lost at exit.
    match cmd::run(cli.command).and_then(|code| Ok(cmd::out::flush().map(|()| code)?)) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => 0,
        Err(err) => {
            // Notes the error came after (a contrast's dropped cells), before the error.
            for note in err
                .chain()
                .filter_map(|e| e.downcast_ref::<ragstats_core::Error>())
                .flat_map(ragstats_core::Error::notes)
            {
                eprintln!("{note}");
            }
            // Each error of the chain as the command line names it (a setting by its flag).
            let mut chain = err.chain().map(settings::describe);
            let mut shown = chain.next().unwrap_or_default();
            eprintln!("error: {shown}");
            for cause in chain {
                // A message that already ends with its cause ("path: No such file …") is
                // not followed by the cause again.
                if !shown.contains(&cause) {
                    eprintln!("  caused by: {cause}");
                }
                shown = cause;
            }
            exit_code(&err)
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
/// directory where a file is expected is bad usage wherever it was met. (The Python
/// bindings raise `InputError` exactly where this is 2.)
pub fn exit_code(err: &anyhow::Error) -> u8 {
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
