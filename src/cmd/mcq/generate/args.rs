//! The flags of `stats mcq generate`.

use std::path::PathBuf;

use crate::cmd::batch::BatchPolicy;
use crate::cmd::endpoint::Endpoint;

/// Flags of `stats mcq generate`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::GENERATE_MAX_TOKENS)))]
pub struct Args {
    /// Trajectory log (`trajectories.jsonl` of `stats run`; docs/mcqgen.md).
    pub trajectories: PathBuf,
    /// `all`, or a comma list of evidence_extraction, noise_robustness (abstain; reliability
    /// too with --credibility), planning, grounded_reasoning. Only the last two call the model.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub tasks: Vec<String>,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// CSV `pattern,label` (label credible | less_credible) rating URL or domain patterns;
    /// reliability items are built only with it.
    #[arg(long, value_name = "CSV")]
    pub credibility: Option<PathBuf>,
    /// Selector whose reads decide correctness (and whose packet grounded-reasoning items
    /// use) [default: the first selector in the log].
    #[arg(long)]
    pub selector: Option<String>,
    /// Items JSONL to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Generation responses JSONL, the resume state [default: <out stem>.responses.jsonl].
    #[arg(long)]
    pub responses: Option<PathBuf>,
    /// What did not become an item, with the reason [default: <out stem>.skipped.jsonl].
    #[arg(long)]
    pub skipped: Option<PathBuf>,
    #[command(flatten)]
    pub policy: BatchPolicy,
}
