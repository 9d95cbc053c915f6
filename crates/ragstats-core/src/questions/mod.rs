//! Questions with gold answers and gold supporting paragraphs, read as the datasets ship them
//! (HotpotQA, MuSiQue) or from our own JSONL, and the corpus of paragraphs a local index is
//! built from.
//!
//! The types here are the contract between the question readers, the search backends
//! (`ragstats_agent::search`), the runner and item generation: a question names its supporting
//! paragraphs by corpus document id, so "did the packet contain gold evidence" is a set
//! lookup, never a fuzzy text match.

pub mod corpus;
pub mod read;

pub use read::{read_questions, write_questions, Format, Loaded};

use serde::{Deserialize, Serialize};

/// Which dataset (and so which official scorer) a question belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// HotpotQA: EM/F1 against the single `answer`.
    Hotpotqa,
    /// MuSiQue: EM/F1 as the best over `answer` and `answer_aliases`.
    Musique,
}

/// One question as every stage of a run sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// The dataset's own id (`_id` in HotpotQA, `id` in MuSiQue).
    pub id: String,
    pub dataset: Dataset,
    pub question: String,
    /// Gold answers: the answer first, then its aliases (MuSiQue). Never empty.
    pub answers: Vec<String>,
    /// Corpus document ids of the gold supporting paragraphs (may be empty for our own JSONL).
    pub supporting: Vec<String>,
    /// The cluster the question belongs to (questions of one cluster are not independent):
    /// for HotpotQA and MuSiQue the title of the first supporting paragraph, the Wikipedia
    /// article the question was written from; in our JSONL, the `cluster` field if given.
    /// `None` when the file names no supporting paragraph (HotpotQA's test set) and no
    /// cluster. A run writes it as the panel's `cluster` column (`--cluster cluster`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

/// One paragraph of a corpus: the unit a search backend returns and a reader is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Stable id, unique in the corpus.
    pub id: String,
    pub url: String,
    pub title: String,
    pub text: String,
}
