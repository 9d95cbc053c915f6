//! `stats run`: the budget paper's agentic RAG pipeline (§3, Appendices A–C), from a
//! question file to a panel, a trajectory log and a cost ledger.
//!
//! For each question and trajectory a planner writes one query per step (the first step
//! shared by both planners, [`pipeline::Arm`]), a search backend answers each query, two
//! selectors ([`packets`]) build five-document packets from the pooled result lists, and a
//! reader answers from each packet R times; answers are scored with the official
//! HotpotQA/MuSiQue EM and F1 ([`ragstats_core::qa_scoring`]). [`audit`] computes the Appendix C
//! checks from the trajectory log. Every decision the paper leaves open is in docs/run.md.
//!
//! * [`prompt`]: message templates (App. A) and reply parsing.
//! * [`packets`]: the candidate pool and the RRF and RR selectors (App. B).
//! * [`cells`]: which questions, with which T and R, in which order; the dry-run bound.
//! * [`pipeline`]: the calls, in a deterministic, resumable order.
//! * [`log`]: the outputs (`trajectories.jsonl`, `panel.csv`, `ledger.jsonl`).
//! * [`audit`]: `stats run-audit`.
//! * [`setup`]: the checks, dry-run report and end counts around the pipeline.
//! * [`shard`]: `--shard K/N` and `stats run merge` (docs/scale.md).
//! * [`until`]: `--until`: waves, the confidence sequence after each, and the stop.

pub mod audit;
pub mod audit_view;
pub mod cells;
pub mod log;
pub mod packets;
pub mod pipeline;
pub mod prompt;
pub mod setup;
pub mod shard;
pub mod until;

pub use packets::Selector;
pub use pipeline::{Arm, Progress, RunSpec, Searched, Searcher};
