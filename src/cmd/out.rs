//! The one way command output reaches stdout: every write returns its error.
//!
//! `println!` panics when stdout fails ("failed printing to stdout"), so commands use the
//! `out!` and `outln!` macros (declared in `cmd/mod.rs`) instead, which propagate the
//! `std::io::Error` with `?`. `main` then exits 0 quietly on a closed pipe (as ripgrep
//! does) and 1 with a message on any other write failure (a full disk).

use std::fmt;
use std::io::Write;

/// Writes formatted text to stdout.
///
/// # Errors
/// The write error (a broken pipe, a full disk).
pub fn write_fmt(args: fmt::Arguments<'_>) -> std::io::Result<()> {
    write_bytes(fmt::format(args).as_bytes())
}

/// Writes bytes to stdout.
///
/// # Errors
/// The write error.
pub fn write_bytes(bytes: &[u8]) -> std::io::Result<()> {
    std::io::stdout().lock().write_all(bytes)
}

/// Flushes stdout, so that a failure of the last buffered write is seen before exit.
///
/// # Errors
/// The write error.
pub fn flush() -> std::io::Result<()> {
    std::io::stdout().lock().flush()
}
