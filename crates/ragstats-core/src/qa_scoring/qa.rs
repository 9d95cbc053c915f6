//! Answer exact match (EM) and token F1, exactly as the official evaluation scripts compute them.
//!
//! Sources (all three share one normalisation, [`normalize_answer`]):
//!
//! * **HotpotQA** — `hotpot_evaluate_v1.py` in `hotpotqa/hotpot`: `exact_match_score`,
//!   `f1_score` with its `ZERO_METRIC` rule for yes/no/noanswer.
//! * **SQuAD v1.1** — `evaluate-v1.1.py` (the official SQuAD v1.1 script): `f1_score`
//!   without special cases, and `metric_max_over_ground_truths` taking the maximum over
//!   the gold answers.
//! * **MuSiQue** — `metrics/answer.py` in `StonyBrookNLP/musique` (taken from the SQuAD 2.0
//!   evaluator via AllenNLP): `get_tokens`, `compute_exact`, `compute_f1`, where an empty
//!   token list on either side scores `int(gold_toks == pred_toks)`; the gold answers are
//!   the answer plus its aliases.
//!
//! Scores are on the 0–1 scale (the scripts multiply by 100 only when printing means).
//! With several gold answers every style takes the maximum over them, EM and F1
//! separately, as `metric_max_over_ground_truths` does; for HotpotQA, whose script has
//! one gold answer, one gold gives exactly the official value.

use std::collections::HashMap;

use super::pychar::{is_python_punctuation, is_python_space, is_python_word};

/// Which official script's rules to follow.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// `hotpot_evaluate_v1.py`: yes/no/noanswer mismatch scores F1 = 0; empty vs empty F1 = 0.
    #[default]
    Hotpotqa,
    /// SQuAD v1.1 `evaluate-v1.1.py`: plain token F1; empty vs empty F1 = 0.
    Squad,
    /// MuSiQue `metrics/answer.py`: an empty side scores F1 = 1 if both are empty, else 0.
    Musique,
}

impl Style {
    /// The lower-case name used on the command line and in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Style::Hotpotqa => "hotpotqa",
            Style::Squad => "squad",
            Style::Musique => "musique",
        }
    }
}

/// The official `normalize_answer`: `white_space_fix(remove_articles(remove_punc(lower(s))))`.
///
/// * `lower`: Python `str.lower()` (full Unicode lower-casing, final sigma included; Rust's
///   `str::to_lowercase` agrees on every Unicode 14 code point).
/// * `remove_punc`: drop the 32 ASCII characters of Python's `string.punctuation`; other
///   punctuation (`«`, `。`, `—`, ...) stays.
/// * `remove_articles`: `re.sub(r'\b(a|an|the)\b', ' ', text)` with Python's Unicode-aware
///   `\b`, so `another`, `theory` and `théa` keep their letters while `a-b` (after the
///   hyphen is gone: `ab`) is one word.
/// * `white_space_fix`: `' '.join(text.split())`, splitting on Python's `str.isspace()`
///   (non-breaking and ideographic spaces split; zero-width space does not).
pub fn normalize_answer(s: &str) -> String {
    let lowered = s.to_lowercase();
    let no_punc: Vec<char> = lowered
        .chars()
        .filter(|&c| !is_python_punctuation(c))
        .collect();
    let no_articles = remove_articles(&no_punc);
    split_python(&no_articles).collect::<Vec<_>>().join(" ")
}

/// `re.sub(r'\b(a|an|the)\b', ' ', text)`: scan left to right; at each position try the
/// alternatives in order (`a`, `an`, `the`), each needing a word boundary before and after,
/// judged on the original text; after a match resume after it.
fn remove_articles(text: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let boundary_before = i == 0 || !is_python_word(text[i - 1]);
        let matched = if boundary_before {
            ["a", "an", "the"].iter().find_map(|alt| {
                let end = i + alt.len();
                let same =
                    end <= text.len() && alt.chars().zip(&text[i..end]).all(|(a, &b)| a == b);
                (same && (end == text.len() || !is_python_word(text[end]))).then_some(end)
            })
        } else {
            None
        };
        match matched {
            Some(end) => {
                out.push(' ');
                i = end;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    out
}

/// Python's `str.split()` with no argument: runs of `isspace()` characters separate tokens.
fn split_python(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_python_space).filter(|t| !t.is_empty())
}

/// Exact match of one prediction against one gold answer: 1.0 if the normalised strings
/// are equal, else 0.0. The rule is the same in all three scripts.
pub fn exact_match(pred: &str, gold: &str, style: Style) -> f64 {
    let _ = style;
    if normalize_answer(pred) == normalize_answer(gold) {
        1.0
    } else {
        0.0
    }
}

/// Token F1 of one prediction against one gold answer under `style`'s rules.
///
/// With normalised token lists p and g and `num_same` = |Counter(p) ∩ Counter(g)| (the sum
/// over tokens of the smaller count): precision = num_same/|p|, recall = num_same/|g|,
/// F1 = 2·precision·recall/(precision + recall), and F1 = 0 when num_same = 0. Special cases:
///
/// * Hotpotqa: if either normalised string is `yes`, `no` or `noanswer` and the two differ,
///   F1 = 0 (`ZERO_METRIC`).
/// * Musique: if either token list is empty, F1 = 1 if both are empty, else 0.
/// * Hotpotqa and Squad score empty against empty as 0 (num_same = 0), while EM is 1.
pub fn token_f1(pred: &str, gold: &str, style: Style) -> f64 {
    let np = normalize_answer(pred);
    let ng = normalize_answer(gold);
    if style == Style::Hotpotqa {
        let special = |s: &str| matches!(s, "yes" | "no" | "noanswer");
        if (special(&np) || special(&ng)) && np != ng {
            return 0.0;
        }
    }
    let p: Vec<&str> = np.split(' ').filter(|t| !t.is_empty()).collect();
    let g: Vec<&str> = ng.split(' ').filter(|t| !t.is_empty()).collect();
    if style == Style::Musique && (p.is_empty() || g.is_empty()) {
        return if p == g { 1.0 } else { 0.0 };
    }
    let num_same = common_token_count(&p, &g);
    if num_same == 0 {
        return 0.0;
    }
    // Same operation order as the scripts: (2 * precision) * recall / (precision + recall).
    let precision = num_same as f64 / p.len() as f64;
    let recall = num_same as f64 / g.len() as f64;
    (2.0 * precision * recall) / (precision + recall)
}

/// Σ_w min(count_p(w), count_g(w)): the size of Python's `Counter(p) & Counter(g)`.
fn common_token_count(p: &[&str], g: &[&str]) -> usize {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in p {
        *counts.entry(t).or_default() += 1;
    }
    let mut same = 0;
    for t in g {
        if let Some(c) = counts.get_mut(t) {
            if *c > 0 {
                *c -= 1;
                same += 1;
            }
        }
    }
    same
}

/// `(EM, F1)` of one prediction against several gold answers: each is the maximum over the
/// golds (`metric_max_over_ground_truths`). With no gold answers both are 0 (the scripts
/// would raise on `max([])`; callers should reject such items, as `stats score-answers` does).
pub fn score(pred: &str, golds: &[String], style: Style) -> (f64, f64) {
    golds.iter().fold((0.0, 0.0), |(em, f1), g| {
        (
            f64::max(em, exact_match(pred, g, style)),
            f64::max(f1, token_f1(pred, g, style)),
        )
    })
}
