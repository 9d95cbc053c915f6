//! `stats run`: the agentic RAG pipeline from a question file to a panel, a trajectory log
//! and a cost ledger (crates/ragstats-agent/src/run, docs/run.md).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use ragstats_agent::llm::batch::BatchProgress;
use ragstats_agent::llm::Client;
use ragstats_agent::llm::{Cancel, RetryPolicy};
use ragstats_agent::run::audit::totals;
use ragstats_agent::run::cells::{
    dry_run, input_tokens_estimate, manifest_cells, uniform_cells, Cell, EstimateShape,
    CHARS_PER_TOKEN, MAX_STEPS,
};
use ragstats_agent::run::log::write_outputs;
use ragstats_agent::run::pipeline::{run as run_pipeline, INTERRUPTED};
use ragstats_agent::run::prompt::mean_document_chars;
use ragstats_agent::run::prompt::Templates;
use ragstats_agent::run::{Arm, Progress, RunSpec, Selector};
use ragstats_agent::search::{http, local, mask, Search, SearchOptions};
use ragstats_core::ledger::Prices;
use ragstats_core::questions::read::read_questions;

use super::batch::{block_on, warn_truncated};
use super::batch::{progress_line, ProgressLines};
use super::common::print_json;
use super::endpoint::{client, Configured, Endpoint};
use super::run_audit::{totals_lines, warn};
use super::UsageError;

/// Flags of `stats run`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(super::endpoint::RUN_MAX_TOKENS)))]
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
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = super::batch::progress_secs)]
    pub progress_every: f64,
}

/// Runs `stats run`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    block_on(run_async(a))
}

fn parse_list<T: std::str::FromStr<Err = ragstats_core::Error>>(
    flag: &str,
    v: &[String],
) -> anyhow::Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    let mut seen = Vec::new();
    for s in v {
        let s = s.trim();
        if seen.contains(&s) {
            return Err(UsageError(format!("{flag}: '{s}' is given twice")).into());
        }
        seen.push(s);
        out.push(
            s.parse()
                .map_err(|e: ragstats_core::Error| UsageError(format!("{flag}: {e}")))?,
        );
    }
    if out.is_empty() {
        return Err(UsageError(format!("{flag}: give at least one")).into());
    }
    Ok(out)
}

