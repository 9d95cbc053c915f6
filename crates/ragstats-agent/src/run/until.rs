//! `stats run --until`: a run that stops paying when the answer is in (issue #50 item 2).
//!
//! The questions are taken in waves of W, in the run's seeded order with the datasets
//! interleaved ([`wave_order`]: the first question of each dataset, then the second of each,
//! …), so that every look sees every stratum. After each wave the run writes its outputs
//! (the panel of the questions done so far) and takes the anytime-valid confidence sequence
//! of `stats sequential` over that panel, in the order the questions were run, looking every
//! W questions ([`ragstats_core::analyses::sequential_report`]). It stops at the first of:
//!
//! * the sequence resolves the contrast (excludes 0, or lies beyond `margin`), with
//!   `--until resolved`; or it is as narrow as a fixed-n interval of standard error X, with
//!   `--until se=X`;
//! * the run's cost (its ledger billed with `--prices`, cache hits included: they were paid
//!   for when first made) reaches `--max-usd`;
//! * `--max-questions` questions are done, or every question is.
//!
//! The sequence is valid at every look, so stopping at the first look that resolves keeps
//! its confidence level (docs/sequential.md). `until.json` in the output directory records
//! every wave's look and, once the run stops, the reason; it is rewritten atomically after
//! each wave.
//!
//! Resume: the outputs of a wave are a function of the cached calls, and the sequence a
//! function of the panel, so running the same command again replays the finished waves from
//! the caches (no request is repeated), takes the same looks, and goes on from where the
//! run was stopped. A sharded run (`--shard`) cannot stop early: each shard runs on its own
//! machine without seeing the others' scores, so no shard can know when the merged sequence
//! resolves; `--until` refuses `--shard` (docs/scale.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::cells::Cell;
use super::log::{dataset_name, write_outputs, RunOutput};
use super::pipeline::{self, Progress, RunSpec, Searcher};
use crate::llm::{Cancel, Client};
use ragstats_core::analyses::{sequential_report_planned, SequenceShape, SequentialSettings};
use ragstats_core::costs::accounting::{bill, Currency};
use ragstats_core::import::PanelSettings;
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::panel::Source;
use ragstats_core::sequential::report::{Look, SequentialReport};
use ragstats_core::sequential::StrataRule;
use ragstats_core::{Error, Result};

/// What ends a run early.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "target", rename_all = "snake_case")]
pub enum Target {
    /// The sequence excludes 0 (or lies beyond the margin): the arms are shown to differ.
    Resolved,
    /// The sequence is as narrow as a fixed-n interval with this standard error.
    Se { se: f64 },
}

impl std::str::FromStr for Target {
    type Err = Error;

    /// Parses `resolved` or `se=X` (X a positive number).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::setting(
                "until",
                format!(
                    "'{}': expected resolved or se=X (a positive standard error, e.g. se=0.02)",
                    ragstats_core::io::clip(s)
                ),
            )
        };
        match s.trim() {
            "resolved" => Ok(Target::Resolved),
            t => {
                let x = t.strip_prefix("se=").ok_or_else(bad)?;
                let se: f64 = x.trim().parse().map_err(|_| bad())?;
                if !(se.is_finite() && se > 0.0) {
                    return Err(bad());
                }
                Ok(Target::Se { se })
            }
        }
    }
}

/// The settings of a run with `--until`.
#[derive(Debug, Clone, PartialEq)]
pub struct UntilSettings {
    /// When the answer is in.
    pub target: Target,
    /// Questions per wave (and between looks).
    pub wave: usize,
    /// At most this many questions in all (over the datasets); `None`: every cell's.
    pub max_questions: Option<usize>,
    /// Stop once the run's cost reaches this many dollars (needs prices).
    pub max_usd: Option<f64>,
    /// The contrast monitored, `B-A` (the run's arms), or one arm's mean.
    pub contrast: String,
    /// The panel's score column (default: `f1`).
    pub metric: Option<String>,
    /// `resolved` means a difference larger than this is shown.
    pub margin: f64,
    /// The sequence's confidence level, simultaneous over every look.
    pub confidence: f64,
    /// How the datasets (the panel's strata) are combined; `None`: rounds when the plan
    /// gives every dataset at least 20 rounds' questions, else the union bound.
    pub strata: Option<StrataRule>,
}

