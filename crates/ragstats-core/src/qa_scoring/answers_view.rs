//! The answer scores' view (`stats score-answers`): the per-item table when every item was
//! kept, then the summary line; the CSV has one header for both kinds of row.

use super::qa_items::AnswerReport;
use crate::table::{Cell, Precision, Table, ToView, View};

impl ToView for AnswerReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        v.text(text(self));
        v
    }
}

/// The text output, padded by hand (see below).
fn text(r: &AnswerReport) -> String {
    let (summary, items) = (&r.summary, r.items.as_deref());
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
fn csv(r: &AnswerReport) -> Table {
    let summary = &r.summary;
    let style = || Cell::text(summary.style.name());
    let every_digit = |v: f64| Cell::Num(v, Precision::Shortest);
    let mut t = Table::new(&["id", "style", "n", "em", "f1"]);
    for it in r.items.as_deref().unwrap_or(&[]) {
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
