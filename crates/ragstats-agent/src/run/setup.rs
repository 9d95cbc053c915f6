//! What `stats run` checks and computes before and after the pipeline: the run's shape from
//! its flags' values, the cells of a question file, the dry-run report (call counts, token
//! bound and corpus-based estimate), and the end-of-run counts. The CLI parses flags, loads
//! files and renders; the decisions are here.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use ragstats_core::ledger::ModelPrice;
use ragstats_core::questions::Question;
use ragstats_core::{Error, Result};

use super::cells::{
    dry_run, input_tokens_estimate, manifest_cells, uniform_cells, Cell, DryRun, EstimateShape,
    CHARS_PER_TOKEN, MAX_STEPS,
};
use super::log::RunOutput;
use super::prompt::{mean_document_chars, Templates};
use super::{Arm, Progress, Selector};
use crate::search::local;

/// Parses a comma list of names (planners, selectors) given to `flag`: each once, at least one.
///
/// # Errors
/// [`Error::Setting`] naming `setting` for a name given twice, an unknown name, or an empty
/// list.
pub fn parse_list<T: std::str::FromStr<Err = Error>>(
    setting: &'static str,
    v: &[String],
) -> Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    let mut seen = Vec::new();
    for s in v {
        let s = s.trim();
        if seen.contains(&s) {
            return Err(Error::setting(setting, format!("'{s}' is given twice")));
        }
        seen.push(s);
        out.push(
            s.parse()
                .map_err(|e: Error| Error::setting(setting, e.into_detail()))?,
        );
    }
    if out.is_empty() {
        return Err(Error::setting(setting, "give at least one"));
    }
    Ok(out)
}

/// The shape of a run as its flags give it, unchecked.
#[derive(Debug, Clone, Default)]
pub struct ShapeSettings {
    /// Planner names (`--planner`).
    pub planners: Vec<String>,
    /// Selector names (`--selector`).
    pub selectors: Vec<String>,
    /// Planning steps per trajectory.
    pub steps: u32,
    /// Results per search.
    pub k: usize,
    /// Questions worked on at once.
    pub concurrency: usize,
}

/// The checked shape of a run: its arms and selectors, steps, k and concurrency.
#[derive(Debug, Clone, PartialEq)]
pub struct RunShape {
    pub arms: Vec<Arm>,
    pub selectors: Vec<Selector>,
    pub steps: u32,
    pub k: usize,
    pub concurrency: usize,
}

impl RunShape {
    /// Checks `s`: known planners and selectors, each once; 1 ≤ steps ≤ [`MAX_STEPS`];
    /// k ≥ 1; concurrency ≥ 1.
    ///
    /// # Errors
    /// [`Error::Setting`] for the first of these that fails, in that order.
    pub fn check(s: &ShapeSettings) -> Result<RunShape> {
        let arms: Vec<Arm> = parse_list("planner", &s.planners)?;
        let selectors: Vec<Selector> = parse_list("selector", &s.selectors)?;
        if s.steps == 0 || s.steps > MAX_STEPS {
            return Err(Error::setting(
                "steps",
                format!("must be between 1 and {MAX_STEPS}"),
            ));
        }
        if s.k == 0 {
            return Err(Error::setting("k", "must be at least 1"));
        }
        if s.concurrency == 0 {
            return Err(Error::setting("concurrency", "must be at least 1"));
        }
        Ok(RunShape {
            arms,
            selectors,
            steps: s.steps,
            k: s.k,
            concurrency: s.concurrency,
        })
    }

    /// Every model call the run makes, cache hits included (a shared call is asked again and
    /// answered by the cache): the dry run's planner plus reader calls.
    pub fn model_calls(&self, cells: &[Cell]) -> u64 {
        let d = dry_run(
            cells,
            self.arms.len() as u64,
            self.selectors.len() as u64,
            u64::from(self.steps),
            0,
            0,
            0,
        );
        d.planner_calls + d.reader_calls
    }
}

/// Which questions a run asks with which design: a manifest, or a uniform design.
#[derive(Debug, Clone, Default)]
pub struct CellSettings {
    /// CSV `id,trajectories,reads`; when given the three uniform fields are unused.
    pub manifest: Option<PathBuf>,
    /// Questions per dataset in the seeded order (`None`: all).
    pub questions_per_dataset: Option<usize>,
    pub trajectories: u32,
    pub reads: u32,
    /// Seed of the question order within each dataset.
    pub order_seed: u64,
}

/// The cells of a run of `questions` under `s` ([`manifest_cells`] or [`uniform_cells`]).
///
/// # Errors
/// [`Error::Usage`] when there are no questions or the design is out of range; the
/// manifest's read errors.
pub fn run_cells(questions: &[Question], s: &CellSettings) -> Result<Vec<Cell>> {
    if questions.is_empty() {
        return Err(Error::Usage(
            "the question file(s) hold no questions".into(),
        ));
    }
    let seed = Some(s.order_seed);
    match &s.manifest {
        Some(m) => manifest_cells(m, questions, seed),
        None => uniform_cells(
            questions,
            s.questions_per_dataset,
            s.trajectories,
            s.reads,
            seed,
        ),
    }
}

