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
//! The rules they own: a UTF-8 byte-order mark is accepted and skipped; a UTF-16 one is
//! refused with a hint; invalid UTF-8 is `FILE:LINE: not valid UTF-8` (exit 2); a value
//! echoed in an error is cut to [`text::ECHO_CHARS`] characters; duplicate CSV column names
//! and duplicate JSON object keys are errors naming the name. A CSV record's line is the
//! 1-based line of the file on which it starts, with `\n`, `\r\n` and a lone `\r` each
//! ending a line and skipped blank lines counted; a record whose quoted field holds line
//! breaks is at the line it starts on, and the lines it spans count for the records after it.

pub mod csv;
pub mod digest;
pub mod jsonl;
pub mod output;
pub mod text;

pub use self::csv::CsvReader;
pub use digest::{sha256_hex, short_sha256};
pub use jsonl::JsonlReader;
pub use output::{refuse_overwriting_inputs, write_atomic};
pub use text::{clip, clip_list, read_text};

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
