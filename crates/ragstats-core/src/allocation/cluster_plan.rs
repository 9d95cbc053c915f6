//! Planning over clusters (`stats plan` with an audit read with `--cluster`): the cheapest
//! design G×M:T:R (G clusters of M questions, T trajectories, R reads) whose SE meets a
//! target (or whose MDE does), from the audit's four-level components and its costs.
//!
//! Per stratum d with G_d clusters (G split over the strata in the audit's proportions of
//! clusters by largest remainder):
//!
//! * SE²_d = σ²_c/G_d + σ²_q/(G_d M) + σ²_t/(G_d M T) + σ²_r/(G_d M T R) (truncated
//!   components), combined as SE² = Σ_d w_d² SE²_d ([`crate::components::forecast::clustered_se2`]);
//! * cost_d = G_d (c_C + M k_d(T, R)) with k_d(T, R) = T (c_T + c_R1 + (R − 1) c_R+) + c_Q
//!   the question's cost of the ledger (or the given unit costs) and c_C the cost of a
//!   cluster itself (`cluster_cost`: retrieving and reading its passage, in the same unit).
//!
//! For every (M, T, R) within the bounds the least G meeting the target is found by
//! bisection (SE falls as G grows), and the designs are ranked by cost. A cluster costs
//! c_C once however many of its questions are asked, so the best M balances c_C against
//! the question costs: in the continuous optimum M* = sqrt(c_C v_q / (k σ²_c)) with
//! v_q = σ²_q + σ²_t/T + σ²_r/(TR) (docs/METHODS.md, "Clustered D-study").

use serde::Serialize;

use super::planner::Planner;
use crate::components::forecast::{clustered_se2, combined_se2, split_questions, Audit};
use crate::document::Report;
use crate::table::{Cell, Precision, Table, ToView, View};
use crate::{Error, Result};

/// What a clustered plan is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClusterPlanJob {
    /// The SE to reach.
    pub target_se: f64,
    /// The MDE the target SE came from, when the goal was an MDE.
    pub from_mde: Option<f64>,
    /// c_C, the cost of one cluster itself (0: clusters cost nothing beyond their questions).
    pub cluster_cost: f64,
    /// The most clusters in all.
    pub max_clusters: usize,
    /// The most questions per cluster.
    pub max_per_cluster: usize,
    /// The most trajectories per question and reads per trajectory.
    pub max_trajectories: usize,
    pub max_reads: usize,
    /// Runner-up designs reported after the best.
    pub runners_up: usize,
}

/// One design G×M:T:R with its SE and cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterDesign {
    pub clusters: usize,
    pub questions_per_cluster: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// Clusters per stratum (strata order).
    pub clusters_per_stratum: Vec<usize>,
    /// G × M.
    pub questions: usize,
    pub se: f64,
    /// Σ_d G_d (c_C + M k_d(T, R)).
    pub cost: f64,
    /// Of which the clusters' own cost, G c_C.
    pub cluster_cost: f64,
}

/// `stats plan`'s answer for a clustered audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterPlanReport {
    /// `target_se` or `mde`.
    pub goal: &'static str,
    pub target_se: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mde: Option<f64>,
    /// The cost unit (`tokens`, `USD`).
    pub unit: String,
    /// c_C.
    pub cluster_cost: f64,
    /// The strata, in the order of `clusters_per_stratum`.
    pub strata: Vec<String>,
    /// The best design first, then the runners-up; empty when none within the bounds
    /// meets the target (`notes` says so).
    pub designs: Vec<ClusterDesign>,
    pub notes: Vec<String>,
}

impl Report for ClusterPlanReport {}

