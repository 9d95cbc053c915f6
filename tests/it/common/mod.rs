//! Helpers shared by the integration tests: the `stats` binary, temporary input files,
//! JSON output, and a small deterministic generator for irregular test data.
#![allow(dead_code)] // each test crate uses a different subset

use std::path::PathBuf;

/// The `stats` binary under test, as an `assert_cmd` command: [`crate::support::cli::stats`]
/// (no API key, token or endpoint inherited from the environment).
pub fn stats() -> assert_cmd::Command {
    assert_cmd::Command::from_std(crate::support::cli::stats())
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("temporary file is writable");
    p
}

/// Runs `stats args…`, asserts success (showing stderr otherwise) and parses stdout as JSON.
/// A document's body: the document without its `run` envelope (what a `--by` section holds).
pub fn body(mut doc: serde_json::Value) -> serde_json::Value {
    doc.as_object_mut()
        .expect("a document is an object")
        .remove("run")
        .expect("a document has a run envelope");
    doc
}

pub fn json(args: &[&str]) -> serde_json::Value {
    let out = stats().args(args).output().expect("stats runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17): irregular but reproducible test values.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `(next % m) / m`: a value in [0, 1) on a grid of `m` steps.
    pub fn grid(&mut self, m: u64) -> f64 {
        (self.next() % m) as f64 / m as f64
    }
}

/// Whether a GPU test that finds no usable GPU must fail rather than skip:
/// `STATS_REQUIRE_GPU=1` (CI, with lavapipe). The one place that reads the variable; every
/// GPU test decides through this, [`gpu_or_skip`] or [`gpu_ran`].
pub fn gpu_required() -> bool {
    std::env::var("STATS_REQUIRE_GPU").as_deref() == Ok("1")
}

/// The GPU resource `r` of a GPU test, or None (the test skips, printing why) when there is
/// none; fails the test instead when [`gpu_required`].
pub fn gpu_or_skip<T, E: std::fmt::Display>(r: Result<T, E>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                !gpu_required(),
                "STATS_REQUIRE_GPU=1 but no GPU could be used: {e}"
            );
            eprintln!("skipping: no GPU ({e})");
            None
        }
    }
}

/// Whether a `--backend gpu` run succeeded (see [`gpu_or_skip`] for a run that did not).
pub fn gpu_ran(out: &std::process::Output) -> bool {
    let result = if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    };
    gpu_or_skip(result).is_some()
}
