//! The view of `mcq compare A B C …` (three or more results files): each file's scores
//! (`scores`), every pair's deltas (`pairs`), the tests of ΔEM adjusted over the pairs
//! (`tests`) and with McNemar its table (`mcnemar`); the CSV is one row per pair and level.

use super::compare::{
    mcnemar_heading, test_csv_cells, tests_heading, MCNEMAR_CLUSTER_HEADING, TEST_COLUMNS,
};
use super::{ci, cluster_lines, csv_f64, percent};
use crate::mcq::leaderboard::LeaderboardReport;
use crate::table::{Cell, Span, Table, ToView, View};

impl ToView for LeaderboardReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut v = View::new(csv(r));
        let pct = format!("{} CI", percent(r.settings.resampling.confidence));
        let out = format!(
            "{} results files; every pair compared; the tests' p adjusted over the {} pairs (Holm, BH); {} replicates on {}\n\n",
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
        v.text(out).table("scores", t);
        let dh = format!("ΔF1 {pct}");
        v.text("\nPairs b − a (overall and per task): deltas, paired F1 intervals\n");
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
        v.table("pairs", t);
        let mut out = String::new();
        let clustered = r.clusters.is_some();
        if let Some(c) = &r.clusters {
            out.push_str(&cluster_lines(c));
        }
        let confidence = r.settings.resampling.confidence;
        out.push_str(&tests_heading(clustered, confidence));
        out.push_str("Overall and per task; p adjusted over the pairs (Holm, BH); favours: the file the difference favours where p(Holm) < α\n");
        let mut t = Table::new(&[
            "a", "b", "level", "name", "clusters", "test", "ΔEM", "SE", "df", "p", "p(Holm)",
            "q(BH)", "favours",
        ]);
        for p in &r.pairs {
            for x in p.tests.iter().filter(|x| x.test.level != "group") {
                t.row([
                    Cell::text(&p.a),
                    Cell::text(&p.b),
                    Cell::text(x.test.level),
                    Cell::text(&x.test.name),
                    Cell::Count(x.test.clusters as u64),
                    Cell::text(x.test.test),
                    Cell::num(x.test.estimate),
                    Cell::opt_num(x.test.se),
                    Cell::opt_num(x.test.df),
                    Cell::num(x.test.p),
                    Cell::num(x.p_holm),
                    Cell::num(x.q_bh),
                    x.favours_holm.map_or(Cell::Missing, |f| {
                        Cell::text(if f == "B" { &p.b } else { &p.a })
                    }),
                ]);
            }
        }
        v.text(out).table("tests", t);
        let mut out = String::new();
        for p in &r.pairs {
            for n in &p.test_notes {
                out.push_str(&format!("note: {} vs {}: {n}\n", p.a, p.b));
            }
        }
        v.text(out);
        if r.pairs.iter().any(|p| p.mcnemar.is_some()) {
            let mut heading = mcnemar_heading();
            if clustered {
                heading.push(Span::text(MCNEMAR_CLUSTER_HEADING));
                heading.push(Span::text("; its p is the one adjusted"));
            }
            heading.push(Span::text("; adjusted over the pairs\n"));
            v.text_naming(heading);
            let mut cols = vec!["a", "b", "group", "pairs", "a only", "b only"];
            if clustered {
                cols.extend(["p exact", "mid-p", "test", "p cluster"]);
            } else {
                cols.extend(["p", "mid-p"]);
            }
            cols.extend(["p(Holm)", "q(BH)"]);
            let mut t = Table::new(&cols);
            for p in &r.pairs {
                for m in p.mcnemar.iter().flatten() {
                    let mut row = vec![
                        Cell::text(&p.a),
                        Cell::text(&p.b),
                        Cell::text(&m.test.group),
                        Cell::Count(m.test.pairs as u64),
                        Cell::Count(m.test.a_only),
                        Cell::Count(m.test.b_only),
                        Cell::num(m.test.p),
                        Cell::num(m.test.p_mid),
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
            v.table("mcnemar", t);
        }
        v
    }
}

/// One row per pair and level (group, task, overall): the test of ΔEM and its adjusted
/// p-values; with McNemar, its columns on the group and overall rows.
fn csv(r: &LeaderboardReport) -> Table {
    let clustered = r.clusters.is_some();
    let mcnemar = r.pairs.iter().any(|p| p.mcnemar.is_some());
    let mut cols = vec!["a", "b", "level", "name", "items", "delta_em"];
    cols.extend(TEST_COLUMNS);
    cols.extend(["p_holm", "q_bh", "favours_holm"]);
    if mcnemar {
        cols.extend([
            "mcnemar_a_only",
            "mcnemar_b_only",
            "mcnemar_p",
            "mcnemar_mid_p",
        ]);
        if clustered {
            cols.extend(["mcnemar_cluster_test", "mcnemar_cluster_p"]);
        }
        cols.extend(["mcnemar_p_holm", "mcnemar_q_bh"]);
    }
    let mut t = Table::new(&cols);
    for p in &r.pairs {
        for x in &p.tests {
            let mut row = vec![
                Cell::text(&p.a),
                Cell::text(&p.b),
                Cell::text(x.test.level),
                Cell::text(&x.test.name),
                Cell::Count(x.test.items as u64),
                csv_f64(x.test.estimate),
            ];
            row.extend(test_csv_cells(Some(&x.test)));
            row.extend([
                csv_f64(x.p_holm),
                csv_f64(x.q_bh),
                x.favours_holm.map_or(Cell::Missing, Cell::text),
            ]);
            if mcnemar {
                let m = p
                    .mcnemar
                    .iter()
                    .flatten()
                    .find(|m| x.test.level != "task" && m.test.group == x.test.name);
                row.extend([
                    m.map_or(Cell::Missing, |m| Cell::Count(m.test.a_only)),
                    m.map_or(Cell::Missing, |m| Cell::Count(m.test.b_only)),
                    m.map_or(Cell::Missing, |m| csv_f64(m.test.p)),
                    m.map_or(Cell::Missing, |m| csv_f64(m.test.p_mid)),
                ]);
                if clustered {
                    let c = m.and_then(|m| m.test.cluster.as_ref());
                    row.push(c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)));
                    row.push(c.map_or(Cell::Missing, |c| csv_f64(c.cluster_p)));
                }
                row.extend([
                    m.map_or(Cell::Missing, |m| csv_f64(m.p_holm)),
                    m.map_or(Cell::Missing, |m| csv_f64(m.q_bh)),
                ]);
            }
            t.row(row);
        }
    }
    t
}
