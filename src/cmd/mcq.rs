//! `stats mcq validate|run|score|compare|filter|agree`: RAGCap-Bench-style multiple-choice
//! evaluation (docs/mcq.md).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use ragstats::llm::batch::{run_batch, BatchOptions, BatchProgress, StopReason};
use ragstats::llm::jsonl::load_records;
use ragstats::llm::Cancel;
use ragstats::mcq::agree::{agreement, read_annotations};
use ragstats::mcq::compare::{item_differences, mcnemar_table, pair, per_run_differences};
use ragstats::mcq::filter::filter;
use ragstats::mcq::positions::{position_table, shuffle_agreement};
use ragstats::mcq::prompt::{PromptKind, Templates};
use ragstats::mcq::results::{
    apply_items, build_results, check_resume, plan_calls, read_results, write_results, Outcome,
    RunConfig, RunResult,
};
use ragstats::mcq::score::{
    bootstrap_group_means, item_rows, level_rows, per_run_group_means, rates, FailurePolicy,
    LevelRow, Stat,
};
use ragstats::mcq::validate::{load_items, read_items, ItemsFile};
use ragstats::mcq::{Group, Item, Task};
use ragstats::resample::BackendChoice;
use serde_json::json;

use super::bootstrap::{backend_for, Progress};
use super::common::{num, print_json, write_csv, Format, Table};
use super::llm::Endpoint;
use super::UsageError;

/// Flags of `stats mcq`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats mcq` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Check an items file against every format rule; report all violations (exit 2 if any).
    #[command(after_help = "Example:\n  stats mcq validate data/mcq/sample.jsonl")]
    Validate(ValidateArgs),
    /// Ask a model every item (N runs, optionally with shuffled options); resumable.
    #[command(
        after_help = "Examples:\n  stats mcq run data/mcq/sample.jsonl --model qwen3-8b --prompt informative --runs 3 --out runs/qwen3-8b.jsonl\n  stats mcq run data/mcq/sample.jsonl --model qwen3-8b --prompt informative --shuffle-seed 11 --out runs/qwen3-8b-shuffled.jsonl\n\nRaw responses go to <out>.responses.jsonl (the resume state); the results file is rebuilt from it.\nCtrl-C stops dispatching and keeps what finished; run the same command again to continue."
    )]
    Run(Box<RunArgs>),
    /// EM and F1 per group, task and overall, with run SDs and stratified-bootstrap intervals.
    #[command(
        after_help = "Examples:\n  stats mcq score runs/qwen3-8b.jsonl\n  stats mcq score runs/qwen3-8b.jsonl --positions --shuffled runs/qwen3-8b-shuffled.jsonl"
    )]
    Score(ScoreArgs),
    /// Paired comparison of two result files: deltas (B − A) with intervals, McNemar on EM.
    #[command(
        after_help = "Example:\n  stats mcq compare runs/qwen3-8b.jsonl runs/qwen3-32b.jsonl"
    )]
    Compare(CompareArgs),
    /// Difficulty filter (drop items every model answers alike) plus the format rules.
    #[command(
        after_help = "Example:\n  stats mcq filter data/mcq/generated.jsonl --predictions runs/*.jsonl --out data/mcq/kept.jsonl"
    )]
    Filter(FilterArgs),
    /// Annotator agreement (pairwise Jaccard) and majority-vote gold.
    #[command(
        after_help = "Example:\n  stats mcq agree data/mcq/annotations.jsonl --items data/mcq/sample.jsonl --gold-out gold.jsonl"
    )]
    Agree(AgreeArgs),
}

/// Flags of `stats mcq validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Items JSONL.
    pub items: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats mcq run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Items JSONL.
    pub items: PathBuf,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// Prompt template kind.
    #[arg(long, value_enum, default_value_t = PromptKind::Informative)]
    pub prompt: PromptKind,
    /// Directory with <kind>/<task>.txt templates replacing the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub prompt_dir: Option<PathBuf>,
    /// Runs per item (request ids <id>#run<k>, sample index k).
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Shuffle each item's options with this seed (relabelled A, B, C, ...).
    #[arg(long, value_name = "SEED")]
    pub shuffle_seed: Option<u64>,
    /// Results JSONL (rewritten from the responses file at the end of every invocation).
    #[arg(long)]
    pub out: PathBuf,
    /// Raw responses JSONL, the resume state [default: <out stem>.responses.jsonl].
    #[arg(long)]
    pub responses: Option<PathBuf>,
    #[command(flatten)]
    pub policy: super::llm::BatchPolicy,
}

