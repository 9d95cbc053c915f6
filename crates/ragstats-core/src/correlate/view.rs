//! The correlation analysis's view (`stats correlate`): the header lines, the r (p) matrix
//! when there are several pairs, the pairs' table and its notes; the CSV is one row per pair
//! with every digit.

use super::all_pairs::CorrelateReport;
use super::estimate::PValueKind;
use crate::table::{percent, Cell, Table, ToView, View};

impl ToView for CorrelateReport {
    fn to_view(&self) -> View {
        view(self)
    }
}

/// A pair's column name as given (a name that reads as a number is aligned like one).
fn name(s: &str) -> Cell {
    // Raw, not Text: a column named `2024` has always been right-aligned like a number.
    Cell::Raw(s.to_string())
}

/// One row per pair, every digit.
fn csv(r: &CorrelateReport) -> Table {
    let mut t = Table::new(&[
        "x",
        "y",
        "method",
        "n",
        "r",
        "statistic",
        "p",
        "p_method",
        "fisher_low",
        "fisher_high",
        "boot_se",
        "boot_low",
        "boot_high",
        "boot_undefined",
        "perm_p",
        "perm_exceed",
        "permutations",
    ]);
    let count = |v: Option<u64>| v.map_or(Cell::Missing, Cell::Count);
    for pr in &r.pairs {
        let e = &pr.estimate;
        let b = pr.bootstrap.as_ref();
        let p = pr.permutation.as_ref();
        t.row([
            name(&pr.x),
            name(&pr.y),
            Cell::text(r.method.name()),
            Cell::Count(e.n as u64),
            Cell::num(e.r),
            Cell::num(e.statistic),
            Cell::num(e.p),
            Cell::text(match e.p_kind {
                PValueKind::T { .. } => "t",
                PValueKind::Normal => "normal",
                PValueKind::ClusterJackknife { .. } => "cluster-jackknife",
            }),
            Cell::opt_num(e.fisher.map(|f| f[0])),
            Cell::opt_num(e.fisher.map(|f| f[1])),
            Cell::opt_num(b.map(|b| b.se)),
            Cell::opt_num(b.map(|b| b.ci[0])),
            Cell::opt_num(b.map(|b| b.ci[1])),
            count(b.map(|b| b.undefined as u64)),
            Cell::opt_num(p.map(|p| p.p)),
            count(p.map(|p| p.exceed)),
            count(p.map(|p| u64::from(p.permutations))),
        ]);
    }
    t
}

/// The header lines (method, bootstrap, permutations, codings, notes), the r (p) matrix
/// when there are several pairs, and the pairs' table.
fn view(r: &CorrelateReport) -> View {
    let mut v = View::new(csv(r));
    let mut out = format!(
        "{} correlation, n = {}{}; p-values: {}\n",
        r.method.name(),
        r.n,
        match r.clusters {
            Some(c) => format!(" rows in {c} clusters"),
            None => String::new(),
        },
        r.p_value
    );
    if let Some(a) = r.aggregated_from {
        out.push_str(&format!(
            "rows averaged per unit: {a} rows -> {} units\n",
            r.n
        ));
    }
    if let (Some(name), Some(adapter)) = (r.bootstrap_backend, &r.bootstrap_adapter) {
        out.push_str(&format!(
            "bootstrap: {} replicates ({}), seed {}, backend {name} ({adapter})\n",
            r.replicates,
            if r.clusters.is_none() {
                "rows resampled"
            } else {
                "whole clusters resampled"
            },
            r.seed,
        ));
    }
    if let (Some(name), Some(adapter)) = (r.permutation_backend, &r.permutation_adapter) {
        out.push_str(&format!(
            "permutations: {}, backend {name} ({adapter})\n",
            r.permutations
        ));
    }
    for c in &r.coding {
        // The coded values as JSON writes them (`0.0`, `1.0`), as always.
        out.push_str(&format!(
            "point-biserial coding of {}: {} -> 0, {} -> 1\n",
            c.column,
            serde_json::Value::from(c.zero),
            serde_json::Value::from(c.one)
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push('\n');
    v.text(out);
    if r.pairs.len() > 1 {
        v.text("r (two-sided p):\n")
            .table("matrix", matrix(r))
            .text("\n");
    }
    v.table("pairs", pairs(r));
    let undefined: usize = r
        .pairs
        .iter()
        .filter_map(|p| p.bootstrap.map(|b| b.undefined))
        .max()
        .unwrap_or(0);
    if undefined > 0 {
        v.text(format!(
            "\nnote: up to {undefined} replicates per pair drew a constant column and were left out of the bootstrap SE and interval\n"
        ));
    }
    v
}

/// r (p) of every pair, x down, y across.
fn matrix(r: &CorrelateReport) -> Table {
    let ys = &r.matrix.y;
    let mut header = vec![""];
    header.extend(ys.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for (i, x) in r.matrix.x.iter().enumerate() {
        let mut row = vec![name(x)];
        for j in 0..ys.len() {
            let e = &r.pairs[i * ys.len() + j].estimate;
            // Raw: r and p in one cell, `0.925 (1.7e-5)`, a format no typed cell has.
            row.push(Cell::Raw(format!("{:.3} ({})", e.r, short_p(e.p))));
        }
        t.row(row);
    }
    t
}

/// Every pair's estimate, test, Fisher-z and bootstrap intervals and permutation p.
fn pairs(r: &CorrelateReport) -> Table {
    let pct = percent(r.confidence);
    let mut t = Table::new(&[
        "x",
        "y",
        "n",
        "r",
        "stat",
        "p",
        &format!("Fisher {pct} low"),
        "high",
        "boot SE",
        &format!("boot {pct} low"),
        "high",
        "perm p",
    ]);
    for pr in &r.pairs {
        let e = &pr.estimate;
        let b = pr.bootstrap.as_ref();
        t.row([
            name(&pr.x),
            name(&pr.y),
            Cell::Count(e.n as u64),
            Cell::num(e.r),
            Cell::num(e.statistic),
            Cell::num(e.p),
            Cell::opt_num(e.fisher.map(|f| f[0])),
            Cell::opt_num(e.fisher.map(|f| f[1])),
            Cell::opt_num(b.map(|b| b.se)),
            Cell::opt_num(b.map(|b| b.ci[0])),
            Cell::opt_num(b.map(|b| b.ci[1])),
            Cell::opt_num(pr.permutation.map(|p| p.p)),
        ]);
    }
    t
}

/// A p-value in the matrix: 4 decimals, or 1 significant digit below 1e-4.
fn short_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}
