//! The run itself: for each question and trajectory, the shared first planner call and
//! search, then each arm's further steps, the selectors' packets and the reads.
//!
//! Determinism and resume: every model call goes through the [`Client`]'s on-disk cache
//! and every search through the backend's, and nothing in the output depends on timing, so
//! a run stopped anywhere (Ctrl-C, kill -9) and started again replays the finished calls
//! from the caches and writes the same bytes. Within a question the calls are made one
//! after another (arms in order, selectors in order), so a call shared by two arms or two
//! selectors is always a cache hit the second time, never a second request in flight.
//!
//! Sampling: the planner call of step s of trajectory t has sample index 100·t + s, a read
//! r of trajectory t has 1000·t + r. Identical requests (same messages, same sample) are
//! one call: step 0 is identical across arms by construction; two selectors whose packets
//! are identical share their reads, as do two arms whose packets are identical (the paper's
//! "identical packets share calls").
//!
//! Copied placeholders: a query or answer equal to a value of a format example in the
//! templates in use ([`Templates::placeholders`]) is refused, a planning failure (not
//! searched) or a read with no answer (scored 0), with the reason in the log. So is a
//! reader reply read by its first line when that line copies the prompt (a section label of
//! the reader's template, or a line of the prompt sent).
//!
//! Cut replies: a reply that stopped at `max_tokens` (`finish_reason` `length`) is marked
//! `truncated` in the log and counted; a complete JSON object in it is still used.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::cells::Cell;
use super::log::RunOutput;
use super::packets::{cut_record, distinct_lists, select, Selector};
use super::prompt::{
    echo_lines, read_answer, read_query, Placeholders, ReaderCheck, SectionLabel, Templates,
    NO_PLANNER_JSON,
};
use crate::llm::cache::cache_key;
use crate::llm::{CallRecord, Cancel, ChatRequest, Client, SamplingParams, CUT_NOTE};
use crate::search::SearchRecord;
use ragstats_core::ledger::{CallKind, Label, LedgerRow};
use ragstats_core::qa_scoring::qa::{score, Style};
use ragstats_core::questions::{Dataset, Question};
use ragstats_core::trajlog::{Read, Step, Trajectory};
use ragstats_core::{Error, Result};

/// A planner policy of §3.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arm {
    /// Sees the question and its query history, no observations.
    Open,
    /// Also sees the earlier queries' results, in query order.
    Adaptive,
}

impl Arm {
    /// `open` or `adaptive`, the panel's `arm` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Open => "open",
            Arm::Adaptive => "adaptive",
        }
    }
}

impl std::str::FromStr for Arm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "open" => Ok(Arm::Open),
            "adaptive" => Ok(Arm::Adaptive),
            other => Err(Error::Usage(format!(
                "unknown planner '{}'; expected open or adaptive",
                ragstats_core::io::clip(other)
            ))),
        }
    }
}

/// One search's answer as the runner needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched {
    /// Ranked records (masked ones keep their slot).
    pub records: Vec<SearchRecord>,
    /// Whether it came from the search cache.
    pub cached: bool,
}

/// A search backend as the runner uses it.
pub trait Searcher: Send + Sync + 'static {
    /// A stable name of the backend (the ledger key of a search includes it).
    fn name(&self) -> String;
    /// The top `k` records for `query`.
    fn search(&self, query: &str, k: usize) -> impl Future<Output = Result<Searched>> + Send;
}

/// What a run does, apart from its questions.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The run's name (written in every trajectory record).
    pub run: String,
    pub model: String,
    pub arms: Vec<Arm>,
    pub selectors: Vec<Selector>,
    /// Planning steps (queries) per trajectory, the shared first one included.
    pub steps: u32,
    /// Results per search.
    pub k: usize,
    pub planner_params: SamplingParams,
    pub reader_params: SamplingParams,
    /// Extra request body fields.
    pub extra: Map<String, Value>,
    pub templates: Templates,
    /// Questions worked on at once.
    pub concurrency: usize,
}

/// Counters while a run goes (for the progress bar and lines), updated as calls finish.
#[derive(Debug, Default)]
pub struct Progress {
    pub questions_done: AtomicU64,
    /// Model calls answered (cache hits included).
    pub llm_calls: AtomicU64,
    pub llm_cached: AtomicU64,
    /// Model calls that failed for good (after their retries); the run then stops.
    pub llm_failed: AtomicU64,
    /// Model calls waiting for their answer now.
    pub llm_in_flight: AtomicU64,
    pub searches: AtomicU64,
    pub searches_cached: AtomicU64,
    pub input_tokens: AtomicU64,
    pub cached_input_tokens: AtomicU64,
    pub output_tokens: AtomicU64,
}

