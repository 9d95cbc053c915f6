//! The view of `stats mcq validate`: every violation as `FILE:LINE: …`, or the valid items
//! per group (table `groups`); the CSV is one row per violation.

use super::super::validate::ValidateReport;
use crate::table::{Cell, Table, ToView, View};

impl ToView for ValidateReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// The text blocks, appended to `v`.
fn blocks(r: &ValidateReport, v: &mut View) {
    if !r.violations.is_empty() {
        v.text(
            r.violations
                .iter()
                .map(|x| format!("{}\n", x.display(&r.source)))
                .collect::<String>(),
        );
        return;
    }
    v.text(format!(
        "{}: {} item(s), no violations\n",
        r.source.display(),
        r.valid_items
    ));
    let mut t = Table::new(&["group", "items"]);
    for (g, n) in &r.groups {
        t.row([Cell::text(g.as_str()), Cell::Count(*n as u64)]);
    }
    v.table("groups", t);
}

/// One row per violation: its line, item id, rule and message.
fn csv(r: &ValidateReport) -> Table {
    let mut t = Table::new(&["line", "id", "rule", "message"]);
    for v in &r.violations {
        t.row([
            Cell::Count(v.line),
            v.id.as_deref().map_or(Cell::Missing, Cell::text),
            Cell::text(v.rule),
            Cell::text(&v.message),
        ]);
    }
    t
}
