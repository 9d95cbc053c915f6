//! The input layer: every file the tool reads goes through one of these readers, so every
//! file kind gets the same rules.
//!
//! * [`csv`]: a streaming CSV reader yielding records with their 1-based line numbers.
//! * [`jsonl`]: a streaming JSONL reader yielding JSON values with their line numbers, and
//!   the strict JSON parser behind it (also for whole JSON documents).
//! * [`text`]: whole-file text (JSON documents, TOML), and clipping of echoed values.
//! * [`output`]: the output side: files written atomically, and outputs that would
//!   overwrite an input refused.
//!
//! The rules they own: a line (a CSV or JSONL line) longer than [`MAX_LINE_BYTES`] (64 MiB)
//! is `FILE:LINE: line longer than 64 MiB …`, and a whole-file input (a JSON document, a
//! TOML file) larger than that is `FILE: larger than 64 MiB …`, both exit 2, so that an
//! input without line breaks (`/dev/zero`) is refused before it fills the memory; a
//! directory where a file is expected is `PATH: is a directory …`, exit 2 (see
//! [`crate::Error::io`]); a UTF-8 byte-order mark is accepted and skipped; a UTF-16 one is
//! refused with a hint; invalid UTF-8 is `FILE:LINE: not valid UTF-8` (exit 2); a value
//! echoed in an error is cut to [`text::ECHO_CHARS`] characters; duplicate CSV column names
//! and duplicate JSON object keys are errors naming the name. A CSV record's line is the
//! 1-based line of the file on which it starts, with `\n`, `\r\n` and a lone `\r` each
//! ending a line and skipped blank lines counted; a record whose quoted field holds line
//! breaks is at the line it starts on, and the lines it spans count for the records after it.

pub mod csv;
pub mod digest;
pub mod from_text;
pub mod jsonl;
pub mod output;
pub mod text;

pub use self::csv::CsvReader;
pub use digest::{sha256_hex, short_sha256};
pub use jsonl::JsonlReader;
pub use output::{refuse_overwriting_inputs, write_atomic};
pub use text::{clip, clip_list, read_text, read_text_up_to};

/// The longest line any input file may have (a CSV or JSONL line, without its line break),
/// and the largest whole-file input (a JSON document, a TOML file, a template): 64 MiB.
///
/// Every reader stops there with [`line_too_long`] or [`file_too_large`] (exit 2) instead
/// of reading an unbounded line into memory: `stats variance /dev/zero` used to allocate
/// until the process aborted. The one exception is a question file that is a JSON array
/// (HotpotQA as published: its training set is 566 MB), read whole up to
/// [`MAX_ARRAY_FILE_BYTES`].
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest question file read whole as a JSON array: 1 GiB (see [`MAX_LINE_BYTES`]).
pub const MAX_ARRAY_FILE_BYTES: usize = 1 << 30;

/// `n` bytes as the messages write a limit: `64 MiB (67108864 bytes)`.
fn limit_text(n: usize) -> String {
    format!("{} MiB ({n} bytes)", n >> 20)
}

/// The error for line `line` of `path`, longer than [`MAX_LINE_BYTES`].
pub fn line_too_long(path: &std::path::Path, line: u64) -> crate::Error {
    crate::Error::input(
        path,
        Some(line),
        format!(
            "line longer than {}, the most one line of an input file may hold (is this a text file with line breaks?)",
            limit_text(MAX_LINE_BYTES)
        ),
    )
}

/// The error for a whole-file input of `path` larger than `limit` bytes.
pub fn file_too_large(path: &std::path::Path, limit: usize) -> crate::Error {
    crate::Error::input(
        path,
        None,
        format!(
            "larger than {}, the most a file read whole may hold",
            limit_text(limit)
        ),
    )
}

/// Largest magnitude a score (a panel value, a correlate cell) may have: 10^15.
///
/// The resampling engine sums in f32 (max ≈ 3.4e38): per replicate it adds up to
/// 2^24 question deviations and their squares, so |x| ≤ 1e15 keeps every sum below
/// (2·10^15)²·2^24 ≈ 6.7e37, and the f64 sums of squares behind `variance` and the
/// correlations stay far from overflow. Beyond that a score of 1e39 would give NaN and 1e300
/// an infinite SE; such files are refused with the line instead. Rescale the scores
/// (e.g. report them in thousands) when they really are that large.
pub const MAX_MAGNITUDE: f64 = 1e15;

/// The error text for a value beyond [`MAX_MAGNITUDE`], or `None` when it is within it.
/// `what` names the value (e.g. `score 'f1'`); it is only called for a value beyond, so
/// the readers that check every cell format nothing for valid ones.
pub fn magnitude_error(what: impl FnOnce() -> String, v: f64) -> Option<String> {
    (v.abs() > MAX_MAGNITUDE).then(|| {
        let what = what();
        format!(
            "{what} is {v:e}; values beyond ±1e15 are refused because the f32 resampling sums (up to 2^24 squared deviations) would overflow: rescale the column"
        )
    })
}

/// Whether a table file (a panel, a reads file) is read as JSONL: its name ends in `.jsonl`
/// or `.json` (any case); anything else is read as CSV.
pub fn is_jsonl(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("json"))
}
