//! Coverage of the clustered intervals (`stats coverage --clustered`, issue 48): panels of
//! questions nested in clusters, analysed with and without their clusters.
//!
//! **Generator.** Two strata, each of G clusters of M questions, T trajectories of R
//! binary reads (an EM-like score, mean m = 0.4): cluster probability π_g ~ Beta(m, ρ_c),
//! question probability p_gq ~ Beta(π_g, ρ_q), trajectory probability ~ Beta(p_gq, ρ_t),
//! reads ~ Bernoulli (Beta(μ, ρ) has mean μ and variance ρμ(1 − μ); [`beta_draw`]). Every
//! level keeps the mean, so the truth is m in each stratum. ρ_c = σ²_c/(m(1 − m)) and
//! ρ_q = σ²_q/(m(1 − m) − σ²_c), ρ_t = σ²_t/(m(1 − m) − σ²_c − σ²_q) with (σ²_c, σ²_q, σ²_t)
//! = (0.04, 0.06, 0.02): the clusters hold a sixth of the variance of a read and most of
//! that of a stratum mean at M = 4.
//!
//! **Measured.** The clustered analysis's printed interval (estimate ± t · SE on the
//! Welch–Satterthwaite df of the strata's G − 1), each stratum's mean ± t(G − 1) · SE, and
//! the printed interval of the same panels analysed without their clusters (questions as
//! independent), to show what ignoring the clusters costs. A panel whose analysis fails or
//! whose SE is 0 (every read agrees) counts as not covered.

use rayon::prelude::*;
use serde::Serialize;

use super::generate::{beta_draw, COVERAGE};
use super::tally::{Kind, Row, Target};
use crate::components::variance::analyse_panel;
use crate::document::Report;
use crate::inference::t::t_quantile;
use crate::panel::{Clusters, Panel, Stratum};
use crate::rng::KeyedStream;
use crate::table::{Table, ToView, View};
use crate::Result;

/// The mean of every simulated stratum (the truth).
const MEAN: f64 = 0.4;
/// σ²_c, σ²_q, σ²_t of the generator.
const COMPONENTS: [f64; 3] = [0.04, 0.06, 0.02];

/// One simulated clustered design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClusteredDesign {
    pub clusters: usize,
    pub per_cluster: usize,
    pub trajectories: usize,
    pub reads: usize,
}

impl ClusteredDesign {
    /// The designs measured: G ∈ {6, 12, 24, 48} clusters of M = 4 binary questions per
    /// stratum, at T = R = 1 and at T = R = 2.
    pub fn all() -> Vec<ClusteredDesign> {
        let mut out = Vec::new();
        for (t, r) in [(1, 1), (2, 2)] {
            for g in [6, 12, 24, 48] {
                out.push(ClusteredDesign {
                    clusters: g,
                    per_cluster: 4,
                    trajectories: t,
                    reads: r,
                });
            }
        }
        out
    }

    /// `2 × G×M:T:R, binary`.
    pub fn name(&self) -> String {
        format!(
            "2 × {}x{}:{}:{}, binary",
            self.clusters, self.per_cluster, self.trajectories, self.reads
        )
    }
}