/// The SE and cost of G clusters of M questions at (T, R) (see the module docs).
fn evaluate(
    audit: &Audit,
    k: &[f64],
    c_c: f64,
    (g, m, t, r): (usize, usize, usize, usize),
) -> Option<ClusterDesign> {
    let w: Vec<usize> = audit
        .strata
        .iter()
        .map(|s| s.cluster.as_ref().map_or(0, |c| c.clusters))
        .collect();
    let per = split_questions(g, &w);
    if per.contains(&0) {
        return None;
    }
    let se2: Vec<f64> = audit
        .strata
        .iter()
        .zip(&per)
        .map(|(s, &gd)| {
            let sc = s.cluster.as_ref().map_or(0.0, |c| c.component);
            clustered_se2(sc, &s.components, gd as f64, m as f64, t as f64, r as f64)
        })
        .collect();
    let cost: f64 = per
        .iter()
        .zip(k)
        .map(|(&gd, kd)| gd as f64 * (c_c + m as f64 * kd))
        .sum();
    Some(ClusterDesign {
        clusters: g,
        questions_per_cluster: m,
        trajectories: t,
        reads: r,
        clusters_per_stratum: per,
        questions: g * m,
        se: combined_se2(&se2, &audit.weights).sqrt(),
        cost,
        cluster_cost: g as f64 * c_c,
    })
}

