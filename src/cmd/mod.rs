//! One handler module per subcommand. Handlers load, call the library, and print.

/// Declares the command-line twin of a library enum: the same variants (their doc comments
/// are the `--help` text), `clap::ValueEnum` to parse them, and the `From` onto the library
/// type, which stays free of clap.
macro_rules! flag_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident => $lib:ty {
            $( $(#[$vmeta:meta])* $variant:ident ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl From<$name> for $lib {
            fn from(v: $name) -> Self {
                match v {
                    $( $name::$variant => Self::$variant ),+
                }
            }
        }
    };
}

/// `print!` that returns its write error from the enclosing function with `?` (see [`out`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::out::write_fmt(format_args!($($arg)*))?
    };
}

/// `println!` that returns its write error from the enclosing function with `?` (see [`out`]).
macro_rules! outln {
    () => {
        $crate::cmd::out::write_bytes(b"\n")?
    };
    ($($arg:tt)*) => {
        $crate::cmd::out::write_fmt(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

pub mod allocate;
pub mod batch;
pub mod bench;
pub mod bootstrap;
pub mod common;
pub mod compare;
pub mod consistency;
pub mod correlate;
pub mod cost;
pub mod coverage;
pub mod efficiency;
pub mod endpoint;
pub mod figure;
pub mod forecast;
pub mod gate;
pub mod import;
pub mod index;
pub mod judge;
pub mod labels;
pub mod llm;
pub mod mcq;
pub mod merge;
pub mod out;
pub mod plan;
pub mod questions;
pub mod render;
pub mod report;
pub mod resample;
pub mod run;
pub mod run_audit;
pub mod score_answers;
pub mod sequential;
pub mod simulate;
pub mod slice;
pub mod subsets;
pub mod variance;

use clap::Subcommand;

/// A bad flag or flag combination found by a handler (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Nested variance components (question > trajectory > read) per stratum and pooled.
    #[command(
        after_help = "Example:\n  stats variance data/demo/panel.csv --contrast adaptive-open --metric f1"
    )]
    Variance(variance::Args),
    /// D-study forecast of the standard error for one or more allocations Q:T:R.
    #[command(
        after_help = "Example:\n  stats forecast --audit data/demo/panel.csv --contrast adaptive-open --design 446:2:1 --design 174:2:5"
    )]
    Forecast(forecast::Args),
    /// Stratified question bootstrap of the equal-weight estimate (CPU or GPU), 10,000 replicates by default.
    #[command(
        after_help = "Examples:\n  stats bootstrap data/demo/panel.csv --contrast adaptive-open\n  stats bootstrap big.csv --contrast adaptive-open --backend gpu --components --design 446:2:1\n  stats bootstrap big.csv --contrast adaptive-open --replicates-range 0..5000 --replicates-out a.bin"
    )]
    Bootstrap(bootstrap::Args),
    /// Merge replicates files of a sharded bootstrap into the single run's result.
    #[command(after_help = "Example:\n  stats merge a.bin b.bin --out all.bin")]
    Merge(merge::Args),
    /// Model tokens, fees with cache discounts, search fees over a price sweep, and the unit costs c_T and c_R.
    #[command(
        after_help = "Example:\n  stats cost data/demo/ledger.jsonl --prices data/demo/prices.toml --search-price 0:1:0.25"
    )]
    Cost(cost::Args),
    /// One-read efficiency loss at fixed T (headline) and at fixed Q, with bootstrap intervals.
    #[command(
        after_help = "Example:\n  stats efficiency data/demo/panel.csv --contrast adaptive-open --ledger data/demo/ledger.jsonl"
    )]
    Efficiency(efficiency::Args),
    /// Compare nested allocations Q:T:R of one panel on SE, cost and variance x cost, with paired intervals.
    #[command(
        after_help = "Example:\n  stats allocate data/demo/panel.csv --contrast adaptive-open --ledger data/demo/ledger.jsonl --prices data/demo/prices.toml \\\n      --allocation A=446:2:1 --allocation B=174:2:5 --allocation C=298:3:1"
    )]
    Allocate(allocate::Args),
    /// Every arm against every other (or one reference): paired differences with Holm and BH p-values, simultaneous intervals, rank intervals and each system's best share (of bootstrap replicates).
    #[command(
        after_help = "Examples:\n  stats compare runs/panel.csv\n  stats compare runs/panel.csv --reference base --format json\n  stats compare runs/retrieval.csv --by selector --ledger runs/ledger.jsonl"
    )]
    Compare(compare::Args),
    /// How often every interval and test of variance, bootstrap and compare holds its level at a panel's own design, on simulated panels (or the grid of docs/COVERAGE.md).
    #[command(
        after_help = "Examples:\n  stats coverage data/demo/panel.csv --contrast adaptive-open\n  stats coverage data/demo/panel.csv --contrast adaptive-open --analysis bootstrap --generator resample --panels 1000\n  stats coverage --grid --out docs/COVERAGE.md"
    )]
    Coverage(coverage::Args),
    /// Anytime-valid monitoring: the panel's questions in arrival order, a confidence sequence for the contrast at every look, when it resolves and the questions stopping there saves.
    #[command(
        after_help = "Examples:\n  stats sequential data/demo/panel.csv --contrast adaptive-open --look-every 25\n  stats sequential runs/panel.csv --contrast b-a --order-by timestamp --margin 0.02 --format json\n  stats sequential runs/panel.csv --contrast b-a --until-se 0.01"
    )]
    Sequential(sequential::Args),
    /// Release gate for CI: pass (exit 0), fail (exit 3: a regression beyond the margin) or inconclusive (exit 4: not enough data) for CAND-BASE.
    #[command(
        after_help = "Examples:\n  stats gate data/demo/panel.csv --contrast adaptive-open --margin 0.02\n  stats gate runs/panel.csv --contrast cand-base --margin 0.01 --sequential --format markdown > comment.md"
    )]
    Gate(gate::Args),
    /// Answer disagreement across repeated reads by group, and the ratio of one-read SEs.
    #[command(
        after_help = "Example:\n  stats consistency reads.jsonl --by temperature --contrast adaptive-open"
    )]
    Consistency(consistency::Args),
    /// Answer exact match and token F1 as the official HotpotQA / SQuAD / MuSiQue scripts compute them.
    #[command(
        after_help = "Example:\n  stats score-answers predictions.jsonl --style hotpotqa --per-item"
    )]
    ScoreAnswers(score_answers::Args),
    /// Simulate a synthetic panel (and its cost ledger) with known variance components.
    #[command(
        after_help = "Example:\n  stats simulate --out my.csv --datasets hotpotqa=223,musique=223 --trajectories 3 --reads 5 --seed 7"
    )]
    Simulate(simulate::Args),
    /// Measure draws per second of the Philox+Lemire loop, the CPU bootstrap and the GPU bootstrap.
    #[command(after_help = "Example:\n  stats bench --workload large --questions 1000000")]
    Bench(bench::Args),
    /// Call an OpenAI-compatible chat-completions endpoint: check it, or run a batch that loses nothing.
    #[command(
        after_help = "Example:\n  stats llm batch requests.jsonl --model qwen3-8b --out responses.jsonl --concurrency 32"
    )]
    Llm(llm::Args),
    /// Pearson, Spearman, point-biserial or Kendall correlations of every x × y pair, with p-values, Fisher-z and bootstrap intervals and permutation tests.
    #[command(
        after_help = "Examples:\n  stats correlate data/demo/capability.csv --x planning,evidence,reasoning,noise --y browsecomp,xbench --method pearson\n  stats correlate data/demo/judged.csv --x judge_score --y correct --method pointbiserial --cluster question --replicates 10000\n  stats correlate items.csv --x a,b,c --y d --method spearman --permutations 100000 --backend gpu"
    )]
    Correlate(correlate::Args),
    /// RAGCap-Bench-style multiple-choice evaluation: validate, run, score, compare, filter, agree.
    #[command(
        after_help = "Examples:\n  stats mcq validate data/mcq/sample.jsonl\n  stats mcq run data/mcq/sample.jsonl --model qwen3-8b --prompt informative --runs 3 --out runs/qwen3-8b.jsonl\n  stats mcq score runs/qwen3-8b.jsonl\n  stats mcq compare runs/qwen3-8b.jsonl runs/qwen3-32b.jsonl\n  stats mcq filter data/mcq/generated.jsonl --predictions runs/*.jsonl --out data/mcq/kept.jsonl\n  stats mcq agree data/mcq/annotations.jsonl --items data/mcq/sample.jsonl"
    )]
    Mcq(mcq::Args),
    /// Measured SE of every trajectory x read subset of a depth panel, per configuration beside the audit's nested and Q-only forecasts, with the MAE advantage and its bootstrap interval.
    #[command(
        after_help = "Examples:\n  stats subsets depth.csv --contrast adaptive-open --audit audit.csv --min-trajectories 3\n  stats subsets depth.csv --contrast adaptive-open --audit components.json --backend gpu --format json"
    )]
    Subsets(subsets::Args),
    /// One self-contained HTML report of a panel: summary, figures, tables and the command behind each number.
    #[command(
        after_help = "Example:\n  stats report data/demo --contrast adaptive-open --out report.html"
    )]
    Report(report::Args),
    /// Write the sub-panel of a design Q:T:R (first or seeded questions, first T trajectories and R reads) as a panel file.
    #[command(
        after_help = "Examples:\n  stats slice data/demo/panel.csv --contrast adaptive-open --design 446:2:1 --out a.csv\n  stats slice data/demo/panel.csv --contrast adaptive-open --design 24:5:2 --per-stratum --seed 1 --out depth.csv"
    )]
    Slice(slice::Args),
    /// The cheapest allocation (Q, T, R) for a target SE or minimum detectable difference, the most precise for a budget, or the SE, MDE and power of a design.
    #[command(
        after_help = "Examples:\n  stats plan --audit data/demo/panel.csv --contrast adaptive-open --ledger data/demo/ledger.jsonl --mde 0.02\n  stats plan --audit pilot.csv --contrast adaptive-open --ledger pilot-ledger.jsonl --prices prices.toml --target-se 0.008 --max-reads 5 --currency usd\n  stats plan --audit pilot.csv --contrast adaptive-open --ledger pilot-ledger.jsonl --budget-tokens 30e6\n  stats plan --audit pilot.csv --contrast adaptive-open --questions 300 --trajectories 2 --reads 1 --difference 0.02\n  stats plan --audit data/demo/judged.csv --metric judge_score --labels data/demo/judged-labels.csv --label-metric correct --unit-costs 1000,500 --label-cost 20000 --target-se 0.04"
    )]
    Plan(plan::Args),
    /// Build a local BM25 search index (tantivy) from a corpus JSONL, or search a backend.
    #[command(
        after_help = "Examples:\n  stats index build data/qa/corpus.jsonl --out idx/\n  stats index search local:idx/ \"Scott Derrickson nationality\" --k 5"
    )]
    Index(index::Args),
    /// Convert HotpotQA / MuSiQue files as published into questions JSONL and a corpus JSONL.
    #[command(
        after_help = "Example:\n  stats questions convert data/qa/hotpotqa.json data/qa/musique.json --out data/qa/questions.jsonl --corpus-out data/qa/corpus.jsonl"
    )]
    Questions(questions::Args),
    /// LLM-as-judge: score every trajectory step 1–10 for grounded reasoning and evidence extraction; per-trajectory means beside correctness.
    #[command(
        after_help = "Example:\n  stats judge runs/demo/trajectories.jsonl --model qwen3-32b --out judged.jsonl\n  stats correlate judged.csv --x judge_score --y correct --method pointbiserial --aggregate-by trajectory\n\nJudge replies go to <out stem>.responses.jsonl (the resume state). See docs/mcqgen.md."
    )]
    Judge(Box<judge::Args>),
    /// Human labels of a judged panel: a uniformly random labelling sheet, and judge–human agreement with the variance PPI++ saves (docs/judges.md).
    #[command(
        after_help = "Examples:\n  stats labels sample data/demo/judged.csv --metric judge_score --n 15 --seed 1 --label-metric correct --out sheet.csv\n  stats labels agreement data/demo/judged.csv --metric judge_score --labels data/demo/judged-labels.csv --label-metric correct\n  stats variance data/demo/judged.csv --metric judge_score --labels data/demo/judged-labels.csv --label-metric correct"
    )]
    Labels(labels::Args),
    /// Run the agentic RAG pipeline (planner, search, selectors, reader) into a panel, a trajectory log and a cost ledger.
    #[command(
        after_help = "Examples:\n  stats index build data/qa/corpus.jsonl --out idx/\n  stats run data/qa/questions.jsonl --search local:idx/ --model qwen3-8b --base-url http://127.0.0.1:8000/v1 \\\n      --planner open,adaptive --selector rrf,rr --trajectories 2 --reads 2 --questions 40 --out runs/demo/\n  stats run data/qa/questions.jsonl --search local:idx/ --model m --questions 40 --out runs/demo/ --dry-run\n\nA run stopped anywhere (Ctrl-C, kill) resumes from its caches: run the same command again."
    )]
    Run(run::Cli),
    /// Appendix C checks of a run: gold-alias presence in candidate pools and packets, mask hits, planning failures, UNKNOWN rate.
    #[command(after_help = "Example:\n  stats run-audit runs/demo/ --json")]
    RunAudit(run_audit::Args),
    /// Read inspect_ai logs (.eval, .json) or lm-evaluation-harness samples into a panel CSV and a cost ledger.
    #[command(
        after_help = "Examples:\n  stats import logs/*.eval --out panel.csv --ledger-out ledger.jsonl\n  stats import results/samples_*.jsonl --out panel.csv --filter strict-match\n\nEvery panel command reads such logs (or a directory of them) and Parquet panels directly. See docs/import.md."
    )]
    Import(import::Args),
}

/// Runs the chosen command; returns the process exit code on success.
pub fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Variance(a) => variance::run(a),
        Command::Forecast(a) => forecast::run(a),
        Command::ScoreAnswers(a) => score_answers::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Bootstrap(a) => bootstrap::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Cost(a) => cost::run(a),
        Command::Efficiency(a) => efficiency::run(a),
        Command::Allocate(a) => allocate::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Coverage(a) => coverage::run(a),
        Command::Sequential(a) => sequential::run(a),
        Command::Gate(a) => gate::run(a),
        Command::Consistency(a) => consistency::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Llm(a) => llm::run(a),
        Command::Correlate(a) => correlate::run(a),
        Command::Mcq(a) => mcq::run(a),
        Command::Subsets(a) => subsets::run(a),
        Command::Report(a) => report::run(a),
        Command::Slice(a) => slice::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Index(a) => index::run(a),
        Command::Questions(a) => questions::run(a),
        Command::Judge(a) => judge::run(*a),
        Command::Labels(a) => labels::run(a),
        Command::Run(a) => run::dispatch(a),
        Command::RunAudit(a) => run_audit::run(a),
        Command::Import(a) => import::run(a),
    }
}
