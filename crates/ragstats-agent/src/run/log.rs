//! What a run writes: the trajectory log (`trajectories.jsonl`, the contract in
//! docs/run.md; its record type and reader are [`ragstats_core::trajlog`]), the panel (`panel.csv`) and the cost ledger (`ledger.jsonl`), each
//! rebuilt whole from the run's results and written atomically, so an interrupted and
//! resumed run writes the same bytes as an uninterrupted one.

use std::io::Write;
use std::path::Path;

use ragstats_core::io::write_atomic;
use ragstats_core::ledger::LedgerRow;
use ragstats_core::questions::Dataset;
use ragstats_core::trajlog::Trajectory;
use ragstats_core::Result;

/// Everything one run produced, in output order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutput {
    pub trajectories: Vec<Trajectory>,
    pub ledger: Vec<LedgerRow>,
}

/// Writes `dir/trajectories.jsonl`, `dir/panel.csv` and `dir/ledger.jsonl`, each atomically.
///
/// # Errors
/// [`ragstats_core::Error::Io`] naming the file that could not be written.
pub fn write_outputs(dir: &Path, out: &RunOutput) -> Result<()> {
    write_atomic(&dir.join("trajectories.jsonl"), |w| {
        for t in &out.trajectories {
            serde_json::to_writer(&mut *w, t)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    write_atomic(&dir.join("panel.csv"), |w| {
        write_panel(w, &out.trajectories)
    })?;
    write_atomic(&dir.join("ledger.jsonl"), |w| {
        for r in &out.ledger {
            serde_json::to_writer(&mut *w, r)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}

/// The panel: one row per read, columns `dataset,question,trajectory,read,arm,selector,f1,em,answer`,
/// in trajectory-log order. Scores are written in Rust's shortest round-trip form.
pub fn write_panel(w: &mut dyn Write, logs: &[Trajectory]) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    let io = |e: csv::Error| std::io::Error::other(e.to_string());
    csv.write_record([
        "dataset",
        "question",
        "trajectory",
        "read",
        "arm",
        "selector",
        "f1",
        "em",
        "answer",
    ])
    .map_err(io)?;
    for t in logs {
        let dataset = match t.dataset {
            Dataset::Hotpotqa => "hotpotqa",
            Dataset::Musique => "musique",
        };
        for r in &t.reads {
            csv.write_record([
                dataset,
                &t.question_id,
                &t.trajectory.to_string(),
                &r.read.to_string(),
                &t.arm,
                &r.selector,
                &r.f1.to_string(),
                &r.em.to_string(),
                &r.answer,
            ])
            .map_err(io)?;
        }
    }
    csv.flush()
}