/// The cheapest design G×M:T:R within the job's bounds whose SE is at most the target,
/// then the runners-up (each the cheapest at its own M, T, R), from the audit's four-level
/// components and the unit costs of `planner`'s strata.
///
/// # Errors
/// [`Error::Usage`] when the audit has no cluster level or the strata have no unit costs.
pub fn plan_clusters(
    audit: &Audit,
    planner: &Planner,
    unit: &str,
    job: &ClusterPlanJob,
) -> Result<ClusterPlanReport> {
    if !crate::components::forecast::audit_is_clustered(audit) {
        return Err(Error::setting(
            "cluster",
            "planning over clusters needs an audit read with its cluster column",
        ));
    }
    if planner.strata.iter().any(|s| s.costs.is_none()) {
        return Err(Error::Usage(
            "planning for a target needs unit costs (from a ledger, or given)".into(),
        ));
    }
    let d = audit.strata.len();
    let t_max = if audit
        .strata
        .iter()
        .all(|s| s.components.trajectory.is_none())
    {
        1
    } else {
        job.max_trajectories
    };
    let r_max = if audit.strata.iter().all(|s| s.components.read.is_none()) {
        1
    } else {
        job.max_reads
    };
    let target = job.target_se;
    let mut found = Vec::new();
    for t in 1..=t_max {
        for r in 1..=r_max {
            let k: Vec<f64> = planner
                .strata
                .iter()
                .map(|s| s.costs.map_or(0.0, |c| c.per_question(t as f64, r as f64)))
                .collect();
            for m in 1..=job.max_per_cluster {
                let at = |g: usize| evaluate(audit, &k, job.cluster_cost, (g, m, t, r));
                let meets = |g: usize| at(g).is_some_and(|a| a.se <= target);
                if !meets(job.max_clusters) {
                    continue;
                }
                // The least G meeting the target: SE² falls as G grows.
                let (mut lo, mut hi) = (d.max(1) - 1, job.max_clusters);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if meets(mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                found.extend(at(hi));
            }
        }
    }
    found.sort_by(|a, b| {
        a.cost
            .total_cmp(&b.cost)
            .then(a.se.total_cmp(&b.se))
            .then(a.questions_per_cluster.cmp(&b.questions_per_cluster))
            .then(a.trajectories.cmp(&b.trajectories))
            .then(a.reads.cmp(&b.reads))
    });
    found.truncate(job.runners_up + 1);
    let mut notes = Vec::new();
    if found.is_empty() {
        notes.push(format!(
            "no design within the bounds (at most {} clusters of {} questions, T ≤ {}, R ≤ {}) \
             reaches SE {}: raise the bounds or the target",
            job.max_clusters, job.max_per_cluster, t_max, r_max, target
        ));
    }
    if job.cluster_cost == 0.0 {
        notes.push(
            "no cluster cost was given (cluster_cost): a cluster then costs nothing beyond its \
             questions, so one question per cluster is cheapest"
                .into(),
        );
    }
    if found
        .first()
        .is_some_and(|a| a.questions_per_cluster == job.max_per_cluster)
    {
        notes.push(format!(
            "the best design has the most questions per cluster allowed ({}): a larger bound \
             may be cheaper",
            job.max_per_cluster
        ));
    }
    Ok(ClusterPlanReport {
        goal: if job.from_mde.is_some() {
            "mde"
        } else {
            "target_se"
        },
        target_se: target,
        mde: job.from_mde,
        unit: unit.to_string(),
        cluster_cost: job.cluster_cost,
        strata: audit.strata.iter().map(|s| s.name.clone()).collect(),
        designs: found,
        notes,
    })
}

impl ToView for ClusterPlanReport {
    /// The goal, then one row per design (best first), then the notes.
    fn to_view(&self) -> View {
        let per = |a: &ClusterDesign| {
            self.strata
                .iter()
                .zip(&a.clusters_per_stratum)
                .map(|(n, g)| format!("{n}={g}x{}", a.questions_per_cluster))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut csv = Table::new(&[
            "rank",
            "clusters",
            "questions_per_cluster",
            "trajectories",
            "reads",
            "per_stratum",
            "questions",
            "se",
            "cost",
            "cluster_cost",
        ]);
        let mut t = Table::new(&[
            "rank",
            "design",
            "per stratum",
            "Q",
            "SE",
            "cost",
            "of which clusters",
        ]);
        let whole = if self.unit == "USD" { 2 } else { 0 };
        for (i, a) in self.designs.iter().enumerate() {
            csv.row([
                Cell::Count(i as u64 + 1),
                Cell::Count(a.clusters as u64),
                Cell::Count(a.questions_per_cluster as u64),
                Cell::Count(a.trajectories as u64),
                Cell::Count(a.reads as u64),
                Cell::text(per(a)),
                Cell::Count(a.questions as u64),
                Cell::num(a.se),
                Cell::num(a.cost),
                Cell::num(a.cluster_cost),
            ]);
            t.row([
                Cell::Count(i as u64 + 1),
                Cell::text(format!(
                    "{}x{}:{}:{}",
                    a.clusters, a.questions_per_cluster, a.trajectories, a.reads
                )),
                Cell::text(per(a)),
                Cell::Count(a.questions as u64),
                Cell::num(a.se),
                // Costs in whole units (tokens, or dollars to the cent).
                Cell::Num(a.cost, Precision::Fixed(whole)),
                Cell::Num(a.cluster_cost, Precision::Fixed(whole)),
            ]);
        }
        let mut v = View::new(csv);
        let goal = match self.mde {
            Some(m) => format!(
                "goal: MDE {} (SE {})",
                crate::table::number(m),
                crate::table::number(self.target_se)
            ),
            None => format!("goal: SE {}", crate::table::number(self.target_se)),
        };
        v.text(format!(
            "{goal}; clusters cost {} {} each beyond their questions\n\n",
            crate::table::format_number(self.cluster_cost, Precision::Shortest),
            self.unit
        ));
        v.table("designs", t);
        if !self.notes.is_empty() {
            v.text("\n");
            for n in &self.notes {
                v.text(format!("note: {n}\n"));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocation::efficiency::UnitCosts;
    use crate::allocation::planner::{Bounds, PlanStratum};
    use crate::components::forecast::{AuditCluster, AuditStratum};
    use crate::components::variance::PerLevel;

    fn audit() -> Audit {
        let stratum = |name: &str, g: usize, sc: f64| AuditStratum {
            name: name.into(),
            questions: g * 4,
            trajectories: 2,
            reads: 2,
            se: 0.1,
            components: PerLevel {
                question: 0.08,
                trajectory: Some(0.03),
                read: Some(0.02),
            },
            cluster: Some(AuditCluster {
                clusters: g,
                questions_per_cluster: 4.0,
                component: sc,
            }),
        };
        Audit {
            strata: vec![stratum("a", 10, 0.05), stratum("b", 20, 0.02)],
            pooled: None,
            pooled_cluster: None,
            weights: Vec::new(),
        }
    }

    fn planner(a: &Audit, costs: UnitCosts) -> Planner {
        Planner {
            strata: a
                .strata
                .iter()
                .map(|s| PlanStratum {
                    name: s.name.clone(),
                    components: s.components,
                    costs: Some(costs),
                    weight: s.questions,
                    audit_questions: s.questions,
                    audit_trajectories: 2,
                    audit_reads: 2,
                    audit_se: s.se,
                })
                .collect(),
            bounds: Bounds {
                max_questions: 1000,
                max_trajectories: 3,
                max_reads: 3,
            },
            weights: Vec::new(),
        }
    }

    #[test]
    fn the_cheapest_clustered_design_is_the_brute_force_optimum() {
        let a = audit();
        let costs = UnitCosts {
            question: 1.0,
            ..UnitCosts::flat(2.0, 1.0)
        };
        let p = planner(&a, costs);
        for (c_c, target) in [(0.0, 0.03), (40.0, 0.03), (200.0, 0.025), (5.0, 0.05)] {
            let job = ClusterPlanJob {
                target_se: target,
                from_mde: None,
                cluster_cost: c_c,
                max_clusters: 300,
                max_per_cluster: 12,
                max_trajectories: 3,
                max_reads: 3,
                runners_up: 3,
            };
            let r = plan_clusters(&a, &p, "tokens", &job).unwrap();
            let best = &r.designs[0];
            // Every G ≤ 300, M ≤ 12, T ≤ 3, R ≤ 3, evaluated by hand's formulas:
            // SE² = Σ_d (σ²_c/G_d + σ²_q/(G_d M) + σ²_t/(G_d M T) + σ²_r/(G_d M T R)) / 4,
            // cost = Σ_d G_d (c_C + M (T (c_T + R c_R) + c_Q)).
            let mut brute: Option<(f64, usize, usize, usize, usize)> = None;
            for t in 1..=3 {
                for r in 1..=3 {
                    for m in 1..=12 {
                        for g in 2..=300 {
                            let per = split_questions(g, &[10, 20]);
                            if per.contains(&0) {
                                continue;
                            }
                            let (sc, (tf, rf, mf)) = ([0.05, 0.02], (t as f64, r as f64, m as f64));
                            let se2: f64 = (0..2)
                                .map(|d| {
                                    let gd = per[d] as f64;
                                    sc[d] / gd
                                        + 0.08 / (gd * mf)
                                        + 0.03 / (gd * mf * tf)
                                        + 0.02 / (gd * mf * tf * rf)
                                })
                                .sum::<f64>()
                                / 4.0;
                            if se2.sqrt() > target {
                                continue;
                            }
                            let k = tf * (2.0 + rf * 1.0) + 1.0;
                            let cost = g as f64 * c_c + (g as f64) * mf * k;
                            if brute.is_none_or(|b| cost < b.0 - 1e-9) {
                                brute = Some((cost, g, m, t, r));
                            }
                        }
                    }
                }
            }
            let (cost, g, m, t, r) = brute.unwrap();
            assert!(
                (best.cost - cost).abs() < 1e-9,
                "c_C {c_c}: plan {}x{}:{}:{} costs {}, brute force {g}x{m}:{t}:{r} costs {cost}",
                best.clusters,
                best.questions_per_cluster,
                best.trajectories,
                best.reads,
                best.cost
            );
            assert!(best.se <= target);
            // Free clusters: one question each; dear clusters: several per cluster.
            if c_c == 0.0 {
                assert_eq!(best.questions_per_cluster, 1);
            }
            if c_c == 200.0 {
                assert!(best.questions_per_cluster > 2, "{best:?}");
            }
        }
    }

    #[test]
    fn an_unclustered_audit_or_one_without_costs_is_refused() {
        let mut a = audit();
        let p = planner(&a, UnitCosts::flat(1.0, 1.0));
        let job = ClusterPlanJob {
            target_se: 0.03,
            from_mde: None,
            cluster_cost: 1.0,
            max_clusters: 100,
            max_per_cluster: 5,
            max_trajectories: 2,
            max_reads: 2,
            runners_up: 0,
        };
        // A target out of reach: no design, and the notes say why.
        let r = plan_clusters(
            &a,
            &p,
            "tokens",
            &ClusterPlanJob {
                target_se: 1e-4,
                ..job
            },
        )
        .unwrap();
        assert!(r.designs.is_empty() && r.notes[0].starts_with("no design"));
        a.strata[0].cluster = None;
        let e = plan_clusters(&a, &p, "tokens", &job).unwrap_err();
        assert!(e.to_string().contains("its cluster column"), "{e}");
    }
}