/// The stratified item bootstrap of per-group means (items resampled within groups).
fn group_bootstrap(
    rows: &[(Group, [f64; 2])],
    boot: &BootArgs,
) -> anyhow::Result<(
    Box<dyn ragstats::resample::ResampleBackend>,
    Vec<ragstats::mcq::score::GroupMeans>,
)> {
    let engine = backend_for(boot.backend, u64::from(boot.replicates) * rows.len() as u64)?;
    let progress = Progress::new(u64::from(boot.replicates), "bootstrap");
    let reps = bootstrap_group_means(rows, engine.as_ref(), boot.seed, boot.replicates, &|d| {
        progress.set(d)
    })?;
    progress.finish();
    Ok((engine, reps))
}

/// Bootstrap flags of `score` and `compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct BootArgs {
    /// Bootstrap replicates.
    #[arg(long, default_value_t = 10_000)]
    pub replicates: u32,
    /// Seed of the Philox streams.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the resampling runs.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// How parse failures and API errors score: 0 (default) or left out.
    #[arg(long, value_enum, default_value_t = FailurePolicy::Zero)]
    pub failures: FailurePolicy,
    /// Items JSONL whose gold answers and groups replace those in the results.
    #[arg(long)]
    pub items: Option<PathBuf>,
}

/// Flags of `stats mcq score`.
#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    /// Results JSONL written by `mcq run`.
    pub results: PathBuf,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Also show the positional-bias table (with --format csv: show only that table).
    #[arg(long)]
    pub positions: bool,
    /// With --positions: a shuffled run of the same model, for answer agreement.
    #[arg(long, value_name = "RESULTS")]
    pub shuffled: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats mcq compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Results of model A (the baseline).
    pub a: PathBuf,
    /// Results of model B; deltas are B − A.
    pub b: PathBuf,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats mcq filter`.
#[derive(Debug, clap::Args)]
pub struct FilterArgs {
    /// Generated items JSONL.
    pub items: PathBuf,
    /// Results files of at least two models (`mcq run` output).
    #[arg(long, num_args = 1.., required = true)]
    pub predictions: Vec<PathBuf>,
    /// Kept items JSONL (lines copied unchanged).
    #[arg(long)]
    pub out: PathBuf,
    /// Report of dropped lines [default: <out stem>.dropped.jsonl].
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats mcq agree`.
#[derive(Debug, clap::Args)]
pub struct AgreeArgs {
    /// Annotations JSONL: {"id", "annotator", "answer": [...]} per line.
    pub annotations: PathBuf,
    /// Items JSONL: groups agreement by task and checks ids and labels.
    #[arg(long)]
    pub items: Option<PathBuf>,
    /// Gold by option: an option is gold when more than half of the annotators chose it.
    #[arg(long)]
    pub per_option: bool,
    /// Write the gold answers ({"id", "answer", "method", "votes", "annotators"}) here.
    #[arg(long, value_name = "PATH")]
    pub gold_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `stats mcq`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Validate(a) => validate(a),
        Sub::Run(a) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            rt.block_on(run_items(*a))
        }
        Sub::Score(a) => score(a),
        Sub::Compare(a) => compare(a),
        Sub::Filter(a) => filter_items(a),
        Sub::Agree(a) => agree(a),
    }
}

// ---------------------------------------------------------------- validate

fn group_counts(f: &ItemsFile) -> Vec<(Group, usize)> {
    Group::ALL
        .iter()
        .map(|g| (*g, f.items.iter().filter(|l| l.item.group() == *g).count()))
        .collect()
}

fn print_violations(path: &Path, f: &ItemsFile) {
    for v in &f.violations {
        eprintln!("{}", v.display(path));
    }
}