/// Runs every cell (questions `concurrency` at a time) and returns the trajectory logs and
/// ledger rows in output order: question order, then arm, then trajectory.
///
/// # Errors
/// [`Error::Runtime`] when a model call fails for good (after its retries) or a search
/// fails, or when `cancel` stops the run; calls finished before are cached, so running
/// again resumes.
pub async fn run<S: Searcher>(
    client: &Client,
    searcher: Arc<S>,
    spec: Arc<RunSpec>,
    cells: Vec<Cell>,
    progress: Arc<Progress>,
    cancel: &Cancel,
) -> Result<RunOutput> {
    let sem = Arc::new(tokio::sync::Semaphore::new(spec.concurrency.max(1)));
    let placeholders = Arc::new(spec.templates.placeholders());
    let labels: Arc<[SectionLabel]> = spec.templates.reader_labels().into();
    let mut set = tokio::task::JoinSet::new();
    let n = cells.len();
    for (i, cell) in cells.into_iter().enumerate() {
        let ctx = Ctx {
            placeholders: placeholders.clone(),
            labels: labels.clone(),
            client: client.clone(),
            searcher: searcher.clone(),
            spec: spec.clone(),
            progress: progress.clone(),
            cancel: cancel.clone(),
        };
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let out = ctx.question(&cell).await;
            ctx.progress.questions_done.fetch_add(1, Ordering::Relaxed);
            (i, out)
        });
    }
    let mut parts: Vec<Option<RunOutput>> = vec![None; n];
    let mut first_err = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((i, Ok(o))) => parts[i] = Some(o),
            Ok((_, Err(e))) => {
                // Stop starting new work; calls in flight finish and are cached. The error
                // reported is the first real one, not the "interrupted" of the others.
                cancel.stop();
                let interrupted = |e: &Error| matches!(e, Error::Runtime(m) if m == INTERRUPTED);
                if first_err.as_ref().is_none_or(interrupted) {
                    first_err = Some(e);
                }
            }
            Err(e) => {
                first_err.get_or_insert(Error::Runtime(format!("a run task failed: {e}")));
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut out = RunOutput::default();
    for p in parts.into_iter().flatten() {
        out.trajectories.extend(p.trajectories);
        out.ledger.extend(p.ledger);
    }
    Ok(out)
}

/// The message of a run stopped by its [`Cancel`] signal.
pub const INTERRUPTED: &str = "interrupted";

struct Ctx<S> {
    placeholders: Arc<Placeholders>,
    labels: Arc<[SectionLabel]>,
    client: Client,
    searcher: Arc<S>,
    spec: Arc<RunSpec>,
    progress: Arc<Progress>,
    cancel: Cancel,
}

/// The official scorer of a dataset.
pub fn style(d: Dataset) -> Style {
    match d {
        Dataset::Hotpotqa => Style::Hotpotqa,
        Dataset::Musique => Style::Musique,
    }
}

/// A step with its planner call and ledger labels, before the arm is known.
struct Planned {
    log: Step,
    planner_row: LedgerRow,
    search_row: Option<LedgerRow>,
}

impl<S: Searcher> Ctx<S> {
    async fn question(&self, cell: &Cell) -> Result<RunOutput> {
        let q = &cell.question;
        let spec = &*self.spec;
        let mut per_arm: Vec<Vec<(Trajectory, Vec<LedgerRow>)>> = vec![Vec::new(); spec.arms.len()];
        for t in 0..cell.trajectories {
            let first = self.step(q, t, None, 0, &[]).await?;
            for (ai, &arm) in spec.arms.iter().enumerate() {
                let mut steps = vec![first.clone_for(arm)];
                for s in 1..spec.steps {
                    let p = self.step(q, t, Some(arm), s, &steps).await?;
                    steps.push(p);
                }
                per_arm[ai].push(self.read(cell, t, arm, steps).await?);
            }
        }
        let mut out = RunOutput::default();
        for arm in per_arm {
            for (log, rows) in arm {
                out.trajectories.push(log);
                out.ledger.extend(rows);
            }
        }
        Ok(out)
    }

