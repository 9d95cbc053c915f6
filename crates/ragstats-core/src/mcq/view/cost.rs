//! The MCQ ledger costs' view (`mcq cost`): one table (`costs`) of items, groups, tasks, runs
//! and the overall sums, and its notes; the CSV is the same table, every digit.

use crate::mcq::ledger_costs::{McqCostReport, McqCostRow};
use crate::table::{Cell, Span, Table, ToView, View};

const HEAD: [&str; 8] = [
    "level",
    "name",
    "calls",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "tokens_per_call",
    "usd",
];

/// One row of the table: counts as counts, `tokens_per_call` and `usd` as numbers (text
/// shows them at the default precision, CSV every digit).
fn cells(r: &McqCostRow, text: bool) -> Vec<Cell> {
    vec![
        Cell::text(r.level),
        // Raw: the names of `run` rows (run indices) have always been right-aligned in
        // the text table, as numbers, among the item, group and task names.
        Cell::Raw(r.name.clone()),
        Cell::Count(r.calls),
        Cell::Count(r.input_tokens),
        Cell::Count(r.cached_input_tokens),
        Cell::Count(r.output_tokens),
        Cell::num(r.tokens_per_call),
        match (r.usd, text) {
            (Some(usd), _) => Cell::num(usd),
            // Without prices the text table leaves the fees blank, not `-`.
            (None, true) => Cell::Raw(String::new()),
            (None, false) => Cell::Missing,
        },
    ]
}

impl ToView for McqCostReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut csv = Table::new(&HEAD);
        for row in &r.rows {
            csv.row(cells(row, false));
        }
        let mut t = Table::new(&HEAD);
        for row in &r.rows {
            t.row(cells(row, true));
        }
        let mut v = View::new(csv);
        v.table("costs", t);
        let mut out = String::new();
        let unknown = r.rows.last().map_or(0, |o| o.unknown_token_rows);
        if unknown > 0 {
            out.push_str(&format!("note: {unknown} row(s) had unknown (null) token counts and were billed as 0 tokens\n"));
        }
        if r.other_rows > 0 {
            out.push_str(&format!(
                "note: {} row(s) without an `item` field (not from `mcq run`) were left out\n",
                r.other_rows
            ));
        }
        v.text(out);
        if !r.priced {
            v.text_naming(vec![
                Span::text("fees: give "),
                Span::setting("prices", "FILE"),
                Span::text(" (see docs/ledger.md) for USD\n"),
            ]);
        }
        v
    }
}
