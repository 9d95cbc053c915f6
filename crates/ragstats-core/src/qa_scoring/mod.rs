//! QA answer scoring: exact match and token F1 of free-text answers.
//!
//! * [`qa`]: answer exact match and token F1 as the official HotpotQA, SQuAD v1.1 and
//!   MuSiQue scripts compute them.
//! * [`qa_items`]: parsing the JSONL prediction files scored by `stats score-answers`.
//! * [`pychar`]: Python's `str` character classes, which the official normalisation uses.

pub mod answers_view;
pub mod pychar;
pub mod qa;
pub mod qa_items;