async fn run_async(a: Args) -> anyhow::Result<u8> {
    let arms: Vec<Arm> = parse_list("--planner", &a.planner)?;
    let selectors: Vec<Selector> = parse_list("--selector", &a.selector)?;
    if a.steps == 0 || a.steps > MAX_STEPS {
        return Err(UsageError(format!("--steps must be between 1 and {MAX_STEPS}")).into());
    }
    if a.k == 0 {
        return Err(UsageError("--k must be at least 1".into()).into());
    }
    if a.concurrency == 0 {
        return Err(UsageError("--concurrency must be at least 1".into()).into());
    }
    let loaded = read_questions(&a.questions)?;
    if loaded.questions.is_empty() {
        return Err(UsageError("the question file(s) hold no questions".into()).into());
    }
    let seed = Some(a.order_seed);
    let cells: Vec<Cell> = match &a.manifest {
        Some(m) => manifest_cells(m, &loaded.questions, seed)?,
        None => uniform_cells(
            &loaded.questions,
            a.questions_per_dataset,
            a.trajectories,
            a.reads,
            seed,
        )?,
    };
    let templates = match &a.prompt_dir {
        Some(d) => Templates::with_dir(d)?,
        None => Templates::builtin(),
    };
    // The paper's serving settings (§3.1) unless the flags say otherwise: clap fills
    // --max-tokens with RUN_MAX_TOKENS (256), so it is never None here.
    let max_tokens = a.endpoint.max_tokens.unwrap_or_default();
    if max_tokens == 0 {
        return Err(UsageError(
            "--max-tokens must be at least 1 for stats run (its token bound and --tpm need a cap)"
                .into(),
        )
        .into());
    }
    let temperature = a.endpoint.temperature.unwrap_or(0.7);
    if a.dry_run {
        let bytes = |s: &[&String]| s.iter().map(|t| t.len() as u64).sum::<u64>();
        let mut d = dry_run(
            &cells,
            arms.len() as u64,
            selectors.len() as u64,
            u64::from(a.steps),
            bytes(&[&templates.planner_system, &templates.planner_user]),
            bytes(&[&templates.reader_system, &templates.reader_user]),
            max_tokens,
        );
        let chars = |s: &[&String]| s.iter().map(|t| t.chars().count() as u64).sum::<u64>();
        match corpus_doc_chars(&a.search)? {
            Ok((doc_chars, basis)) => {
                let shape = EstimateShape {
                    arms: arms.len() as u64,
                    adaptive_arms: arms.iter().filter(|x| **x == Arm::Adaptive).count() as u64,
                    selectors: selectors.len() as u64,
                    steps: u64::from(a.steps),
                    k: a.k as u64,
                    planner_template_chars: chars(&[
                        &templates.planner_system,
                        &templates.planner_user,
                    ]),
                    reader_template_chars: chars(&[
                        &templates.reader_system,
                        &templates.reader_user,
                    ]),
                    doc_chars,
                };
                d.input_tokens_estimate = Some(input_tokens_estimate(&cells, &shape));
                d.estimate_basis = Some(basis);
            }
            Err(why) => d.estimate_basis = Some(why),
        }
        if a.json {
            print_json(&d)?;
        } else {
            outln!(
                "dry run: {} question(s), {} trajectory(ies) per arm, {} arm(s), {} selector(s), {} step(s)",
                d.questions,
                d.trajectories,
                arms.len(),
                selectors.len(),
                a.steps
            );
            outln!(
                "planner calls     {:>12}  (one shared first call per trajectory)",
                d.planner_calls
            );
            outln!(
                "search requests   {:>12}  (at most; repeated queries are cache hits)",
                d.search_calls
            );
            outln!(
                "reader calls      {:>12}  (at most; identical packets share calls)",
                d.reader_calls
            );
            outln!("model calls       {:>12}", d.planner_calls + d.reader_calls);
            outln!("input tokens  <= {:>13}  (1 token per byte, every document at its 5,000-character cap)", d.input_tokens_max);
            match d.input_tokens_estimate {
                Some(e) => outln!(
                    "input tokens  ~  {:>13}  (estimate: {})",
                    e,
                    d.estimate_basis.as_deref().unwrap_or_default()
                ),
                None => outln!(
                    "input tokens  ~  {:>13}  ({})",
                    "-",
                    d.estimate_basis.as_deref().unwrap_or_default()
                ),
            }
            outln!(
                "output tokens <= {:>13}  ({max_tokens} per call)",
                d.output_tokens_max
            );
        }
        return Ok(0);
    }
    let run_name = a
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let cache = a.cache_dir.clone().unwrap_or_else(|| a.out.join("cache"));
    if a.rpm == Some(0) || a.tpm == Some(0) {
        return Err(UsageError("--rpm and --tpm must be at least 1".into()).into());
    }
    let mut endpoint_cfg: Configured =
        a.endpoint
            .configure(Some(cache.join("llm")), a.rpm, a.tpm)?;
    endpoint_cfg.params.max_tokens = Some(max_tokens);
    endpoint_cfg.params.temperature = Some(temperature);
    let mut reader_params = endpoint_cfg.params.clone();
    if let Some(t) = a.reader_temperature {
        reader_params.temperature = Some(t);
    }
    let prices = a.prices.as_deref().map(Prices::read).transpose()?;
    let mut patterns = Vec::new();
    for f in &a.mask {
        patterns.extend(mask::read_patterns(f)?);
    }
    let search = Search::open(
        &a.search,
        SearchOptions {
            cache_dir: Some(cache.join("search")),
            mask: patterns,
            http: http::HttpConfig {
                rpm: a.search_rpm,
                retry: RetryPolicy::default(),
                ..http::HttpConfig::default()
            },
        },
    )?;
    let client = client(endpoint_cfg.config)?;
    let spec = RunSpec {
        run: run_name,
        model: a.endpoint.model.clone(),
        arms,
        selectors,
        steps: a.steps,
        k: a.k,
        planner_params: endpoint_cfg.params,
        reader_params,
        extra: endpoint_cfg.extra,
        templates,
        concurrency: a.concurrency,
    };
    let progress = Arc::new(Progress::default());
    let cancel = Cancel::new();
    // Every call the pipeline makes, cache hits included (a shared call is asked again and
    // answered by the cache), is counted: exactly the dry run's planner and reader calls.
    let calls = {
        let d = dry_run(
            &cells,
            spec.arms.len() as u64,
            spec.selectors.len() as u64,
            u64::from(a.steps),
            0,
            0,
            0,
        );
        d.planner_calls + d.reader_calls
    };
    let bar = Bar::start(
        calls,
        cells.len() as u64,
        progress.clone(),
        prices,
        a.endpoint.model.clone(),
        client.clone(),
        a.progress_every,
    );
    super::batch::spawn_signal_watch(cancel.clone(), bar.pb.clone());
    let n_cells = cells.len();
    let result = run_pipeline(
        &client,
        Arc::new(search),
        Arc::new(spec),
        cells,
        progress.clone(),
        &cancel,
    )
    .await;
    bar.finish();
    let p = &*progress;
    let summary = format!(
        "{} model call(s) ({} from cache, {} request(s) sent), {} search(es) ({} from cache)",
        p.llm_calls.load(Ordering::Relaxed),
        p.llm_cached.load(Ordering::Relaxed),
        client.stats().requests,
        p.searches.load(Ordering::Relaxed),
        p.searches_cached.load(Ordering::Relaxed),
    );
    let out = match result {
        Ok(o) => o,
        Err(ragstats_core::Error::Runtime(m)) if m == INTERRUPTED => {
            eprintln!("interrupted after {summary}; run the same command again to continue (finished calls are cached)");
            return Ok(130);
        }
        Err(e) => {
            eprintln!("{summary}");
            return Err(anyhow::anyhow!(
                "{e}; finished calls are cached: run the same command again to continue"
            ));
        }
    };
    write_outputs(&a.out, &out)?;
    // The end-of-command summary goes to stdout, warnings to stderr (docs/run.md).
    outln!("{summary}");
    let tot = totals(&out.trajectories);
    for l in totals_lines(&tot) {
        outln!("{l}");
    }
    outln!(
        "{} question(s), {} trajectory record(s), {} panel row(s), {} ledger row(s) -> {}",
        n_cells,
        out.trajectories.len(),
        out.trajectories
            .iter()
            .map(|t| t.reads.len())
            .sum::<usize>(),
        out.ledger.len(),
        display_dir(&a.out)
    );
    warn(&tot.warnings());
    // Counted over the run's calls (cache hits included), as the summary's model calls.
    warn_truncated(
        tot.truncated_steps + tot.truncated_reads,
        tot.steps + tot.reads,
        Some(max_tokens),
    );
    Ok(0)
}