/// A simulated clustered panel of `design`, panel `i` of the run with `seed`.
pub fn simulate(design: &ClusteredDesign, seed: u64, i: u64) -> Panel {
    let v = MEAN * (1.0 - MEAN);
    let [sc, sq, st] = COMPONENTS;
    let (rho_c, rho_q, rho_t) = (sc / v, sq / (v - sc), st / (v - sc - sq));
    let d = design;
    let strata = (0..2u64)
        .map(|si| {
            let mut s = KeyedStream::new(seed, &[COVERAGE, 48, d.clusters as u64, i, si]);
            let mut y = Vec::with_capacity(d.clusters * d.per_cluster * d.trajectories * d.reads);
            for _ in 0..d.clusters {
                let pi = beta_draw(&mut s, MEAN, rho_c);
                for _ in 0..d.per_cluster {
                    let p = beta_draw(&mut s, pi, rho_q);
                    for _ in 0..d.trajectories {
                        let pt = beta_draw(&mut s, p, rho_t);
                        for _ in 0..d.reads {
                            y.push(f64::from(u8::from(s.uniform() < pt)));
                        }
                    }
                }
            }
            let q = d.clusters * d.per_cluster;
            Stratum {
                name: format!("s{}", si + 1),
                questions: (0..q).map(|k| format!("q{k}")).collect(),
                trajectories: (1..=d.trajectories).map(|k| k.to_string()).collect(),
                reads: (1..=d.reads).map(|k| k.to_string()).collect(),
                y,
                clusters: Some(Clusters::even(q, d.per_cluster)),
                ..Default::default()
            }
        })
        .collect();
    Panel {
        source: "simulated".into(),
        metric: "em".into(),
        outcome: "em".into(),
        selectors: Vec::new(),
        selector: None,
        strata,
        notes: Vec::new(),
        weights: Vec::new(),
    }
}

/// Whether each interval of one panel covers the truth: (clustered estimate, clustered
/// stratum means covered of 2, estimate ignoring the clusters).
fn observe(panel: &Panel, confidence: f64) -> (bool, usize, bool) {
    let q = 1.0 - (1.0 - confidence) / 2.0;
    let covers =
        |est: f64, se: f64, df: f64| se > 0.0 && (est - MEAN).abs() <= t_quantile(q, df) * se;
    let (mut estimate, mut strata) = (false, 0);
    if let Ok(v) = analyse_panel(panel) {
        if let Some(df) = v.df() {
            estimate = covers(v.estimate, v.se, df);
        }
        for s in &v.strata {
            let g = s.cluster.as_ref().map_or(s.questions, |c| c.clusters);
            strata += usize::from(covers(s.mean, s.se, g as f64 - 1.0));
        }
    }
    let mut flat = panel.clone();
    for s in &mut flat.strata {
        s.clusters = None;
    }
    let naive = analyse_panel(&flat)
        .ok()
        .and_then(|v| Some(covers(v.estimate, v.se, v.df()?)))
        .unwrap_or(false);
    (estimate, strata, naive)
}

/// The coverage of the clustered intervals over `panels` simulated panels of every design.
#[derive(Debug, Clone, Serialize)]
pub struct ClusteredCoverage {
    pub panels: u32,
    pub seed: u64,
    pub confidence: f64,
    pub target: Target,
    /// Per design, its rows.
    pub designs: Vec<(String, Vec<Row>)>,
}

impl Report for ClusteredCoverage {}

/// Measures every design of [`ClusteredDesign::all`] on `panels` panels each.
///
/// # Errors
/// None at present (a failed analysis counts as not covered); kept for the call's shape.
pub fn clustered_coverage(
    panels: u32,
    seed: u64,
    confidence: f64,
    tick: &(dyn Fn() + Sync),
) -> Result<ClusteredCoverage> {
    let target = Target::at(confidence);
    let mut designs = Vec::new();
    for d in ClusteredDesign::all() {
        let seen: Vec<(bool, usize, bool)> = (0..u64::from(panels))
            .into_par_iter()
            .map(|i| {
                let o = observe(&simulate(&d, seed, i), confidence);
                tick();
                o
            })
            .collect();
        let n = u64::from(panels);
        let count = |f: &dyn Fn(&(bool, usize, bool)) -> u64| seen.iter().map(f).sum::<u64>();
        let row = |statistic: &str, hits: u64, n: u64| {
            Row::new(
                "clustered",
                "variance",
                statistic.to_string(),
                Kind::Interval,
                confidence,
                hits,
                n,
                0,
                &target,
            )
        };
        designs.push((
            d.name(),
            vec![
                row(
                    "estimate: printed interval with clusters (t on Satterthwaite df)",
                    count(&|o| u64::from(o.0)),
                    n,
                ),
                row(
                    "stratum means with clusters: mean ± t(G − 1)·SE",
                    count(&|o| o.1 as u64),
                    2 * n,
                ),
                row(
                    "estimate: printed interval ignoring the clusters",
                    count(&|o| u64::from(o.2)),
                    n,
                ),
            ],
        ));
    }
    Ok(ClusteredCoverage {
        panels,
        seed,
        confidence,
        target,
        designs,
    })
}

