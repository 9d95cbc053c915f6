//! `stats score-answers`: answer EM and token F1 of a JSONL prediction file, with the
//! official HotpotQA, SQuAD v1.1 or MuSiQue rules (see `ragstats_core::qa_scoring::qa`).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::qa_scoring::qa::Style;
use ragstats_core::qa_scoring::qa_items::AnswerSettings;

use super::common::Format;
use super::render::Finished;

/// Flags of this command.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSONL file, one object per line: {"id", "prediction", "answers": [...]}, or
    /// {"id", "prediction", "answer", "answer_aliases": [...]} (MuSiQue style).
    pub input: PathBuf,
    /// Which official script's rules to apply.
    #[arg(long, value_enum, default_value_t = StyleArg::Hotpotqa)]
    pub style: StyleArg,
    /// Also print every item's EM and F1.
    #[arg(long)]
    pub per_item: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

flag_enum! {
    /// `--style`.
    pub enum StyleArg => Style {
        /// `hotpot_evaluate_v1.py`: yes/no/noanswer mismatch scores F1 = 0; empty vs empty F1 = 0.
        Hotpotqa,
        /// SQuAD v1.1 `evaluate-v1.1.py`: plain token F1; empty vs empty F1 = 0.
        Squad,
        /// MuSiQue `metrics/answer.py`: an empty side scores F1 = 1 if both are empty, else 0.
        Musique,
    }
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> AnswerSettings {
    AnswerSettings {
        style: args.style.into(),
        per_item: args.per_item,
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// What `stats score-answers` prints for `args`: the library's
/// [`ragstats_core::analyses::score_answers`].
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let answers = ragstats_core::panel::Source::file(&args.input);
    Ok(ragstats_core::analyses::score_answers(
        &answers,
        &settings(args),
    )?)
}
