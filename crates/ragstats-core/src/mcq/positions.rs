//! Positional bias: how often the option shown at each position is gold and is chosen,
//! and how often answers survive option shuffling.

use std::collections::HashMap;

use serde::Serialize;

use super::results::{Outcome, RunResult};

/// One shown position (1-based).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionRow {
    /// Position as shown (1 = first option).
    pub position: usize,
    /// Parsed result lines whose item showed an option at this position.
    pub shown: usize,
    /// Of those, lines where the option there is gold.
    pub gold: usize,
    /// Of those, lines where the model chose it.
    pub chosen: usize,
    /// gold / shown.
    pub gold_rate: f64,
    /// chosen / shown.
    pub chosen_rate: f64,
    /// chosen_rate − gold_rate: positive means the model favours this position.
    pub bias: f64,
}

/// Position table over the lines with outcome `ok`.
pub fn position_table(results: &[RunResult]) -> Vec<PositionRow> {
    let max = results
        .iter()
        .map(|r| r.permutation.len())
        .max()
        .unwrap_or(0);
    let mut rows: Vec<PositionRow> = (0..max)
        .map(|j| PositionRow {
            position: j + 1,
            shown: 0,
            gold: 0,
            chosen: 0,
            gold_rate: 0.0,
            chosen_rate: 0.0,
            bias: 0.0,
        })
        .collect();
    for r in results.iter().filter(|r| r.outcome == Outcome::Ok) {
        let answer = r.answer.as_deref().unwrap_or(&[]);
        for (j, label) in r.permutation.iter().enumerate() {
            rows[j].shown += 1;
            if r.gold.contains(label) {
                rows[j].gold += 1;
            }
            if answer.contains(label) {
                rows[j].chosen += 1;
            }
        }
    }
    for row in &mut rows {
        let n = row.shown.max(1) as f64;
        row.gold_rate = row.gold as f64 / n;
        row.chosen_rate = row.chosen as f64 / n;
        row.bias = row.chosen_rate - row.gold_rate;
    }
    rows
}

/// Agreement between an original and a shuffled run of the same model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShuffleAgreement {
    /// (id, run) pairs present in both files with outcome `ok` in both.
    pub pairs: usize,
    /// Pairs whose answers (in original labels) are the same set.
    pub same_answer: usize,
    /// same_answer / pairs.
    pub agreement: f64,
    /// EM over the pairs, original order.
    pub em_original: f64,
    /// EM over the pairs, shuffled order.
    pub em_shuffled: f64,
}

/// Pairs `original` and `shuffled` lines on (id, run) and compares their answers.
pub fn shuffle_agreement(original: &[RunResult], shuffled: &[RunResult]) -> ShuffleAgreement {
    let by: HashMap<(&str, u32), &RunResult> = shuffled
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .map(|r| ((r.id.as_str(), r.run), r))
        .collect();
    let (mut pairs, mut same, mut em_o, mut em_s) = (0usize, 0usize, 0.0, 0.0);
    for o in original.iter().filter(|r| r.outcome == Outcome::Ok) {
        let Some(s) = by.get(&(o.id.as_str(), o.run)) else {
            continue;
        };
        let (a, b) = (
            o.answer.as_deref().unwrap_or(&[]),
            s.answer.as_deref().unwrap_or(&[]),
        );
        pairs += 1;
        if super::metrics::exact_match(a, b) == 1.0 {
            same += 1;
        }
        em_o += super::metrics::exact_match(a, &o.gold);
        em_s += super::metrics::exact_match(b, &s.gold);
    }
    let n = pairs.max(1) as f64;
    ShuffleAgreement {
        pairs,
        same_answer: same,
        agreement: same as f64 / n,
        em_original: em_o / n,
        em_shuffled: em_s / n,
    }
}
