//! Golden output of every analysis command on the demo data (issue #36): the text table, the
//! CSV and the JSON each command prints, its notes on stderr, and the files it writes, compared
//! byte for byte with tests/golden/. Recorded before the restructuring of #36, so that
//! restructuring can show it moved no byte of text or CSV. The README's own commands are
//! checked by `readme.rs` and not repeated here.
//!
//! `STATS_BLESS=1 cargo test --test it golden::` rewrites the files (tests/golden/README.md:
//! they change only in a commit that says which value moved and why).
//!
//! Machine-independent by construction: rayon is pinned to 2 threads (the backend line says how
//! many ran; the numbers do not depend on it), resampling runs on `--backend cpu` (the GPU path
//! gives the same sums but says which adapter ran), `STATS_CPU_RNG` is removed (every SIMD
//! generator gives the same draws), and the temporary directory a command writes into is
//! printed as `[TMP]`. Replicates are 2,000 where a command takes `--replicates`, to keep the
//! debug-build test short.

use std::path::Path;

use crate::support::cli::stats;

const P: &str = "data/demo/panel.csv";
const L: &str = "data/demo/ledger.jsonl";
const PR: &str = "data/demo/prices.toml";
const C: [&str; 2] = ["--contrast", "adaptive-open"];
const B: [&str; 4] = ["--backend", "cpu", "--replicates", "2000"];

/// The output variants of one case: the default text, `--format csv`, `--format json`.
const TCJ: &[Fmt] = &[Fmt::Text, Fmt::Csv, Fmt::Json];
const TEXT: &[Fmt] = &[Fmt::Text];

#[derive(Clone, Copy)]
enum Fmt {
    Text,
    Csv,
    Json,
    /// `--json` (run-audit's flag), stored with the JSON goldens.
    JsonFlag,
}

impl Fmt {
    /// The folder under tests/golden/, the file extension, and the flags the variant adds.
    fn layout(self) -> (&'static str, &'static str, &'static [&'static str]) {
        match self {
            Fmt::Text => ("text", "txt", &[]),
            Fmt::Csv => ("csv", "csv", &["--format", "csv"]),
            Fmt::Json => ("json", "json", &["--format", "json"]),
            Fmt::JsonFlag => ("json", "json", &["--json"]),
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bless() -> bool {
    std::env::var("STATS_BLESS").as_deref() == Ok("1")
}

/// One command group's run: a temporary directory for what its commands write, and the
/// goldens that differ (reported together at the end, so one run shows every moved file).
struct Golden {
    tmp: tempfile::TempDir,
    failures: Vec<String>,
}

impl Golden {
    fn new() -> Golden {
        Golden {
            tmp: tempfile::tempdir().unwrap(),
            failures: Vec::new(),
        }
    }

    /// A path in the temporary directory, as an argument.
    fn t(&self, name: &str) -> String {
        self.tmp.path().join(name).to_str().unwrap().to_string()
    }

    fn normalise(&self, bytes: &[u8]) -> Vec<u8> {
        let tmp = self.tmp.path().to_str().unwrap();
        String::from_utf8(bytes.to_vec())
            .expect("output is UTF-8")
            .replace(tmp, "[TMP]")
            .into_bytes()
    }

    /// Runs `stats ARGS` once per format (each format's flags appended), from the repository
    /// root, and compares stdout with `tests/golden/DIR/NAME.EXT` and stderr with
    /// `tests/golden/DIR/NAME.stderr` (which exists only where the command writes to stderr).
    fn case(&mut self, name: &str, args: &[&str], formats: &[Fmt]) {
        for &f in formats {
            let (dir, ext, extra) = f.layout();
            let out = stats()
                .current_dir(root())
                .env("RAYON_NUM_THREADS", "2")
                .env_remove("STATS_CPU_RNG")
                .args(args)
                .args(extra)
                .output()
                .unwrap();
            let (stdout, stderr) = (self.normalise(&out.stdout), self.normalise(&out.stderr));
            assert!(
                out.status.success(),
                "{name} ({dir}): stats {}: exit {:?}\n{}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&stderr)
            );
            let base = root().join("tests/golden").join(dir);
            self.compare(&base.join(format!("{name}.{ext}")), &stdout, false);
            self.compare(&base.join(format!("{name}.stderr")), &stderr, true);
        }
    }

    /// Compares the file `FILE` a command wrote into the temporary directory with
    /// `tests/golden/files/NAME/FILE`.
    fn file(&mut self, name: &str, file: &str) {
        let got = std::fs::read(self.tmp.path().join(file))
            .unwrap_or_else(|e| panic!("{name}: {file} not written: {e}"));
        let got = self.normalise(&got);
        let want = root().join("tests/golden/files").join(name).join(file);
        self.compare(&want, &got, false);
    }

    /// Compares `got` with the golden file `want`; `optional`: an absent golden stands for empty
    /// output (stderr), and an empty output is blessed by removing the file.
    fn compare(&mut self, want: &Path, got: &[u8], optional: bool) {
        let rel = want.strip_prefix(root()).unwrap().display().to_string();
        if bless() {
            if optional && got.is_empty() {
                let _ = std::fs::remove_file(want);
            } else {
                std::fs::create_dir_all(want.parent().unwrap()).unwrap();
                std::fs::write(want, got).unwrap();
            }
            return;
        }
        let expected = match std::fs::read(want) {
            Ok(b) => b,
            Err(_) if optional => Vec::new(),
            Err(e) => {
                self.failures
                    .push(format!("{rel}: cannot read the golden file: {e}"));
                return;
            }
        };
        if expected != got {
            self.failures
                .push(format!("{rel}: {}", first_difference(&expected, got)));
        }
    }

    fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "output differs from tests/golden/ (re-record with STATS_BLESS=1 only in a commit \
             that says which value moved and why):\n{}",
            self.failures.join("\n")
        );
    }
}