impl UntilSettings {
    /// Checks the settings against the run's arms (`arms`: the planners' names).
    ///
    /// # Errors
    /// [`Error::Setting`]: a wave of 0 questions (`wave`), `max_questions` of 0, a
    /// `max_usd` that is not a positive number or is given without prices (`max_usd`), a
    /// contrast that does not name two of the run's arms, or one arm for `resolved`
    /// (`until_contrast`).
    pub fn check(&self, arms: &[&str], has_prices: bool) -> Result<()> {
        if self.wave == 0 {
            return Err(Error::setting(
                "wave",
                "must be at least 1 question, e.g. 25",
            ));
        }
        if self.max_questions == Some(0) {
            return Err(Error::setting("max_questions", "must be at least 1"));
        }
        if let Some(usd) = self.max_usd {
            if !(usd.is_finite() && usd > 0.0) {
                return Err(Error::setting(
                    "max_usd",
                    format!("{usd}: expected a positive number of dollars, e.g. 5"),
                ));
            }
            if !has_prices {
                return Err(Error::setting(
                    "max_usd",
                    "needs prices (the run's cost in dollars is its ledger billed at them)",
                ));
            }
        }
        let names = arms.join(", ");
        match self.contrast.split_once('-') {
            Some((b, a)) if arms.contains(&b) && arms.contains(&a) && a != b => Ok(()),
            None if arms.contains(&self.contrast.as_str()) => match self.target {
                Target::Resolved => Err(Error::setting(
                    "until_contrast",
                    format!(
                        "'{}' is one arm, and a resolved contrast compares two: give B-A of the run's planners ({names})",
                        self.contrast
                    ),
                )),
                Target::Se { .. } => Ok(()),
            },
            _ => Err(Error::setting(
                "until_contrast",
                format!(
                    "'{}' is not B-A of the run's planners ({names}), nor one of them",
                    ragstats_core::io::clip(&self.contrast)
                ),
            )),
        }
    }

    /// The sequential analysis of the run's panel these settings ask for.
    fn sequential(&self) -> SequentialSettings {
        let one_arm = !self.contrast.contains('-');
        SequentialSettings {
            panel: PanelSettings {
                metric: self.metric.clone(),
                contrast: (!one_arm).then(|| self.contrast.clone()),
                arm: one_arm.then(|| self.contrast.clone()),
                ..PanelSettings::default()
            },
            look_every: self.wave as u64,
            confidence: self.confidence,
            margin: self.margin,
            until_se: match self.target {
                Target::Se { se } => Some(se),
                Target::Resolved => None,
            },
            shape: SequenceShape {
                strata: self.strata,
                ..SequenceShape::default()
            },
        }
    }
}

/// Why a run with `--until` stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The sequence resolved the contrast.
    Resolved,
    /// The sequence reached the target width.
    SeReached,
    /// The run's cost reached `--max-usd`.
    MaxUsd,
    /// `--max-questions` questions were done.
    MaxQuestions,
    /// Every question of the run was done without an earlier stop.
    AllQuestions,
}

impl StopReason {
    /// The reason in words, for the run's last lines.
    pub fn words(self) -> &'static str {
        match self {
            StopReason::Resolved => "the confidence sequence resolved the contrast",
            StopReason::SeReached => "the confidence sequence reached the target width",
            StopReason::MaxUsd => "the run's cost reached its dollar limit",
            StopReason::MaxQuestions => "the question limit was reached",
            StopReason::AllQuestions => "every question was done before the sequence resolved",
        }
    }
}

/// One wave: the questions done after it, the run's cost then, and the sequence's look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wave {
    pub wave: usize,
    pub questions: usize,
    /// The run's cost in dollars after the wave (with prices).
    pub usd: Option<f64>,
    /// The sequence's interval after the wave.
    pub look: Look,
}

