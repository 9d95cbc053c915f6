//! The subset study's view (`stats subsets`): the header, then the configurations and
//! MAEs (tables `configurations`, `mae`), or with every subset's SE asked for, those SEs
//! (table `subsets`); the CSV likewise.

use super::{SubsetAnalysis, SubsetReport, SubsetRow};
use crate::resample::summary::Summary;
use crate::table::{percent, Cell, Table, ToView, View};

impl ToView for SubsetAnalysis {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// Rust's own digits, as the command's CSV always wrote them: a finite number's CSV form
/// (its shortest round trip), and `NaN` as Rust prints it, which a typed cell would leave
/// empty.
fn digits(v: f64) -> Cell {
    if v.is_finite() {
        Cell::num(v)
    } else {
        Cell::Raw(v.to_string())
    }
}

/// Estimate, SE, CI low, CI high of a bootstrap summary.
fn summary(s: &Summary) -> [Cell; 4] {
    [s.estimate, s.se, s.ci[0], s.ci[1]].map(Cell::num)
}

/// A subset's positions by their labels, `+`-joined (`0+2`); kept as raw text, so a lone
/// numeric label is aligned like a number, as always.
fn labels(idx: &[usize], names: &[String]) -> Cell {
    Cell::Raw(
        idx.iter()
            .map(|&i| names[i].as_str())
            .collect::<Vec<_>>()
            .join("+"),
    )
}

/// t′, r′, and the trajectory and read labels of one subset.
fn subset_cells(o: &SubsetAnalysis, s: &SubsetRow) -> Vec<Cell> {
    vec![
        Cell::Count(s.trajectories.len() as u64),
        Cell::Count(s.reads.len() as u64),
        labels(&s.trajectories, &o.trajectory_labels),
        labels(&s.reads, &o.read_labels),
    ]
}

/// Every subset's SE (with `--per-subset`), else the configurations, every digit.
fn csv(o: &SubsetAnalysis) -> Table {
    if let Some(subsets) = &o.subsets {
        let mut t = Table::new(&["t", "r", "trajectories", "reads", "se_measured"]);
        for s in subsets {
            let mut row = subset_cells(o, s);
            row.push(digits(s.se));
            t.row(row);
        }
        return t;
    }
    let mut t = Table::new(&[
        "t",
        "r",
        "subsets",
        "se_measured",
        "se_measured_se",
        "ci_low",
        "ci_high",
        "se_nested",
        "se_q_only",
        "in_mae",
    ]);
    for c in &o.report.configurations {
        t.row([
            Cell::Count(c.trajectories as u64),
            Cell::Count(c.reads as u64),
            Cell::Count(c.subsets as u64),
            digits(c.se_measured.estimate),
            digits(c.se_measured.se),
            digits(c.se_measured.ci[0]),
            digits(c.se_measured.ci[1]),
            digits(c.se_nested),
            digits(c.se_q_only),
            Cell::text(c.in_mae.to_string()),
        ]);
    }
    t
}

/// The header, then every subset's SE (with `--per-subset`) or the configurations and MAEs.
fn blocks(a: &SubsetAnalysis, v: &mut View) {
    v.text(header(&a.report, &a.outcome, &a.backend, &a.adapter));
    match &a.subsets {
        Some(subsets) => {
            let mut t = Table::new(&["t'", "r'", "trajectories", "reads", "SE measured"]);
            for s in subsets {
                let mut row = subset_cells(a, s);
                row.push(Cell::num(s.se));
                t.row(row);
            }
            v.table("subsets", t);
        }
        None => configurations(&a.report, v),
    }
}

fn header(r: &SubsetReport, outcome: &str, backend: &str, adapter: &str) -> String {
    let strata: Vec<String> = r.strata.iter().map(|(n, q)| format!("{n} Q={q}")).collect();
    let pairs = ((1usize << r.trajectories) - 1) * ((1usize << r.reads) - 1);
    let notes: String = r.notes.iter().map(|n| format!("note: {n}\n")).collect();
    format!(
        "subset enumeration of {outcome} ({}; T={}, R={}; {pairs} subset pairs)\n\
         backend: {backend} ({adapter}); replicates {} ({}..{}); seed {}; {} engine calls per replicate; percentile {} intervals\n{notes}\n",
        strata.join(", "),
        r.trajectories,
        r.reads,
        r.range[1] - r.range[0],
        r.range[0],
        r.range[1],
        r.seed,
        r.engine_calls,
        percent(r.confidence)
    )
}

/// The configurations' measured SE beside the forecasts, then the MAEs.
fn configurations(r: &SubsetReport, v: &mut View) {
    let mut t = Table::new(&[
        "t'",
        "r'",
        "subsets",
        "SE measured",
        "SE of it",
        "CI low",
        "CI high",
        "SE nested",
        "SE Q-only",
        "in MAE",
    ]);
    for c in &r.configurations {
        let mut row = vec![
            Cell::Count(c.trajectories as u64),
            Cell::Count(c.reads as u64),
            Cell::Count(c.subsets as u64),
        ];
        row.extend(summary(&c.se_measured));
        row.extend([
            Cell::num(c.se_nested),
            Cell::num(c.se_q_only),
            Cell::text(if c.in_mae { "yes" } else { "no" }),
        ]);
        t.row(row);
    }
    v.table("configurations", t);
    let pct = percent(r.confidence);
    v.text(format!(
        "\nMAE over configurations with t' >= {} (forecasts fixed; the audit is not resampled):\n",
        r.min_trajectories
    ));
    let mut t = Table::new(&[
        "statistic",
        "estimate",
        "SE",
        &format!("{pct} CI low"),
        "CI high",
    ]);
    for (name, s) in [
        ("MAE nested", &r.mae_nested),
        ("MAE Q-only", &r.mae_q_only),
        ("advantage (Q-only - nested)", &r.advantage),
    ] {
        let mut row = vec![Cell::text(name)];
        row.extend(summary(s));
        t.row(row);
    }
    v.table("mae", t);
}