/// Where two outputs first differ: the line number and both lines.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let (wl, gl): (Vec<&str>, Vec<&str>) = (w.split('\n').collect(), g.split('\n').collect());
    for i in 0..wl.len().max(gl.len()) {
        let (a, b) = (wl.get(i), gl.get(i));
        if a != b {
            return format!(
                "line {}:\n  golden: {}\n  now:    {}",
                i + 1,
                a.map_or("<end of file>".to_string(), |s| format!("{s:?}")),
                b.map_or("<end of file>".to_string(), |s| format!("{s:?}"))
            );
        }
    }
    format!("{} bytes golden, {} bytes now", want.len(), got.len())
}

/// One argument vector from pieces that are each a `&str`, a `String`, an array of `&str` or a
/// slice of `String`s.
macro_rules! argv {
    ($($x:expr),* $(,)?) => {{
        let mut v: Vec<String> = Vec::new();
        $( v.extend(Pieces::pieces(&$x)); )*
        v
    }};
}

trait Pieces {
    fn pieces(&self) -> Vec<String>;
}
impl Pieces for &str {
    fn pieces(&self) -> Vec<String> {
        vec![self.to_string()]
    }
}
impl Pieces for String {
    fn pieces(&self) -> Vec<String> {
        vec![self.clone()]
    }
}
impl Pieces for &[String] {
    fn pieces(&self) -> Vec<String> {
        self.to_vec()
    }
}

