//! The view of `stats mcq filter`: the counts line, the dropped lines (table `dropped`),
//! and where the kept items and the report went; the CSV is one row per dropped line.

use super::super::filter::FilterRun;
use crate::table::{Cell, Table, ToView, View};

impl ToView for FilterRun {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// The text blocks, appended to `v`.
fn blocks(run: &FilterRun, v: &mut View) {
    let r = &run.filter;
    let out = format!(
        "{} line(s): kept {}, dropped {} (format {}, difficulty {}); models: {}\n",
        r.items,
        r.kept.len(),
        r.dropped.len(),
        r.dropped_format,
        r.dropped_difficulty,
        r.models.join(", ")
    );
    let mut t = Table::new(&["line", "id", "reason", "detail"]);
    for d in &r.dropped {
        t.row([
            Cell::Count(d.line),
            // Raw: an id that reads as a number (`"id": 12`) has always been
            // right-aligned; a line without an id leaves the cell blank (not `-`).
            Cell::Raw(d.id.clone().unwrap_or_default()),
            Cell::text(d.reason),
            Cell::text(&d.detail),
        ]);
    }
    v.text(out);
    v.table("dropped", t);
    v.text(format!(
        "kept: {}; report: {}\n",
        run.out.display(),
        run.report_file.display()
    ));
}

/// One row per dropped line: why, the models, and whether their agreed answer was the gold.
fn csv(run: &FilterRun) -> Table {
    let mut t = Table::new(&["line", "id", "reason", "detail", "models", "agreed_is_gold"]);
    for d in &run.filter.dropped {
        t.row([
            Cell::Count(d.line),
            d.id.as_deref().map_or(Cell::Missing, Cell::text),
            Cell::text(d.reason),
            Cell::text(&d.detail),
            Cell::text(d.models.join(" ")),
            d.agreed_is_gold
                .map_or(Cell::Missing, |b| Cell::text(b.to_string())),
        ]);
    }
    t
}
