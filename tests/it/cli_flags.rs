//! The resampling flag group every bootstrap command shares: the same flags everywhere,
//! `--confidence` refused outside (0, 1) when parsed, `--replicates-range` only on
//! `stats bootstrap`, and the level reaching the commands whose intervals were fixed at 95%.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

const PANEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/panel.csv");
const LEDGER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/ledger.jsonl");
const PRICES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/prices.toml");
const CAPABILITY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/capability.csv");

/// Every resampling command: its name, then the rest of a valid call without the resampling
/// flags. Values are parsed before files are read, so the refusal checks need no files.
fn commands() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    let ledger = ["--ledger", LEDGER];
    let panel = [PANEL, "--contrast", "adaptive-open"];
    vec![
        (vec!["bootstrap"], panel.to_vec()),
        (vec!["subsets"], [&panel[..], &["--audit", PANEL]].concat()),
        (
            vec!["allocate"],
            [
                &panel[..],
                &ledger,
                &["--prices", PRICES, "--allocation", "A=446:2:1"],
                &["--allocation", "B=174:2:5"],
            ]
            .concat(),
        ),
        (vec!["efficiency"], [&panel[..], &ledger].concat()),
        (
            vec!["consistency"],
            vec!["reads.csv", "--by", "temperature"],
        ),
        (
            vec!["correlate"],
            vec![CAPABILITY, "--x", "planning", "--y", "xbench"],
        ),
        (vec!["mcq", "score"], vec!["results.jsonl"]),
        (vec!["mcq", "compare"], vec!["a.jsonl", "b.jsonl"]),
    ]
}

/// The whole call of a command.
fn call(name: &[&'static str], rest: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    [name, rest, extra].concat()
}

#[test]
fn confidence_outside_the_open_unit_interval_is_refused_everywhere() {
    for (name, rest) in commands() {
        for bad in ["0", "1", "1.5", "-0.1", "NaN", "95%"] {
            stats()
                .args(call(&name, &rest, &["--confidence", bad]))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(format!(
                    "invalid value '{bad}' for '--confidence <LEVEL>': must be between 0 and 1"
                )));
        }
    }
}

#[test]
fn every_resampling_command_has_the_group_and_only_bootstrap_shards() {
    for (name, rest) in commands() {
        let out = stats()
            .args(call(&name, &[], &["--help"]))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for flag in [
            "--replicates <",
            "--seed <",
            "--backend <",
            "--confidence <LEVEL>",
        ] {
            assert!(text.contains(flag), "{name:?} --help lacks {flag}:\n{text}");
        }
        let shards = text.contains("--replicates-range");
        assert_eq!(shards, name == ["bootstrap"], "{name:?}:\n{text}");
        if !shards {
            stats()
                .args(call(&name, &rest, &["--replicates-range", "0..5"]))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(
                    "unexpected argument '--replicates-range'",
                ));
        }
    }
}

/// The interval `[lo, hi]` in a JSON pair `v`.
fn interval(v: &serde_json::Value) -> [f64; 2] {
    [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()]
}

/// A narrower level gives an interval inside the wider one (same replicates: same seed);
/// 0.95 is the default.
fn assert_nested(narrow: [f64; 2], wide: [f64; 2]) {
    assert!(
        wide[0] <= narrow[0] && narrow[0] < narrow[1] && narrow[1] <= wide[1],
        "{narrow:?} not inside {wide:?}"
    );
    assert!(
        wide[0] < narrow[0] || narrow[1] < wide[1],
        "{narrow:?} = {wide:?}"
    );
}

#[test]
fn allocate_and_efficiency_intervals_follow_the_confidence_level() {
    let run = |(name, rest): &(Vec<&'static str>, Vec<&'static str>),
               extra: &[&'static str],
               format: &'static str| {
        let common = [
            "--replicates",
            "400",
            "--backend",
            "cpu",
            "--format",
            format,
        ];
        [call(name, rest, &common), extra.to_vec()].concat()
    };
    let cmds = commands();
    let (alloc, eff) = (&cmds[2], &cmds[3]);
    let (d, n) = (
        json(&run(alloc, &[], "json")),
        json(&run(alloc, &["--confidence", "0.5"], "json")),
    );
    assert_eq!(d, json(&run(alloc, &["--confidence", "0.95"], "json")));
    let pair = |v: &serde_json::Value| interval(&v["pairs"][0]["se_reduction"]["ci"]);
    assert_nested(pair(&n), pair(&d));
    stats()
        .args(run(alloc, &["--confidence", "0.5"], "table"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pairs (50% bootstrap intervals, 400",
        ));

    let (d, n) = (
        json(&run(eff, &[], "json")),
        json(&run(eff, &["--confidence", "0.5"], "json")),
    );
    let ratio = |v: &serde_json::Value| interval(&v["direct"]["ci"]);
    assert_nested(ratio(&n), ratio(&d));
    stats()
        .args(run(eff, &["--confidence", "0.8"], "table"))
        .assert()
        .success()
        .stdout(predicate::str::contains("loss %  80% range"));
}

#[test]
fn consistency_ratio_interval_follows_the_confidence_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = String::from("temperature,dataset,question,trajectory,read,answer,f1\n");
    let mut x = common::XorShift(0x9E37_79B9_7F4A_7C15);
    for temp in ["0", "0.7"] {
        for q in 0..20 {
            for t in 0..2 {
                for r in 0..2 {
                    let a = ["x", "y", "z"][(x.next() % 3) as usize];
                    s.push_str(&format!("{temp},d,q{q},{t},{r},{a},{}\n", x.grid(10)));
                }
            }
        }
    }
    let p = write(&dir, "reads.csv", &s);
    let args = |level: &str, format: &str| {
        let ps = p.to_str().unwrap().to_string();
        [
            "consistency",
            &ps,
            "--by",
            "temperature",
            "--replicates",
            "400",
            "--backend",
            "cpu",
            "--confidence",
            level,
            "--format",
            format,
        ]
        .map(String::from)
    };
    let ci = |level: &str| {
        let a = args(level, "json");
        let v = json(&a.iter().map(String::as_str).collect::<Vec<_>>());
        interval(&v["se_ratio"]["ci"])
    };
    assert_nested(ci("0.6"), ci("0.95"));
    stats()
        .args(args("0.6", "table"))
        .assert()
        .success()
        .stdout(predicate::str::contains("(60% bootstrap, 400 replicates"));
}

/// One `Format` enum: the commands without a CSV form refuse `--format csv` when the flags
/// are read (exit 2, naming what they take), and still take `table` and `json`.
#[test]
fn commands_without_csv_refuse_it_at_parse_time() {
    for args in [
        vec!["bench", "--format", "csv"],
        vec![
            "index",
            "search",
            "local:/nonexistent",
            "q",
            "--format",
            "csv",
        ],
    ] {
        stats().args(&args).assert().code(2).stderr(
            predicate::str::contains("invalid value 'csv' for '--format <FORMAT>'")
                .and(predicate::str::contains("[possible values: table, json]")),
        );
    }
    stats()
        .args(["bench", "--replicates", "5", "--min-time", "0", "--no-gpu"])
        .args(["--format", "json"])
        .assert()
        .success();
}
