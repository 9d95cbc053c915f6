//! `stats score-answers`: answer EM and token F1 of a JSONL prediction file, with the
//! official HotpotQA, SQuAD v1.1 or MuSiQue rules (see `ragstats_core::qa_scoring::qa`).

use std::path::PathBuf;

use ragstats_core::qa_scoring::qa::Style;
use ragstats_core::qa_scoring::qa_items::{read_items, score_items, ItemScore, ScoreSummary};

use super::common::Format;

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

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<u8> {
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
    let (scores, summary) = score_items(&items, args.style.into());
    let per_item = args.per_item.then_some(scores.as_slice());
    out!("{}", render(&summary, per_item, args.format)?);
    Ok(0)
}

/// Formats the summary (and optionally the items) in the chosen format.
fn render(
    summary: &ScoreSummary,
    items: Option<&[ItemScore]>,
    format: Format,
) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::to_value(summary)?;
            if let Some(items) = items {
                v["items"] = serde_json::to_value(items)?;
            }
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Csv => {
            // One header for both kinds of row: items have n = 1; the summary row's id is
            // "(mean)" and comes last.
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(["id", "style", "n", "em", "f1"])?;
            for it in items.unwrap_or(&[]) {
                w.write_record([
                    it.id.as_str(),
                    summary.style.name(),
                    "1",
                    &it.em.to_string(),
                    &it.f1.to_string(),
                ])?;
            }
            w.write_record([
                "(mean)",
                summary.style.name(),
                &summary.n.to_string(),
                &summary.em.to_string(),
                &summary.f1.to_string(),
            ])?;
            String::from_utf8(w.into_inner()?)?
        }
        Format::Table => {
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
    })
}
