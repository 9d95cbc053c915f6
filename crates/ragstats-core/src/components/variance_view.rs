//! The variance analysis's view (`stats variance`; `stats report` shows its shares): the
//! estimate and its interval, the strata, the components with their shares, the notes; and
//! the long CSV table (one row per scope and level).

use super::cluster::ClusterLevel;
use super::reml::{Shape, Spread};
use super::variance::{
    Fit, Level, Method, PanelVariance, PerLevel, StratumReport, VarianceReport,
    POOLED_SHARES_UNDEFINED, SHARES_UNDEFINED,
};
use crate::table::cells::{label, weights_line};
use crate::table::{number as num, Cell, Precision, Table, ToView, View};

impl ToView for PanelVariance {
    /// [`variance_view`] with the interval line under the estimate.
    fn to_view(&self) -> View {
        let df = self
            .df
            .map_or("SE 0".to_string(), |v| format!("Student t on {v:.1} df"));
        let interval = format!(
            "95% CI [{}, {}]  ({df}, Welch-Satterthwaite)\n",
            num(self.ci.lower()),
            num(self.ci.upper())
        );
        variance_view(&self.variance, &interval)
    }
}

/// A scope's name and its design: Q, T, R for a balanced scope; for an unbalanced one
/// (`shape`) Q and the min/mean/max of T per question and of R per trajectory, as
/// `stats variance` prints them.
pub fn design(
    name: &str,
    questions: usize,
    trajectories: usize,
    reads: usize,
    shape: Option<&Shape>,
) -> Vec<Cell> {
    match shape {
        Some(s) => vec![
            label(name),
            Cell::Count(s.questions as u64),
            spread(&s.trajectories),
            spread(&s.reads),
        ],
        None => vec![
            label(name),
            Cell::Count(questions as u64),
            Cell::Count(trajectories as u64),
            Cell::Count(reads as u64),
        ],
    }
}

/// A count per question or per trajectory: the count when every one has the same, else
/// `min/mean/max` (mean to 2 decimals).
fn spread(x: &Spread) -> Cell {
    if x.min == x.max {
        Cell::Count(x.min as u64)
    } else {
        // A min/mean/max triple is no one number: kept as the text `stats variance` prints.
        Cell::Raw(format!("{}/{:.2}/{}", x.min, x.mean, x.max))
    }
}

/// A share's table cell: `undefined` when the scope's shares are (every component 0; the
/// reason is a note under the table), `-` for a level that is not estimable.
pub fn share_cell(shares: Option<&PerLevel>, f: &Fit, l: Level) -> Cell {
    match shares {
        Some(p) => Cell::opt_num(p.get(l)),
        None if f.components.get(l).is_some() => Cell::Undefined(None),
        None => Cell::Missing,
    }
}

/// Whether the strata have a cluster level (`--cluster`): then tables and CSV show it.
fn is_clustered(r: &VarianceReport) -> bool {
    r.strata.iter().any(|s| s.cluster.is_some())
}

/// Whether any stratum was fitted by REML (then tables and CSV name the method).
fn any_reml(r: &VarianceReport) -> bool {
    r.strata.iter().any(|s| s.method == Method::Reml)
}

/// Stratum, Q, T, R cells: for an unbalanced stratum T and R are min/mean/max.
fn stratum_design(s: &StratumReport) -> Vec<Cell> {
    design(
        &s.name,
        s.questions,
        s.trajectories,
        s.reads,
        s.shape.as_ref(),
    )
}

/// A number as CSV has always written it: every digit, and a value that is not finite as
/// Rust prints it (`NaN`), where a typed cell would leave the cell empty.
fn exact(v: f64) -> Cell {
    if v.is_finite() {
        Cell::num(v)
    } else {
        // `NaN`/`inf` as this CSV always wrote them; a typed cell would be empty.
        Cell::Raw(v.to_string())
    }
}

/// An optional number for CSV: [`exact`], or an empty cell when absent.
fn exact_opt(v: Option<f64>) -> Cell {
    v.map_or(Cell::Missing, exact)
}