/// The output cap of every call: `max_tokens`, which must be at least 1 (the token bound
/// and the tokens-per-minute limit need a cap).
///
/// # Errors
/// [`Error::Setting`] (`max_tokens`) for 0.
pub fn output_cap(max_tokens: u64) -> Result<u64> {
    if max_tokens == 0 {
        return Err(Error::setting(
            "max_tokens",
            "must be at least 1 for a run (its token bound and the tokens-per-minute limit need a cap)",
        ));
    }
    Ok(max_tokens)
}

/// The dry run of `cells` under `shape`: the call counts and token bound of [`dry_run`]
/// (template sizes in bytes), and the estimate of [`input_tokens_estimate`] from the mean
/// document of the `search` backend's corpus (template sizes in characters) with its basis,
/// or only the reason there is no estimate.
///
/// # Errors
/// A `local:` index that cannot be opened or read.
pub fn dry_run_report(
    cells: &[Cell],
    shape: &RunShape,
    templates: &Templates,
    max_tokens: u64,
    search: &str,
) -> Result<DryRun> {
    let bytes = |s: &[&String]| s.iter().map(|t| t.len() as u64).sum::<u64>();
    let mut d = dry_run(
        cells,
        shape.arms.len() as u64,
        shape.selectors.len() as u64,
        u64::from(shape.steps),
        bytes(&[&templates.planner_system, &templates.planner_user]),
        bytes(&[&templates.reader_system, &templates.reader_user]),
        max_tokens,
    );
    let chars = |s: &[&String]| s.iter().map(|t| t.chars().count() as u64).sum::<u64>();
    match corpus_doc_chars(search)? {
        Ok((doc_chars, basis)) => {
            let e = EstimateShape {
                arms: shape.arms.len() as u64,
                adaptive_arms: shape.arms.iter().filter(|x| **x == Arm::Adaptive).count() as u64,
                selectors: shape.selectors.len() as u64,
                steps: u64::from(shape.steps),
                k: shape.k as u64,
                planner_template_chars: chars(&[
                    &templates.planner_system,
                    &templates.planner_user,
                ]),
                reader_template_chars: chars(&[&templates.reader_system, &templates.reader_user]),
                doc_chars,
            };
            d.input_tokens_estimate = Some(input_tokens_estimate(cells, &e));
            d.estimate_basis = Some(basis);
        }
        Err(why) => d.estimate_basis = Some(why),
    }
    Ok(d)
}

/// Documents of a local index read for the dry run's estimate (evenly spaced beyond this).
const ESTIMATE_SAMPLE: usize = 100_000;

/// The mean characters a document of the search backend's corpus adds to a prompt, and
/// the basis of the estimate; `Ok(Err(why))` when there is no corpus to read (an
/// `http:`/`drg:` backend, or a `local:` directory that is not an index: the dry run
/// opens nothing else).
///
/// # Errors
/// A `local:` index that cannot be opened or read.
pub fn corpus_doc_chars(search: &str) -> Result<std::result::Result<(f64, String), String>> {
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

/// The calls a run made, from its counters and the client's requests sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallCounts {
    /// Model calls answered (cache hits included), and how many the cache answered.
    pub model_calls: u64,
    pub model_cached: u64,
    /// HTTP requests sent to the model endpoint.
    pub requests: u64,
    /// Searches made, and how many the cache answered.
    pub searches: u64,
    pub searches_cached: u64,
}

impl CallCounts {
    /// The counts of `p` now, with `requests` requests sent.
    pub fn of(p: &Progress, requests: u64) -> CallCounts {
        CallCounts {
            model_calls: p.llm_calls.load(Ordering::Relaxed),
            model_cached: p.llm_cached.load(Ordering::Relaxed),
            requests,
            searches: p.searches.load(Ordering::Relaxed),
            searches_cached: p.searches_cached.load(Ordering::Relaxed),
        }
    }
}

/// What a finished run wrote: questions, trajectory records, panel rows (one per read) and
/// ledger rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct OutputCounts {
    pub questions: usize,
    pub trajectory_records: usize,
    pub panel_rows: usize,
    pub ledger_rows: usize,
}

impl OutputCounts {
    /// The counts of `out`, a run of `questions` cells.
    pub fn of(questions: usize, out: &RunOutput) -> OutputCounts {
        OutputCounts {
            questions,
            trajectory_records: out.trajectories.len(),
            panel_rows: out.trajectories.iter().map(|t| t.reads.len()).sum(),
            ledger_rows: out.ledger.len(),
        }
    }
}