impl<const N: usize> Pieces for [&str; N] {
    fn pieces(&self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn variance() {
    let mut g = Golden::new();
    // The text is the README's first example (readme.rs).
    g.case(
        "variance",
        &refs(&argv!["variance", P, C]),
        &[Fmt::Csv, Fmt::Json],
    );
    g.case(
        "variance-arm-em",
        &refs(&argv!["variance", P, ["--arm", "open", "--metric", "em"]]),
        TEXT,
    );
    // Unbalanced (REML), with the note naming the question that misses a cell.
    g.case(
        "variance-unbalanced",
        &["variance", "tests/fixtures/reml/missing_read.csv"],
        TCJ,
    );
    g.finish();
}

#[test]
fn forecast_and_slice() {
    let mut g = Golden::new();
    let designs = [
        "--design", "446:2:1", "--design", "174:2:5", "--design", "298:3:1",
    ];
    g.case(
        "forecast",
        &refs(&argv!["forecast", "--audit", P, C, designs]),
        // The text is the README's second example (readme.rs).
        &[Fmt::Csv, Fmt::Json],
    );
    g.case(
        "forecast-pooled",
        &refs(&argv![
            "forecast",
            "--audit",
            P,
            C,
            ["--design", "446:2:1", "--pooled"]
        ]),
        TEXT,
    );
    let a = g.t("a.csv");
    g.case(
        "slice",
        &refs(&argv![
            "slice",
            P,
            C,
            ["--design", "446:2:1", "--out"],
            a.clone()
        ]),
        TEXT,
    );
    g.file("slice", "a.csv");
    let small = g.t("small.csv");
    g.case(
        "slice-seed",
        &refs(&argv![
            "slice",
            P,
            C,
            ["--design", "20:2:1", "--seed", "7", "--out"],
            small
        ]),
        TEXT,
    );
    g.file("slice-seed", "small.csv");
    let measured = format!("446:2:1={a}");
    g.case(
        "forecast-measured",
        &refs(&argv![
            "forecast",
            "--audit",
            P,
            C,
            ["--design", "446:2:1", "--measured"],
            measured
        ]),
        TCJ,
    );
    g.finish();
}

#[test]
fn bootstrap_and_merge() {
    let mut g = Golden::new();
    g.case("bootstrap", &refs(&argv!["bootstrap", P, C, B]), TCJ);
    g.case(
        "bootstrap-components",
        &refs(&argv![
            "bootstrap",
            P,
            C,
            B,
            ["--components", "--design", "446:2:1", "--design", "174:2:5"]
        ]),
        TCJ,
    );
    g.case(
        "bootstrap-bca",
        &refs(&argv!["bootstrap", P, C, B, ["--method", "bca"]]),
        TEXT,
    );
    // Two shards of the same 2,000 replicates, merged in the other order.
    let (sa, sb, whole) = (g.t("a.bin"), g.t("b.bin"), g.t("whole.bin"));
    for (name, range, file) in [("shard-a", "0..1200", &sa), ("shard-b", "1200..2000", &sb)] {
        g.case(
            name,
            &refs(&argv![
                "bootstrap",
                P,
                C,
                B,
                ["--replicates-range", range, "--replicates-out"],
                file.clone()
            ]),
            TEXT,
        );
    }
    let merged = g.t("merged.bin");
    g.case(
        "merge",
        &refs(&argv![
            "merge",
            sb.clone(),
            sa.clone(),
            "--out",
            merged.clone()
        ]),
        TCJ,
    );
    // The merged file is the single run's, byte for byte (docs/resample.md).
    let mut one = stats();
    one.current_dir(root()).args(refs(&argv![
        "bootstrap",
        P,
        C,
        B,
        "--replicates-out",
        whole.clone()
    ]));
    crate::support::cli::run_ok(&mut one);
    assert!(
        std::fs::read(&merged).unwrap() == std::fs::read(&whole).unwrap(),
        "merged replicates differ from the single run's"
    );
    g.finish();
}

#[test]
fn cost() {
    let mut g = Golden::new();
    g.case("cost", &["cost", L, "--prices", PR], TCJ);
    g.case(
        "cost-noprices",
        &["cost", L, "--search-price", "0:1:0.5"],
        TEXT,
    );
    g.finish();
}

#[test]
fn allocate() {
    let mut g = Golden::new();
    let allocs = [
        "--allocation",
        "A=446:2:1",
        "--allocation",
        "B=174:2:5",
        "--allocation",
        "C=298:3:1",
    ];
    let plot = g.t("allocate.svg");
    g.case(
        "allocate",
        &refs(&argv![
            "allocate", P, C, "--ledger", L, "--prices", PR, allocs, B
        ]),
        TCJ,
    );
    g.case(
        "allocate-plot",
        &refs(&argv![
            "allocate",
            P,
            C,
            "--ledger",
            L,
            "--prices",
            PR,
            ["--allocation", "A=446:2:1", "--allocation", "B=174:2:5"],
            B,
            "--plot",
            plot
        ]),
        TEXT,
    );
    g.file("allocate-plot", "allocate.svg");
    g.finish();
}

#[test]
fn efficiency() {
    let mut g = Golden::new();
    g.case(
        "efficiency",
        &refs(&argv!["efficiency", P, C, "--ledger", L, B]),
        TCJ,
    );
    g.case(
        "efficiency-usd",
        &refs(&argv![
            "efficiency",
            P,
            C,
            "--ledger",
            L,
            ["--currency", "usd", "--prices", PR],
            B
        ]),
        TCJ,
    );
    g.case(
        "efficiency-tokens-usd",
        &refs(&argv![
            "efficiency",
            P,
            C,
            "--ledger",
            L,
            ["--currency", "tokens,usd", "--prices", PR],
            B
        ]),
        &[Fmt::Text, Fmt::Csv],
    );
    g.finish();
}

#[test]
fn plan() {
    let mut g = Golden::new();
    g.case(
        "plan",
        &refs(&argv![
            "plan", "--audit", P, C, "--ledger", L, "--mde", "0.02", B
        ]),
        TCJ,
    );
    g.case(
        "plan-budget-usd",
        &refs(&argv![
            "plan",
            "--audit",
            P,
            C,
            "--ledger",
            L,
            ["--prices", PR, "--budget-usd", "20"],
            B
        ]),
        TCJ,
    );
    g.case(
        "plan-design",
        &refs(&argv![
            "plan",
            "--audit",
            P,
            C,
            "--ledger",
            L,
            ["--questions", "446", "--trajectories", "2", "--reads", "1"],
            ["--difference", "0.02"],
            B
        ]),
        TCJ,
    );
    g.finish();
}

/// `simulate` as docs/subsets.md uses it, then `subsets` on what it wrote.
#[test]
fn simulate_and_subsets() {
    let mut g = Golden::new();
    let (depth, audit) = (g.t("depth.csv"), g.t("audit.csv"));
    g.case(
        "simulate-depth",
        &refs(&argv![
            "simulate",
            [
                "--datasets",
                "musique=48",
                "--trajectories",
                "5",
                "--reads",
                "2"
            ],
            ["--seed", "3", "--out"],
            depth.clone()
        ]),
        TEXT,
    );
    g.file("simulate-depth", "depth.csv");
    g.case(
        "simulate-audit",
        &refs(&argv![
            "simulate",
            [
                "--datasets",
                "hotpotqa=223,musique=223",
                "--trajectories",
                "2"
            ],
            ["--reads", "1", "--seed", "4", "--out"],
            audit.clone()
        ]),
        TEXT,
    );
    let (small, ledger) = (g.t("small.jsonl"), g.t("small-ledger.jsonl"));
    g.case(
        "simulate-ledger",
        &refs(&argv![
            "simulate",
            [
                "--datasets",
                "hotpotqa=4,musique=3",
                "--trajectories",
                "2",
                "--reads",
                "2"
            ],
            ["--seed", "5", "--out"],
            small,
            "--ledger",
            ledger
        ]),
        TEXT,
    );
    g.file("simulate-ledger", "small.jsonl");
    g.file("simulate-ledger", "small-ledger.jsonl");
    let plot = g.t("subsets.svg");
    let subsets = argv![
        "subsets",
        depth,
        C,
        "--audit",
        audit,
        ["--min-trajectories", "3"],
        B
    ];
    g.case("subsets", &refs(&subsets), TCJ);
    g.case(
        "subsets-plot",
        &refs(&argv![subsets.as_slice(), "--plot", plot]),
        TEXT,
    );
    g.file("subsets-plot", "subsets.svg");
    g.finish();
}

/// `--by selector` (one section per selector and the average). No demo panel has a `selector`
/// column, so one is made: two simulated 40-question panels (seeds 11 and 12) as the
/// selectors `rrf` and `rr` of the same cells, with the seed-11 ledger.
#[test]
fn by_selector() {
    let mut g = Golden::new();
    let mut panel = String::new();
    for (seed, selector) in [("11", "rrf"), ("12", "rr")] {
        let out = g.t(&format!("sel{seed}.csv"));
        let ledger = g.t("sel.ledger.jsonl");
        let mut sim = stats();
        sim.args([
            "simulate",
            "--datasets",
            "hotpotqa=20,musique=20",
            "--trajectories",
            "2",
            "--reads",
            "2",
            "--arms",
            "open,adaptive",
            "--mean",
            "hotpotqa=0.6,musique=0.4",
            "--effect",
            "0.02",
            "--seed",
            seed,
            "--out",
            &out,
        ]);
        if seed == "11" {
            sim.args(["--ledger", &ledger]);
        }
        crate::support::cli::run_ok(&mut sim);
        // dataset,question,trajectory,read,arm | selector | f1,em
        for (i, line) in std::fs::read_to_string(&out).unwrap().lines().enumerate() {
            if i == 0 && !panel.is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split(',').collect();
            let sel = if i == 0 { "selector" } else { selector };
            panel.push_str(&format!(
                "{},{sel},{}\n",
                cells[..5].join(","),
                cells[5..].join(",")
            ));
        }
    }
    std::fs::write(g.tmp.path().join("selectors.csv"), &panel).unwrap();
    let (p, l) = (g.t("selectors.csv"), g.t("sel.ledger.jsonl"));
    let by = ["--by", "selector"];
    g.case(
        "by-selector-variance",
        &refs(&argv!["variance", p.clone(), C, by]),
        TCJ,
    );
    g.case(
        "by-selector-bootstrap",
        &refs(&argv!["bootstrap", p.clone(), C, by, B]),
        TCJ,
    );
    g.case(
        "by-selector-efficiency",
        &refs(&argv!["efficiency", p, C, "--ledger", l, by, B]),
        TCJ,
    );
    g.finish();
}

#[test]
fn consistency() {
    let mut g = Golden::new();
    g.case(
        "consistency",
        &refs(&argv![
            "consistency",
            "data/demo/reads.csv",
            ["--by", "temperature"],
            B
        ]),
        TCJ,
    );
    g.finish();
}

#[test]
fn correlate() {
    let mut g = Golden::new();
    let cap = [
        "data/demo/capability.csv",
        "--x",
        "planning,evidence,reasoning,noise",
        "--y",
        "browsecomp,xbench",
    ];
    g.case(
        "correlate-pearson",
        &refs(&argv!["correlate", cap, ["--method", "pearson"], B]),
        TCJ,
    );
    g.case(
        "correlate-spearman",
        &refs(&argv![
            "correlate",
            cap,
            ["--method", "spearman", "--permutations", "999"],
            B
        ]),
        TCJ,
    );
    g.case(
        "correlate-kendall",
        &refs(&argv![
            "correlate",
            "data/demo/capability.csv",
            [
                "--x",
                "planning,evidence",
                "--y",
                "browsecomp",
                "--method",
                "kendall"
            ],
            B
        ]),
        TEXT,
    );
    let judged = [
        "data/demo/judged.csv",
        "--x",
        "judge_score",
        "--y",
        "correct",
    ];
    g.case(
        "correlate-cluster",
        &refs(&argv![
            "correlate",
            judged,
            ["--method", "pointbiserial", "--cluster", "question"],
            B
        ]),
        TCJ,
    );
    // (data/README.md's `--method pointbiserial --aggregate-by question` is refused: the
    // per-question mean of `correct` is not binary.)
    g.case(
        "correlate-aggregate",
        &refs(&argv![
            "correlate",
            judged,
            ["--method", "pearson", "--aggregate-by", "question"],
            ["--permutations", "999"],
            B
        ]),
        TEXT,
    );
    g.finish();
}

#[test]
fn score_answers() {
    let mut g = Golden::new();
    let answers = "tests/golden/inputs/answers.jsonl";
    g.case(
        "score-answers-squad",
        &["score-answers", answers, "--style", "squad"],
        TCJ,
    );
    g.case(
        "score-answers-hotpotqa",
        &[
            "score-answers",
            answers,
            "--style",
            "hotpotqa",
            "--per-item",
        ],
        &[Fmt::Text, Fmt::Csv],
    );
    g.case(
        "score-answers-musique",
        &[
            "score-answers",
            "tests/golden/inputs/musique-answers.jsonl",
            "--style",
            "musique",
            "--per-item",
        ],
        TCJ,
    );
    g.finish();
}

#[test]
fn mcq() {
    let mut g = Golden::new();
    let (bare, inf) = (
        "data/demo/mcq-bare.jsonl",
        "data/demo/mcq-informative.jsonl",
    );
    g.case(
        "mcq-validate",
        &["mcq", "validate", "data/mcq/sample.jsonl"],
        TCJ,
    );
    g.case(
        "mcq-validate-generated",
        &["mcq", "validate", "data/mcq/generated/items.jsonl"],
        TEXT,
    );
    g.case("mcq-score", &refs(&argv!["mcq", "score", bare, B]), TCJ);
    g.case(
        "mcq-score-positions",
        &refs(&argv!["mcq", "score", bare, "--positions", B]),
        TCJ,
    );
    g.case(
        "mcq-compare",
        &refs(&argv!["mcq", "compare", bare, inf, B]),
        TCJ,
    );
    let kept = g.t("kept.jsonl");
    g.case(
        "mcq-filter",
        &refs(&argv![
            "mcq",
            "filter",
            "data/mcq/sample.jsonl",
            "--predictions",
            bare,
            "tests/golden/inputs/mcq-informative-b.jsonl",
            "--out",
            kept
        ]),
        TCJ,
    );
    g.file("mcq-filter", "kept.jsonl");
    g.file("mcq-filter", "kept.dropped.jsonl");
    let agree = [
        "mcq",
        "agree",
        "data/mcq/annotations.jsonl",
        "--items",
        "data/mcq/sample.jsonl",
    ];
    g.case("mcq-agree", &agree, TCJ);
    let gold = g.t("gold.jsonl");
    g.case(
        "mcq-agree-gold",
        &refs(&argv![agree, "--gold-out", gold]),
        TEXT,
    );
    g.file("mcq-agree-gold", "gold.jsonl");
    g.case(
        "mcq-cost",
        &[
            "mcq",
            "cost",
            "tests/golden/inputs/mcq-bare.ledger.jsonl",
            "--prices",
            "tests/golden/inputs/mcq-prices.toml",
        ],
        TCJ,
    );
    g.case(
        "mcq-cost-tokens",
        &["mcq", "cost", "tests/golden/inputs/mcq-bare.ledger.jsonl"],
        TEXT,
    );
    g.finish();
}

#[test]
fn run_audit() {
    let mut g = Golden::new();
    g.case(
        "run-audit",
        &["run-audit", "data/mcq/generated/trajectories.jsonl"],
        &[Fmt::Text, Fmt::JsonFlag],
    );
    g.finish();
}

/// The HTML of `stats report` on the demo study (its stdout with the README's command is in
/// readme.rs; here with 2,000 replicates on the CPU).
#[test]
fn report() {
    let mut g = Golden::new();
    let out = g.t("report.html");
    g.case(
        "report",
        &refs(&argv!["report", "data/demo", C, "--out", out, B]),
        TEXT,
    );
    g.file("report", "report.html");
    g.finish();
}

/// `questions convert` of the shipped sample writes the committed data/qa/ files again.
#[test]
fn questions_convert() {
    let mut g = Golden::new();
    let (q, c) = (g.t("questions.jsonl"), g.t("corpus.jsonl"));
    g.case(
        "questions-convert",
        &refs(&argv![
            "questions",
            "convert",
            "data/qa/hotpotqa.json",
            "data/qa/musique.json",
            "--out",
            q.clone(),
            "--corpus-out",
            c.clone()
        ]),
        TEXT,
    );
    for (made, shipped) in [
        (&q, "data/qa/questions.jsonl"),
        (&c, "data/qa/corpus.jsonl"),
    ] {
        assert!(
            std::fs::read(made).unwrap() == std::fs::read(root().join(shipped)).unwrap(),
            "questions convert no longer writes {shipped}"
        );
    }
    g.finish();
}
