//! The three levels of the nested design and one number per level: shared by the ANOVA
//! fit ([`super::variance`]) and the REML fit ([`super::reml`]).

use serde::{Deserialize, Serialize};

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
