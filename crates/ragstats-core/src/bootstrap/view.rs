//! The bootstrap run's view (`stats bootstrap` and `stats merge`): the header lines, the
//! strata table (`strata`), and with components their table (`components`) and the forecast
//! designs' (`designs`); the CSV is one row per statistic.

use super::analysis::BootstrapRun;
use super::report::{BootstrapReport, ComponentSummaries};
use crate::resample::summary::{Interval, Summary};
use crate::table::cells::weights_line;
use crate::table::{number as num, percent, Cell, Table, ToView, View};

impl ToView for BootstrapRun {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(&self.report));
        blocks(&self.report, &self.backend, &self.adapter, &mut v);
        v
    }
}

/// The (level name, summary) of a scope's refitted components: the three levels, after
/// the cluster level when the bootstrap refitted one.
fn levels(s: &ComponentSummaries) -> Vec<(&'static str, &Option<Summary>)> {
    let mut l = Vec::with_capacity(4);
    if s.cluster.is_some() || s.undefined.contains_key("cluster") {
        l.push(("cluster", &s.cluster));
    }
    l.extend([
        ("question", &s.question),
        ("trajectory", &s.trajectory),
        ("read", &s.read),
    ]);
    l
}

/// Estimate, SE, CI low and CI high of a summary as table cells.
fn summary_cells(s: &Summary) -> [Cell; 4] {
    [s.estimate, s.se, s.ci[0], s.ci[1]].map(Cell::num)
}

/// A stratum's name (as the file spells it, aligned as before) and its Q, T, R.
fn design_cells(name: &str, q: usize, t: usize, r: usize) -> Vec<Cell> {
    vec![
        // Raw, not Text: a numeric stratum name is right-aligned in text, as it always was.
        Cell::Raw(name.to_string()),
        Cell::Count(q as u64),
        Cell::Count(t as u64),
        Cell::Count(r as u64),
    ]
}

/// One row per statistic: `statistic, scope, estimate, se, ci_low, ci_high`.
fn csv(r: &BootstrapReport) -> Table {
    let mut t = Table::new(&["statistic", "scope", "estimate", "se", "ci_low", "ci_high"]);
    let mut row = |stat: &str, scope: &str, est: f64, se: f64, ci: Interval| {
        t.row([
            Cell::text(stat),
            Cell::text(scope),
            Cell::num(est),
            Cell::num(se),
            Cell::num(ci[0]),
            Cell::num(ci[1]),
        ]);
    };
    row(
        "estimate",
        "",
        r.summary.estimate,
        r.summary.se,
        r.summary.ci,
    );
    for s in &r.strata {
        let v = &s.summary;
        row("mean", &s.name, v.estimate, v.se, v.ci);
    }
    if let Some(c) = &r.components {
        for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
            for (l, v) in levels(s) {
                if let Some(v) = v {
                    row(&format!("component.{l}"), &s.name, v.estimate, v.se, v.ci);
                }
            }
        }
        for d in &c.designs {
            if let Some(v) = &d.se_nested {
                row("se_nested", &d.design, v.estimate, v.se, v.ci);
            }
        }
    }
    t
}

