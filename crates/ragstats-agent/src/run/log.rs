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
/// in trajectory-log order. Scores are written in Rust's shortest round-trip form. When any
/// question has a cluster ([`Trajectory::cluster`]) a `cluster` column follows `arm` (as
/// `stats import` places it)
/// (empty for a question without one), so `--cluster cluster` analyses the run clustered;
/// a run of questions without clusters writes the columns above, unchanged.
pub fn write_panel(w: &mut dyn Write, logs: &[Trajectory]) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    let io = |e: csv::Error| std::io::Error::other(e.to_string());
    let clustered = logs.iter().any(|t| t.cluster.is_some());
    let mut header = vec!["dataset", "question", "trajectory", "read", "arm"];
    if clustered {
        header.push("cluster");
    }
    header.extend(["selector", "f1", "em", "answer"]);
    csv.write_record(&header).map_err(io)?;
    for t in logs {
        let dataset = dataset_name(t.dataset);
        for r in &t.reads {
            let (trajectory, read) = (t.trajectory.to_string(), r.read.to_string());
            let (f1, em) = (r.f1.to_string(), r.em.to_string());
            let mut row = vec![
                dataset,
                t.question_id.as_str(),
                trajectory.as_str(),
                read.as_str(),
                t.arm.as_str(),
            ];
            if clustered {
                row.push(t.cluster.as_deref().unwrap_or(""));
            }
            row.extend([
                r.selector.as_str(),
                f1.as_str(),
                em.as_str(),
                r.answer.as_str(),
            ]);
            csv.write_record(&row).map_err(io)?;
        }
    }
    csv.flush()
}

/// The dataset's name in the panel's `dataset` column (the panel's strata).
pub fn dataset_name(d: Dataset) -> &'static str {
    match d {
        Dataset::Hotpotqa => "hotpotqa",
        Dataset::Musique => "musique",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::trajlog::Read;

    fn log(question: &str, cluster: Option<&str>, em: f64) -> Trajectory {
        Trajectory {
            run: "r".into(),
            question_id: question.into(),
            dataset: Dataset::Musique,
            question: "?".into(),
            answers: vec!["a".into()],
            supporting: vec![],
            cluster: cluster.map(Into::into),
            arm: "open".into(),
            trajectory: 1,
            model: "m".into(),
            steps: vec![],
            packets: Default::default(),
            reads: vec![Read {
                selector: "rrf".into(),
                read: 0,
                reader_messages: vec![],
                reader_text: "Answer: a, b".into(),
                answer: "a, b".into(),
                em,
                f1: 0.5,
                failure: None,
                truncated: false,
            }],
        }
    }

    fn panel(logs: &[Trajectory]) -> String {
        let mut out = Vec::new();
        write_panel(&mut out, logs).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_cluster_column_is_written_only_when_a_question_has_one() {
        assert_eq!(
            panel(&[log("q1", None, 1.0)]),
            "dataset,question,trajectory,read,arm,selector,f1,em,answer\n\
             musique,q1,1,0,open,rrf,0.5,1,\"a, b\"\n"
        );
        // A question without a cluster in a clustered run gets an empty cell, which
        // `--cluster cluster` then refuses by its line.
        assert_eq!(
            panel(&[log("q1", Some("Tennessee"), 1.0), log("q2", None, 0.0)]),
            "dataset,question,trajectory,read,arm,cluster,selector,f1,em,answer\n\
             musique,q1,1,0,open,Tennessee,rrf,0.5,1,\"a, b\"\n\
             musique,q2,1,0,open,,rrf,0.5,0,\"a, b\"\n"
        );
    }
}
