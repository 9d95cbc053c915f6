//! The MCQ item: task types, subtask groups, options and the gold answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The four RAGCap-Bench capability types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// Convergent and divergent planning.
    Planning,
    /// Picking the pages that are evidence for the query.
    EvidenceExtraction,
    /// Spotting reasoning that the evidence does not support.
    GroundedReasoning,
    /// Abstaining on useless results; spotting low-credibility sources.
    NoiseRobustness,
}

impl Task {
    /// All tasks in report order.
    pub const ALL: [Task; 4] = [
        Task::Planning,
        Task::EvidenceExtraction,
        Task::GroundedReasoning,
        Task::NoiseRobustness,
    ];

    /// The name used in files (`planning`, `evidence_extraction`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Planning => "planning",
            Task::EvidenceExtraction => "evidence_extraction",
            Task::GroundedReasoning => "grounded_reasoning",
            Task::NoiseRobustness => "noise_robustness",
        }
    }

    /// Parses a task name.
    pub fn parse(s: &str) -> Option<Task> {
        Task::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The subtask names this task requires (empty: the subtask must be null or absent).
    pub fn subtasks(self) -> &'static [&'static str] {
        match self {
            Task::Planning => &["convergent", "divergent"],
            Task::NoiseRobustness => &["abstain", "reliability"],
            _ => &[],
        }
    }

    /// The groups of this task.
    pub fn groups(self) -> &'static [Group] {
        match self {
            Task::Planning => &[Group::PlanningConvergent, Group::PlanningDivergent],
            Task::EvidenceExtraction => &[Group::EvidenceExtraction],
            Task::GroundedReasoning => &[Group::GroundedReasoning],
            Task::NoiseRobustness => &[Group::NoiseAbstain, Group::NoiseReliability],
        }
    }
}

/// The six scoring groups: scores are averaged within a group first, then groups within a
/// task, then tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Group {
    /// `planning` / `convergent`.
    #[serde(rename = "planning-convergent")]
    PlanningConvergent,
    /// `planning` / `divergent`.
    #[serde(rename = "planning-divergent")]
    PlanningDivergent,
    /// `evidence_extraction`.
    #[serde(rename = "evidence_extraction")]
    EvidenceExtraction,
    /// `grounded_reasoning`.
    #[serde(rename = "grounded_reasoning")]
    GroundedReasoning,
    /// `noise_robustness` / `abstain`.
    #[serde(rename = "noise-abstain")]
    NoiseAbstain,
    /// `noise_robustness` / `reliability`.
    #[serde(rename = "noise-reliability")]
    NoiseReliability,
}

impl Group {
    /// All groups in report order.
    pub const ALL: [Group; 6] = [
        Group::PlanningConvergent,
        Group::PlanningDivergent,
        Group::EvidenceExtraction,
        Group::GroundedReasoning,
        Group::NoiseAbstain,
        Group::NoiseReliability,
    ];

    /// The group of a (task, subtask) pair, or `None` for a pair that does not exist.
    pub fn of(task: Task, subtask: Option<&str>) -> Option<Group> {
        match (task, subtask) {
            (Task::Planning, Some("convergent")) => Some(Group::PlanningConvergent),
            (Task::Planning, Some("divergent")) => Some(Group::PlanningDivergent),
            (Task::EvidenceExtraction, None) => Some(Group::EvidenceExtraction),
            (Task::GroundedReasoning, None) => Some(Group::GroundedReasoning),
            (Task::NoiseRobustness, Some("abstain")) => Some(Group::NoiseAbstain),
            (Task::NoiseRobustness, Some("reliability")) => Some(Group::NoiseReliability),
            _ => None,
        }
    }

    /// The task this group belongs to.
    pub fn task(self) -> Task {
        match self {
            Group::PlanningConvergent | Group::PlanningDivergent => Task::Planning,
            Group::EvidenceExtraction => Task::EvidenceExtraction,
            Group::GroundedReasoning => Task::GroundedReasoning,
            Group::NoiseAbstain | Group::NoiseReliability => Task::NoiseRobustness,
        }
    }

    /// The name used in reports (`planning-convergent`, ..., `noise-reliability`).
    pub fn as_str(self) -> &'static str {
        match self {
            Group::PlanningConvergent => "planning-convergent",
            Group::PlanningDivergent => "planning-divergent",
            Group::EvidenceExtraction => "evidence_extraction",
            Group::GroundedReasoning => "grounded_reasoning",
            Group::NoiseAbstain => "noise-abstain",
            Group::NoiseReliability => "noise-reliability",
        }
    }

    /// Index in [`Group::ALL`].
    pub fn index(self) -> usize {
        Group::ALL.iter().position(|&g| g == self).unwrap_or(0)
    }
}

/// Whether the model is asked for the correct or the incorrect options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Polarity {
    /// "Choose all correct options".
    Correct,
    /// "Choose all incorrect options".
    Incorrect,
}

/// One option of an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McqOption {
    /// A single upper-case letter `A`–`Z`.
    pub label: String,
    /// The option text shown to the model.
    pub text: String,
}

/// One validated multiple-choice item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique id.
    pub id: String,
    /// Capability type.
    pub task: Task,
    /// `convergent`/`divergent` (planning), `abstain`/`reliability` (noise), else `None`.
    pub subtask: Option<String>,
    /// Language tag, e.g. `en`, `zh`.
    pub language: String,
    /// The user's query.
    pub query: String,
    /// The agentic system's intermediate output shown to the model.
    pub context: String,
    /// What to choose, in words.
    pub instruction: String,
    /// Choose the correct or the incorrect options.
    pub polarity: Polarity,
    /// The options in file order.
    pub options: Vec<McqOption>,
    /// Gold labels (a set; kept in option order).
    pub answer: Vec<String>,
    /// True when an empty answer ("none of the options") is a legitimate answer.
    #[serde(default)]
    pub allow_empty: bool,
    /// Free-form metadata, carried along.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl Item {
    /// The scoring group (validated items always have one).
    pub fn group(&self) -> Group {
        Group::of(self.task, self.subtask.as_deref()).unwrap_or(Group::EvidenceExtraction)
    }

    /// Option labels in file order.
    pub fn labels(&self) -> Vec<String> {
        self.options.iter().map(|o| o.label.clone()).collect()
    }
}

/// `labels` sorted into the order they have in `order` (labels not in `order` go last, sorted).
pub fn in_option_order(labels: &[String], order: &[String]) -> Vec<String> {
    let mut v: Vec<String> = labels.to_vec();
    v.sort_by_key(|l| {
        (
            order.iter().position(|o| o == l).unwrap_or(usize::MAX),
            l.clone(),
        )
    });
    v.dedup();
    v
}