/// The header lines, the stratum table, and with components their table and the forecast
/// designs', appended to `v`.
fn blocks(r: &BootstrapReport, backend: &str, adapter: &str, v: &mut View) {
    let pct = percent(r.confidence);
    let method = serde_json::to_value(r.method).expect("a method serialises");
    let expanded = r.expansion.map_or(String::new(), |e| {
        format!(
            ", expanded for the sample size (quantiles at tail {:.4}: f = {:.4}, t on {:.1} df)",
            e.tail, e.factor, e.df
        )
    });
    let what = match r
        .strata
        .iter()
        .map(|s| s.clusters)
        .collect::<Option<Vec<usize>>>()
    {
        Some(g) if !g.is_empty() => format!(
            "stratified cluster bootstrap ({} clusters of questions drawn whole) of",
            g.iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(" + ")
        ),
        _ => "stratified question bootstrap of".to_string(),
    };
    let mut out = format!(
        "{what} {}\n\
         backend: {backend} ({adapter}); replicates {} ({}..{}); seed {}; {} interval {pct}{expanded}\n\
         estimate {}  SE {}  {pct} CI [{}, {}]\n",
        r.outcome,
        r.replicates,
        r.range[0],
        r.range[1],
        r.seed,
        method.as_str().unwrap_or(""),
        num(r.summary.estimate),
        r.se().text(|se| num(*se)),
        num(r.summary.ci[0]),
        num(r.summary.ci[1])
    );
    out.push_str(&weights_line(
        r.strata.iter().map(|s| s.name.as_str()),
        &r.weights,
    ));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push('\n');
    let mut t = Table::new(&["stratum", "Q", "T", "R", "mean", "SE", "CI low", "CI high"]);
    for s in &r.strata {
        let mut row = design_cells(&s.name, s.questions, s.trajectories, s.reads);
        row.extend(summary_cells(&s.summary));
        t.row(row);
    }
    v.text(std::mem::take(&mut out)).table("strata", t);
    for s in &r.strata {
        if let Some(sh) = &s.shape {
            out.push_str(&format!(
                "unbalanced {}: {} questions; trajectories per question min {} mean {:.3} max {}; reads per trajectory min {} mean {:.3} max {} (T and R above are the rounded means)\n",
                s.name,
                sh.questions,
                sh.trajectories.min,
                sh.trajectories.mean,
                sh.trajectories.max,
                sh.reads.min,
                sh.reads.mean,
                sh.reads.max
            ));
        }
    }
    if let Some(c) = &r.components {
        let methods = c.pooled.method.is_some();
        let clustered = c.strata.iter().any(|s| levels(s).len() == 4);
        out.push_str(if clustered {
            "\nvariance components (cluster > question > trajectory > read) refitted in every replicate by ANOVA on its drawn clusters, a cluster drawn twice counting as two:\n"
        } else if methods {
            "\nvariance components refitted in every replicate on its drawn questions (REML warm-started from the full-sample fit; ANOVA for balanced strata):\n"
        } else {
            "\nvariance components refitted in every replicate:\n"
        });
        let mut head = vec!["scope", "level", "estimate", "SE", "CI low", "CI high"];
        if methods {
            head.insert(1, "method");
        }
        let mut t = Table::new(&head);
        for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
            for (l, summary) in levels(s) {
                let cells = match summary {
                    Some(x) => summary_cells(x),
                    None => [
                        Cell::text("not estimable"),
                        Cell::Missing,
                        Cell::Missing,
                        Cell::Missing,
                    ],
                };
                // Raw: a numeric stratum name stays right-aligned (see `design_cells`).
                let mut row = vec![Cell::Raw(s.name.clone())];
                if let Some(m) = s.method {
                    row.push(Cell::text(m.name()));
                }
                row.push(Cell::text(l));
                row.extend(cells);
                t.row(row);
            }
        }
        v.text(std::mem::take(&mut out)).table("components", t);
        for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
            for why in s.undefined.values() {
                out.push_str(&format!("  not estimable in {}: {why}\n", s.name));
            }
        }
        if !c.designs.is_empty() {
            out.push_str("\nforecast SE (nested) with its bootstrap interval:\n");
            let mut t = Table::new(&["design", "SE nested", "SE of it", "CI low", "CI high"]);
            for d in &c.designs {
                let se = d.se_nested.unwrap_or(Summary::NAN);
                let mut row = vec![Cell::text(d.design.as_str())];
                row.extend(summary_cells(&se));
                t.row(row);
            }
            v.text(std::mem::take(&mut out)).table("designs", t);
            for d in &c.designs {
                if let Some(why) = &d.undefined {
                    out.push_str(&format!("  {} undefined: {why}\n", d.design));
                }
            }
        }
    }
    v.text(out);
}