fn validate(a: ValidateArgs) -> anyhow::Result<u8> {
    let f = read_items(&a.items)?;
    let counts = group_counts(&f);
    match a.format {
        Format::Json => print_json(&json!({
            "file": a.items.display().to_string(),
            "lines": f.lines,
            "valid_items": f.items.len(),
            "groups": counts.iter().map(|(g, n)| (g.as_str(), *n)).collect::<HashMap<_, _>>(),
            "violations": f.violations,
        }))?,
        Format::Csv => write_csv(
            &["line", "id", "rule", "message"],
            &f.violations
                .iter()
                .map(|v| {
                    vec![
                        v.line.to_string(),
                        v.id.clone().unwrap_or_default(),
                        v.rule.to_string(),
                        v.message.clone(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            if f.violations.is_empty() {
                println!(
                    "{}: {} item(s), no violations",
                    a.items.display(),
                    f.items.len()
                );
                let mut t = Table::new(&["group", "items"]);
                for (g, n) in &counts {
                    t.row(vec![g.as_str().into(), n.to_string()]);
                }
                print!("{}", t.render());
            } else {
                for v in &f.violations {
                    println!("{}", v.display(&a.items));
                }
            }
        }
    }
    if f.violations.is_empty() {
        Ok(0)
    } else {
        let lines: std::collections::BTreeSet<u64> = f.violations.iter().map(|v| v.line).collect();
        eprintln!(
            "{}: {} violation(s) on {} line(s); {} of {} line(s) valid",
            a.items.display(),
            f.violations.len(),
            lines.len(),
            f.items.len(),
            f.lines
        );
        Ok(2)
    }
}

// ---------------------------------------------------------------- run

/// `<out stem>.responses.jsonl` next to `out`.
fn default_sidecar(out: &Path, suffix: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    out.with_file_name(format!("{stem}.{suffix}.jsonl"))
}

async fn run_items(a: RunArgs) -> anyhow::Result<u8> {
    if a.runs == 0 {
        return Err(UsageError("--runs must be at least 1".into()).into());
    }
    if a.policy.concurrency == 0 {
        return Err(UsageError("--concurrency must be at least 1".into()).into());
    }
    let f = read_items(&a.items)?;
    if !f.violations.is_empty() {
        print_violations(&a.items, &f);
        return Err(UsageError(format!(
            "{}: {} violation(s); fix them (see `stats mcq validate`) before running",
            a.items.display(),
            f.violations.len()
        ))
        .into());
    }
    if f.items.is_empty() {
        return Err(UsageError(format!("{}: no items", a.items.display())).into());
    }
    let items: Vec<Item> = f.items.into_iter().map(|l| l.item).collect();
    let templates = match &a.prompt_dir {
        Some(d) => Templates::with_dir(d)?,
        None => Templates::builtin(),
    };
    let responses = a
        .responses
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "responses"));
    if responses == a.out {
        return Err(UsageError("--responses must differ from --out".into()).into());
    }
    let cache_dir = (!a.policy.no_cache).then(|| a.policy.cache_dir.clone());
    let (config, params, extra) =
        super::llm::endpoint_config(&a.endpoint, cache_dir, a.policy.rpm, a.policy.tpm)?;
    let cfg = RunConfig {
        model: a.endpoint.model.clone(),
        prompt: a.prompt,
        runs: a.runs,
        shuffle_seed: a.shuffle_seed,
        params,
        extra,
    };
    let plan = plan_calls(&items, &templates, &cfg);
    if responses.exists() {
        let old = load_records(&responses)?;
        check_resume(&responses, &old, &plan)?;
    }
    let client = super::llm::client(config)?;
    let cancel = Cancel::new();
    let bar = std::io::stderr().is_terminal().then(|| {
        let pb = ProgressBar::new(0);
        pb.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} eta {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb
    });
    super::llm::spawn_signal_watch(cancel.clone(), bar.clone());
    let opts = BatchOptions {
        out: responses.clone(),
        ledger: a.policy.ledger.clone(),
        ledger_kind: ragstats::ledger::CallKind::Reader,
        concurrency: a.policy.concurrency,
        cancel: cancel.clone(),
    };
    let mut on_progress = |p: &BatchProgress| {
        if let Some(pb) = &bar {
            pb.set_length(p.total - p.skipped);
            pb.set_position(p.done);
            pb.set_message(format!("| errors {} retries {}", p.failed, p.retries));
        }
    };
    let calls = plan.iter().map(|p| p.request.clone()).collect();
    let summary = run_batch(&client, calls, &opts, &mut on_progress).await?;
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    let records = load_records(&responses)?;
    let (results, missing) = build_results(&items, &plan, &records, &cfg);
    write_results(&a.out, &results)?;
    let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
    let p = &summary.progress;
    eprintln!(
        "mcq run: {} item(s) × {} run(s) = {} call(s): {} already answered, {} asked now ({} from cache)",
        items.len(),
        a.runs,
        plan.len(),
        p.skipped,
        p.done,
        p.cached
    );
    eprintln!(
        "results: {} line(s): {} parsed, {} parse failure(s), {} API error(s); {} not run yet -> {}",
        results.len(),
        count(Outcome::Ok),
        count(Outcome::ParseFailed),
        count(Outcome::Error),
        missing,
        a.out.display()
    );
    eprintln!("raw responses: {}", responses.display());
    if count(Outcome::Error) > 0 {
        eprintln!("API errors are recorded as errors (not wrong answers); run the same command again to retry them");
    }
    match &summary.stopped {
        None => Ok(0),
        Some(StopReason::Interrupted) => {
            eprintln!("interrupted: run the same command again to continue");
            Ok(130)
        }
        Some(StopReason::Fatal { error }) => Err(anyhow::anyhow!(
            "{}: the run stopped (bad key or exhausted quota); finished calls are kept",
            error.message
        )),
    }
}

// ---------------------------------------------------------------- score

fn check_boot(b: &BootArgs) -> anyhow::Result<()> {
    super::common::check_confidence(b.confidence)?;
    if b.replicates < 2 {
        return Err(UsageError("--replicates must be at least 2".into()).into());
    }
    Ok(())
}

/// Reads a results file, requiring one (model, prompt, shuffle seed), applying --items.
fn load_results(
    path: &Path,
    items: Option<&(PathBuf, Vec<Item>)>,
) -> anyhow::Result<Vec<RunResult>> {
    let mut rs = read_results(path)?;
    let first = &rs[0];
    if let Some(r) = rs.iter().find(|r| {
        r.model != first.model || r.prompt != first.prompt || r.shuffle_seed != first.shuffle_seed
    }) {
        return Err(UsageError(format!(
            "{}: mixes runs of different configurations ({} / {} / seed {:?} and {} / {} / seed {:?}); score one model and prompt per file",
            path.display(),
            first.model,
            first.prompt,
            first.shuffle_seed,
            r.model,
            r.prompt,
            r.shuffle_seed
        ))
        .into());
    }
    if let Some((p, its)) = items {
        apply_items(&mut rs, its, p)?;
    }
    Ok(rs)
}

fn load_items_opt(p: &Option<PathBuf>) -> anyhow::Result<Option<(PathBuf, Vec<Item>)>> {
    Ok(match p {
        Some(p) => Some((p.clone(), load_items(p)?)),
        None => None,
    })
}

fn ci(s: &Stat) -> String {
    format!("[{}, {}]", num(s.ci[0]), num(s.ci[1]))
}

fn pm(s: &Stat) -> String {
    if s.run_sd.is_nan() {
        num(s.run_mean)
    } else {
        format!("{} ± {}", num(s.run_mean), num(s.run_sd))
    }
}

fn score(a: ScoreArgs) -> anyhow::Result<u8> {
    check_boot(&a.boot)?;
    if a.shuffled.is_some() && !a.positions {
        return Err(UsageError("--shuffled needs --positions".into()).into());
    }
    let items = load_items_opt(&a.boot.items)?;
    let results = load_results(&a.results, items.as_ref())?;
    let rows_items = item_rows(&results, a.boot.failures);
    if rows_items.is_empty() {
        return Err(UsageError(format!(
            "{}: no scored result lines (every line failed and --failures exclude)",
            a.results.display()
        ))
        .into());
    }
    let rows: Vec<(Group, [f64; 2])> = rows_items.iter().map(|i| (i.group, i.mean())).collect();
    let per_run: Vec<_> = per_run_group_means(&rows_items)
        .into_iter()
        .map(|(_, g)| g)
        .collect();
    let (engine, reps) = group_bootstrap(&rows, &a.boot)?;
    let table = level_rows(&rows, &per_run, &reps, a.boot.confidence);
    let rate_rows = rates(&results);
    let positions = a.positions.then(|| position_table(&results));
    let agreement = match &a.shuffled {
        Some(p) => Some(shuffle_agreement(
            &results,
            &load_results(p, items.as_ref())?,
        )),
        None => None,
    };
    let first = &results[0];
    let mut runs: Vec<u32> = results.iter().map(|r| r.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let missing: Vec<&str> = Task::ALL
        .iter()
        .filter(|t| !table.iter().any(|r| r.name == t.as_str()))
        .map(|t| t.as_str())
        .collect();
    match a.format {
        Format::Json => print_json(&json!({
            "file": a.results.display().to_string(),
            "model": first.model, "prompt": first.prompt, "shuffle_seed": first.shuffle_seed,
            "runs": runs.len(), "items": rows.len(), "failures": a.boot.failures,
            "replicates": a.boot.replicates, "seed": a.boot.seed, "confidence": a.boot.confidence,
            "backend": engine.name(), "backend_description": engine.description(),
            "tasks_missing": missing,
            "scores": table, "rates": rate_rows,
            "positions": positions, "shuffle_agreement": agreement,
        }))?,
        Format::Csv => {
            if let Some(pos) = &positions {
                write_csv(
                    &[
                        "position",
                        "shown",
                        "gold",
                        "chosen",
                        "gold_rate",
                        "chosen_rate",
                        "bias",
                    ],
                    &pos.iter()
                        .map(|p| {
                            vec![
                                p.position.to_string(),
                                p.shown.to_string(),
                                p.gold.to_string(),
                                p.chosen.to_string(),
                                p.gold_rate.to_string(),
                                p.chosen_rate.to_string(),
                                p.bias.to_string(),
                            ]
                        })
                        .collect::<Vec<_>>(),
                )?;
            } else {
                let rate_of: HashMap<&str, &ragstats::mcq::score::RateRow> =
                    rate_rows.iter().map(|r| (r.group.as_str(), r)).collect();
                write_csv(
                    &[
                        "level",
                        "name",
                        "items",
                        "em",
                        "em_run_mean",
                        "em_run_sd",
                        "em_se",
                        "em_lo",
                        "em_hi",
                        "f1",
                        "f1_run_mean",
                        "f1_run_sd",
                        "f1_se",
                        "f1_lo",
                        "f1_hi",
                        "records",
                        "parse_failed",
                        "errors",
                    ],
                    &table
                        .iter()
                        .map(|r| {
                            let mut v =
                                vec![r.level.to_string(), r.name.clone(), r.items.to_string()];
                            for s in [&r.em, &r.f1] {
                                v.extend(
                                    [s.estimate, s.run_mean, s.run_sd, s.se, s.ci[0], s.ci[1]]
                                        .map(|x| x.to_string()),
                                );
                            }
                            match rate_of.get(r.name.as_str()) {
                                Some(q) => v.extend(
                                    [q.records, q.parse_failed, q.errors].map(|x| x.to_string()),
                                ),
                                None => v.extend([String::new(), String::new(), String::new()]),
                            }
                            v
                        })
                        .collect::<Vec<_>>(),
                )?;
            }
        }
        Format::Table => {
            println!(
                "{}: model {}, prompt {}{}, {} run(s), {} item(s); failures {}; {} replicates on {} ({})",
                a.results.display(),
                first.model,
                first.prompt,
                first.shuffle_seed.map(|s| format!(", shuffle seed {s}")).unwrap_or_default(),
                runs.len(),
                rows.len(),
                match a.boot.failures {
                    FailurePolicy::Zero => "score 0",
                    FailurePolicy::Exclude => "excluded",
                },
                a.boot.replicates,
                engine.name(),
                engine.description()
            );
            let pct = format!("{}% CI", a.boot.confidence * 100.0);
            print!("{}", score_table(&table, &pct).render());
            if !missing.is_empty() {
                println!(
                    "note: no items for task(s) {}; overall is the mean of the tasks present",
                    missing.join(", ")
                );
            }
            println!();
            let mut t = Table::new(&[
                "group",
                "records",
                "parse_failed",
                "errors",
                "parse_failure_rate",
                "error_rate",
            ]);
            for r in &rate_rows {
                t.row(vec![
                    r.group.clone(),
                    r.records.to_string(),
                    r.parse_failed.to_string(),
                    r.errors.to_string(),
                    num(r.parse_failure_rate),
                    num(r.error_rate),
                ]);
            }
            print!("{}", t.render());
            if let Some(pos) = &positions {
                println!("\npositional bias (parsed lines; position as shown)");
                let mut t = Table::new(&["position", "shown", "gold_rate", "chosen_rate", "bias"]);
                for p in pos {
                    t.row(vec![
                        p.position.to_string(),
                        p.shown.to_string(),
                        num(p.gold_rate),
                        num(p.chosen_rate),
                        num(p.bias),
                    ]);
                }
                print!("{}", t.render());
            }
            if let Some(ag) = &agreement {
                println!(
                    "\nshuffle agreement: {} of {} (id, run) pairs give the same answer ({}); EM original {} vs shuffled {}",
                    ag.same_answer,
                    ag.pairs,
                    num(ag.agreement),
                    num(ag.em_original),
                    num(ag.em_shuffled)
                );
            }
        }
    }
    Ok(0)
}

fn score_table(rows: &[LevelRow], pct: &str) -> Table {
    let h_em = format!("EM {pct}");
    let h_f1 = format!("F1 {pct}");
    let mut t = Table::new(&[
        "level", "name", "items", "EM", "EM runs", &h_em, "F1", "F1 runs", &h_f1,
    ]);
    for r in rows {
        t.row(vec![
            r.level.into(),
            r.name.clone(),
            r.items.to_string(),
            num(r.em.estimate),
            pm(&r.em),
            ci(&r.em),
            num(r.f1.estimate),
            pm(&r.f1),
            ci(&r.f1),
        ]);
    }
    t
}

// ---------------------------------------------------------------- compare

fn compare(a: CompareArgs) -> anyhow::Result<u8> {
    check_boot(&a.boot)?;
    let items = load_items_opt(&a.boot.items)?;
    let ra = load_results(&a.a, items.as_ref())?;
    let rb = load_results(&a.b, items.as_ref())?;
    let pairing = pair(&ra, &rb, a.boot.failures)?;
    let diffs = item_differences(&pairing.pairs);
    let per_run = per_run_differences(&pairing.pairs);
    let (engine, reps) = group_bootstrap(&diffs, &a.boot)?;
    let table = level_rows(&diffs, &per_run, &reps, a.boot.confidence);
    // Each side's own scores over the paired (id, run) set, for context.
    let side = |which: usize| {
        let mut idx: HashMap<&str, usize> = HashMap::new();
        let mut acc: Vec<(Group, [f64; 2], f64)> = Vec::new();
        for p in &pairing.pairs {
            let i = *idx.entry(p.id.as_str()).or_insert_with(|| {
                acc.push((p.group, [0.0, 0.0], 0.0));
                acc.len() - 1
            });
            let v = if which == 0 { p.a } else { p.b };
            acc[i].1[0] += v[0];
            acc[i].1[1] += v[1];
            acc[i].2 += 1.0;
        }
        let rows: Vec<(Group, [f64; 2])> = acc
            .into_iter()
            .map(|(g, s, n)| (g, [s[0] / n, s[1] / n]))
            .collect();
        ragstats::mcq::score::levels(&ragstats::mcq::score::group_means(&rows))
    };
    let (la, lb) = (side(0), side(1));
    let lookup = |l: &ragstats::mcq::score::Levels, r: &LevelRow| -> [f64; 2] {
        let v = match r.level {
            "group" => Group::ALL
                .iter()
                .find(|g| g.as_str() == r.name)
                .and_then(|g| l.groups[g.index()]),
            "task" => Task::ALL
                .iter()
                .position(|t| t.as_str() == r.name)
                .and_then(|t| l.tasks[t]),
            _ => l.overall,
        };
        v.unwrap_or([f64::NAN, f64::NAN])
    };
    let mc = mcnemar_table(&pairing.pairs);
    let (ma, mb) = (&ra[0].model, &rb[0].model);
    match a.format {
        Format::Json => print_json(&json!({
            "a": {"file": a.a.display().to_string(), "model": ma, "prompt": ra[0].prompt, "shuffle_seed": ra[0].shuffle_seed},
            "b": {"file": a.b.display().to_string(), "model": mb, "prompt": rb[0].prompt, "shuffle_seed": rb[0].shuffle_seed},
            "pairs": pairing.pairs.len(), "unpaired_a": pairing.unpaired_a, "unpaired_b": pairing.unpaired_b,
            "failures": a.boot.failures, "replicates": a.boot.replicates, "seed": a.boot.seed,
            "confidence": a.boot.confidence, "backend": engine.name(),
            "deltas": table.iter().map(|r| json!({
                "level": r.level, "name": r.name, "items": r.items,
                "a": {"em": lookup(&la, r)[0], "f1": lookup(&la, r)[1]},
                "b": {"em": lookup(&lb, r)[0], "f1": lookup(&lb, r)[1]},
                "delta_em": r.em, "delta_f1": r.f1,
            })).collect::<Vec<_>>(),
            "mcnemar": mc,
        }))?,
        Format::Csv => write_csv(
            &[
                "level",
                "name",
                "items",
                "em_a",
                "em_b",
                "delta_em",
                "delta_em_lo",
                "delta_em_hi",
                "f1_a",
                "f1_b",
                "delta_f1",
                "delta_f1_lo",
                "delta_f1_hi",
                "mcnemar_a_only",
                "mcnemar_b_only",
                "mcnemar_p",
            ],
            &table
                .iter()
                .map(|r| {
                    let (x, y) = (lookup(&la, r), lookup(&lb, r));
                    let m = mc.iter().find(|m| m.group == r.name);
                    vec![
                        r.level.to_string(),
                        r.name.clone(),
                        r.items.to_string(),
                        x[0].to_string(),
                        y[0].to_string(),
                        r.em.estimate.to_string(),
                        r.em.ci[0].to_string(),
                        r.em.ci[1].to_string(),
                        x[1].to_string(),
                        y[1].to_string(),
                        r.f1.estimate.to_string(),
                        r.f1.ci[0].to_string(),
                        r.f1.ci[1].to_string(),
                        m.map(|m| m.a_only.to_string()).unwrap_or_default(),
                        m.map(|m| m.b_only.to_string()).unwrap_or_default(),
                        m.map(|m| m.p.to_string()).unwrap_or_default(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            println!(
                "A = {} ({}), B = {} ({}); {} paired (id, run), unpaired A {} B {}; deltas B − A; {} replicates on {}",
                ma,
                a.a.display(),
                mb,
                a.b.display(),
                pairing.pairs.len(),
                pairing.unpaired_a,
                pairing.unpaired_b,
                a.boot.replicates,
                engine.name()
            );
            let pct = format!("{}% CI", a.boot.confidence * 100.0);
            let (h1, h2) = (format!("ΔEM {pct}"), format!("ΔF1 {pct}"));
            let mut t = Table::new(&[
                "level", "name", "items", "EM A", "EM B", "ΔEM", &h1, "F1 A", "F1 B", "ΔF1", &h2,
            ]);
            for r in &table {
                let (x, y) = (lookup(&la, r), lookup(&lb, r));
                t.row(vec![
                    r.level.into(),
                    r.name.clone(),
                    r.items.to_string(),
                    num(x[0]),
                    num(y[0]),
                    num(r.em.estimate),
                    ci(&r.em),
                    num(x[1]),
                    num(y[1]),
                    num(r.f1.estimate),
                    ci(&r.f1),
                ]);
            }
            print!("{}", t.render());
            println!("\nMcNemar exact test on EM over (id, run) pairs");
            let mut t = Table::new(&["group", "pairs", "A only", "B only", "p"]);
            for m in &mc {
                t.row(vec![
                    m.group.clone(),
                    m.pairs.to_string(),
                    m.a_only.to_string(),
                    m.b_only.to_string(),
                    num(m.p),
                ]);
            }
            print!("{}", t.render());
        }
    }
    Ok(0)
}

// ---------------------------------------------------------------- filter

fn filter_items(a: FilterArgs) -> anyhow::Result<u8> {
    let file = read_items(&a.items)?;
    let total = file.lines;
    let mut preds = Vec::new();
    for p in &a.predictions {
        preds.extend(read_results(p)?);
    }
    let out = filter(file, &preds)?;
    let report = a
        .report
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "dropped"));
    if report == a.out || a.out == a.items {
        return Err(UsageError("--out must differ from the items file and --report".into()).into());
    }
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let kept: String = out.kept.iter().map(|l| format!("{}\n", l.raw)).collect();
    std::fs::write(&a.out, kept).with_context(|| format!("cannot write {}", a.out.display()))?;
    let mut rep = String::new();
    for d in &out.dropped {
        rep.push_str(&serde_json::to_string(d)?);
        rep.push('\n');
    }
    std::fs::write(&report, rep).with_context(|| format!("cannot write {}", report.display()))?;
    let n_fmt = out.dropped.iter().filter(|d| d.reason == "format").count();
    let n_diff = out.dropped.len() - n_fmt;
    match a.format {
        Format::Json => print_json(&json!({
            "items": total, "kept": out.kept.len(), "dropped_format": n_fmt,
            "dropped_difficulty": n_diff, "untested": out.untested, "models": out.models,
            "out": a.out.display().to_string(), "report": report.display().to_string(),
            "dropped": out.dropped,
        }))?,
        Format::Csv => write_csv(
            &["line", "id", "reason", "detail", "models", "agreed_is_gold"],
            &out.dropped
                .iter()
                .map(|d| {
                    vec![
                        d.line.to_string(),
                        d.id.clone().unwrap_or_default(),
                        d.reason.to_string(),
                        d.detail.clone(),
                        d.models.join(" "),
                        d.agreed_is_gold.map(|b| b.to_string()).unwrap_or_default(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            println!(
                "{} line(s): kept {}, dropped {} (format {}, difficulty {}); models: {}",
                total,
                out.kept.len(),
                out.dropped.len(),
                n_fmt,
                n_diff,
                out.models.join(", ")
            );
            let mut t = Table::new(&["line", "id", "reason", "detail"]);
            for d in &out.dropped {
                t.row(vec![
                    d.line.to_string(),
                    d.id.clone().unwrap_or_default(),
                    d.reason.into(),
                    d.detail.clone(),
                ]);
            }
            print!("{}", t.render());
            println!("kept: {}; report: {}", a.out.display(), report.display());
        }
    }
    if !out.untested.is_empty() {
        eprintln!(
            "note: {} kept item(s) lack a parsed answer from some model and were not tested for difficulty: {}",
            out.untested.len(),
            out.untested.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(0)
}

// ---------------------------------------------------------------- agree

fn agree(a: AgreeArgs) -> anyhow::Result<u8> {
    let items = match &a.items {
        Some(p) => Some(load_items(p)?),
        None => None,
    };
    let anns = read_annotations(&a.annotations, items.as_deref())?;
    let tasks: Option<HashMap<String, Task>> = items
        .as_ref()
        .map(|its| its.iter().map(|i| (i.id.clone(), i.task)).collect());
    let rep = agreement(&anns, tasks.as_ref());
    let gold = |i: &ragstats::mcq::agree::ItemAgreement| -> Option<Vec<String>> {
        if a.per_option {
            Some(i.per_option.clone())
        } else {
            i.majority.clone()
        }
    };
    if let Some(p) = &a.gold_out {
        let mut s = String::new();
        for i in &rep.items {
            if let Some(g) = gold(i) {
                s.push_str(&serde_json::to_string(&json!({
                    "id": i.id, "answer": g,
                    "method": if a.per_option { "per_option" } else { "majority" },
                    "votes": i.votes, "annotators": i.annotators,
                }))?);
                s.push('\n');
            }
        }
        std::fs::write(p, s).with_context(|| format!("cannot write {}", p.display()))?;
    }
    match a.format {
        Format::Json => print_json(&json!({
            "method": if a.per_option { "per_option" } else { "majority" },
            "agreement": rep.rows, "items": rep.items, "no_majority": rep.no_majority,
        }))?,
        Format::Csv => write_csv(
            &["id", "task", "annotators", "jaccard", "gold", "votes"],
            &rep.items
                .iter()
                .map(|i| {
                    vec![
                        i.id.clone(),
                        i.task.map(|t| t.as_str().to_string()).unwrap_or_default(),
                        i.annotators.to_string(),
                        i.jaccard.map(|j| j.to_string()).unwrap_or_default(),
                        gold(i).map(|g| g.join(" ")).unwrap_or_else(|| "NA".into()),
                        i.votes.to_string(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            let mut t = Table::new(&["task", "items", "mean pairwise Jaccard", "with majority"]);
            for r in &rep.rows {
                t.row(vec![
                    r.name.clone(),
                    r.items.to_string(),
                    num(r.jaccard),
                    r.with_majority.to_string(),
                ]);
            }
            print!("{}", t.render());
            println!();
            let mut t = Table::new(&[
                "id",
                "task",
                "annotators",
                "jaccard",
                if a.per_option {
                    "gold (per option)"
                } else {
                    "gold (majority)"
                },
            ]);
            for i in &rep.items {
                t.row(vec![
                    i.id.clone(),
                    i.task
                        .map(|t| t.as_str().to_string())
                        .unwrap_or_else(|| "-".into()),
                    i.annotators.to_string(),
                    i.jaccard.map(num).unwrap_or_else(|| "-".into()),
                    match gold(i) {
                        Some(g) if g.is_empty() => "{}".into(),
                        Some(g) => g.join(","),
                        None => "no majority".into(),
                    },
                ]);
            }
            print!("{}", t.render());
            if !a.per_option && !rep.no_majority.is_empty() {
                println!(
                    "\nno majority (resolve by discussion): {}",
                    rep.no_majority.join(", ")
                );
            }
        }
    }
    Ok(0)
}