/// `until.json`: the run's looks and, once it stopped, why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UntilRecord {
    pub target: Target,
    /// The contrast (or arm) monitored.
    pub contrast: String,
    pub wave_size: usize,
    pub max_questions: Option<usize>,
    pub max_usd: Option<f64>,
    /// The questions the run had planned (every cell's, or `max_questions`).
    pub planned: usize,
    pub waves: Vec<Wave>,
    /// `None` while the run goes on (a run stopped by a signal or a crash).
    pub stopped: Option<StopReason>,
    /// The questions done when it stopped.
    pub questions: usize,
    /// The planned questions not run.
    pub saved: usize,
    /// The sequential analysis of the last wave's panel.
    pub sequence: Option<SequentialReport>,
}

/// The run's cells in wave order: the seeded order within each dataset, the datasets
/// interleaved (the i-th question of every dataset, in dataset order, then the (i+1)-th), so
/// each wave holds every stratum in proportion.
pub fn wave_order(cells: Vec<Cell>) -> Vec<Cell> {
    let mut by_dataset: BTreeMap<_, Vec<Cell>> = BTreeMap::new();
    for c in cells {
        by_dataset.entry(c.question.dataset).or_default().push(c);
    }
    let longest = by_dataset.values().map(Vec::len).max().unwrap_or(0);
    let mut queues: Vec<_> = by_dataset.into_values().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    for _ in 0..longest {
        for q in &mut queues {
            out.extend(q.next());
        }
    }
    out
}

/// The dollars the ledger `path` bills at `prices` (every model call once per key, cache hits
/// included; searches at the prices' search rate).
fn spent_usd(path: &Path, prices: &Prices) -> Result<f64> {
    let entries = read_ledger(path)?;
    let bills = bill(&entries, Some(prices), path, None)?;
    let currency = Currency::Usd {
        search_usd_per_1000: prices.search.usd_per_1000,
    };
    Ok(bills.iter().map(|b| b.cost(currency)).sum())
}

