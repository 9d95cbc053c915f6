//! Reference distributions for small samples: Student t quantiles with Welch–Satterthwaite
//! degrees of freedom ([`t`]), critical values of the maximum of correlated |t| statistics
//! ([`max_t`]), and the score and exact methods for binary outcomes ([`binary`]).
//!
//! Why a module of its own: a stratified mean of Q questions has Q − 1 degrees of freedom
//! per stratum, and the level of a z interval falls short at the sizes evaluations have
//! (tens of questions); every analysis that prints an interval or a p-value takes its
//! reference distribution from here. docs/COVERAGE.md measures what each one buys.

pub mod binary;
pub mod max_t;
pub mod measured;
pub mod t;

use serde::{Deserialize, Serialize};

/// Which intervals and tests an analysis gives a binary outcome: `auto`, `t`, `score` or
/// `clopper-pearson` in text (settings read from JSON take the same words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum IntervalRule {
    /// Score methods (Wilson for a system, Newcombe and the exact McNemar test for a pair)
    /// when every outcome is 0 or 1 with one cell per question; Student t otherwise.
    #[default]
    Auto,
    /// Student t on the Satterthwaite df, whatever the outcome.
    T,
    /// The score methods, and an error when the outcome is not binary with one cell per
    /// question.
    Score,
    /// The score methods with Clopper–Pearson's exact interval for a system instead of
    /// Wilson's (conservative: it covers at least the nominal level, docs/COVERAGE.md), and
    /// the same error as [`IntervalRule::Score`] when they do not apply.
    #[serde(rename = "clopper-pearson")]
    ClopperPearson,
}

impl std::str::FromStr for IntervalRule {
    type Err = String;

    /// Reads `auto`, `t`, `score` or `clopper-pearson` (any case).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(IntervalRule::Auto),
            "t" => Ok(IntervalRule::T),
            "score" => Ok(IntervalRule::Score),
            "clopper-pearson" => Ok(IntervalRule::ClopperPearson),
            other => Err(format!(
                "'{other}': expected auto, t, score or clopper-pearson"
            )),
        }
    }
}
