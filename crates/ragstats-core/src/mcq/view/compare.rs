//! The view of `mcq compare` of two results files: the deltas (`deltas`), the tests of ΔEM
//! (`tests`) and with McNemar its table (`mcnemar`); the CSV is one row per level. The
//! lines and cells the leaderboard shares with it are here too.

use super::{ci, cluster_lines, csv_f64, num, percent};
use crate::mcq::compare::CompareReport;
use crate::mcq::delta_test::DeltaTest;
use crate::table::{Cell, Span, Table, ToView, View};

/// The CSV columns of a level's test of ΔEM (the two-file and the leaderboard tables).
pub(super) const TEST_COLUMNS: [&str; 9] = [
    "test",
    "test_clusters",
    "test_se",
    "test_df",
    "test_t",
    "test_p",
    "test_lo",
    "test_hi",
    "favours",
];

impl ToView for CompareReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut v = View::new(csv(r));
        let out = format!(
            "A = {} ({}), B = {} ({}); {} paired (id, run), unpaired A {} B {}; deltas B − A; {} replicates on {}\n",
            r.a.model,
            r.files[0].display(),
            r.b.model,
            r.files[1].display(),
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
        v.text(out).table("deltas", t);
        let mut out = String::new();
        if let Some(c) = &r.clusters {
            out.push_str(&cluster_lines(c));
        }
        out.push_str(&tests_heading(
            r.clusters.is_some(),
            r.settings.resampling.confidence,
        ));
        let mut t = Table::new(&[
            "level",
            "name",
            "items",
            "clusters",
            "test",
            "ΔEM",
            "SE",
            "df",
            "t",
            "p",
            &format!("{} CI (t)", percent(r.settings.resampling.confidence)),
            "favours",
        ]);
        for x in &r.tests {
            t.row(test_cells(x));
        }
        v.text(out).table("tests", t);
        v.text(
            r.test_notes
                .iter()
                .map(|n| format!("note: {n}\n"))
                .collect::<String>(),
        );
        if let Some(mcnemar) = &r.mcnemar {
            // With clusters, the cluster-adjusted test's columns follow the exact p.
            let clustered = r.clusters.is_some();
            let mut heading = mcnemar_heading();
            if clustered {
                heading.push(Span::text(MCNEMAR_CLUSTER_HEADING));
            }
            heading.push(Span::text("\n"));
            v.text_naming(heading);
            let mut cols = vec![
                "group",
                "pairs",
                "A only",
                "B only",
                if clustered { "p exact" } else { "p" },
                "mid-p",
            ];
            if clustered {
                cols.extend(["clusters", "X²", "p Obuchowski", "test", "p cluster"]);
            }
            let mut t = Table::new(&cols);
            for m in mcnemar {
                let mut row = vec![
                    Cell::text(&m.group),
                    Cell::Count(m.pairs as u64),
                    Cell::Count(m.a_only),
                    Cell::Count(m.b_only),
                    Cell::num(m.p),
                    Cell::num(m.p_mid),
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
            v.table("mcnemar", t);
        }
        v
    }
}

/// One row per level with both sides, the deltas, the test of ΔEM and McNemar; numbers in
/// Rust's `to_string` form (a side without the level is `NaN`).
fn csv(r: &CompareReport) -> Table {
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
    ];
    cols.extend(TEST_COLUMNS);
    // McNemar's columns when asked for; with clusters, the cluster-adjusted test too.
    if r.mcnemar.is_some() {
        cols.extend([
            "mcnemar_a_only",
            "mcnemar_b_only",
            "mcnemar_p",
            "mcnemar_mid_p",
        ]);
        if r.clusters.is_some() {
            cols.extend(["mcnemar_cluster_test", "mcnemar_cluster_p"]);
        }
    }
    let mut t = Table::new(&cols);
    for d in &r.deltas {
        let (x, y, l) = (d.a, d.b, &d.delta);
        let test = r
            .tests
            .iter()
            .find(|x| x.level == l.level && x.name == l.name);
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
        ];
        row.extend(test_csv_cells(test));
        if let Some(mcnemar) = &r.mcnemar {
            // McNemar rows are per group and overall: a task row has none.
            let m = mcnemar
                .iter()
                .find(|m| l.level != "task" && m.group == l.name);
            row.extend([
                m.map_or(Cell::Missing, |m| Cell::Count(m.a_only)),
                m.map_or(Cell::Missing, |m| Cell::Count(m.b_only)),
                m.map_or(Cell::Missing, |m| csv_f64(m.p)),
                m.map_or(Cell::Missing, |m| csv_f64(m.p_mid)),
            ]);
            if r.clusters.is_some() {
                let c = m.and_then(|m| m.cluster.as_ref());
                row.push(c.map_or(Cell::Missing, |c| Cell::text(c.cluster_test)));
                row.push(c.map_or(Cell::Missing, |c| csv_f64(c.cluster_p)));
            }
        }
        t.row(row);
    }
    t
}

