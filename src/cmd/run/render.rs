//! What `stats run` prints: the dry run, the end-of-run summary, and the progress bar or
//! `progress:` lines on stderr.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use ragstats_agent::llm::batch::BatchProgress;
use ragstats_agent::llm::Client;
use ragstats_agent::run::cells::DryRun;
use ragstats_agent::run::setup::{tokens_cost_usd, CallCounts, OutputCounts, RunShape};
use ragstats_agent::run::shard::{MergeReport, ShardManifest, MANIFEST};
use ragstats_agent::run::until::UntilRecord;
use ragstats_agent::run::Progress;
use ragstats_core::ledger::Prices;

use crate::cmd::batch::{progress_line, ProgressLines};

/// The dry run as text on stdout.
pub fn dry_run_text(d: &DryRun, shape: &RunShape, max_tokens: u64) -> anyhow::Result<()> {
    outln!(
        "dry run: {} question(s), {} trajectory(ies) per arm, {} arm(s), {} selector(s), {} step(s)",
        d.questions,
        d.trajectories,
        shape.arms.len(),
        shape.selectors.len(),
        shape.steps
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
    outln!(
        "input tokens  <= {:>13}  (1 token per byte, every document at its 5,000-character cap)",
        d.input_tokens_max
    );
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
    Ok(())
}

/// The one-line summary of a run's calls (stdout at the end, stderr when it stopped).
pub fn calls_line(c: &CallCounts) -> String {
    format!(
        "{} model call(s) ({} from cache, {} request(s) sent), {} search(es) ({} from cache)",
        c.model_calls, c.model_cached, c.requests, c.searches, c.searches_cached,
    )
}

/// The line naming what a finished run wrote to `dir`.
pub fn outputs_line(o: &OutputCounts, dir: &Path) -> String {
    format!(
        "{} question(s), {} trajectory record(s), {} panel row(s), {} ledger row(s) -> {}",
        o.questions,
        o.trajectory_records,
        o.panel_rows,
        o.ledger_rows,
        display_dir(dir)
    )
}

/// The line naming a finished shard's manifest.
pub fn shard_line(m: &ShardManifest, dir: &Path) -> String {
    let held = m.cells.iter().filter(|c| c.shard == m.shard.index).count();
    format!(
        "shard {}: {held} of the run's {} cell(s) -> {}",
        m.shard,
        m.cells.len(),
        dir.join(MANIFEST).display()
    )
}

/// The last line of an `--until` run: why it stopped, after how many questions, the
/// sequence's last interval, and where the looks are.
pub fn until_line(r: &UntilRecord, dir: &Path) -> String {
    let why = r.stopped.map_or("it was stopped", |s| s.words());
    let interval = match r.waves.last().map(|w| w.look) {
        Some(l) => match (l.estimate, l.interval) {
            (Some(e), [Some(lo), Some(hi)]) => format!(
                "; {} {e:.4}, {:.0}% sequence [{lo:.4}, {hi:.4}]",
                r.contrast,
                r.sequence.as_ref().map_or(95.0, |s| s.confidence * 100.0)
            ),
            _ => String::new(),
        },
        None => String::new(),
    };
    format!(
        "stopped after {} of {} planned question(s) ({} saved): {why}{interval} -> {}",
        r.questions,
        r.planned,
        r.saved,
        dir.join("until.json").display()
    )
}

/// What `stats run merge` prints: what it wrote and, when shards shared keyed calls, how
/// they are billed.
pub fn merge_lines(r: &MergeReport, dir: &Path) -> Vec<String> {
    let mut v = vec![format!(
        "merged {} shard(s): {} question(s), {} trajectory record(s), {} panel row(s), {} ledger row(s) -> {}",
        r.shards,
        r.cells,
        r.trajectory_records,
        r.panel_rows,
        r.ledger_rows,
        display_dir(dir)
    )];
    if r.shared_keys > 0 {
        v.push(format!(
            "{} keyed call(s) were made by more than one shard: the merged ledger bills each once, as the unsharded run's does",
            r.shared_keys
        ));
    }
    v
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
pub struct Bar {
    pub pb: Option<ProgressBar>,
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
    /// Starts the bar (or the ticker of `progress:` lines) over `calls` model calls.
    pub fn start(
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
                    Some(m) => format!(" ${:.4}", tokens_cost_usd(&m, inp, cached, outp)),
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

    /// Stops the ticker and clears the bar.
    pub fn finish(self) {
        if let Some(t) = self.ticker {
            t.abort();
        }
        if let Some(pb) = self.pb {
            pb.finish_and_clear();
        }
    }
}