/// One row per scope and level (`scope, questions, trajectories, reads, mean, se, level, ms,
/// df, component, truncated, share_single, share_se2` and `method` when a stratum is REML),
/// then the combined estimate.
fn csv(r: &VarianceReport) -> Table {
    let mut header = vec![
        "scope",
        "questions",
        "trajectories",
        "reads",
        "mean",
        "se",
        "level",
        "ms",
        "df",
        "component",
        "truncated",
        "share_single",
        "share_se2",
    ];
    let reml = any_reml(r);
    if reml {
        header.push("method");
    }
    let clustered = is_clustered(r);
    if clustered {
        header.push("clusters");
    }
    let mut t = Table::new(&header);
    // The cluster row of a scope: its level's MS, df, component and shares.
    let cluster_row = |mut row: Vec<Cell>, c: &ClusterLevel, method: Method, se2: bool| {
        row.extend([
            Cell::text("cluster"),
            exact_opt(c.ms),
            exact_opt(c.df),
            exact(c.component),
            Cell::text(c.truncated.to_string()),
            exact_opt(c.share_single),
            if se2 {
                exact_opt(c.share_se2)
            } else {
                Cell::Missing
            },
        ]);
        if reml {
            row.push(Cell::text(method.name()));
        }
        row.push(Cell::Count(c.clusters as u64));
        row
    };
    // MS, df, component and truncation of one level of a fit.
    let fit_cells = |f: &Fit, l: Level| {
        [
            exact_opt(f.ms.get(l).filter(|v| !v.is_nan())),
            exact_opt(f.df.get(l).filter(|v| !v.is_nan())),
            exact_opt(f.components.get(l)),
            Cell::text(f.truncated.contains(&l).to_string()),
        ]
    };
    for s in &r.strata {
        if let Some(c) = &s.cluster {
            let mut row = stratum_design(s);
            row.extend([exact(s.mean), exact(s.se)]);
            t.row(cluster_row(row, c, s.method, true));
        }
        for l in Level::ALL {
            let mut row = stratum_design(s);
            row.extend([exact(s.mean), exact(s.se), Cell::text(l.name())]);
            row.extend(fit_cells(&s.fit, l));
            let share = |p: &Option<PerLevel>| exact_opt(p.as_ref().and_then(|p| p.get(l)));
            row.extend([share(&s.share_single), share(&s.share_se2)]);
            if reml {
                row.push(Cell::text(s.method.name()));
            }
            if let Some(c) = &s.cluster {
                row.push(Cell::Count(c.clusters as u64));
            }
            t.row(row);
        }
    }
    if let Some(p) = &r.pooled {
        if let Some(c) = &p.cluster {
            let mut row = design("pooled", p.questions, p.trajectories, p.reads, None);
            row.extend([Cell::Missing, Cell::Missing]);
            t.row(cluster_row(row, c, p.method, false));
        }
        for l in Level::ALL {
            let mut row = design("pooled", p.questions, p.trajectories, p.reads, None);
            row.extend([Cell::Missing, Cell::Missing, Cell::text(l.name())]);
            row.extend(fit_cells(&p.fit, l));
            row.extend([
                exact_opt(p.share_single.as_ref().and_then(|p| p.get(l))),
                Cell::Missing,
            ]);
            if reml {
                row.push(Cell::text(p.method.name()));
            }
            if let Some(c) = &p.cluster {
                row.push(Cell::Count(c.clusters as u64));
            }
            t.row(row);
        }
    }
    let q: usize = r.strata.iter().map(|s| s.questions).sum();
    let mut combined = vec![
        Cell::text("combined"),
        Cell::Count(q as u64),
        Cell::Missing,
        Cell::Missing,
        exact(r.estimate),
        exact(r.se),
    ];
    combined.resize(header.len(), Cell::Missing);
    t.row(combined);
    t
}

