//! Issue #13: hostile flags and inputs end in exit 2 with a message, never a panic, an
//! abort or a silently wrong number. One test per numbered item of the issue.

/// Runs `stats args` and returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = crate::support::cli::stats().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Asserts exit 2 with `want` in stderr and no panic.
fn refused(args: &[&str], want: &str) {
    let (code, _, err) = run(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

const LEDGER: &str = "data/demo/ledger.jsonl";
const PRICES: &str = "data/demo/prices.toml";
const PANEL: &str = "data/demo/panel.csv";

/// Item 1: sizes implied by flags are checked against a stated limit before allocating.
#[test]
fn item1_unbounded_sizes_from_flags_are_refused() {
    refused(
        &["cost", LEDGER, "--search-price", "0:1e308:1"],
        // A settings error: the flag, then the library's words.
        "--search-price: the search price is 1e308; expected a finite price between 0 and 1e9 USD",
    );
    for sweep in ["0:1:1e-300", "0:1e9:1e-9", "0:20000:1"] {
        refused(
            &["cost", LEDGER, "--search-price", sweep],
            "at most 10000 are allowed",
        );
        refused(
            &[
                "allocate",
                PANEL,
                "--contrast",
                "adaptive-open",
                "--ledger",
                LEDGER,
                "--prices",
                PRICES,
                "--allocation",
                "A=10:1:1",
                "--allocation",
                "B=5:1:2",
                "--search-price",
                sweep,
            ],
            "at most 10000 are allowed",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    let out = out.to_str().unwrap();
    // 446 questions x 100,000 trajectories x 5 reads x 2 arms = 446,000,000 rows.
    refused(
        &["simulate", "--out", out, "--trajectories", "100000"],
        "would have 446000000 rows; at most 20000000",
    );
    refused(
        &[
            "simulate",
            "--out",
            out,
            "--gaussian",
            "--trajectories",
            "100000",
        ],
        "would have 223000000 rows",
    );
    let ledger = dir.path().join("l.jsonl");
    refused(
        &[
            "simulate",
            "--out",
            out,
            "--ledger",
            ledger.to_str().unwrap(),
            "--planner-calls",
            "1000000000",
        ],
        "the simulated ledger would have",
    );
    assert!(!std::path::Path::new(out).exists());
    refused(
        &[
            "correlate",
            "data/demo/capability.csv",
            "--x",
            "planning",
            "--y",
            "browsecomp",
            "--permutations",
            "1000000000",
        ],
        "--permutations",
    );
    refused(
        &[
            "bootstrap",
            PANEL,
            "--contrast",
            "adaptive-open",
            "--replicates",
            "4000000000",
        ],
        "at most 10000000",
    );
    refused(
        &[
            "bootstrap",
            PANEL,
            "--contrast",
            "adaptive-open",
            "--replicates-range",
            "0..4000000000",
        ],
        "at most 10000000",
    );
}

/// Item 2: a 65,536-character id no longer panics at a format width.
#[test]
fn item2_a_huge_id_prints() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pred.jsonl");
    let id = "q".repeat(70_000);
    std::fs::write(
        &p,
        format!("{{\"id\":\"{id}\",\"prediction\":\"Paris\",\"answers\":[\"Paris\"]}}\n"),
    )
    .unwrap();
    let (code, out, err) = run(&["score-answers", p.to_str().unwrap(), "--per-item"]);
    assert_eq!(code, Some(0), "{err}");
    let first = out.lines().nth(1).unwrap();
    assert!(
        first.starts_with(&id) && first.ends_with("1.0000  1.0000"),
        "{}",
        &first[69_990..]
    );
}

/// Item 4: one price validation, whatever the price's source.
#[test]
fn item4_bad_prices_are_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(PRICES).unwrap();
    let cases = [
        ("input = ", "nan"),
        ("input = ", "inf"),
        ("input = ", "1e308"),
        ("usd_per_1000 = ", "-1.0"),
        ("sweep_usd_per_1000 = ", "[0.0, nan]"),
        ("sweep_usd_per_1000 = ", "[0.0, -2.0]"),
    ];
    for (key, bad) in cases {
        let i = demo
            .find(key)
            .unwrap_or_else(|| panic!("{key} in prices.toml"));
        let end = i + demo[i..].find('\n').unwrap();
        let text = format!("{}{key}{bad}{}", &demo[..i], &demo[end..]);
        let p = dir.path().join("p.toml");
        std::fs::write(&p, &text).unwrap();
        refused(
            &["cost", LEDGER, "--prices", p.to_str().unwrap()],
            "expected a finite price between 0 and 1e9 USD",
        );
    }
    for flag in ["nan", "inf", "-1", "1e308"] {
        refused(
            &["cost", LEDGER, "--search-price", &format!("0,{flag}")],
            "--search-price",
        );
        refused(
            &[
                "efficiency",
                PANEL,
                "--contrast",
                "adaptive-open",
                "--ledger",
                LEDGER,
                "--prices",
                PRICES,
                "--currency",
                "usd",
                &format!("--search-price={flag}"),
            ],
            "--search-price",
        );
    }
}

/// Item 5: token sums that overflow u64 are refused with the line, not wrapped.
#[test]
fn item5_token_sums_that_overflow_are_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("l.jsonl");
    let row = |k: u32| {
        format!(
            "{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q\",\"arm\":\"a\",\"trajectory\":0,\"read\":{k},\"model\":\"m\",\"input_tokens\":9223372036854775808,\"output_tokens\":1}}\n"
        )
    };
    std::fs::write(&p, format!("{}{}", row(0), row(1))).unwrap();
    refused(
        &["cost", p.to_str().unwrap()],
        "l.jsonl:2: the ledger's token total exceeds",
    );
}

/// Item 7: a replicates file carries a checksum of its payload; one flipped bit or a cut
/// anywhere is refused by `merge`.
#[test]
fn item7_a_corrupted_replicates_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("r.bin");
    let r = rep.to_str().unwrap();
    let (code, _, err) = run(&[
        "bootstrap",
        PANEL,
        "--contrast",
        "adaptive-open",
        "--replicates",
        "20",
        "--replicates-out",
        r,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(&["merge", r]);
    assert_eq!(code, Some(0), "{err}");
    let good = std::fs::read(&rep).unwrap();
    // A bit in the last replicate value (the payload, not the header).
    let mut flipped = good.clone();
    let at = good.len() - 32 - 3;
    flipped[at] ^= 0x10;
    std::fs::write(&rep, &flipped).unwrap();
    refused(
        &["merge", r],
        "checksum mismatch: the file is corrupted or truncated",
    );
    std::fs::write(&rep, &good[..good.len() - 8]).unwrap();
    refused(&["merge", r], "checksum mismatch");
}

/// Item 8: values the f32 resampling sums cannot carry (beyond ±1e15) are refused with
/// file:line in panels (CSV and JSONL) and correlate tables; 1e15 itself is accepted.
#[test]
fn item8_scores_too_large_for_the_engine_are_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let panel = |name: &str, big: &str| {
        let mut s = String::from("dataset,question,trajectory,read,f1\n");
        for q in 0..3 {
            for t in 0..2 {
                for r in 0..2 {
                    let v = if (q, t, r) == (1, 1, 0) {
                        big.to_string()
                    } else {
                        format!("0.{q}{t}{r}")
                    };
                    s += &format!("d,q{q},{t},{r},{v}\n");
                }
            }
        }
        let p = dir.path().join(name);
        std::fs::write(&p, s).unwrap();
        p.to_str().unwrap().to_string()
    };
    // The big value is on line 8 (header, then q0's 4 rows, then q1 t0's 2 rows).
    for (big, name) in [("1e39", "a.csv"), ("1e300", "b.csv"), ("-2e15", "c.csv")] {
        let p = panel(name, big);
        for cmd in ["variance", "bootstrap"] {
            refused(&[cmd, &p], &format!("{name}:8: score 'f1' is {big}"));
            refused(
                &[cmd, &p],
                "values beyond ±1e15 are refused because the f32 resampling sums",
            );
        }
    }
    let ok = panel("ok.csv", "1e15");
    let (code, out, err) = run(&["variance", &ok]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    // JSONL panels too.
    let jp = dir.path().join("p.jsonl");
    std::fs::write(
        &jp,
        "{\"dataset\":\"d\",\"question\":\"q\",\"trajectory\":0,\"read\":0,\"f1\":1e300}\n",
    )
    .unwrap();
    refused(
        &["variance", jp.to_str().unwrap()],
        "p.jsonl:1: score 'f1' is 1e300",
    );
    // correlate with ±1e308 is refused, not r = NaN.
    let t = dir.path().join("t.csv");
    std::fs::write(&t, "x,y\n1e308,1\n-1e308,2\n0,3\n5,4\n").unwrap();
    refused(
        &[
            "correlate",
            t.to_str().unwrap(),
            "--x",
            "x",
            "--y",
            "y",
            "--replicates",
            "0",
        ],
        "t.csv:2: column 'x' is 1e308",
    );
}
