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
//! and duplicate JSON object keys are errors naming the name.

pub mod csv;
pub mod jsonl;
pub mod output;
pub mod text;

pub use self::csv::CsvReader;
pub use jsonl::JsonlReader;
pub use output::{refuse_overwriting_inputs, write_atomic};
pub use text::{clip, clip_list, read_text};

/// Whether a table file (a panel, a reads file) is read as JSONL: its name ends in `.jsonl`
/// or `.json` (any case); anything else is read as CSV.
pub fn is_jsonl(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("json"))
}
