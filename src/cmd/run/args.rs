//! The flags of `stats run`.

use std::path::PathBuf;

use ragstats_agent::run::setup::{CellSettings, ShapeSettings};
use ragstats_agent::run::shard::Shard;
use ragstats_agent::run::until::{Target, UntilSettings};

use crate::cmd::endpoint::Endpoint;

/// Flags of `stats run`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::RUN_MAX_TOKENS)))]
pub struct Args {
    /// Question file(s): HotpotQA or MuSiQue as published, or our JSONL (id, dataset, question, answers, supporting).
    #[arg(required = true)]
    pub questions: Vec<PathBuf>,
    /// Search backend: local:DIR (stats index build), http:URL or drg:URL (docs/search.md).
    #[arg(long)]
    pub search: String,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// Planners (arms), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "open,adaptive")]
    pub planner: Vec<String>,
    /// Selectors, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "rrf,rr")]
    pub selector: Vec<String>,
    /// Trajectories per question and arm (without --manifest).
    #[arg(long, default_value_t = 2)]
    pub trajectories: u32,
    /// Reads per trajectory and selector (without --manifest).
    #[arg(long, default_value_t = 1)]
    pub reads: u32,
    /// Questions per dataset, the first ones in the seeded order [default: all] (without --manifest).
    #[arg(long = "questions", id = "n_questions", value_name = "Q")]
    pub questions_per_dataset: Option<usize>,
    /// CSV with columns id,trajectories,reads fixing each question's design (the paper's A/B/C allocations).
    #[arg(long, value_name = "CSV", conflicts_with_all = ["trajectories", "reads", "n_questions"])]
    pub manifest: Option<PathBuf>,
    /// Seed of the question order within each dataset.
    #[arg(long, default_value_t = 0)]
    pub order_seed: u64,
    /// Planning steps (queries) per trajectory, the shared first one included (the paper's four-query policy).
    #[arg(long, default_value_t = 4)]
    pub steps: u32,
    /// Results per search (the paper's k = 10).
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Reader temperature [default: --temperature, whose default here is the paper's 0.7].
    #[arg(long)]
    pub reader_temperature: Option<f64>,
    /// Directory with planner_system.txt, planner_user.txt, reader_system.txt, reader_user.txt replacing the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub prompt_dir: Option<PathBuf>,
    /// Mask list file(s) of benchmark URLs (e.g. data/search/mask.txt).
    #[arg(long, value_name = "FILE")]
    pub mask: Vec<PathBuf>,
    /// Output directory: panel.csv, trajectories.jsonl, ledger.jsonl.
    #[arg(long)]
    pub out: PathBuf,
    /// Cache directory of model answers (llm/) and searches (search/) [default: OUT/cache]. A re-run replays it.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Questions worked on at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Requests-per-minute ceiling for the model endpoint.
    #[arg(long)]
    pub rpm: Option<u64>,
    /// Tokens-per-minute ceiling for the model endpoint.
    #[arg(long)]
    pub tpm: Option<u64>,
    /// Requests-per-minute ceiling for an http:/drg: search backend.
    #[arg(long)]
    pub search_rpm: Option<u64>,
    /// Prices TOML (as `stats cost`): shows the running cost in USD.
    #[arg(long, value_name = "TOML")]
    pub prices: Option<PathBuf>,
    /// Print the number of model and search calls and a bound on tokens, and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the dry run as JSON.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    /// Seconds between progress lines on stderr when it is not a terminal (a log file); a
    /// terminal gets a progress bar instead.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = crate::cmd::batch::progress_secs)]
    pub progress_every: f64,
    /// Run only the K-th of N disjoint shards of the cells; OUT holds the shard, with
    /// shard.json when it has finished (docs/scale.md). `stats run merge` joins the shards.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Stop early: `resolved` when the anytime-valid confidence sequence of --until-contrast
    /// excludes 0 (or --until-margin), `se=X` when it is as narrow as a fixed-n interval of SE X.
    /// The questions run in waves of --wave, the datasets interleaved (docs/sequential.md).
    #[arg(long, value_name = "resolved|se=X", value_parser = parse_until, conflicts_with = "shard")]
    pub until: Option<Target>,
    /// Questions per wave of an --until run (and between the sequence's looks).
    #[arg(long, value_name = "W", default_value_t = 25, requires = "until")]
    pub wave: usize,
    /// With --until: at most this many questions in all, over the datasets.
    #[arg(long, value_name = "N", requires = "until")]
    pub max_questions: Option<usize>,
    /// With --until: stop once the run's cost, its ledger billed at --prices, reaches this.
    #[arg(long, value_name = "USD", requires_all = ["until", "prices"])]
    pub max_usd: Option<f64>,
    /// The contrast B-A (or one planner) an --until run monitors [default: adaptive-open].
    #[arg(long, value_name = "B-A", requires = "until")]
    pub until_contrast: Option<String>,
    /// The panel's score an --until run monitors [default: f1].
    #[arg(long, value_name = "NAME", requires = "until")]
    pub until_metric: Option<String>,
    /// With --until resolved: a difference larger than this (in score units) resolves it.
    #[arg(long, value_name = "M", default_value_t = 0.0, requires = "until")]
    pub until_margin: f64,
    /// The confidence level of the --until sequence, simultaneous over every look.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95, requires = "until")]
    pub until_confidence: f64,
    /// How the --until sequence combines the datasets: rounds (one question of each
    /// dataset per round, as the waves interleave them; the default when every dataset
    /// plans 20 questions or more) or union (each dataset's sequence at alpha/D).
    #[arg(long, value_name = "RULE", requires = "until")]
    pub strata: Option<ragstats_core::sequential::StrataRule>,
}

fn parse_until(s: &str) -> Result<Target, String> {
    s.parse().map_err(|e: ragstats_core::Error| e.to_string())
}

/// `stats run`: a run (its flags, [`Args`]), or `stats run merge` ([`MergeArgs`]). The
/// subcommand is added by hand, so that a run's required flags are required only when no
/// subcommand is given (clap's derive reads every non-`Option` flag as present).
#[derive(Debug)]
pub enum Cli {
    Run(Box<Args>),
    Merge(MergeArgs),
}

/// The `merge` subcommand's name, about line and example.
const MERGE: &str = "merge";
const MERGE_ABOUT: &str =
    "Merge the shard directories of a `stats run --shard K/N` run into the files one unsharded run writes.";
const MERGE_AFTER: &str = "Example:\n  stats run merge runs/demo/shard-*/ --out runs/demo/\n\nThe run's name in the merged trajectory log is the last component of --out, as for stats run (docs/scale.md).";

impl clap::Args for Cli {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        <Args as clap::Args>::augment_args(cmd)
            .subcommand(
                <MergeArgs as clap::Args>::augment_args(clap::Command::new(MERGE))
                    .about(MERGE_ABOUT)
                    .after_help(MERGE_AFTER),
            )
            .args_conflicts_with_subcommands(true)
            .subcommand_negates_reqs(true)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for Cli {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        match m.subcommand() {
            Some((MERGE, sub)) => Ok(Cli::Merge(MergeArgs::from_arg_matches(sub)?)),
            _ => Ok(Cli::Run(Box::new(Args::from_arg_matches(m)?))),
        }
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Flags of `stats run merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Shard directories (each written by `stats run ... --shard K/N`), in any order.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output directory: panel.csv, trajectories.jsonl, ledger.jsonl.
    #[arg(long)]
    pub out: PathBuf,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse().map_err(|e: ragstats_core::Error| e.to_string())
}

impl Args {
    /// The run's name: the last component of `--out` (`run` when it has none).
    pub fn run_name(&self) -> String {
        ragstats_agent::run::shard::run_name(&self.out)
    }

    /// The settings of `--until` (`None` without it).
    pub fn until(&self) -> Option<UntilSettings> {
        Some(UntilSettings {
            target: self.until?,
            wave: self.wave,
            max_questions: self.max_questions,
            max_usd: self.max_usd,
            contrast: self
                .until_contrast
                .clone()
                .unwrap_or_else(|| "adaptive-open".into()),
            metric: self.until_metric.clone(),
            margin: self.until_margin,
            confidence: self.until_confidence,
            strata: self.strata,
        })
    }

    /// The cache directory: `--cache-dir`, else `OUT/cache`.
    pub fn cache(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(|| self.out.join("cache"))
    }

    /// The run's shape as the flags give it (checked by `RunShape::check`).
    pub fn shape(&self) -> ShapeSettings {
        ShapeSettings {
            planners: self.planner.clone(),
            selectors: self.selector.clone(),
            steps: self.steps,
            k: self.k,
            concurrency: self.concurrency,
        }
    }

    /// Which questions the run asks, as the flags give it.
    pub fn cells(&self) -> CellSettings {
        CellSettings {
            manifest: self.manifest.clone(),
            questions_per_dataset: self.questions_per_dataset,
            trajectories: self.trajectories,
            reads: self.reads,
            order_seed: self.order_seed,
        }
    }
}
