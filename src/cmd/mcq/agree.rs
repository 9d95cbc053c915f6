//! `stats mcq agree`: annotator agreement (pairwise Jaccard) and majority-vote gold. The
//! analysis is [`ragstats_core::mcq::agree::agree`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{mcq_agree, McqAgreeSettings};
use ragstats_core::panel::Source;

use crate::cmd::common::Format;
use crate::cmd::render::Finished;

/// Flags of `stats mcq agree`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Annotations JSONL: {"id", "annotator", "answer": [...]} per line.
    pub annotations: PathBuf,
    /// Items JSONL: groups agreement by task and checks ids and labels.
    #[arg(long)]
    pub items: Option<PathBuf>,
    /// Gold by option: an option is gold when more than half of the annotators chose it.
    #[arg(long)]
    pub per_option: bool,
    /// Write the gold answers ({"id", "answer", "method", "votes", "annotators"}) here.
    #[arg(long, value_name = "PATH")]
    pub gold_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq agree` prints for `a`: the library's [`mcq_agree`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let items = a.items.as_ref().map(Source::file);
    let settings = McqAgreeSettings {
        per_option: a.per_option,
        gold_out: a.gold_out.clone(),
    };
    Ok(mcq_agree(
        &Source::file(&a.annotations),
        items.as_ref(),
        &settings,
    )?)
}