impl ToView for ClusteredCoverage {
    /// One Markdown table per design (as docs/COVERAGE.md lists them), then a line per row
    /// below target.
    fn to_view(&self) -> View {
        let mut csv = Table::new(&["design", "statistic", "rate", "mc_se", "n", "verdict"]);
        let mut text = format!(
            "Clustered designs: {} panels per design, seed {}, target {:.3}–{:.3}\n",
            self.panels, self.seed, self.target.interval[0], self.target.interval[1]
        );
        let mut short = Vec::new();
        for (name, rows) in &self.designs {
            text.push_str(&format!(
                "\n### {name}\n\n| analysis | interval or test | rate | MC SE | n | verdict |\n|---|---|---|---|---|---|\n"
            ));
            for r in rows {
                let (rate, se) = (r.rate.unwrap_or(f64::NAN), r.mc_se.unwrap_or(f64::NAN));
                text.push_str(&format!(
                    "| {} | {} | {rate:.3} | {se:.3} | {} | {} |\n",
                    r.analysis, r.statistic, r.n, r.verdict
                ));
                csv.row([
                    crate::table::Cell::text(name.clone()),
                    crate::table::Cell::text(r.statistic.clone()),
                    crate::table::Cell::opt_num(r.rate),
                    crate::table::Cell::opt_num(r.mc_se),
                    crate::table::Cell::Count(r.n),
                    crate::table::Cell::text(r.verdict),
                ]);
                if r.short() {
                    short.push(format!("- **{name}**: {}", r.sentence(&self.target)));
                }
            }
        }
        if !short.is_empty() {
            text.push_str("\nBelow target:\n\n");
            for s in short {
                text.push_str(&s);
                text.push('\n');
            }
        }
        let mut v = View::new(csv);
        v.text(text);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_clusters_have_the_generators_mean_and_cluster_variance() {
        // 400 panels of 48 clusters × 4 questions, T = R = 1: the strata's means average
        // m = 0.4, and the variance of cluster means is about σ²_c + (v − σ²_c)/M with
        // v = m(1 − m) = 0.24 (a binary read's variance): 0.04 + 0.2/4 = 0.09.
        let d = ClusteredDesign {
            clusters: 48,
            per_cluster: 4,
            trajectories: 1,
            reads: 1,
        };
        let (mut sum, mut n, mut var) = (0.0, 0.0, 0.0);
        for i in 0..400 {
            let p = simulate(&d, 7, i);
            for s in &p.strata {
                let means: Vec<f64> = s.y.chunks(4).map(|c| c.iter().sum::<f64>() / 4.0).collect();
                let m = means.iter().sum::<f64>() / 48.0;
                sum += m;
                n += 1.0;
                var += means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 47.0;
            }
        }
        assert!((sum / n - 0.4).abs() < 0.005, "{}", sum / n);
        assert!((var / n - 0.09).abs() < 0.005, "{}", var / n);
        // The same panel whatever the order it is drawn in.
        assert_eq!(
            simulate(&d, 7, 3).strata[1].y,
            simulate(&d, 7, 3).strata[1].y
        );
    }

    #[test]
    fn the_note_on_ignored_clusters_quotes_docs_coverage() {
        // docs/COVERAGE.md's clustered rows "ignoring the clusters" span exactly the range
        // the loader's note quotes.
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/COVERAGE.md"),
        )
        .unwrap();
        let rates: Vec<f64> = doc
            .lines()
            .filter(|l| {
                l.starts_with("| variance | estimate: printed interval ignoring the clusters |")
            })
            .map(|l| l.split('|').nth(3).unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(rates.len(), ClusteredDesign::all().len());
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((lo, hi), crate::panel::IGNORED_CLUSTERS_COVERAGE);
    }
}
