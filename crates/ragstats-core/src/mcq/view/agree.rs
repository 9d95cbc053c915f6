//! The view of `stats mcq agree`: agreement per task (table `tasks`), each item's
//! agreement and gold (table `items`), the items without a majority; the CSV is one row per
//! item with its gold and votes.

use super::super::agree::{AgreeReport, JACCARD_UNDEFINED};
use crate::table::{Cell, Table, ToView, View};

impl ToView for AgreeReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// The text blocks, appended to `v`.
fn blocks(r: &AgreeReport, v: &mut View) {
    let (s, rep) = (&r.settings, &r.agreement);
    let mut t = Table::new(&["task", "items", "mean pairwise Jaccard", "with majority"]);
    for r in &rep.rows {
        t.row([
            Cell::text(&r.name),
            Cell::Count(r.items as u64),
            Cell::num(r.jaccard),
            Cell::Count(r.with_majority as u64),
        ]);
    }
    v.table("tasks", t);
    let mut out = String::new();
    let undefined: Vec<&str> = rep
        .rows
        .iter()
        .filter(|r| r.undefined.is_some())
        .map(|r| r.name.as_str())
        .collect();
    if !undefined.is_empty() {
        out.push_str(&format!(
            "mean pairwise Jaccard of {}: {}\n",
            undefined.join(", "),
            Cell::undefined_because(JACCARD_UNDEFINED).display()
        ));
    }
    out.push('\n');
    let gold_head = if s.per_option {
        "gold (per option)"
    } else {
        "gold (majority)"
    };
    let mut t = Table::new(&["id", "task", "annotators", "jaccard", gold_head]);
    for i in &rep.items {
        t.row([
            // Raw: an id that reads as a number (`"id": 12`) has always been
            // right-aligned, and so has a gold of one numeric label (labels are free
            // without --items).
            Cell::Raw(i.id.clone()),
            i.task.map_or(Cell::Missing, |t| Cell::text(t.as_str())),
            Cell::Count(i.annotators as u64),
            Cell::opt_num(i.jaccard),
            Cell::Raw(match s.gold(i) {
                Some([]) => "{}".into(),
                Some(g) => g.join(","),
                None => "no majority".into(),
            }),
        ]);
    }
    v.text(out);
    v.table("items", t);
    if !s.per_option && !rep.no_majority.is_empty() {
        v.text(format!(
            "\nno majority (resolve by discussion): {}\n",
            rep.no_majority.join(", ")
        ));
    }
}

/// One row per item: its task, annotators, Jaccard, gold (`NA` without a majority) and votes.
fn csv(r: &AgreeReport) -> Table {
    let (s, rep) = (&r.settings, &r.agreement);
    let mut t = Table::new(&["id", "task", "annotators", "jaccard", "gold", "votes"]);
    for i in &rep.items {
        t.row([
            Cell::text(&i.id),
            i.task.map_or(Cell::Missing, |t| Cell::text(t.as_str())),
            Cell::Count(i.annotators as u64),
            Cell::opt_num(i.jaccard),
            // `NA`, not an empty cell: no majority is an answer of its own, and an
            // empty cell is the empty gold set.
            Cell::text(
                s.gold(i)
                    .map(|g| g.join(" "))
                    .unwrap_or_else(|| "NA".into()),
            ),
            Cell::Count(i.votes as u64),
        ]);
    }
    t
}
