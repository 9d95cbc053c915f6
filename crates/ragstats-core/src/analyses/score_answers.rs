//! `score-answers`: answer EM and token F1 as the official HotpotQA, SQuAD v1.1 and MuSiQue
//! scripts compute them ([`crate::qa_scoring::qa_items::score_answers`]).

use super::source_input;
use crate::document::{Finished, Inputs};
use crate::panel::Source;
use crate::qa_scoring::qa_items::{read_items, AnswerSettings};
use crate::{Error, Result};

/// The scores of the answers `answers` holds (JSON lines, or a table of the same fields:
/// `id`, `prediction`, `answers` or `answer` + `answer_aliases`).
///
/// # Errors
/// Those of reading the answers; [`Error::Input`] when there are none (EM and F1 of nothing
/// are undefined).
pub fn score_answers(answers: &Source, settings: &AnswerSettings) -> Result<Finished> {
    let items = read_items(answers)?;
    if items.is_empty() {
        return Err(Error::input(
            answers.name(),
            None,
            "holds no answers to score (EM and F1 of nothing are undefined)",
        ));
    }
    let report = crate::qa_scoring::qa_items::score_answers(&items, settings)?;
    let inputs = source_input(Inputs::new(), "answers", answers);
    Ok(Finished::new("score-answers", inputs, report))
}
