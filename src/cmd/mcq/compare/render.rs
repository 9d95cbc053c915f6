//! The text, CSV and JSON of `stats mcq compare`.

use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::table::Cell;
use serde_json::Value;

use super::super::boot::{ci, csv_f64, percent};
use super::CompareOutput;
use crate::cmd::common::Table;
use crate::cmd::render::Rendered;

impl Rendered for CompareOutput {
    fn text(&self) -> String {
        let r = &self.report;
        let mut out = format!(
            "A = {} ({}), B = {} ({}); {} paired (id, run), unpaired A {} B {}; deltas B − A; {} replicates on {}\n",
            r.a.model,
            self.file_a.display(),
            r.b.model,
            self.file_b.display(),
            r.pairs,
            r.unpaired_a,
            r.unpaired_b,
            r.settings.resampling.replicates,
            r.backend
        );
        let pct = format!("{} CI", percent(r.settings.resampling.confidence));
        let (h1, h2) = (format!("ΔEM {pct}"), format!("ΔF1 {pct}"));
        let mut t = Table::new(&[
            "level", "name", "items", "EM A", "EM B", "ΔEM", &h1, "F1 A", "F1 B", "ΔF1", &h2,
        ]);
        for d in &r.deltas {
            let (x, y, l) = (d.a, d.b, &d.delta);
            t.row([
                Cell::text(l.level),
                Cell::text(&l.name),
                Cell::Count(l.items as u64),
                Cell::num(x[0]),
                Cell::num(y[0]),
                Cell::num(l.em.estimate),
                // Raw: `[lo, hi]` is two numbers in one cell.
                Cell::Raw(ci(&l.em)),
                Cell::num(x[1]),
                Cell::num(y[1]),
                Cell::num(l.f1.estimate),
                Cell::Raw(ci(&l.f1)),
            ]);
        }
        out.push_str(&t.to_text());
        // With clusters, the cluster-adjusted test's columns follow the exact p.
        let clustered = r.clusters.is_some();
        match &r.clusters {
            Some(c) => {
                out.push_str(&super::super::boot::cluster_lines(c));
                out.push_str(
                    "\nMcNemar on EM over (id, run) pairs: exact p, and the cluster-adjusted test, whose p decides: Obuchowski 1998 with at least 20 clusters, else (or where its variance is 0) the exact sign test over clusters (cluster-sign)\n",
                );
            }
            None => out.push_str("\nMcNemar exact test on EM over (id, run) pairs\n"),
        }
        let mut cols = vec![
            "group",
            "pairs",
            "A only",
            "B only",
            if clustered { "p exact" } else { "p" },
        ];
        if clustered {
            cols.extend(["clusters", "X²", "p Obuchowski", "test", "p cluster"]);
        }
        let mut t = Table::new(&cols);
        for m in &r.mcnemar {
            let mut row = vec![
                Cell::text(&m.group),
                Cell::Count(m.pairs as u64),
                Cell::Count(m.a_only),
                Cell::Count(m.b_only),
                Cell::num(m.p),
            ];
            if clustered {
                let c = m.cluster.as_ref();
                row.extend([
                    c.map_or(Cell::Missing, |c| Cell::Count(c.clusters as u64)),
                    c.and_then(|c| c.chi2).map_or(Cell::Missing, Cell::num),
                    c.and_then(|c| c.obuchowski_p)
                        .map_or(Cell::Missing, Cell::num),
                    c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)),
                    c.map_or(Cell::Missing, |c| Cell::num(c.cluster_p)),
                ]);
            }
            t.row(row);
        }
        out.push_str(&t.to_text());
        out
    }

    /// One row per level with both sides, the deltas and McNemar; numbers in Rust's
    /// `to_string` form (a side without the level is `NaN`).
    fn csv(&self) -> Table {
        let r = &self.report;
        let mut cols = vec![
            "level",
            "name",
            "items",
            "em_a",
            "em_b",
            "delta_em",
            "delta_em_lo",
            "delta_em_hi",
            "f1_a",
            "f1_b",
            "delta_f1",
            "delta_f1_lo",
            "delta_f1_hi",
            "mcnemar_a_only",
            "mcnemar_b_only",
            "mcnemar_p",
        ];
        // With clusters, the cluster-adjusted test (absent otherwise: the CSV of before).
        if r.clusters.is_some() {
            cols.extend(["mcnemar_cluster_test", "mcnemar_cluster_p"]);
        }
        let mut t = Table::new(&cols);
        for d in &r.deltas {
            let (x, y, l) = (d.a, d.b, &d.delta);
            let m = r.mcnemar.iter().find(|m| m.group == l.name);
            let mut row = vec![
                Cell::text(l.level),
                Cell::text(&l.name),
                Cell::Count(l.items as u64),
                csv_f64(x[0]),
                csv_f64(y[0]),
                csv_f64(l.em.estimate),
                csv_f64(l.em.ci[0]),
                csv_f64(l.em.ci[1]),
                csv_f64(x[1]),
                csv_f64(y[1]),
                csv_f64(l.f1.estimate),
                csv_f64(l.f1.ci[0]),
                csv_f64(l.f1.ci[1]),
                m.map_or(Cell::Missing, |m| Cell::Count(m.a_only)),
                m.map_or(Cell::Missing, |m| Cell::Count(m.b_only)),
                m.map_or(Cell::Missing, |m| csv_f64(m.p)),
            ];
            if r.clusters.is_some() {
                let c = m.and_then(|m| m.cluster.as_ref());
                row.push(c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)));
                row.push(c.map_or(Cell::Missing, |c| csv_f64(c.cluster_p)));
            }
            t.row(row);
        }
        t
    }

    /// The report's fields ([`ragstats_core::mcq::compare::CompareReport`]).
    fn body(&self) -> Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}