/// Runs `cells` in waves under `until` (module docs), writing the outputs and `until.json`
/// into `out_dir` after every wave. Returns the run's output and its record.
///
/// # Errors
/// Those of [`pipeline::run`] (an interrupted run's "interrupted" included: the waves done
/// are written), of writing the outputs, of billing the ledger, and of the sequential
/// analysis of a wave's panel (named with the wave).
#[allow(clippy::too_many_arguments)]
pub async fn run_until<S: Searcher>(
    client: &Client,
    searcher: Arc<S>,
    spec: Arc<RunSpec>,
    cells: Vec<Cell>,
    progress: Arc<Progress>,
    cancel: &Cancel,
    until: &UntilSettings,
    prices: Option<&Prices>,
    out_dir: &Path,
) -> Result<(RunOutput, UntilRecord)> {
    let order = wave_order(cells);
    let planned = until
        .max_questions
        .map_or(order.len(), |m| m.min(order.len()));
    let mut record = UntilRecord {
        target: until.target,
        contrast: until.contrast.clone(),
        wave_size: until.wave,
        max_questions: until.max_questions,
        max_usd: until.max_usd,
        planned,
        waves: Vec::new(),
        stopped: None,
        questions: 0,
        saved: planned,
        sequence: None,
    };
    let settings = until.sequential();
    // The rounds are fixed by the plan (each dataset's questions among the first
    // `planned` of the order), never by the questions done so far.
    let mut per_dataset: BTreeMap<String, u64> = BTreeMap::new();
    for c in &order[..planned] {
        *per_dataset
            .entry(dataset_name(c.question.dataset).to_string())
            .or_default() += 1;
    }
    let mut done = RunOutput::default();
    let record_path = out_dir.join("until.json");
    let write_record = |r: &UntilRecord| {
        ragstats_core::io::write_atomic(&record_path, |w| {
            serde_json::to_writer_pretty(&mut *w, r).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    };
    let mut next = 0;
    while record.stopped.is_none() {
        let end = (next + until.wave).min(planned);
        let wave = order[next..end].to_vec();
        let out = pipeline::run(
            client,
            searcher.clone(),
            spec.clone(),
            wave,
            progress.clone(),
            cancel,
        )
        .await?;
        done.trajectories.extend(out.trajectories);
        done.ledger.extend(out.ledger);
        next = end;
        write_outputs(out_dir, &done)?;
        let n = record.waves.len() + 1;
        let at_wave = |e: Error| {
            Error::Runtime(format!(
                "after wave {n} ({next} questions), the sequence of {}: {e}",
                out_dir.join("panel.csv").display()
            ))
        };
        let report = sequential_report_planned(
            &Source::file(out_dir.join("panel.csv")),
            &settings,
            &per_dataset,
        )
        .map_err(at_wave)?;
        let usd = prices
            .map(|p| spent_usd(&out_dir.join("ledger.jsonl"), p))
            .transpose()?;
        record.waves.push(Wave {
            wave: n,
            questions: next,
            usd,
            look: report.last,
        });
        record.stopped = if report.stopped_at.is_some() {
            Some(match until.target {
                Target::Resolved => StopReason::Resolved,
                Target::Se { .. } => StopReason::SeReached,
            })
        } else if until
            .max_usd
            .is_some_and(|max| usd.is_some_and(|u| u >= max))
        {
            Some(StopReason::MaxUsd)
        } else if next >= planned {
            Some(if planned < order.len() {
                StopReason::MaxQuestions
            } else {
                StopReason::AllQuestions
            })
        } else {
            None
        };
        record.questions = next;
        record.saved = planned - next;
        record.sequence = Some(report);
        write_record(&record)?;
    }
    Ok((done, record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::questions::{Dataset, Question};

    fn cell(id: &str, d: Dataset) -> Cell {
        Cell {
            question: Question {
                id: id.into(),
                dataset: d,
                question: "?".into(),
                answers: vec!["a".into()],
                supporting: vec![],
                cluster: None,
            },
            trajectories: 1,
            reads: 1,
        }
    }

    #[test]
    fn waves_interleave_the_datasets_in_their_seeded_order() {
        let cells = vec![
            cell("h1", Dataset::Hotpotqa),
            cell("h2", Dataset::Hotpotqa),
            cell("h3", Dataset::Hotpotqa),
            cell("m1", Dataset::Musique),
        ];
        let ids: Vec<String> = wave_order(cells)
            .into_iter()
            .map(|c| c.question.id)
            .collect();
        assert_eq!(ids, ["h1", "m1", "h2", "h3"]);
    }

    #[test]
    fn targets_parse_and_bad_ones_are_refused_by_name() {
        assert_eq!("resolved".parse::<Target>().unwrap(), Target::Resolved);
        assert_eq!(
            "se=0.02".parse::<Target>().unwrap(),
            Target::Se { se: 0.02 }
        );
        for bad in ["se=0", "se=-1", "se=x", "soon", "se=inf"] {
            let e = bad.parse::<Target>().unwrap_err().to_string();
            assert!(e.contains("expected resolved or se=X"), "{bad}: {e}");
        }
    }

    #[test]
    fn settings_name_what_is_wrong() {
        let s = UntilSettings {
            target: Target::Resolved,
            wave: 25,
            max_questions: None,
            max_usd: None,
            contrast: "adaptive-open".into(),
            metric: None,
            margin: 0.0,
            confidence: 0.95,
            strata: None,
        };
        let arms = ["open", "adaptive"];
        assert!(s.check(&arms, false).is_ok());
        let err = |s: UntilSettings| s.check(&arms, false).unwrap_err().to_string();
        assert!(err(UntilSettings {
            wave: 0,
            ..s.clone()
        })
        .contains("wave: must be at least 1 question"));
        assert!(err(UntilSettings {
            max_usd: Some(5.0),
            ..s.clone()
        })
        .contains("max_usd: needs prices"));
        assert!(err(UntilSettings {
            contrast: "open".into(),
            ..s.clone()
        })
        .contains("compares two"));
        assert!(err(UntilSettings {
            contrast: "b-a".into(),
            ..s.clone()
        })
        .contains("is not B-A of the run's planners (open, adaptive)"));
        // One arm's mean to a target width is allowed.
        assert!(UntilSettings {
            contrast: "open".into(),
            target: Target::Se { se: 0.05 },
            ..s
        }
        .check(&arms, false)
        .is_ok());
    }
}
