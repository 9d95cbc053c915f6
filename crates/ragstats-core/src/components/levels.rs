//! The three levels of the nested design and one number per level, a fit's record of them
//! ([`Fit`]) and the SE² terms of a design: shared by the ANOVA fit ([`super::variance`]),
//! the REML fit ([`super::reml`]) and the four-level fit ([`super::cluster`]).

use serde::{Deserialize, Serialize};

use crate::panel::Stratum;

/// The three levels of the nested design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Question,
    Trajectory,
    Read,
}

impl Level {
    /// The three levels, top down.
    pub const ALL: [Level; 3] = [Level::Question, Level::Trajectory, Level::Read];

    /// The level's name as printed and serialised.
    pub fn name(self) -> &'static str {
        match self {
            Level::Question => "question",
            Level::Trajectory => "trajectory",
            Level::Read => "read",
        }
    }
}

/// One number per level; `None` where the level is not estimable (T = 1 or R = 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerLevel {
    pub question: f64,
    pub trajectory: Option<f64>,
    pub read: Option<f64>,
}

impl PerLevel {
    /// No values: what a REML fit has for mean squares and degrees of freedom.
    pub const NONE: PerLevel = PerLevel {
        question: f64::NAN,
        trajectory: None,
        read: None,
    };

    /// Whether this is [`PerLevel::NONE`] (the question value is NaN).
    pub fn is_none(&self) -> bool {
        self.question.is_nan()
    }

    /// The value at `level` (`None` where not estimable).
    pub fn get(&self, level: Level) -> Option<f64> {
        match level {
            Level::Question => Some(self.question),
            Level::Trajectory => self.trajectory,
            Level::Read => self.read,
        }
    }

    /// Each value clamped at zero (negative moment estimates truncated), `None` kept.
    pub fn truncated(&self) -> PerLevel {
        PerLevel {
            question: self.question.max(0.0),
            trajectory: self.trajectory.map(|v| v.max(0.0)),
            read: self.read.map(|v| v.max(0.0)),
        }
    }
}

/// Mean squares, raw components and what was truncated or not estimable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Mean squares (ANOVA; a REML fit has none: [`PerLevel::NONE`], not serialised).
    #[serde(skip_serializing_if = "PerLevel::is_none")]
    pub ms: PerLevel,
    /// Degrees of freedom (ANOVA; [`PerLevel::NONE`] for REML).
    #[serde(skip_serializing_if = "PerLevel::is_none")]
    pub df: PerLevel,
    /// Raw (untruncated) moment estimates.
    pub components: PerLevel,
    /// Levels whose raw estimate is negative (set to zero in [`Fit::truncated`]).
    pub truncated: Vec<Level>,
    /// Human-readable caveats: levels not estimable, and which level absorbed them.
    pub notes: Vec<String>,
}

impl Fit {
    /// Components with negative estimates set to zero, as used by forecasts.
    pub fn truncated(&self) -> PerLevel {
        self.components.truncated()
    }
}

/// Per-level contributions to SE² at design (Q, T, R): σ²_q/Q, σ²_t/(QT), σ²_r/(QTR).
/// Their sum is the D-study SE²; with untruncated components at the observed design it
/// equals the measured SE² = MS_q/(QTR).
pub fn se2_terms(c: &PerLevel, q: f64, t: f64, r: f64) -> PerLevel {
    PerLevel {
        question: c.question / q,
        trajectory: c.trajectory.map(|v| v / (q * t)),
        read: c.read.map(|v| v / (q * t * r)),
    }
}

/// The mean of question `q` of a stratum, balanced or not: the mean of its trajectory means.
pub fn question_mean(s: &Stratum, q: usize) -> f64 {
    let t = s.trajectories_of(q);
    t.iter()
        .map(|r| r.iter().sum::<f64>() / r.len() as f64)
        .sum::<f64>()
        / t.len() as f64
}