/// Documents of a local index read for the dry run's estimate (evenly spaced beyond this).
const ESTIMATE_SAMPLE: usize = 100_000;

/// The mean characters a document of the search backend's corpus adds to a prompt, and
/// the basis of the estimate; `Ok(Err(why))` when there is no corpus to read (an
/// `http:`/`drg:` backend, or a `local:` directory that is not an index: the dry run
/// opens nothing else).
fn corpus_doc_chars(search: &str) -> anyhow::Result<Result<(f64, String), String>> {
    let Some(dir) = search.strip_prefix("local:") else {
        return Ok(Err(
            "no estimate: the corpus of an http:/drg: search cannot be read before the run".into(),
        ));
    };
    let dir = Path::new(dir);
    if !local::is_index_dir(dir) {
        return Ok(Err(format!(
            "no estimate: {} is not a search index (stats index build)",
            dir.display()
        )));
    }
    let index = local::LocalIndex::open(dir)?;
    let docs = index.sample_documents(ESTIMATE_SAMPLE)?;
    let Some(mean) = mean_document_chars(&docs) else {
        return Ok(Err(format!(
            "no estimate: {} holds no documents",
            dir.display()
        )));
    };
    let of = index.info().documents;
    let sampled = if docs.len() as u64 == of {
        format!("all {of} documents")
    } else {
        format!("{} of {of} documents, evenly spaced", docs.len())
    };
    Ok(Ok((
        mean,
        format!(
            "{mean:.0} characters per shown document (mean of {sampled} of the index), {} characters a token, full result lists and packets",
            CHARS_PER_TOKEN
        ),
    )))
}