    /// Planning step `s` of trajectory `t` (`arm` is `None` for the shared step 0): the
    /// planner call, its query, and the query's search.
    async fn step(
        &self,
        q: &Question,
        t: u32,
        arm: Option<Arm>,
        s: u32,
        before: &[Planned],
    ) -> Result<Planned> {
        let spec = &*self.spec;
        let ok: Vec<(&str, &[SearchRecord])> = before
            .iter()
            .filter_map(|p| p.log.query.as_deref().map(|qq| (qq, &p.log.results[..])))
            .collect();
        let history: Vec<&str> = ok.iter().map(|(qq, _)| *qq).collect();
        let observations: &[(&str, &[SearchRecord])] = match arm {
            Some(Arm::Adaptive) => &ok,
            _ => &[],
        };
        let messages = spec.templates.planner(&q.question, &history, observations);
        let id = match arm {
            None => format!("{}/t{t}/s0", q.id),
            Some(a) => format!("{}/t{t}/{}/s{s}", q.id, a.as_str()),
        };
        let mut req = ChatRequest::new(id, &spec.model, messages.clone());
        req.sample = 100 * t + s;
        req.params = spec.planner_params.clone();
        req.extra = spec.extra.clone();
        let rec = self.call(&req).await?;
        let text = rec.text.clone().unwrap_or_default();
        let mut planner_row = self.llm_row(CallKind::Planner, &req, &rec, q, t);
        planner_row.step = Some(s);
        let truncated = rec.is_truncated();
        let (query, failure) = match read_query(&text, &self.placeholders.planner) {
            Ok(qq) => (Some(qq), None),
            // The cut is why no object closed: say so, so the fix (a larger cap) shows.
            Err(why) if truncated && why == NO_PLANNER_JSON => {
                (None, Some(format!("{why} ({CUT_NOTE})")))
            }
            Err(why) => (None, Some(why)),
        };
        let (results, search_row) = match &query {
            None => (Vec::new(), None),
            Some(qq) => {
                let found = self.searcher.search(qq, spec.k).await?;
                self.progress.searches.fetch_add(1, Ordering::Relaxed);
                if found.cached {
                    self.progress
                        .searches_cached
                        .fetch_add(1, Ordering::Relaxed);
                }
                let mut row = LedgerRow::new(CallKind::Search);
                row.dataset = Some(dataset_label(q.dataset));
                row.question = Some(Label::from(q.id.as_str()));
                row.trajectory = Some(Label::from(t));
                row.step = Some(s);
                // One key per distinct request: a repeated query is a search-cache hit.
                row.key = Some(Label::Text(format!(
                    "search:{}",
                    ragstats_core::io::short_sha256(format!(
                        "{}\u{0}{}\u{0}{qq}",
                        self.searcher.name(),
                        spec.k
                    ))
                )));
                let records: Vec<SearchRecord> =
                    found.records.into_iter().map(cut_record).collect();
                (records, Some(row))
            }
        };
        let masked = results.iter().filter(|r| r.masked).count();
        Ok(Planned {
            log: Step {
                step: s,
                planner_messages: messages,
                planner_text: text,
                query,
                failure,
                results,
                shared: arm.is_none(),
                masked,
                truncated,
            },
            planner_row,
            search_row,
        })
    }

    /// The packets of a finished trajectory and their reads; the trajectory's log and rows.
    async fn read(
        &self,
        cell: &Cell,
        t: u32,
        arm: Arm,
        steps: Vec<Planned>,
    ) -> Result<(Trajectory, Vec<LedgerRow>)> {
        let spec = &*self.spec;
        let q = &cell.question;
        let mut rows = Vec::new();
        for p in &steps {
            let mut r = p.planner_row.clone();
            r.arm = Some(Label::from(arm.as_str()));
            rows.push(r);
            if let Some(sr) = &p.search_row {
                let mut sr = sr.clone();
                sr.arm = Some(Label::from(arm.as_str()));
                rows.push(sr);
            }
        }
        let pairs: Vec<(&str, &[SearchRecord])> = steps
            .iter()
            .filter_map(|p| p.log.query.as_deref().map(|qq| (qq, &p.log.results[..])))
            .collect();
        let lists = distinct_lists(&pairs);
        let mut packets = std::collections::BTreeMap::new();
        let mut reads = Vec::new();
        for &sel in &spec.selectors {
            let packet = select(sel, &lists);
            let messages = spec.templates.reader(&q.question, &packet);
            let prompt_lines = echo_lines(&messages, &packet);
            for r in 0..cell.reads {
                let mut req = ChatRequest::new(
                    format!("{}/t{t}/{}/{}/r{r}", q.id, arm.as_str(), sel.as_str()),
                    &spec.model,
                    messages.clone(),
                );
                req.sample = 1000 * t + r;
                req.params = spec.reader_params.clone();
                req.extra = spec.extra.clone();
                let rec = self.call(&req).await?;
                let text = rec.text.clone().unwrap_or_default();
                let mut row = self.llm_row(CallKind::Reader, &req, &rec, q, t);
                row.arm = Some(Label::from(arm.as_str()));
                row.read = Some(Label::from(r));
                // A read belongs to one selector's packet; planner and search rows are
                // shared by every selector and carry none (docs/ledger.md).
                row.selector = Some(Label::from(sel.as_str()));
                rows.push(row);
                let check = ReaderCheck {
                    placeholders: &self.placeholders.reader,
                    labels: &self.labels,
                    prompt_lines: &prompt_lines,
                    truncated: rec.is_truncated(),
                };
                let (answer, failure, (em, f1)) = match read_answer(&text, &check) {
                    Ok((answer, _)) => {
                        let s = score(&answer, &q.answers, style(q.dataset));
                        (answer, None, s)
                    }
                    Err(why) => (String::new(), Some(why), (0.0, 0.0)),
                };
                reads.push(Read {
                    selector: sel.as_str().into(),
                    read: r,
                    reader_messages: messages.clone(),
                    reader_text: text,
                    answer,
                    em,
                    f1,
                    failure,
                    truncated: check.truncated,
                });
            }
            packets.insert(sel.as_str().to_string(), packet);
        }
        let log = Trajectory {
            run: spec.run.clone(),
            question_id: q.id.clone(),
            dataset: q.dataset,
            question: q.question.clone(),
            answers: q.answers.clone(),
            supporting: q.supporting.clone(),
            cluster: q.cluster.clone(),
            arm: arm.as_str().into(),
            trajectory: t,
            model: spec.model.clone(),
            steps: steps.into_iter().map(|p| p.log).collect(),
            packets,
            reads,
        };
        Ok((log, rows))
    }

