//! `stats score-answers`: answer EM and token F1 of a JSONL prediction file, with the
//! official HotpotQA, SQuAD v1.1 or MuSiQue rules (see `ragstats_core::qa_scoring::qa`).

use std::path::PathBuf;

use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::qa_scoring::qa::Style;
use ragstats_core::qa_scoring::qa_items::{
    read_items, score_answers, AnswerReport, AnswerSettings,
};
use ragstats_core::table::{Cell, Precision};
use serde_json::Value;

use super::common::{Format, Table};
use super::render::{Finished, Rendered};

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

/// What `stats score-answers` found.
pub struct ScoreAnswersOutput {
    /// The analysis.
    pub report: AnswerReport,
}

/// Reads the predictions and scores them.
pub fn compute(args: &Args) -> anyhow::Result<ScoreAnswersOutput> {
    let items = read_items(&args.input)?;
    if items.is_empty() {
        // A mean over no answers is 0/0, not an EM of 0.
        return Err(ragstats_core::Error::input(
            &args.input,
            None,
            "holds no answers to score (EM and F1 of nothing are undefined)",
        )
        .into());
    }
    let settings = AnswerSettings {
        style: args.style.into(),
        per_item: args.per_item,
    };
    Ok(ScoreAnswersOutput {
        report: score_answers(&items, &settings)?,
    })
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// What `stats score-answers` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let inputs = ragstats_core::document::Inputs::new().with("answers", args.input.display());
    Ok(Finished::new("score-answers", inputs, compute(args)?))
}

impl Rendered for ScoreAnswersOutput {
    fn text(&self) -> String {
        let (summary, items) = (&self.report.summary, self.report.items.as_deref());
        let mut out = String::new();
        if let Some(items) = items {
            let width = items
                .iter()
                .map(|i| i.id.chars().count())
                .max()
                .unwrap_or(2)
                .max(2);
            // Padded by hand: a `{:<width$}` width of 65,536 or more panics in `format!`.
            let pad = |s: &str| format!("{s}{}", " ".repeat(width - s.chars().count()));
            out += &format!("{}  {:>6}  {:>6}\n", pad("id"), "EM", "F1");
            for it in items {
                out += &format!("{}  {:>6.4}  {:>6.4}\n", pad(&it.id), it.em, it.f1);
            }
            out += "\n";
        }
        out += &format!("{:<9}  {:>6}  {:>6}  {:>6}\n", "style", "n", "EM", "F1");
        out += &format!(
            "{:<9}  {:>6}  {:>6.4}  {:>6.4}\n",
            summary.style.name(),
            summary.n,
            summary.em,
            summary.f1
        );
        out
    }

    /// One header for both kinds of row: items have n = 1; the summary row's id is
    /// "(mean)" and comes last. EM and F1 with every digit (they are always finite).
    fn csv(&self) -> Table {
        let summary = &self.report.summary;
        let style = || Cell::text(summary.style.name());
        let every_digit = |v: f64| Cell::Num(v, Precision::Shortest);
        let mut t = Table::new(&["id", "style", "n", "em", "f1"]);
        for it in self.report.items.as_deref().unwrap_or(&[]) {
            t.row([
                Cell::text(it.id.as_str()),
                style(),
                Cell::Count(1),
                every_digit(it.em),
                every_digit(it.f1),
            ]);
        }
        t.row([
            Cell::text("(mean)"),
            style(),
            Cell::Count(summary.n as u64),
            every_digit(summary.em),
            every_digit(summary.f1),
        ]);
        t
    }

    /// The document body of [`AnswerReport`]: the summary's fields, with `items` when every
    /// item was kept.
    fn body(&self) -> Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}
