//! Issue #30 item 9: every reader stops at the line limit (64 MiB, `ragstats_core::io::MAX_LINE_BYTES`)
//! with `FILE:LINE: line longer than 64 MiB …` and exit 2, where an input without line breaks
//! used to be read into memory until the allocator aborted the process; whole-file inputs
//! stop at the same size; a directory where a file is expected is exit 2 naming the path.

use std::path::Path;

use ragstats_core::io::MAX_LINE_BYTES;

/// Runs `stats args` and returns (exit code, stderr).
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = crate::support::cli::stats().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Asserts exit 2 with `want` in stderr, and neither a panic nor an abort.
fn refused(args: &[&str], want: &str) {
    let (code, err) = run(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: want {want:?} in {err}");
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{args:?}: {err}"
    );
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

const LONG: &str = "line longer than 64 MiB (67108864 bytes), the most one line of an input file may hold (is this a text file with line breaks?)";

#[test]
fn the_limit_is_64_mib() {
    assert_eq!(MAX_LINE_BYTES, 64 * 1024 * 1024);
}

/// One byte past the limit and no line break: the shape that aborted `variance`,
/// `bootstrap`, `correlate` and `mcq agree`, as CSV and as JSONL.
#[test]
fn a_line_one_byte_past_the_limit_is_refused_at_line_1() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = vec![b'x'; MAX_LINE_BYTES + 1];
    let csv = dir.path().join("long.csv");
    let jsonl = dir.path().join("long.jsonl");
    std::fs::write(&csv, &bytes).unwrap();
    std::fs::write(&jsonl, &bytes).unwrap();
    let (c, j) = (p(&csv), p(&jsonl));
    refused(&["variance", c], &format!("error: {c}:1: {LONG}"));
    refused(&["variance", j], &format!("error: {j}:1: {LONG}"));
    refused(
        &["bootstrap", c, "--replicates", "10"],
        &format!("error: {c}:1: {LONG}"),
    );
    refused(
        &["correlate", c, "--x", "a", "--y", "b"],
        &format!("error: {c}:1: {LONG}"),
    );
    refused(&["mcq", "agree", j], &format!("error: {j}:1: {LONG}"));
}

/// The line is counted where it is: after two good lines it is line 3.
#[test]
fn the_long_line_is_named_by_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("panel.csv");
    let mut bytes = b"dataset,question,trajectory,read,f1\nd,q1,0,0,1\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'7', MAX_LINE_BYTES + 1));
    bytes.extend_from_slice(b"\nd,q2,0,0,0\n");
    std::fs::write(&f, &bytes).unwrap();
    refused(&["variance", p(&f)], &format!("error: {}:3: {LONG}", p(&f)));
}

#[test]
fn dev_zero_is_refused_not_read_until_the_memory_runs_out() {
    refused(
        &["variance", "/dev/zero"],
        &format!("error: /dev/zero:1: {LONG}"),
    );
    refused(
        &["mcq", "agree", "/dev/zero"],
        &format!("error: /dev/zero:1: {LONG}"),
    );
    refused(
        &["cost", "data/demo/ledger.jsonl", "--prices", "/dev/zero"],
        "error: /dev/zero: larger than 64 MiB (67108864 bytes), the most a file read whole may hold",
    );
}

/// A whole-file input (the prices TOML) one byte past the limit.
#[test]
fn a_whole_file_past_the_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("prices.toml");
    let mut text = std::fs::read("data/demo/prices.toml").unwrap();
    text.push(b'\n');
    text.resize(MAX_LINE_BYTES + 1, b'#');
    std::fs::write(&toml, &text).unwrap();
    refused(
        &["cost", "data/demo/ledger.jsonl", "--prices", p(&toml)],
        &format!(
            "error: {}: larger than 64 MiB (67108864 bytes), the most a file read whole may hold",
            p(&toml)
        ),
    );
}

#[test]
fn a_directory_where_a_file_is_expected_is_exit_2_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = p(dir.path());
    let want = format!("error: {d}: is a directory; expected a file");
    let out = dir.path().join("out.jsonl");
    for args in [
        vec!["variance", d],
        vec!["bootstrap", d],
        vec!["correlate", d, "--x", "a", "--y", "b"],
        vec!["mcq", "agree", d],
        vec!["mcq", "score", d],
        vec!["mcq", "validate", d],
        vec!["cost", d],
        vec!["cost", "data/demo/ledger.jsonl", "--prices", d],
        vec!["score-answers", d],
        vec!["questions", "convert", d, "--out", p(&out)],
        vec!["judge", d, "--model", "m", "--out", p(&out)],
    ] {
        refused(&args, &want);
    }
    // An output path that is a directory is the same mistake.
    refused(
        &[
            "slice",
            "data/demo/panel.csv",
            "--arm",
            "open",
            "--design",
            "2:1:1",
            "--out",
            d,
        ],
        &want,
    );
}
