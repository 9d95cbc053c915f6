//! `stats mcq compare A B C …`: three or more results files — each file's scores, every
//! pair's deltas and McNemar tests adjusted over the pairs
//! ([`ragstats_core::mcq::leaderboard`]).

use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::mcq::leaderboard::{leaderboard_clustered, LeaderboardReport};
use ragstats_core::mcq::score::scored_items;
use ragstats_core::table::Cell;
use serde_json::Value;

use super::super::boot::{ci, csv_f64, load_results, percent};
use super::Args;
use crate::cmd::common::Table;
use crate::cmd::render::{Finished, Rendered};
use crate::cmd::UsageError;

/// What `stats mcq compare` found for three or more files.
pub struct LeaderboardOutput {
    pub report: LeaderboardReport,
}

/// Loads every file and runs the leaderboard.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    if a.plot.is_some() {
        return Err(UsageError(
            "--plot draws two files' comparison; with three or more files use --format json".into(),
        )
        .into());
    }
    let settings = a.boot.settings()?;
    let (items, clusters) = a.boot.load_items()?;
    let paths: Vec<&std::path::PathBuf> = [&a.a, &a.b].into_iter().chain(&a.more).collect();
    let mut files = Vec::with_capacity(paths.len());
    let mut rows = 0;
    for p in &paths {
        let results = load_results(p, items.as_ref())?;
        rows = rows.max(scored_items(
            &results,
            settings.failures,
            &p.display().to_string(),
        )?);
        files.push((p.display().to_string(), results));
    }
    // The engine is sized by the largest bootstrap; every one of the k + k(k-1)/2 runs on it.
    let report = a.boot.with_engine(rows, |engine, progress| {
        Ok(leaderboard_clustered(
            &files,
            &settings,
            clusters.as_ref(),
            engine,
            progress,
        )?)
    })?;
    let inputs = ragstats_core::document::Inputs::new()
        .with_all("results", paths.iter().map(|p| p.display()));
    Ok(Finished::new(
        "mcq compare",
        inputs,
        LeaderboardOutput { report },
    ))
}

impl Rendered for LeaderboardOutput {
    fn text(&self) -> String {
        let r = &self.report;
        let pct = format!("{} CI", percent(r.settings.resampling.confidence));
        let mut out = format!(
            "{} results files; every pair compared; McNemar p adjusted over the {} pairs (Holm, BH); {} replicates on {}\n\n",
            r.systems.len(),
            r.pairs.len(),
            r.settings.resampling.replicates,
            r.backend
        );
        let (em_h, f1_h) = (format!("EM {pct}"), format!("F1 {pct}"));
        let mut t = Table::new(&[
            "file", "model", "prompt", "level", "name", "items", "EM", &em_h, "F1", &f1_h,
        ]);
        for s in &r.systems {
            for l in &s.scores {
                t.row([
                    Cell::text(&s.file),
                    Cell::text(&s.side.model),
                    Cell::text(&s.side.prompt),
                    Cell::text(l.level),
                    Cell::text(&l.name),
                    Cell::Count(l.items as u64),
                    Cell::num(l.em.estimate),
                    // Raw: `[lo, hi]` is two numbers in one cell.
                    Cell::Raw(ci(&l.em)),
                    Cell::num(l.f1.estimate),
                    Cell::Raw(ci(&l.f1)),
                ]);
            }
        }
        out.push_str(&t.to_text());
        let dh = format!("ΔF1 {pct}");
        out.push_str("\nPairs b − a (overall and per task): deltas, paired F1 intervals\n");
        let mut t = Table::new(&["a", "b", "level", "name", "items", "ΔEM", "ΔF1", &dh]);
        for p in &r.pairs {
            for d in p.deltas.iter().filter(|d| d.delta.level != "group") {
                let l = &d.delta;
                t.row([
                    Cell::text(&p.a),
                    Cell::text(&p.b),
                    Cell::text(l.level),
                    Cell::text(&l.name),
                    Cell::Count(l.items as u64),
                    Cell::num(l.em.estimate),
                    Cell::num(l.f1.estimate),
                    Cell::Raw(ci(&l.f1)),
                ]);
            }
        }
        out.push_str(&t.to_text());
        // With clusters, the cluster-adjusted test (whose p is the one adjusted) follows the
        // exact p.
        let clustered = r.clusters.is_some();
        match &r.clusters {
            Some(c) => {
                out.push_str(&super::super::boot::cluster_lines(c));
                out.push_str("\nMcNemar on EM per group and overall: exact p, and the cluster-adjusted test, whose p decides and is adjusted over the pairs: Obuchowski 1998 with at least 20 clusters, else (or where its variance is 0) the exact sign test over clusters (cluster-sign)\n");
            }
            None => out.push_str(
                "\nMcNemar exact test on EM per group and overall, adjusted over the pairs\n",
            ),
        }
        let mut cols = vec!["a", "b", "group", "pairs", "a only", "b only"];
        if clustered {
            cols.extend(["p exact", "test", "p cluster"]);
        } else {
            cols.push("p");
        }
        cols.extend(["p(Holm)", "q(BH)"]);
        let mut t = Table::new(&cols);
        for p in &r.pairs {
            for m in &p.mcnemar {
                let mut row = vec![
                    Cell::text(&p.a),
                    Cell::text(&p.b),
                    Cell::text(&m.test.group),
                    Cell::Count(m.test.pairs as u64),
                    Cell::Count(m.test.a_only),
                    Cell::Count(m.test.b_only),
                    Cell::num(m.test.p),
                ];
                if clustered {
                    let c = m.test.cluster.as_ref();
                    row.extend([
                        c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)),
                        c.map_or(Cell::Missing, |c| Cell::num(c.cluster_p)),
                    ]);
                }
                row.extend([Cell::num(m.p_holm), Cell::num(m.q_bh)]);
                t.row(row);
            }
        }
        out.push_str(&t.to_text());
        out
    }

    /// One row per pair and McNemar level: the test and its adjusted p-values, with the
    /// overall deltas of the pair.
    fn csv(&self) -> Table {
        let clustered = self.report.clusters.is_some();
        let mut cols = vec![
            "a", "b", "group", "pairs", "a_only", "b_only", "p", "p_holm", "q_bh",
        ];
        if clustered {
            cols.extend(["cluster_test", "cluster_p"]);
        }
        let mut t = Table::new(&cols);
        for p in &self.report.pairs {
            for m in &p.mcnemar {
                let mut row = vec![
                    Cell::text(&p.a),
                    Cell::text(&p.b),
                    Cell::text(&m.test.group),
                    Cell::Count(m.test.pairs as u64),
                    Cell::Count(m.test.a_only),
                    Cell::Count(m.test.b_only),
                    csv_f64(m.test.p),
                    csv_f64(m.p_holm),
                    csv_f64(m.q_bh),
                ];
                if clustered {
                    let c = m.test.cluster.as_ref();
                    row.push(c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)));
                    row.push(c.map_or(Cell::Missing, |c| csv_f64(c.cluster_p)));
                }
                t.row(row);
            }
        }
        t
    }

    fn body(&self) -> Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}
