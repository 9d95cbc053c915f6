//! The `stats` binary as the scripted-server tests drive it: no key or base URL from the
//! environment, runs that must succeed, JSONL outputs, the fixture trajectory log, and
//! `stats mcq run` against a scripted model.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The `stats` binary under test.
pub fn stats_path() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stats"))
}

/// Whether a test's `stats` must not inherit the environment variable `name`: an API key or
/// token (`…API_KEY`, `…_TOKEN`) or an endpoint (`OPENAI_BASE_URL`), so a test reaches only
/// the server it names and never a real key or account.
pub fn is_secret(name: &str) -> bool {
    name.ends_with("API_KEY") || name.ends_with("_TOKEN") || name == "OPENAI_BASE_URL"
}

/// Removes every [`is_secret`] variable from `c`'s environment (also for a `sh -c` that
/// runs `stats`). A test that needs a key sets it on the command afterwards.
pub fn strip_secrets(c: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        if is_secret(&name.to_string_lossy()) {
            c.env_remove(&name);
        }
    }
    c.env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL")
}

/// The one way a test runs `stats`: the binary under test with [`strip_secrets`] applied.
pub fn stats() -> Command {
    let mut c = Command::new(stats_path());
    strip_secrets(&mut c);
    c
}

/// Runs `c` and returns its stdout; fails the test with the exit status, stdout and stderr
/// when it did not succeed.
pub fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `c` as [`run_ok`] and parses its stdout as JSON.
pub fn json_of(c: &mut Command) -> Value {
    serde_json::from_str(&run_ok(c)).unwrap()
}

/// Every line of a JSONL file, parsed.
pub fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `data/mcq/generated/NAME`: the fixture trajectory log and what is made from it.
pub fn mcq_demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/mcq/generated")
        .join(name)
}

/// The item id a `stats mcq run` prompt is about: the word after `QUERY-`.
pub fn item_of(prompt: &str) -> String {
    let i = prompt.find("QUERY-").expect("query in prompt");
    prompt[i + 6..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// `stats mcq run ITEMS --model MODEL --prompt bare --runs 2 --seed 100 --max-retries 0
/// --no-cache --out OUT` against the scripted server at `base`: run k of an item is sent
/// seed 100 + k, so the script reads the run as `seed - 100`.
pub fn mcq_run(items: &Path, model: &str, out: &Path, base: &str) -> Command {
    let mut c = stats();
    c.args(["mcq", "run"])
        .arg(items)
        .args([
            "--model",
            model,
            "--prompt",
            "bare",
            "--runs",
            "2",
            "--seed",
            "100",
            "--max-retries",
            "0",
            "--no-cache",
            "--out",
        ])
        .arg(out)
        .env("OPENAI_BASE_URL", base);
    c
}

/// The JSON report of `stats mcq score RESULTS --format json --backend cpu --replicates N`
/// followed by `extra`.
pub fn mcq_score_json(results: &Path, replicates: u32, extra: &[&str]) -> Value {
    json_of(
        stats()
            .args(["mcq", "score"])
            .arg(results)
            .args(["--format", "json", "--backend", "cpu", "--replicates"])
            .arg(replicates.to_string())
            .args(extra),
    )
}

/// The harness never hands `stats` a key: the endpoint variables are removed outright, and
/// so is every key or token variable of the test's own environment.
#[test]
fn the_harness_strips_keys_and_endpoints() {
    for (name, secret) in [
        ("OPENAI_API_KEY", true),
        ("ANTHROPIC_API_KEY", true),
        ("HF_TOKEN", true),
        ("OPENAI_BASE_URL", true),
        ("RAYON_NUM_THREADS", false),
        ("PATH", false),
        ("TOKENIZERS_PARALLELISM", false),
    ] {
        assert_eq!(is_secret(name), secret, "{name}");
    }
    let c = stats();
    let removed: Vec<String> = c
        .get_envs()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    assert!(
        removed.contains(&"OPENAI_API_KEY".to_string()),
        "{removed:?}"
    );
    assert!(
        removed.contains(&"OPENAI_BASE_URL".to_string()),
        "{removed:?}"
    );
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        assert_eq!(removed.contains(&name), is_secret(&name), "{name}");
    }
    assert_eq!(c.get_program(), stats_path());
}
