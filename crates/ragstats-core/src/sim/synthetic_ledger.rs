//! Synthetic cost ledgers matching a simulated panel, in the cost-ledger format of
//! [`crate::ledger`] (docs/ledger.md).
//!
//! The simulated workflow follows the paper's paired policies. For each question q,
//! trajectory t and arm a:
//!
//! * `planner_calls` planner calls, steps k = 0..P−1. Step 0 is the shared first query:
//!   every arm's row carries `key = "plan0:<question>:<t>"`, so it is billed once.
//!   Input tokens ~ LogNormal(median m_k, sdlog 0.15) with m_k = planner_input + 40·k for the
//!   baseline arm (query history only) and planner_input + planner_obs·k for later arms
//!   (they also see earlier observations); output ~ LogNormal(planner_output, 0.3).
//!   Cached input: step 0 and baseline steps hit the cached system prompt
//!   (`system_prompt_tokens`); later arms' steps k ≥ 1 reuse the previous call's prefix,
//!   cached = its input rounded down to 64 tokens (prefix caches work in 64-token units).
//! * One search request per planner query; step 0's is shared via
//!   `key = "search0:<question>:<t>"`, the others have no key (each is its own request).
//!   Token fields and `model` are absent.
//! * One reader call per read r. The packet is fixed within (q, t, a), so all reads have the
//!   same input tokens ~ LogNormal(reader_input, 0.2); read 0 hits only the system prompt
//!   cache, reads r ≥ 1 hit the whole packet (input rounded down to 64). Output per read
//!   ~ LogNormal(reader_output, 0.5), at least 1.
//!
//! Token draws use the same keyed streams as the panel, so a ledger is deterministic for a
//! seed and a smaller design's ledger is a subset of a larger one's.

use super::model::{question_id, SimSpec};
use crate::ledger::{CallKind, LedgerRow};
use crate::rng::domain::sim as tag;
use crate::rng::KeyedStream;
use crate::Result;

/// Workflow and token parameters of a simulated ledger (medians of the log-normals).
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerSpec {
    /// Model name on planner and reader rows.
    pub model: String,
    /// Planner calls (and search requests) per trajectory and arm, P ≥ 1.
    pub planner_calls: usize,
    /// Median input tokens of a first planner call.
    pub planner_input: f64,
    /// Extra median input tokens per earlier step for non-baseline arms (observations).
    pub planner_obs: f64,
    /// Median planner output tokens.
    pub planner_output: f64,
    /// Median reader input tokens (question + five-document packet).
    pub reader_input: f64,
    /// Median reader output tokens.
    pub reader_output: f64,
    /// Tokens of the cached system prompt.
    pub system_prompt_tokens: u64,
}

impl Default for LedgerSpec {
    fn default() -> Self {
        LedgerSpec {
            model: "deepseek-v4.1-flash".into(),
            planner_calls: 4,
            planner_input: 1500.0,
            planner_obs: 1500.0,
            planner_output: 40.0,
            reader_input: 9000.0,
            reader_output: 20.0,
            system_prompt_tokens: 1024,
        }
    }
}

/// Rounds a positive token draw to an integer, at least `min`.
fn tokens(x: f64, min: u64) -> u64 {
    (x.round() as u64).max(min)
}

fn floor64(x: u64) -> u64 {
    x / 64 * 64
}

/// Simulates the ledger of `spec`'s panel (module docs give the workflow).
///
/// Rows come ordered by stratum, question, trajectory, arm; within that, planner and search
/// rows by step, then reader rows by read. Counts: planner and search rows
/// Σ Q_d · T · A · P each (unique calls Σ Q_d · T · (A(P−1) + 1)), reader rows Σ Q_d · T · A · R.
///
/// # Errors
/// [`crate::Error::Usage`] when the panel spec is invalid, `planner_calls` is 0, or the
/// ledger would exceed [`super::model::MAX_ROWS`] rows.
pub fn simulate_ledger(spec: &SimSpec, ledger: &LedgerSpec) -> Result<Vec<LedgerRow>> {
    spec.validate()?;
    if ledger.planner_calls == 0 {
        return Err(crate::Error::Usage(
            "planner calls per trajectory must be at least 1".into(),
        ));
    }
    // Planner and search rows Q·T·A·P each, reader rows Q·T·A·R.
    super::model::check_rows(
        "ledger",
        super::model::total_questions(&spec.strata)
            * spec.trajectories as u128
            * spec.arms.len() as u128
            * (2 * ledger.planner_calls as u128 + spec.reads as u128),
    )?;
    let p_n = ledger.planner_calls as u64;
    let mut rows = Vec::new();
    let seed = spec.seed;
    for (d, (name, q_n)) in spec.strata.iter().enumerate() {
        let d = d as u64;
        for q in 0..*q_n {
            let qid = question_id(name, q, *q_n);
            let qi = q as u64;
            for t in 0..spec.trajectories as u64 {
                for (a, arm) in spec.arms.iter().enumerate() {
                    let base = |kind: CallKind| LedgerRow {
                        dataset: Some(name.as_str().into()),
                        question: Some(qid.as_str().into()),
                        arm: Some(arm.as_str().into()),
                        trajectory: Some(t.into()),
                        ..LedgerRow::new(kind)
                    };
                    let mut prev_input = 0u64;
                    for k in 0..p_n {
                        // Step 0 is shared: draw it from a stream without the arm index.
                        let arm_tag = if k == 0 { tag::SHARED_ARM } else { a as u64 };
                        let mut s = KeyedStream::new(seed, &[tag::PLANNER, d, qi, t, arm_tag, k]);
                        let per_step = if a == 0 || k == 0 {
                            40.0
                        } else {
                            ledger.planner_obs
                        };
                        let median = ledger.planner_input + per_step * k as f64;
                        let input = tokens(s.lognormal(median, 0.15), 1);
                        let output = tokens(s.lognormal(ledger.planner_output, 0.3), 1);
                        let cached = if a >= 1 && k >= 1 {
                            floor64(prev_input)
                        } else {
                            ledger.system_prompt_tokens
                        }
                        .min(input);
                        prev_input = input;
                        rows.push(LedgerRow {
                            step: Some(k as u32),
                            model: Some(ledger.model.clone()),
                            input_tokens: Some(input),
                            cached_input_tokens: Some(cached),
                            output_tokens: Some(output),
                            key: (k == 0).then(|| format!("plan0:{qid}:{t}").into()),
                            ..base(CallKind::Planner)
                        });
                        rows.push(LedgerRow {
                            step: Some(k as u32),
                            key: (k == 0).then(|| format!("search0:{qid}:{t}").into()),
                            ..base(CallKind::Search)
                        });
                    }
                    let input = tokens(
                        KeyedStream::new(seed, &[tag::READER_IN, d, qi, t, a as u64])
                            .lognormal(ledger.reader_input, 0.2),
                        1,
                    );
                    for r in 0..spec.reads as u64 {
                        let output = tokens(
                            KeyedStream::new(seed, &[tag::READER_OUT, d, qi, t, a as u64, r])
                                .lognormal(ledger.reader_output, 0.5),
                            1,
                        );
                        let cached = if r == 0 {
                            ledger.system_prompt_tokens.min(input)
                        } else {
                            floor64(input)
                        };
                        rows.push(LedgerRow {
                            read: Some(r.into()),
                            model: Some(ledger.model.clone()),
                            input_tokens: Some(input),
                            cached_input_tokens: Some(cached),
                            output_tokens: Some(output),
                            ..base(CallKind::Reader)
                        });
                    }
                }
            }
        }
    }
    Ok(rows)
}
