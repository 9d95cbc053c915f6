//! Issue #13, items 3, 11 and 12: output streams and output files.
//!
//! A closed stdout pipe exits 0 with nothing on stderr (no panic); a full disk (`/dev/full`)
//! exits 1 naming the failure; an output file is never left half-written; an output path
//! equal to an input path is refused before anything is written.

use std::process::{Command, Stdio};

use crate::support::cli::{stats, stats_path, strip_secrets};

/// Commands that print a result on the demo data, one per output path (table, JSON, CSV).
fn printing_commands() -> Vec<Vec<&'static str>> {
    let panel = "data/demo/panel.csv";
    vec![
        vec!["variance", panel, "--contrast", "adaptive-open"],
        vec![
            "variance",
            panel,
            "--contrast",
            "adaptive-open",
            "--format",
            "json",
        ],
        vec![
            "variance",
            panel,
            "--contrast",
            "adaptive-open",
            "--format",
            "csv",
        ],
        vec![
            "forecast",
            "--audit",
            panel,
            "--contrast",
            "adaptive-open",
            "--design",
            "446:2:1",
        ],
        vec![
            "bootstrap",
            panel,
            "--contrast",
            "adaptive-open",
            "--replicates",
            "200",
        ],
        vec![
            "cost",
            "data/demo/ledger.jsonl",
            "--prices",
            "data/demo/prices.toml",
        ],
        vec!["mcq", "validate", "data/mcq/sample.jsonl"],
        vec![
            "correlate",
            "data/demo/capability.csv",
            "--x",
            "planning",
            "--y",
            "browsecomp",
            "--replicates",
            "0",
        ],
    ]
}

#[test]
fn a_closed_pipe_exits_zero_quietly() {
    for args in printing_commands() {
        // The read end is closed before the child starts, so every write gets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = stats()
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} wrote to stderr: {err}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_exit_1_with_a_message() {
    for args in printing_commands() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = stats().args(&args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Runs `stats args` in `dir`-relative paths and returns (exit code, stderr).
fn run_in(args: &[&str]) -> (Option<i32>, String) {
    let out = stats().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn an_output_that_is_an_input_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let panel = dir.path().join("p.csv");
    std::fs::copy("data/demo/panel.csv", &panel).unwrap();
    let before = std::fs::read(&panel).unwrap();
    let p = panel.to_str().unwrap();
    let (code, err) = run_in(&[
        "bootstrap",
        p,
        "--contrast",
        "adaptive-open",
        "--replicates",
        "10",
        "--replicates-out",
        p,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is also the panel"), "{err}");
    assert_eq!(std::fs::read(&panel).unwrap(), before);

    let x = dir.path().join("x.jsonl");
    let x = x.to_str().unwrap();
    let (code, err) = run_in(&["simulate", "--out", x, "--ledger", x, "--datasets", "a=5"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("error: --ledger: ") && err.contains("is also the panel's file (out)"),
        "{err}"
    );
    assert!(!std::path::Path::new(x).exists());

    let rep = dir.path().join("r.bin");
    let r = rep.to_str().unwrap();
    let (code, err) = run_in(&[
        "bootstrap",
        p,
        "--contrast",
        "adaptive-open",
        "--replicates",
        "10",
        "--replicates-out",
        r,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = run_in(&["merge", r, "--out", r]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is also the input"), "{err}");

    let items = dir.path().join("items.jsonl");
    std::fs::copy("data/mcq/sample.jsonl", &items).unwrap();
    let i = items.to_str().unwrap();
    let (code, err) = run_in(&["mcq", "filter", i, "--predictions", i, "--out", i]);
    assert_eq!(code, Some(2), "{err}");
}

/// A write that fails midway (here: the file-size limit, `ulimit -f`) leaves no file and no
/// temporary beside it.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_output_write_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.csv");
    // 8 KiB limit (ulimit -f counts 1 KiB blocks) against a panel of ~100 KiB; SIGXFSZ is
    // ignored so the write fails with EFBIG instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 8; exec {} simulate --out {} --datasets a=300 --trajectories 3 --reads 3",
        stats_path().display(),
        out.display()
    );
    let o = strip_secrets(Command::new("sh").arg("-c").arg(&script))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("big.csv"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
