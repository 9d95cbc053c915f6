//! The text, CSV and JSON of `stats mcq compare`.

use ragstats_core::table::Cell;
use serde_json::{json, Value};

use super::super::boot::{ci, percent};
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
                Cell::Raw(ci(&l.em)),
                Cell::num(x[1]),
                Cell::num(y[1]),
                Cell::num(l.f1.estimate),
                Cell::Raw(ci(&l.f1)),
            ]);
        }
        out.push_str(&t.to_text());
        out.push_str("\nMcNemar exact test on EM over (id, run) pairs\n");
        let mut t = Table::new(&["group", "pairs", "A only", "B only", "p"]);
        for m in &r.mcnemar {
            t.row([
                Cell::text(&m.group),
                Cell::Count(m.pairs as u64),
                Cell::Count(m.a_only),
                Cell::Count(m.b_only),
                Cell::num(m.p),
            ]);
        }
        out.push_str(&t.to_text());
        out
    }

    /// One row per level with both sides, the deltas and McNemar; numbers in Rust's
    /// `to_string` form (a side without the level is `NaN`).
    fn csv(&self) -> Table {
        let r = &self.report;
        let mut t = Table::new(&[
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
        ]);
        for d in &r.deltas {
            let (x, y, l) = (d.a, d.b, &d.delta);
            let m = r.mcnemar.iter().find(|m| m.group == l.name);
            t.row([
                l.level.to_string(),
                l.name.clone(),
                l.items.to_string(),
                x[0].to_string(),
                y[0].to_string(),
                l.em.estimate.to_string(),
                l.em.ci[0].to_string(),
                l.em.ci[1].to_string(),
                x[1].to_string(),
                y[1].to_string(),
                l.f1.estimate.to_string(),
                l.f1.ci[0].to_string(),
                l.f1.ci[1].to_string(),
                m.map(|m| m.a_only.to_string()).unwrap_or_default(),
                m.map(|m| m.b_only.to_string()).unwrap_or_default(),
                m.map(|m| m.p.to_string()).unwrap_or_default(),
            ]);
        }
        t
    }

    fn body(&self) -> Value {
        let r = &self.report;
        let (s, b) = (&r.settings, &r.settings.resampling);
        json!({
            "a": {"file": self.file_a.display().to_string(), "model": r.a.model, "prompt": r.a.prompt, "shuffle_seed": r.a.shuffle_seed},
            "b": {"file": self.file_b.display().to_string(), "model": r.b.model, "prompt": r.b.prompt, "shuffle_seed": r.b.shuffle_seed},
            "pairs": r.pairs, "unpaired_a": r.unpaired_a, "unpaired_b": r.unpaired_b,
            "failures": s.failures, "replicates": b.replicates, "seed": b.seed,
            "confidence": b.confidence, "backend": r.backend,
            "deltas": r.deltas.iter().map(|d| json!({
                "level": d.delta.level, "name": d.delta.name, "items": d.delta.items,
                "a": {"em": d.a[0], "f1": d.a[1]},
                "b": {"em": d.b[0], "f1": d.b[1]},
                "delta_em": d.delta.em, "delta_f1": d.delta.f1,
            })).collect::<Vec<_>>(),
            "mcnemar": r.mcnemar,
        })
    }
}
