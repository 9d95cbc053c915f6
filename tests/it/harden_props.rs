//! Issue #13: the mutation suite. Valid inputs of every kind (panel CSV and JSONL, cost
//! ledger, prices TOML, MCQ items, results and annotations, QA predictions, correlate
//! tables, replicates files) are mutated at random (bytes deleted, inserted or replaced,
//! lines duplicated, swapped or cut, numbers replaced by extreme values) and run through the
//! binary. Every run must exit 0 or 2, never panic, never print `NaN`/`inf` on stdout or in
//! an output file, and never leave an output file (or a temporary one) behind when it fails.
//!
//! Bounded for CI: `CASES` cases per kind (override with `PROPTEST_CASES`), one process each,
//! from a fixed seed.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRng, TestRunner};

const CASES: u32 = 48;

fn has_non_finite(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
}

/// One mutation of a file's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Replace {
        at: usize,
        byte: u8,
    },
    DuplicateLine {
        line: usize,
    },
    SwapLines {
        a: usize,
        b: usize,
    },
    Truncate {
        at: usize,
    },
    /// Replaces the `n`-th number in the text by an extreme or odd value.
    Number {
        n: usize,
        with: &'static str,
    },
}

const ODD_NUMBERS: &[&str] = &[
    "1e308",
    "-1e308",
    "1e39",
    "-1e300",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e-320",
    "-0",
    "18446744073709551616",
    "9223372036854775807",
    "-1",
    "0",
    "\"\"",
    "null",
    "true",
    "1.5e15",
    "999999999999999999999",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0usize..4096;
    prop_oneof![
        (at.clone(), 1usize..16).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (
            at.clone(),
            prop::collection::vec(
                prop_oneof![
                    Just(b','),
                    Just(b'"'),
                    Just(b'\n'),
                    Just(b'{'),
                    Just(b'}'),
                    Just(b'['),
                    Just(0xFFu8),
                    Just(0xEFu8),
                    Just(b'\r'),
                    any::<u8>()
                ],
                1..6
            )
        )
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (at.clone(), any::<u8>()).prop_map(|(at, byte)| Mutation::Replace { at, byte }),
        (0usize..64).prop_map(|line| Mutation::DuplicateLine { line }),
        (0usize..64, 0usize..64).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        at.prop_map(|at| Mutation::Truncate { at }),
        (0usize..64, prop::sample::select(ODD_NUMBERS))
            .prop_map(|(n, with)| Mutation::Number { n, with }),
    ]
}

fn apply(good: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = good.to_vec();
    for m in muts {
        let len = b.len().max(1);
        match m {
            Mutation::Delete { at, len: n } => {
                let at = at % len;
                let end = (at + n).min(b.len());
                if at < end {
                    b.drain(at..end);
                }
            }
            Mutation::Insert { at, bytes } => {
                let at = at % (b.len() + 1);
                b.splice(at..at, bytes.iter().copied());
            }
            Mutation::Replace { at, byte } => {
                if !b.is_empty() {
                    let at = at % b.len();
                    b[at] = *byte;
                }
            }
            Mutation::DuplicateLine { line } | Mutation::SwapLines { a: line, .. }
                if b.is_empty() =>
            {
                let _ = line;
            }
            Mutation::DuplicateLine { line } => {
                let mut lines: Vec<Vec<u8>> =
                    b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let i = line % lines.len();
                let l = lines[i].clone();
                lines.insert(i, l);
                b = lines.join(&b'\n');
            }
            Mutation::SwapLines { a, b: c } => {
                let mut lines: Vec<Vec<u8>> =
                    b.split(|&x| x == b'\n').map(<[u8]>::to_vec).collect();
                let n = lines.len();
                lines.swap(a % n, c % n);
                b = lines.join(&b'\n');
            }
            Mutation::Truncate { at } => {
                let at = at % len;
                b.truncate(at);
            }
            Mutation::Number { n, with } => {
                let text = String::from_utf8_lossy(&b).into_owned();
                let spans = number_spans(&text);
                if !spans.is_empty() {
                    let (s, e) = spans[n % spans.len()];
                    b = format!("{}{}{}", &text[..s], with, &text[e..]).into_bytes();
                }
            }
        }
    }
    b
}

/// Byte spans of the decimal numbers in `text`.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// The command line, given the input file and the output directory.
type ArgsFn = Box<dyn Fn(&Path, &Path) -> Vec<String>>;

