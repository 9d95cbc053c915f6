//! The consistency report's view (`stats consistency`): the groups table (`groups`, the
//! rate as a percentage) and the one-read SE ratio; the CSV is the groups table with the
//! rate as a number.

use super::consistency::ConsistencyReport;
use crate::table::{fixed, percent, Cell, Table, ToView, View};

/// One row per group: cells, disagreeing cells, the rate, and the one-read SE (`-` for a
/// group that was not compared); `rate` is the rate cell (a percentage in text).
fn rows(r: &ConsistencyReport, rate: impl Fn(f64) -> Cell) -> Vec<Vec<Cell>> {
    r.disagreement
        .iter()
        .map(|d| {
            let se = r
                .precision
                .iter()
                .find(|p| p.group == d.group)
                .map_or(Cell::Missing, |p| Cell::num(p.one_read_se));
            vec![
                // As given: a group value that reads as a number is aligned like one.
                Cell::Raw(d.group.clone()),
                Cell::Count(d.cells as u64),
                Cell::Count(d.disagreeing as u64),
                rate(d.rate),
                se,
            ]
        })
        .collect()
}

impl ToView for ConsistencyReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut t = Table::new(&[r.by.as_str(), "cells", "disagreeing", "rate", "one-read SE"]);
        // A percentage is text (left-aligned), as it always was.
        for row in rows(r, |rate| Cell::text(format!("{:.2}%", 100.0 * rate))) {
            t.row(row);
        }
        let mut v = View::new(csv(r));
        v.table("groups", t);
        if let (Some(ratio), Some(defined)) = (&r.se_ratio, r.ratio()) {
            let value = defined.text(|v| {
                format!(
                    "{v:.3} [{}, {}]",
                    fixed(ratio.ci[0], 3),
                    fixed(ratio.ci[1], 3)
                )
            });
            v.text(format!(
                "\none-read SE ratio {}/{} = {value} ({} bootstrap, {} replicates on {} ({}), {})\n",
                ratio.numerator,
                ratio.denominator,
                percent(r.confidence),
                r.replicates,
                r.backend,
                r.adapter,
                if ratio.paired {
                    "paired on questions"
                } else {
                    "groups hold different questions: unpaired"
                }
            ));
        }
        v
    }
}

/// The groups table with the rate as a number.
fn csv(r: &ConsistencyReport) -> Table {
    let mut t = Table::new(&["group", "cells", "disagreeing", "rate", "one_read_se"]);
    // Rust's own digits for the rate, as always: CSV writes a number's shortest form,
    // and a rate (disagreeing / cells ≥ 1) is always finite.
    for row in rows(r, Cell::num) {
        t.row(row);
    }
    t
}