/// The cost in USD of calls with `input` prompt tokens, of which `cached` were cached, and
/// `output` completion tokens, at `price` (USD per million tokens):
/// ((input − cached)·p_in + cached·p_cached + output·p_out) / 10⁶, with p_cached = p_in
/// when the price has no cached rate.
pub fn tokens_cost_usd(price: &ModelPrice, input: u64, cached: u64, output: u64) -> f64 {
    ((input - cached.min(input)) as f64 * price.input
        + cached as f64 * price.cached_input.unwrap_or(price.input)
        + output as f64 * price.output)
        / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::questions::read::read_questions;

    fn shape(planners: &[&str], selectors: &[&str], steps: u32) -> Result<RunShape> {
        RunShape::check(&ShapeSettings {
            planners: planners.iter().map(|s| s.to_string()).collect(),
            selectors: selectors.iter().map(|s| s.to_string()).collect(),
            steps,
            k: 10,
            concurrency: 4,
        })
    }

    /// The case of tests/it/run_cli.rs `dry_run_counts_calls_before_spending`: 5 questions
    /// per dataset of data/qa/questions.jsonl (10 in all) × 2 trajectories × 3 reads, 4
    /// steps, both arms and selectors: 10·2·(1 + 3·2) = 140 planner calls and searches,
    /// 10·2·2·2·3 = 240 reader calls, (140 + 240)·256 output tokens at most; a `local:`
    /// path that is no index gives no estimate, and says why.
    #[test]
    fn dry_run_report_counts_the_cli_case() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/qa/questions.jsonl");
        let loaded = read_questions(&[file]).unwrap();
        let cells = run_cells(
            &loaded.questions,
            &CellSettings {
                manifest: None,
                questions_per_dataset: Some(5),
                trajectories: 2,
                reads: 3,
                order_seed: 0,
            },
        )
        .unwrap();
        let s = shape(&["open", "adaptive"], &["rrf", "rr"], 4).unwrap();
        let d =
            dry_run_report(&cells, &s, &Templates::builtin(), 256, "local:/nonexistent").unwrap();
        assert_eq!(d.questions, 10);
        assert_eq!(d.trajectories, 20);
        assert_eq!(d.planner_calls, 140);
        assert_eq!(d.search_calls, 140);
        assert_eq!(d.reader_calls, 240);
        assert_eq!(d.output_tokens_max, 380 * 256);
        assert_eq!(d.input_tokens_estimate, None);
        assert_eq!(
            d.estimate_basis.as_deref(),
            Some("no estimate: /nonexistent is not a search index (stats index build)")
        );
        assert_eq!(s.model_calls(&cells), 380);
        let http = dry_run_report(&cells, &s, &Templates::builtin(), 256, "http://x").unwrap();
        assert_eq!(
            http.estimate_basis.as_deref(),
            Some("no estimate: the corpus of an http:/drg: search cannot be read before the run")
        );
        assert!(matches!(run_cells(&[], &CellSettings::default()),
            Err(Error::Usage(m)) if m == "the question file(s) hold no questions"));
    }

    #[test]
    fn shape_checks_in_order() {
        let e = |r: Result<RunShape>| match r {
            Err(e @ Error::Setting { .. }) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            e(shape(&["open", " open"], &["rr"], 4)),
            "planner: 'open' is given twice"
        );
        assert_eq!(e(shape(&[], &["rr"], 4)), "planner: give at least one");
        assert_eq!(
            e(shape(&["open"], &["rr"], 0)),
            format!("steps: must be between 1 and {MAX_STEPS}")
        );
        assert_eq!(
            e(RunShape::check(&ShapeSettings {
                planners: vec!["open".into()],
                selectors: vec!["rr".into()],
                steps: 4,
                k: 0,
                concurrency: 1,
            })),
            "k: must be at least 1"
        );
        let ok = shape(&["adaptive"], &["rr", "rrf"], 4).unwrap();
        assert_eq!(ok.arms, vec![Arm::Adaptive]);
        assert_eq!(ok.selectors, vec![Selector::Rr, Selector::Rrf]);
        assert!(matches!(
            output_cap(0),
            Err(Error::Setting {
                setting: "max_tokens",
                ..
            })
        ));
        assert_eq!(output_cap(256).unwrap(), 256);
    }

    /// (800·1 + 200·0.5 + 100·2) / 10⁶ = 0.0011 USD; without a cached rate the cached
    /// tokens pay the input rate: (1000·1 + 100·2) / 10⁶ = 0.0012.
    #[test]
    fn token_cost_by_hand() {
        let mut p = ModelPrice {
            input: 1.0,
            cached_input: Some(0.5),
            output: 2.0,
        };
        assert!((tokens_cost_usd(&p, 1000, 200, 100) - 0.0011).abs() < 1e-15);
        p.cached_input = None;
        assert!((tokens_cost_usd(&p, 1000, 200, 100) - 0.0012).abs() < 1e-15);
    }

    #[test]
    fn output_counts_of_an_empty_run() {
        let out = RunOutput {
            trajectories: vec![],
            ledger: vec![],
        };
        assert_eq!(
            OutputCounts::of(3, &out),
            OutputCounts {
                questions: 3,
                ..OutputCounts::default()
            }
        );
    }
}