/// The view of `r`: the outcome and estimate lines, then `interval` (whole lines; may be
/// empty), the weights, the strata table, the components table with their shares, and the
/// notes (undefined shares, REML, the pooled fit).
pub fn variance_view(r: &VarianceReport, interval: &str) -> View {
    let mut v = View::new(csv(r));
    v.text(format!(
        "outcome: {}\nestimate {}  SE {}  ({} mean over {} {})\n{interval}{}\n",
        r.outcome,
        num(r.estimate),
        num(r.se),
        if r.weights.is_empty() {
            "equal-weight"
        } else {
            "weighted"
        },
        r.strata.len(),
        if r.strata.len() == 1 {
            "stratum"
        } else {
            "strata"
        },
        weights_line(r.strata.iter().map(|s| s.name.as_str()), &r.weights)
    ));
    let reml = any_reml(r);
    let clustered = is_clustered(r);
    let mut head = vec!["stratum", "Q", "T", "R", "mean", "SE", "dropped"];
    if reml {
        head.push("method");
    }
    if clustered {
        head.push("G");
        head.push("M");
    }
    let mut t = Table::new(&head);
    for s in &r.strata {
        let mut row = stratum_design(s);
        row.extend([
            Cell::num(s.mean),
            Cell::num(s.se),
            Cell::Count(s.dropped as u64),
        ]);
        if reml {
            row.push(Cell::text(s.method.name()));
        }
        if let Some(c) = &s.cluster {
            row.push(Cell::Count(c.clusters as u64));
            row.push(if c.min_questions == c.max_questions {
                Cell::Count(c.min_questions as u64)
            } else {
                Cell::Raw(format!(
                    "{}/{:.2}/{}",
                    c.min_questions, c.questions_per_cluster, c.max_questions
                ))
            });
        }
        t.row(row);
    }
    v.table("strata", t).text("\n");
    let mut t = Table::new(&[
        "scope",
        "level",
        "MS",
        "df",
        "component",
        "share(single)",
        "share(SE²)",
    ]);
    let mut notes = Vec::new();
    let mut undefined = Vec::new();
    let mut add = |t: &mut Table,
                   scope: &str,
                   f: &Fit,
                   cluster: Option<&ClusterLevel>,
                   single: Option<&PerLevel>,
                   se2: Option<Option<&PerLevel>>| {
        if let Some(c) = cluster {
            let share = |v: Option<f64>| match v {
                Some(v) => Cell::num(v),
                None => Cell::Undefined(None),
            };
            t.row([
                Cell::Raw(scope.to_string()),
                Cell::text("cluster"),
                Cell::opt_num(c.ms),
                c.df.map_or(Cell::Missing, |d| Cell::Num(d, Precision::Shortest)),
                if c.truncated {
                    Cell::text(format!("{} (truncated to 0)", num(c.component)))
                } else {
                    Cell::num(c.component)
                },
                share(c.share_single),
                se2.map_or(Cell::Missing, |_| share(c.share_se2)),
            ]);
        }
        for l in Level::ALL {
            t.row([
                // Raw: a numeric stratum name stays right-aligned (see `design`).
                Cell::Raw(scope.to_string()),
                Cell::text(l.name()),
                Cell::opt_num(f.ms.get(l).filter(|v| !v.is_nan())),
                // Degrees of freedom as Rust prints them (`222`), which is the shortest form.
                f.df.get(l)
                    .filter(|v| !v.is_nan())
                    .map_or(Cell::Missing, |d| Cell::Num(d, Precision::Shortest)),
                match f.components.get(l) {
                    Some(c) if f.truncated.contains(&l) => {
                        Cell::text(format!("{} (truncated to 0)", num(c)))
                    }
                    Some(c) => Cell::num(c),
                    None => Cell::text("not estimable"),
                },
                share_cell(single, f, l),
                se2.map_or(Cell::Missing, |p| share_cell(p, f, l)),
            ]);
        }
        for n in &f.notes {
            notes.push(format!("{scope}: {n}"));
        }
    };
    for s in &r.strata {
        add(
            &mut t,
            &s.name,
            &s.fit,
            s.cluster.as_ref(),
            s.share_single.as_ref(),
            Some(s.share_se2.as_ref()),
        );
        if s.share_single.is_none() || s.share_se2.is_none() {
            undefined.push((s.name.as_str(), SHARES_UNDEFINED));
        }
    }
    if let Some(p) = &r.pooled {
        add(
            &mut t,
            "pooled",
            &p.fit,
            p.cluster.as_deref(),
            p.share_single.as_ref(),
            None,
        );
        if p.share_single.is_none() {
            undefined.push(("pooled", POOLED_SHARES_UNDEFINED));
        }
    }
    v.table("components", t);
    for (scope, why) in undefined {
        v.text(format!(
            "  {scope} shares: {}\n",
            Cell::undefined_because(why).display()
        ));
    }
    if reml {
        notes.push(
            "REML strata are unbalanced: T and R are min/mean/max per question and per trajectory; \
             mean and SE are over question means; share(SE²) is at the mean design"
                .into(),
        );
        if let Some(p) = &r.pooled {
            notes.push(format!(
                "pooled: {} over all strata with a fixed mean per stratum",
                p.method.name()
            ));
        }
    }
    if clustered {
        notes.push(
            "clusters: questions are nested in clusters; the question level is within \
             clusters, the shares are of cluster + question + trajectory + read, and each SE \
             is the cluster-level SE (G − 1 df)"
                .into(),
        );
        if r.strata.iter().any(|s| s.method == Method::Reml) {
            notes.push(
                "clusters: REML strata are fitted as lme4's y ~ 1 + (1|cluster) + \
                 (1|cluster:question) + (1|cluster:question:trajectory); their SE is \
                 cluster-robust over question means, G/(G − 1) Σ_g (S_g − M_g ȳ)² / Q²"
                    .into(),
            );
        }
    }
    if let Some(why) = &r.pooled_unavailable {
        notes.push(format!("pooled: not fitted: {why}"));
    }
    if !notes.is_empty() {
        v.text("\n");
        for n in notes {
            v.text(format!("note: {n}\n"));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbalanced_design_shows_its_spread() {
        let shape = Shape {
            questions: 4,
            trajectories: Spread {
                total: 8,
                min: 2,
                mean: 2.0,
                max: 2,
            },
            reads: Spread {
                total: 20,
                min: 1,
                mean: 2.5,
                max: 4,
            },
        };
        let cells: Vec<String> = design("a", 0, 0, 0, Some(&shape))
            .iter()
            .map(Cell::display)
            .collect();
        assert_eq!(cells, ["a", "4", "2", "1/2.50/4"]);
        assert_eq!(
            design("a", 3, 2, 1, None)[1..],
            [Cell::Count(3), Cell::Count(2), Cell::Count(1)]
        );
    }
}