/// The heading of the tests of ΔEM: what they test and how.
pub fn tests_heading(clustered: bool, confidence: f64) -> String {
    let how = if clustered {
        "delete-one-cluster jackknife t over the clusters above, df = clusters − 1 (cluster-t)"
    } else {
        "stratified t over items, the runs of an item together: SE² = Σ_g W_g² s_g² / n_g on Satterthwaite's df (stratified-t)"
    };
    format!(
        "\nTest of ΔEM at each level, with the weights of the Δ above: {how}; where the SE is 0, the exact sign test over the clusters (sign); α = {}\n",
        // 1 − 0.95 is 0.050000000000000044.
        ((1.0 - confidence) * 1e12).round() / 1e12
    )
}

/// The cells of one test of ΔEM in the text table.
pub fn test_cells(x: &DeltaTest) -> Vec<Cell> {
    vec![
        Cell::text(x.level),
        Cell::text(&x.name),
        Cell::Count(x.items as u64),
        Cell::Count(x.clusters as u64),
        Cell::text(x.test),
        Cell::num(x.estimate),
        Cell::opt_num(x.se),
        Cell::opt_num(x.df),
        Cell::opt_num(x.t),
        Cell::num(x.p),
        x.ci.map_or(Cell::Missing, |c| {
            Cell::Raw(format!("[{}, {}]", num(c.lower()), num(c.upper())))
        }),
        x.favours.map_or(Cell::Missing, Cell::text),
    ]
}

/// The CSV cells of one test of ΔEM: `test`, `test_clusters`, `test_se`, `test_df`,
/// `test_t`, `test_p`, `test_lo`, `test_hi`, `favours` (empty where absent).
pub fn test_csv_cells(x: Option<&DeltaTest>) -> Vec<Cell> {
    let Some(x) = x else {
        return vec![Cell::Missing; 9];
    };
    let opt = |v: Option<f64>| v.map_or(Cell::Missing, csv_f64);
    vec![
        Cell::text(x.test),
        Cell::Count(x.clusters as u64),
        opt(x.se),
        opt(x.df),
        opt(x.t),
        csv_f64(x.p),
        opt(x.ci.map(|c| c.lower())),
        opt(x.ci.map(|c| c.upper())),
        x.favours.map_or(Cell::Missing, Cell::text),
    ]
}

/// The heading of McNemar's table: what it assumes (naming the setting that asks for it).
pub fn mcnemar_heading() -> Vec<Span> {
    vec![
        Span::text("\nMcNemar on EM over (id, run) pairs ("),
        Span::switch("mcnemar"),
        Span::text("), assuming every pair independent: the runs of one item are not, so with several runs these p are too small; and it weights tasks by their pairs, not as the ΔEM above"),
    ]
}

/// What McNemar's table adds with clusters.
pub const MCNEMAR_CLUSTER_HEADING: &str = ". Beside it the cluster-adjusted test of the same pooled pairs: Obuchowski 1998 with at least 20 clusters, else (or where its variance is 0) the exact sign test over clusters (cluster-sign)";
