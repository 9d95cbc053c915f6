//! The one way command output reaches stdout: every write returns its error.
//!
//! `println!` panics when stdout fails ("failed printing to stdout"), so commands use the
//! `out!` and `outln!` macros (declared in `cmd/mod.rs`) instead, which propagate the
//! `std::io::Error` with `?`. `main` then exits 0 quietly on a closed pipe (as ripgrep
//! does) and 1 with a message on any other write failure (a full disk).

use std::cell::RefCell;
use std::fmt;
use std::io::Write;

thread_local! {
    /// Where output goes while [`capture`] runs (stdout when `None`).
    static CAPTURED: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

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
    let captured = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(buf) => {
            buf.extend_from_slice(bytes);
            true
        }
        None => false,
    });
    if captured {
        return Ok(());
    }
    std::io::stdout().lock().write_all(bytes)
}

/// Runs `f` with its output collected instead of written, and returns the output with
/// `f`'s result (for commands that print one section per group, e.g. `--by selector`).
///
/// # Errors
/// `f`'s error.
pub fn capture<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(T, Vec<u8>)> {
    let previous = CAPTURED.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = f();
    let bytes = CAPTURED.with(|c| std::mem::replace(&mut *c.borrow_mut(), previous));
    Ok((result?, bytes.unwrap_or_default()))
}

/// Flushes stdout, so that a failure of the last buffered write is seen before exit.
///
/// # Errors
/// The write error.
pub fn flush() -> std::io::Result<()> {
    std::io::stdout().lock().flush()
}
