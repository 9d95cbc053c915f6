//! Writing simulated panels and ledgers (CSV or JSONL). Kept apart from the models so the
//! models do no I/O.

use std::io::Write;

use super::model::SimRow;
use crate::ledger::LedgerRow;

/// Writes the panel as CSV with header `dataset,question,trajectory,read,arm,<metric>,em`.
/// Numbers use Rust's shortest round-trip formatting, so reading them back gives the same
/// `f64`s.
///
/// # Errors
/// Any error of the underlying writer.
pub fn write_panel_csv<W: Write>(rows: &[SimRow], metric: &str, w: W) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(w);
    w.write_record([
        "dataset",
        "question",
        "trajectory",
        "read",
        "arm",
        metric,
        "em",
    ])?;
    for r in rows {
        w.write_record([
            r.dataset.as_str(),
            &r.question,
            &r.trajectory.to_string(),
            &r.read.to_string(),
            &r.arm,
            &r.f1.to_string(),
            &r.em.to_string(),
        ])?;
    }
    w.flush()
}

/// Writes the panel as JSONL, one object per read with the same fields as the CSV.
///
/// # Errors
/// Any error of the underlying writer.
pub fn write_panel_jsonl<W: Write>(rows: &[SimRow], metric: &str, mut w: W) -> std::io::Result<()> {
    for r in rows {
        let mut v = serde_json::json!({
            "dataset": r.dataset, "question": r.question, "trajectory": r.trajectory,
            "read": r.read, "arm": r.arm, "em": r.em,
        });
        v[metric] = serde_json::json!(r.f1);
        serde_json::to_writer(&mut w, &v)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// Writes the ledger as JSONL, one [`LedgerRow`] per line.
///
/// # Errors
/// Any error of the underlying writer.
pub fn write_ledger_jsonl<W: Write>(rows: &[LedgerRow], mut w: W) -> std::io::Result<()> {
    for r in rows {
        serde_json::to_writer(&mut w, r)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}