/// One input kind: a valid file and the command that reads it (given the input path and an
/// output directory); `out` names the output file the command writes, if any.
struct Kind {
    name: &'static str,
    file: &'static str,
    good: Vec<u8>,
    args: ArgsFn,
    out: Option<&'static str>,
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn repo_lines(path: &str, n: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    text.lines()
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn p(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

fn panel_csv() -> String {
    let mut s = String::from("dataset,question,arm,trajectory,read,f1\n");
    for (d, q) in [("a", 0), ("a", 1), ("a", 2), ("b", 3), ("b", 4), ("b", 5)] {
        for arm in ["open", "adaptive"] {
            for t in 0..2 {
                for r in 0..2 {
                    let v = ((q * 7 + t * 3 + r + arm.len()) % 10) as f64 / 10.0;
                    s += &format!("{d},q{q},{arm},{t},{r},{v}\n");
                }
            }
        }
    }
    s
}

fn panel_jsonl() -> String {
    panel_csv()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!(
                "{{\"dataset\":\"{}\",\"question\":\"{}\",\"arm\":\"{}\",\"trajectory\":{},\"read\":{},\"f1\":{}}}\n",
                f[0], f[1], f[2], f[3], f[4], f[5]
            )
        })
        .collect()
}

fn mcq_result(id: &str, ok: bool) -> String {
    let answer = ok.then_some(["A"]);
    format!(
        "{}\n",
        serde_json::json!({"id": id, "run": 0, "model": "m", "prompt": "informative",
            "shuffle_seed": null, "task": "planning", "subtask": "convergent", "group": "planning-convergent",
            "labels": ["A", "B"], "permutation": ["A", "B"], "gold": ["A"],
            "allow_empty": false, "outcome": if ok { "ok" } else { "parse_failed" }, "answer": answer, "answer_shown": answer,
            "parse_note": null, "text": "A", "error": null, "usage": null, "cached": false})
    )
}

/// A replicates file of a small bootstrap, written once per test run.
fn replicates(dir: &Path) -> Vec<u8> {
    let panel = dir.join("rep_panel.csv");
    std::fs::write(&panel, panel_csv()).unwrap();
    let out = dir.join("rep.bin");
    let o = crate::support::cli::stats()
        .args([
            "bootstrap",
            &p(&panel),
            "--contrast",
            "adaptive-open",
            "--replicates",
            "40",
        ])
        .args(["--backend", "cpu", "--replicates-out", &p(&out)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

fn kinds(setup: &Path) -> Vec<Kind> {
    let contrast = ["--contrast", "adaptive-open"];
    let ledger_good = repo_lines("data/demo/ledger.jsonl", 40);
    std::fs::write(setup.join("ledger.jsonl"), &ledger_good).unwrap();
    let ledger_path = setup.join("ledger.jsonl");
    vec![
        Kind {
            name: "panel CSV",
            file: "p.csv",
            good: panel_csv().into_bytes(),
            args: Box::new(move |f, out| {
                let mut a = strs(&["bootstrap", &p(f), "--replicates", "30", "--backend", "cpu"]);
                a.extend(strs(&contrast));
                a.extend(strs(&["--replicates-out", &p(&out.join("r.bin"))]));
                a
            }),
            out: Some("r.bin"),
        },
        Kind {
            name: "panel CSV (variance)",
            file: "p.csv",
            good: panel_csv().into_bytes(),
            args: Box::new(move |f, _| {
                let mut a = strs(&["variance", &p(f), "--format", "json"]);
                a.extend(strs(&contrast));
                a
            }),
            out: None,
        },
        Kind {
            name: "panel JSONL",
            file: "p.jsonl",
            good: panel_jsonl().into_bytes(),
            args: Box::new(move |f, out| {
                let mut a = strs(&["slice", &p(f), "--design", "2:1:1", "--out", &p(&out.join("s.csv"))]);
                a.extend(strs(&contrast));
                a
            }),
            out: Some("s.csv"),
        },
        Kind {
            name: "cost ledger",
            file: "l.jsonl",
            good: ledger_good,
            args: Box::new(|f, _| {
                strs(&["cost", &p(f), "--prices", &p(&repo("data/demo/prices.toml")), "--format", "csv"])
            }),
            out: None,
        },
        Kind {
            name: "prices TOML",
            file: "prices.toml",
            good: std::fs::read(repo("data/demo/prices.toml")).unwrap(),
            args: Box::new(move |f, _| strs(&["cost", &p(&ledger_path), "--prices", &p(f)])),
            out: None,
        },
        Kind {
            name: "MCQ items",
            file: "items.jsonl",
            good: repo_lines("data/mcq/sample.jsonl", 6),
            args: Box::new(|f, _| strs(&["mcq", "validate", &p(f)])),
            out: None,
        },
        Kind {
            name: "MCQ results",
            file: "results.jsonl",
            good: ["a", "b", "c", "d", "e"]
                .iter()
                .enumerate()
                .map(|(i, id)| mcq_result(id, i % 2 == 0))
                .collect::<String>()
                .into_bytes(),
            args: Box::new(|f, _| {
                strs(&["mcq", "score", &p(f), "--replicates", "50", "--backend", "cpu", "--format", "json"])
            }),
            out: None,
        },
        Kind {
            name: "MCQ annotations",
            file: "ann.jsonl",
            good: repo_lines("data/mcq/annotations.jsonl", 12),
            args: Box::new(|f, _| strs(&["mcq", "agree", &p(f), "--format", "csv"])),
            out: None,
        },
        Kind {
            name: "QA predictions",
            file: "preds.jsonl",
            good: b"{\"id\": \"a\", \"prediction\": \"Paris\", \"answers\": [\"Paris\"]}\n{\"id\": \"b\", \"prediction\": \"the cat 12\", \"answer\": \"a cat 12.5\"}\n{\"id\": \"c\", \"prediction\": \"1912\", \"answers\": [\"1912\", \"in 1912\"]}\n".to_vec(),
            args: Box::new(|f, _| strs(&["score-answers", &p(f), "--per-item"])),
            out: None,
        },
        Kind {
            name: "correlate table",
            file: "t.csv",
            good: std::fs::read(repo("data/demo/capability.csv")).unwrap(),
            args: Box::new(|f, _| {
                strs(&[
                    "correlate", &p(f), "--x", "planning,evidence", "--y", "browsecomp", "--replicates", "50",
                    "--permutations", "50", "--backend", "cpu", "--format", "csv",
                ])
            }),
            out: None,
        },
        Kind {
            name: "replicates file",
            file: "r.bin",
            good: replicates(setup),
            args: Box::new(|f, out| strs(&["merge", &p(f), "--out", &p(&out.join("m.bin"))])),
            out: Some("m.bin"),
        },
    ]
}

fn check(k: &Kind, bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(k.file);
    std::fs::write(&input, bytes).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let args = (k.args)(&input, &out_dir);
    let o = crate::support::cli::stats()
        .args(&args)
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    prop_assert!(
        matches!(code, Some(0 | 2)),
        "{}: exit {code:?} for {args:?}\n{stderr}",
        k.name
    );
    prop_assert!(!stderr.contains("panicked"), "{}: {stderr}", k.name);
    // A mutation may itself write `nan` into an id or a label, which output echoes as
    // given; the check applies to inputs that hold no such word.
    let input_has_word = has_non_finite(&String::from_utf8_lossy(bytes));
    prop_assert!(
        input_has_word || !has_non_finite(&stdout),
        "{}: stdout holds NaN/inf:\n{stdout}",
        k.name
    );
    let written: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    match (k.out, code) {
        (Some(name), Some(0)) => {
            prop_assert_eq!(written.len(), 1, "{}: {:?}", k.name, written);
            prop_assert!(written[0].ends_with(name));
            if !name.ends_with(".bin") {
                let text =
                    String::from_utf8_lossy(&std::fs::read(&written[0]).unwrap()).into_owned();
                prop_assert!(
                    input_has_word || !has_non_finite(&text),
                    "{}: {name} holds NaN/inf",
                    k.name
                );
            }
        }
        _ => prop_assert!(
            written.is_empty(),
            "{}: exit {code:?} left {:?}\n{stderr}",
            k.name,
            written
        ),
    }
    Ok(())
}

#[test]
fn mutated_inputs_exit_0_or_2_without_nan_panic_or_partial_file() {
    let setup = tempfile::tempdir().unwrap();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    for k in kinds(setup.path()) {
        // The unmutated file is accepted.
        check(&k, &k.good).unwrap_or_else(|e| panic!("{}: the valid file fails: {e}", k.name));
        // A fixed seed, so that CI runs the same cases every time.
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        let rng = TestRng::deterministic_rng(config.rng_algorithm);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let good = k.good.clone();
        let r = runner.run(&prop::collection::vec(mutation(), 1..4), |muts| {
            check(&k, &apply(&good, &muts))
        });
        if let Err(e) = r {
            panic!("{}: {e}", k.name);
        }
    }
}
