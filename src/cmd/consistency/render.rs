//! `stats consistency` as text and CSV (byte for byte as the command always printed them;
//! JSON: the report's serde form).

use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::table::Cell;

use super::super::common::{fixed, Table};
use super::super::render::Rendered;
use super::ConsistencyOutput;

impl ConsistencyOutput {
    /// One row per group: cells, disagreeing cells, the rate, and the one-read SE (`-` for a
    /// group that was not compared); `rate` is the rate cell (a percentage in text).
    fn rows(&self, rate: impl Fn(f64) -> Cell) -> Vec<Vec<Cell>> {
        let r = &self.report;
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
}

impl Rendered for ConsistencyOutput {
    fn text(&self) -> String {
        let mut t = Table::new(&[
            self.report.by.as_str(),
            "cells",
            "disagreeing",
            "rate",
            "one-read SE",
        ]);
        // A percentage is text (left-aligned), as it always was.
        for row in self.rows(|rate| Cell::text(format!("{:.2}%", 100.0 * rate))) {
            t.row(row);
        }
        let mut out = t.to_text();
        let r = &self.report;
        if let (Some(ratio), Some(defined)) = (&r.se_ratio, r.ratio()) {
            let value = defined.text(|v| {
                format!(
                    "{v:.3} [{}, {}]",
                    fixed(ratio.ci[0], 3),
                    fixed(ratio.ci[1], 3)
                )
            });
            out.push_str(&format!(
                "\none-read SE ratio {}/{} = {value} ({} bootstrap, {} replicates on {} ({}), {})\n",
                ratio.numerator,
                ratio.denominator,
                self.confidence.percent(),
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
        out
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&["group", "cells", "disagreeing", "rate", "one_read_se"]);
        // Rust's own digits for the rate, as always: CSV writes a number's shortest form,
        // and a rate (disagreeing / cells ≥ 1) is always finite.
        for row in self.rows(Cell::num) {
            t.row(row);
        }
        t
    }

    fn body(&self) -> serde_json::Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}