fn display_dir(p: &Path) -> String {
    format!(
        "{}/{{panel.csv,trajectories.jsonl,ledger.jsonl}}",
        p.display().to_string().trim_end_matches('/')
    )
}

/// Progress on stderr: on a terminal a bar of model calls done out of the run's calls
/// (cache hits included), with questions done, searches, tokens and, with --prices, the
/// running cost of the calls made now (cache hits cost nothing); otherwise (a log) a
/// `progress:` line every --progress-every seconds, as `llm batch` prints.
struct Bar {
    pb: Option<ProgressBar>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

/// The run's call counters as a batch's, for [`progress_line`].
fn batch_progress(p: &Progress, client: &Client, total: u64, start: Instant) -> BatchProgress {
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let stats = client.stats();
    let (ok, failed) = (get(&p.llm_calls), get(&p.llm_failed));
    BatchProgress {
        total,
        done: ok + failed,
        ok,
        failed,
        cached: get(&p.llm_cached),
        in_flight: get(&p.llm_in_flight),
        requests: stats.requests,
        retries: stats.retries,
        prompt_tokens: get(&p.input_tokens),
        cached_prompt_tokens: get(&p.cached_input_tokens),
        completion_tokens: get(&p.output_tokens),
        elapsed_s: start.elapsed().as_secs_f64(),
        ..BatchProgress::default()
    }
}

impl Bar {
    fn start(
        calls: u64,
        questions: u64,
        p: Arc<Progress>,
        prices: Option<Prices>,
        model: String,
        client: Client,
        every: f64,
    ) -> Bar {
        let start = Instant::now();
        if !std::io::stderr().is_terminal() {
            let ticker = tokio::spawn(async move {
                let mut lines = ProgressLines::new(every);
                loop {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if lines.due() {
                        eprintln!(
                            "{}",
                            progress_line(&batch_progress(&p, &client, calls, start))
                        );
                    }
                }
            });
            return Bar {
                pb: None,
                ticker: Some(ticker),
            };
        }
        let pb = ProgressBar::new(calls);
        pb.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} calls eta {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let price = prices.and_then(|pr| pr.models.get(&model).copied());
        let bar = pb.clone();
        let ticker = tokio::spawn(async move {
            loop {
                let b = batch_progress(&p, &client, calls, start);
                let (inp, cached, outp) =
                    (b.prompt_tokens, b.cached_prompt_tokens, b.completion_tokens);
                let cost = match price {
                    Some(m) => format!(
                        " ${:.4}",
                        ((inp - cached.min(inp)) as f64 * m.input
                            + cached as f64 * m.cached_input.unwrap_or(m.input)
                            + outp as f64 * m.output)
                            / 1e6
                    ),
                    None => String::new(),
                };
                bar.set_position(b.done);
                bar.set_message(format!(
                    "| {} cached {} failed | questions {}/{questions} searches {} | tokens {}+{}{cost}",
                    b.cached,
                    b.failed,
                    p.questions_done.load(Ordering::Relaxed),
                    p.searches.load(Ordering::Relaxed),
                    inp,
                    outp
                ));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Bar {
            pb: Some(pb),
            ticker: Some(ticker),
        }
    }

    fn finish(self) {
        if let Some(t) = self.ticker {
            t.abort();
        }
        if let Some(pb) = self.pb {
            pb.finish_and_clear();
        }
    }
}