    /// One model call through the client (cache, retries); a failure for good stops the run.
    async fn call(&self, req: &ChatRequest) -> Result<CallRecord> {
        let p = &self.progress;
        p.llm_in_flight.fetch_add(1, Ordering::Relaxed);
        let rec = self.client.complete_with(req, &self.cancel).await;
        p.llm_in_flight.fetch_sub(1, Ordering::Relaxed);
        let Some(rec) = rec else {
            return Err(Error::Runtime(INTERRUPTED.into()));
        };
        if let Some(e) = &rec.error {
            p.llm_failed.fetch_add(1, Ordering::Relaxed);
            return Err(Error::Runtime(format!(
                "model call {} failed ({}): {}",
                req.id,
                e.kind.as_str(),
                e.message
            )));
        }
        p.llm_calls.fetch_add(1, Ordering::Relaxed);
        if rec.cached {
            p.llm_cached.fetch_add(1, Ordering::Relaxed);
        } else if let Some(u) = &rec.usage {
            p.input_tokens
                .fetch_add(u.prompt_tokens.unwrap_or(0), Ordering::Relaxed);
            p.cached_input_tokens
                .fetch_add(u.cached_prompt_tokens.unwrap_or(0), Ordering::Relaxed);
            p.output_tokens
                .fetch_add(u.completion_tokens.unwrap_or(0), Ordering::Relaxed);
        }
        Ok(rec)
    }

    /// The ledger row of a model call, whether it was made now or replayed from the cache
    /// (the ledger prices the run, not this invocation). Rows of one physical call (the
    /// same cache entry) share a `key`, so `stats cost` bills it once.
    fn llm_row(
        &self,
        kind: CallKind,
        req: &ChatRequest,
        rec: &CallRecord,
        q: &Question,
        t: u32,
    ) -> LedgerRow {
        let u = rec.usage.as_ref();
        let mut row = LedgerRow::new(kind);
        row.dataset = Some(dataset_label(q.dataset));
        row.question = Some(Label::from(q.id.as_str()));
        row.trajectory = Some(Label::from(t));
        row.model = Some(req.model.clone());
        row.input_tokens = u.and_then(|u| u.prompt_tokens);
        row.cached_input_tokens = u.and_then(|u| u.cached_prompt_tokens);
        row.output_tokens = u.and_then(|u| u.completion_tokens);
        row.reasoning_tokens = u.and_then(|u| u.reasoning_tokens);
        // The cache key without the base URL: within a run the endpoint is fixed, and the
        // ledger of a run then does not depend on the port or host it was served from.
        row.key = Some(Label::Text(format!("llm:{}", &cache_key("", req)[..16])));
        row.id = Some(req.id.clone());
        row.sample = Some(req.sample);
        row
    }
}

fn dataset_label(d: Dataset) -> Label {
    Label::from(match d {
        Dataset::Hotpotqa => "hotpotqa",
        Dataset::Musique => "musique",
    })
}

impl Planned {
    /// The shared step 0 as one arm's first step.
    fn clone_for(&self, _arm: Arm) -> Planned {
        Planned {
            log: self.log.clone(),
            planner_row: self.planner_row.clone(),
            search_row: self.search_row.clone(),
        }
    }
}

impl Searcher for crate::search::Search {
    fn name(&self) -> String {
        crate::search::Search::name(self)
    }

    async fn search(&self, query: &str, k: usize) -> Result<Searched> {
        let r = crate::search::Search::search(self, query, k).await?;
        Ok(Searched {
            records: r.records,
            cached: r.cached,
        })
    }
}
