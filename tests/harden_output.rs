//! Issue #13, items 3, 11 and 12: output streams and output files.
//!
//! A closed stdout pipe exits 0 with nothing on stderr (no panic); a full disk (`/dev/full`)
//! exits 1 naming the failure; an output file is never left half-written; an output path
//! equal to an input path is refused before anything is written.

use std::process::{Command, Stdio};

fn stats() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stats"))
}

/// Commands that print a result on the demo data, one per output path (table, JSON, CSV).
fn printing_commands() -> Vec<Vec<&'static str>> {
    let panel = "data/demo/panel.csv";
    vec![
        vec!["variance", panel, "--contrast", "adaptive-open"],
        vec!["variance", panel, "--contrast", "adaptive-open", "--format", "json"],
        vec!["variance", panel, "--contrast", "adaptive-open", "--format", "csv"],
        vec!["forecast", "--audit", panel, "--contrast", "adaptive-open", "--design", "446:2:1"],
        vec!["bootstrap", panel, "--contrast", "adaptive-open", "--replicates", "200"],
        vec!["cost", "data/demo/ledger.jsonl", "--prices", "data/demo/prices.toml"],
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
