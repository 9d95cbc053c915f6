//! The stratified question bootstrap of a panel's equal-weight estimate, with optional
//! refits of the variance components and D-study forecasts in every replicate.
//!
//! Each question contributes one row of K centred columns to the engine:
//! `d_q = ȳ_q − ȳ_d` and, with components, `d_q² − c₁`, `SS_t,q − c₂`, `SS_r,q − c₃`
//! (c_j the stratum means of those columns, kept in f64 on the host). From a replicate's
//! column sums S₀..S₃ over the Q_d drawn questions of stratum d:
//!
//! * mean*_d = ȳ_d + S₀/Q_d; estimate* = (1/D) Σ_d mean*_d
//! * Σ(ȳ*_q − ȳ*_d)² = S₁ + Q_d c₁ − S₀²/Q_d, so SS*_q = TR (S₁ + Q_d c₁ − S₀²/Q_d)
//! * SS*_t = S₂ + Q_d c₂, SS*_r = S₃ + Q_d c₃
//!
//! and the components are refitted from these sums exactly as for the data
//! ([`crate::components::variance::fit`]), per stratum and pooled.
//!
//! # Unbalanced panels
//!
//! When a stratum is unbalanced (questions with different numbers of trajectories or
//! reads; [`Bootstrap::from_panel`]) the sums above no longer determine the components. The
//! engine then resamples only `d_q = ȳ_q − ȳ_d` (ȳ_q the mean of question q's trajectory
//! means, as `stats variance` reports for REML strata), which gives the estimate and stratum
//! means exactly as above, and every replicate's question draw counts k_q are recovered from
//! the same Philox words ([`crate::resample::counts::draw_counts`]). The components are
//! refitted on that question multiset (each copy an independent question) the way
//! [`crate::components::variance::analyse_panel`] fits the data: an unbalanced stratum and
//! the pooled fit by REML ([`crate::components::reml::fit_resampled`], warm-started from the
//! full-sample optimum), a balanced stratum by ANOVA on the count-weighted sums
//! (SS*_q = TR Σ k_q (ȳ_q − ȳ*)², SS*_t = Σ k_q SS_t,q, SS*_r = Σ k_q SS_r,q with
//! ȳ* = Σ k_q ȳ_q / Q). Replicates are refitted in parallel (rayon); a refit that fails
//! gives NaN for its components, as on balanced panels.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::components::cluster::Anova4;
use crate::components::forecast::{forecast, Audit, AuditCluster, AuditStratum, DesignSpec};
use crate::components::reml::{self, NestedStratum, Shape, Theta};
use crate::components::variance::{fit, nested_stratum, question_mean, AnovaSums, Fit, PerLevel};
use crate::panel::{Panel, Stratum, StratumStats};
use crate::resample::clusters::ClusterDraw;
use crate::resample::counts::draw_counts;
use crate::resample::engine::{ResampleBackend, ResampleJob};
use crate::resample::summary::acceleration;
use crate::resample::table::table_from;
use crate::rng::blocks::Generator;
use crate::{Error, Result};

/// What to compute in every replicate besides the estimate and stratum means.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootstrapSpec {
    /// Refit per-stratum and pooled variance components.
    pub components: bool,
    /// Forecast the nested SE of these designs (`Q:T:R` text as given) from each replicate's components.
    pub designs: Vec<String>,
    /// Forecast from the pooled components instead of each stratum's.
    pub pooled_forecast: bool,
}

/// The shape of one stratum, as the statistics need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumShape {
    pub name: String,
    pub questions: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// ȳ_d, the centre of the first column.
    pub mean: f64,
    /// Centres c₁, c₂, c₃ of the other columns (zero when components are off, and on
    /// unbalanced panels).
    pub centres: [f64; 3],
    /// An unbalanced stratum's questions and min / mean / max trajectories per question and
    /// reads per trajectory (`trajectories` and `reads` are then the rounded means); absent
    /// for a balanced stratum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// With clusters and components: the stratum's equal cluster size M and the centres of
    /// the cluster rows' refit columns ([`Bootstrap::clustered`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterShape>,
}

/// A balanced clustered stratum's refit layout: every cluster has `per_cluster` questions,
/// and the cluster rows' columns 2..6 (S_c²/M, W_c, SS_t,c, SS_r,c) are centred on
/// `centres` (their means over the stratum's clusters, kept in f64 on the host).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClusterShape {
    pub per_cluster: usize,
    pub centres: [f64; 4],
}

/// Columns of an engine row in f64 (the widest layout, the clustered refit's; narrower
/// layouts leave the tail zero).
const ROW: usize = 6;

/// Everything needed to turn replicate sums into statistics, and to summarise them:
/// the layout written at the head of a replicates file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapPlan {
    pub outcome: String,
    pub strata: Vec<StratumShape>,
    pub spec: BootstrapSpec,
    /// Names of the statistics, in the order of every replicate's vector.
    pub statistics: Vec<String>,
    /// Some stratum is unbalanced: the engine resamples the question means alone and the
    /// components are refitted from each replicate's question draw counts (see the module
    /// docs). Absent from the header of a balanced panel's replicates file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unbalanced: bool,
    /// The strata's weights w_d (Σ = 1) in the combined mean Σ w_d·ȳ*_d of every replicate;
    /// empty for equal weights (the mean of the stratum means). Absent from the header of a
    /// replicates file with equal weights.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
    /// Clusters per stratum, G_d, when every replicate draws whole clusters of questions
    /// ([`Bootstrap::clustered`], the shared cluster draw of
    /// [`crate::resample::clusters`]); empty, and absent from a replicates file's header,
    /// for the question bootstrap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<usize>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Per-stratum f64 sums of the K columns over the questions of one (re)sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnSums {
    pub q: f64,
    pub s: [f64; ROW],
}

/// The prepared bootstrap: the plan and the rows that go to the engine.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    pub plan: BootstrapPlan,
    designs: Vec<DesignSpec>,
    /// Per stratum, Q_d rows (G_d with clusters) of K centred f64 values (exact, for the
    /// point estimate and jackknife; the tail beyond K is zero).
    rows64: Vec<Vec<[f64; ROW]>>,
    /// The same rows as f32, row-major, for the engine.
    rows32: Vec<Vec<f32>>,
    /// What the refits of an unbalanced panel need (`None` for a balanced panel).
    unbalanced: Option<Unbalanced>,
}

/// The data of an unbalanced panel's refits.
#[derive(Debug, Clone)]
struct Unbalanced {
    /// Every stratum in REML's layout (the pooled fit takes them all), panel order.
    nested: Vec<NestedStratum>,
    /// A balanced stratum's per-question statistics (it is fitted by ANOVA, as `stats
    /// variance` fits it); `None` for an unbalanced stratum.
    balanced: Vec<Option<StratumStats>>,
    /// Question means ȳ_q of each stratum (for the measured SE of a forecast's audit).
    question_means: Vec<Vec<f64>>,
    /// Each unbalanced stratum's full-sample REML optimum, the warm start of its refits.
    start: Vec<Option<Theta>>,
    /// The pooled fit's full-sample optimum.
    pooled_start: Option<Theta>,
    /// SHA-256 of the engine rows and of every outcome in its nesting.
    digest: String,
    /// The draws' generator (every generator draws the same counts).
    generator: Generator,
    /// With clusters ([`Bootstrap::from_panel_clustered`]): the shared cluster draw, whose
    /// counts, repeated over each cluster's questions, replace the question draw counts.
    draw: Option<ClusterDraw>,
}

impl Unbalanced {
    /// Replicate `r`'s draw count of every question of stratum `s`: the question draw's
    /// ([`draw_counts`]), or with clusters each question its cluster's count.
    fn question_counts(&self, seed: u64, r: u32, s: usize, counts: &mut Vec<u32>) {
        match &self.draw {
            None => draw_counts(self.generator, seed, r, s as u32, counts),
            Some(draw) => {
                let mut c = Vec::new();
                draw.draw_counts(self.generator, seed, r, s as u32, &mut c);
                draw.unit_weights(s, &c, counts);
            }
        }
    }
}

/// SHA-256 (hex) of f32 rows, stratum by stratum.
pub fn data_digest(strata: &[&[f32]]) -> String {
    let mut h = Sha256::new();
    for s in strata {
        h.update((s.len() as u64).to_le_bytes());
        for v in *s {
            h.update(v.to_le_bytes());
        }
    }
    crate::io::digest::hex(&h.finalize())
}

/// Replicates refitted between two progress reports.
const REFIT_BATCH: usize = 256;

impl BootstrapPlan {
    /// Columns per question row: 1 for the estimate alone, 4 with components; per cluster
    /// row 2, or 6 with components ([`Bootstrap::clustered`]).
    pub fn k(&self) -> usize {
        if !self.clusters.is_empty() {
            // Per cluster: Σ_{q ∈ c} (ȳ_q − ȳ_d) and the cluster's questions M_c, then
            // with components S_c²/M, W_c, SS_t,c and SS_r,c, centred.
            if self.spec.components && !self.unbalanced {
                ROW
            } else {
                2
            }
        } else if self.spec.components && !self.unbalanced {
            4
        } else {
            1
        }
    }

    fn names(strata: &[StratumShape], spec: &BootstrapSpec) -> Vec<String> {
        let mut n = vec!["estimate".to_string()];
        n.extend(strata.iter().map(|s| format!("mean[{}]", s.name)));
        if spec.components {
            for s in strata {
                for l in ["question", "trajectory", "read"] {
                    n.push(format!("component[{}].{l}", s.name));
                }
            }
            for l in ["question", "trajectory", "read"] {
                n.push(format!("component[pooled].{l}"));
            }
            for d in &spec.designs {
                n.push(format!("se_nested[{d}]"));
            }
            // With clusters, σ²_c of every stratum and pooled, after the lower levels and
            // the designs (so the question bootstrap's positions hold for both).
            if strata.iter().any(|s| s.cluster.is_some()) {
                n.extend(
                    strata
                        .iter()
                        .map(|s| format!("component[{}].cluster", s.name)),
                );
                n.push("component[pooled].cluster".to_string());
            }
        }
        n
    }

    /// Whether the components are the four-level ones of a clustered panel.
    pub fn clustered_components(&self) -> bool {
        self.spec.components && self.strata.iter().any(|s| s.cluster.is_some())
    }

    /// The strata's combined mean: Σ_d w_d·ȳ_d with the plan's weights, or with equal
    /// weights Σ_d ȳ_d / D (summed then divided, as always, so equal weights give the same
    /// bits as before weights existed). The same host arithmetic on either backend's sums,
    /// so the CPU and GPU replicates stay identical.
    pub fn combined(&self, means: &[f64]) -> f64 {
        crate::panel::combine_strata(means.iter().copied(), &self.weights)
    }

    /// The statistic vector from per-stratum column sums (see the module docs).
    /// Levels that are not estimable, and a pooled fit across unequal designs, are NaN.
    pub fn statistics(&self, sums: &[ColumnSums], designs: &[DesignSpec]) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.statistics.len());
        let means: Vec<f64> = self
            .strata
            .iter()
            .zip(sums)
            .map(|(st, c)| st.mean + c.s[0] / c.q)
            .collect();
        out.push(self.combined(&means));
        out.extend_from_slice(&means);
        if !self.spec.components {
            return out;
        }
        if self.clustered_components() {
            self.clustered_statistics(sums, designs, &mut out);
            return out;
        }
        let anova: Vec<AnovaSums> = self
            .strata
            .iter()
            .zip(sums)
            .map(|(st, c)| {
                let (q, t, r) = (c.q, st.trajectories, st.reads);
                AnovaSums {
                    questions: q as usize,
                    t,
                    r,
                    ss_question: (t * r) as f64
                        * (c.s[1] + q * st.centres[0] - c.s[0] * c.s[0] / q),
                    ss_trajectory: c.s[2] + q * st.centres[1],
                    ss_read: c.s[3] + q * st.centres[2],
                    df_question: q - 1.0,
                    df_trajectory: q * (t as f64 - 1.0),
                    df_read: q * t as f64 * (r as f64 - 1.0),
                }
            })
            .collect();
        let push_fit = |out: &mut Vec<f64>, f: Option<&Fit>| match f {
            Some(f) => {
                out.push(f.components.question);
                out.push(f.components.trajectory.unwrap_or(f64::NAN));
                out.push(f.components.read.unwrap_or(f64::NAN));
            }
            None => out.extend([f64::NAN; 3]),
        };
        let fits: Vec<Option<Fit>> = anova.iter().map(|a| fit(a).ok()).collect();
        for f in &fits {
            push_fit(&mut out, f.as_ref());
        }
        let pooled = AnovaSums::pooled(&anova).ok().and_then(|p| fit(&p).ok());
        push_fit(&mut out, pooled.as_ref());
        if !designs.is_empty() {
            let audit = fits
                .iter()
                .zip(&self.strata)
                .zip(&anova)
                .map(|((f, st), a)| {
                    f.as_ref().map(|f| AuditStratum {
                        name: st.name.clone(),
                        questions: a.questions,
                        trajectories: a.t,
                        reads: a.r,
                        se: (f.ms.question / (a.questions * a.t * a.r) as f64).sqrt(),
                        components: f.components,
                        cluster: None,
                    })
                });
            let audit: Option<Vec<AuditStratum>> = audit.collect();
            for d in designs {
                let se = audit
                    .as_ref()
                    .and_then(|strata| {
                        let a = Audit {
                            strata: strata.clone(),
                            pooled: pooled.as_ref().map(|p| p.components),
                            weights: self.weights.clone(),
                            pooled_cluster: None,
                        };
                        forecast(&a, d, self.spec.pooled_forecast).ok()
                    })
                    .map(|f| f.se_nested)
                    .unwrap_or(f64::NAN);
                out.push(se);
            }
        }
        out
    }
}

impl BootstrapPlan {
    /// The four-level ANOVA refit of a balanced clustered panel from its cluster rows' sums
    /// (see [`Bootstrap::clustered`]): with Q* = Σ M_c the drawn questions, G* = Q*/M the
    /// drawn clusters (a cluster drawn twice counts twice) and S₀..S₅ the column sums,
    ///
    /// * SS_c = TR (S₂ + G* c₁ − S₀²/Q*) = MTR Σ_g (ȳ_g − ȳ*)²
    /// * SS_q = TR (S₃ + G* c₂) = TR Σ_g Σ_q (ȳ_gq − ȳ_g)²
    /// * SS_t = S₄ + G* c₃, SS_r = S₅ + G* c₄
    ///
    /// fitted by [`Anova4::fit`] exactly as `variance --cluster` fits the data, per stratum
    /// and pooled. Appends the lower levels (per stratum, pooled), the designs' forecast SEs
    /// (clustered audits: `GxM:T:R` by the clustered D-study) and σ²_c (per stratum, pooled).
    fn clustered_statistics(
        &self,
        sums: &[ColumnSums],
        designs: &[DesignSpec],
        out: &mut Vec<f64>,
    ) {
        let anova: Vec<Option<Anova4>> = self
            .strata
            .iter()
            .zip(sums)
            .map(|(st, c)| {
                let cs = st.cluster?;
                let (q, m, t, r) = (c.q, cs.per_cluster, st.trajectories, st.reads);
                let g = (q / m as f64).round();
                let tr = (t * r) as f64;
                let gi = g as usize;
                Some(Anova4 {
                    g: gi,
                    m,
                    t,
                    r,
                    ss: [
                        tr * (c.s[2] + g * cs.centres[0] - c.s[0] * c.s[0] / q),
                        tr * (c.s[3] + g * cs.centres[1]),
                        c.s[4] + g * cs.centres[2],
                        c.s[5] + g * cs.centres[3],
                    ],
                    df: [
                        g - 1.0,
                        (gi * (m - 1)) as f64,
                        (gi * m * (t - 1)) as f64,
                        (gi * m * t * (r - 1)) as f64,
                    ],
                })
            })
            .collect();
        let fits: Vec<Option<(Fit, f64, f64)>> = anova
            .iter()
            .map(|a| a.as_ref().and_then(|a| a.fit().ok()))
            .collect();
        for f in &fits {
            push_components(out, f.as_ref().map(|f| &f.0.components));
        }
        let parts: Option<Vec<Anova4>> = anova.iter().copied().collect();
        let pooled = parts
            .as_deref()
            .and_then(Anova4::pooled)
            .and_then(|p| p.fit().ok());
        push_components(out, pooled.as_ref().map(|p| &p.0.components));
        if !designs.is_empty() {
            let audit: Option<Vec<AuditStratum>> = fits
                .iter()
                .zip(&anova)
                .zip(&self.strata)
                .map(|((f, a), st)| {
                    let ((fit, ms_c, sigma_c), a) = (f.as_ref()?, a.as_ref()?);
                    let q = a.g * a.m;
                    Some(AuditStratum {
                        name: st.name.clone(),
                        questions: q,
                        trajectories: a.t,
                        reads: a.r,
                        se: (ms_c / (q * a.t * a.r) as f64).sqrt(),
                        components: fit.components,
                        cluster: Some(AuditCluster {
                            clusters: a.g,
                            questions_per_cluster: a.m as f64,
                            component: *sigma_c,
                        }),
                    })
                })
                .collect();
            for d in designs {
                let se = audit
                    .as_ref()
                    .and_then(|strata| {
                        let a = Audit {
                            strata: strata.clone(),
                            pooled: pooled.as_ref().map(|p| p.0.components),
                            weights: self.weights.clone(),
                            pooled_cluster: pooled.as_ref().map(|p| p.2),
                        };
                        forecast(&a, d, self.spec.pooled_forecast).ok()
                    })
                    .map(|f| f.se_nested)
                    .unwrap_or(f64::NAN);
                out.push(se);
            }
        }
        out.extend(fits.iter().map(|f| f.as_ref().map_or(f64::NAN, |f| f.2)));
        out.push(pooled.as_ref().map_or(f64::NAN, |p| p.2));
    }
}

impl Bootstrap {
    /// Prepares the rows and plan from the per-question statistics of each stratum.
    ///
    /// # Errors
    /// [`Error::Setting`] (`design`) for a design that does not parse or fit the strata.
    pub fn new(outcome: &str, strata: &[StratumStats], spec: BootstrapSpec) -> Result<Self> {
        let designs: Vec<DesignSpec> = spec
            .designs
            .iter()
            .map(|d| d.parse())
            .collect::<Result<_>>()?;
        let mut shapes = Vec::with_capacity(strata.len());
        let mut rows64 = Vec::with_capacity(strata.len());
        for s in strata {
            // As in `stats variance`: a question variance (and with it every refitted
            // component and forecast) is undefined with one question, so refuse rather than
            // report a column of "not estimable".
            if spec.components && s.q() < 2 {
                return Err(Error::Data(format!(
                    "stratum '{}' has {} question(s); refitting the variance components needs at least 2 questions per stratum",
                    s.name,
                    s.q()
                )));
            }
            let q = s.q() as f64;
            let mean = s.mean();
            let dev: Vec<f64> = s.questions.iter().map(|x| x.mean - mean).collect();
            let centres = if spec.components {
                [
                    dev.iter().map(|d| d * d).sum::<f64>() / q,
                    s.questions.iter().map(|x| x.ss_trajectory).sum::<f64>() / q,
                    s.questions.iter().map(|x| x.ss_read).sum::<f64>() / q,
                ]
            } else {
                [0.0; 3]
            };
            rows64.push(
                s.questions
                    .iter()
                    .zip(&dev)
                    .map(|(x, d)| {
                        [
                            *d,
                            d * d - centres[0],
                            x.ss_trajectory - centres[1],
                            x.ss_read - centres[2],
                            0.0,
                            0.0,
                        ]
                    })
                    .collect(),
            );
            shapes.push(StratumShape {
                name: s.name.clone(),
                questions: s.q(),
                trajectories: s.t,
                reads: s.r,
                mean,
                centres,
                shape: None,
                cluster: None,
            });
        }
        let plan = BootstrapPlan {
            outcome: outcome.to_string(),
            statistics: BootstrapPlan::names(&shapes, &spec),
            strata: shapes,
            spec,
            unbalanced: false,
            weights: Vec::new(),
            clusters: Vec::new(),
        };
        Bootstrap::from_rows(plan, designs, rows64)
    }

    /// The bootstrap of a balanced plan (no refits of an unbalanced panel) on its exact
    /// rows `rows64`: the engine's f32 tables are their first K columns, row-major.
    ///
    /// # Errors
    /// Those of [`Bootstrap::check_designs`].
    fn from_rows(
        plan: BootstrapPlan,
        designs: Vec<DesignSpec>,
        rows64: Vec<Vec<[f64; ROW]>>,
    ) -> Result<Self> {
        let k = plan.k();
        let rows32 = rows64
            .iter()
            .map(|rows| {
                table_from(
                    rows.len() * k,
                    rows.iter().flat_map(|r| r[..k].iter().map(|&v| v as f32)),
                )
            })
            .collect();
        let boot = Bootstrap {
            plan,
            designs,
            rows64,
            rows32,
            unbalanced: None,
        };
        boot.check_designs()?;
        Ok(boot)
    }

    /// Checks every design asked for against the strata it forecasts.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `design` and the design as written.
    fn check_designs(&self) -> Result<()> {
        for (text, d) in self.plan.spec.designs.iter().zip(&self.designs) {
            check_design(&self.plan.strata, d)
                .map_err(|e| Error::setting("design", format!("{text}: {e}")))?;
        }
        Ok(())
    }

    /// The engine job for a replicate range.
    pub fn job(&self, seed: u64, replicates: std::ops::Range<u32>) -> ResampleJob<'_> {
        ResampleJob {
            strata: self.rows32.iter().map(|r| r.as_slice()).collect(),
            k: self.plan.k(),
            seed,
            replicates,
        }
    }

    fn exact_sums(&self) -> Vec<ColumnSums> {
        self.rows64
            .iter()
            .map(|rows| {
                let mut s = [0.0; ROW];
                for r in rows {
                    for j in 0..ROW {
                        s[j] += r[j];
                    }
                }
                ColumnSums {
                    // Questions in the sample: with clusters, Σ M_c of the rows (column 1).
                    q: if self.plan.clusters.is_empty() {
                        rows.len() as f64
                    } else {
                        s[1]
                    },
                    s,
                }
            })
            .collect()
    }

    /// The statistics at the data (from exact f64 sums; on an unbalanced panel the
    /// components are the full-sample fits, exactly those `stats variance` reports).
    pub fn point(&self) -> Vec<f64> {
        let sums = self.exact_sums();
        match &self.unbalanced {
            None => self.plan.statistics(&sums, &self.designs),
            Some(u) => self.unbalanced_statistics(u, &self.means_of(&sums), None),
        }
    }

    /// ȳ_d + S₀/Q_d of every stratum.
    fn means_of(&self, sums: &[ColumnSums]) -> Vec<f64> {
        self.plan
            .strata
            .iter()
            .zip(sums)
            .map(|(st, c)| st.mean + c.s[0] / c.q)
            .collect()
    }

    /// Statistics of every replicate of a balanced panel from the engine's f32 sums
    /// (`B × S × K`), row-major `B × n_statistics`.
    fn replicate_statistics(&self, sums: &[f32]) -> Vec<f64> {
        let k = self.plan.k();
        let s_n = self.plan.strata.len();
        let mut out = Vec::with_capacity(sums.len() / (s_n * k) * self.plan.statistics.len());
        let mut cs = vec![
            ColumnSums {
                q: 0.0,
                s: [0.0; ROW]
            };
            s_n
        ];
        for rep in sums.chunks_exact(s_n * k) {
            for (s, c) in cs.iter_mut().enumerate() {
                for j in 0..k {
                    c.s[j] = rep[s * k + j] as f64;
                }
                // With clusters the drawn questions Σ M_c (an integer sum, exact in f32
                // below 2^24), so the stratum mean is the ratio ȳ_d + Σ S₀ / Σ M_c.
                c.q = if self.plan.clusters.is_empty() {
                    self.plan.strata[s].questions as f64
                } else {
                    c.s[1]
                };
            }
            out.extend(self.plan.statistics(&cs, &self.designs));
        }
        out
    }

    /// Runs replicates `range` on `backend` and returns their statistics (`B × n_statistics`).
    /// On an unbalanced panel with components, the refits run in parallel after the engine,
    /// and `progress` counts refitted replicates.
    ///
    /// # Errors
    /// Whatever the backend reports (shape or device errors).
    pub fn run(
        &self,
        backend: &dyn ResampleBackend,
        seed: u64,
        range: std::ops::Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>> {
        let Some(u) = &self.unbalanced else {
            let sums = backend.resample_sums(&self.job(seed, range), progress)?;
            return Ok(self.replicate_statistics(&sums));
        };
        let refits = self.plan.spec.components;
        let quiet = |_: u64| {};
        let sums = backend.resample_sums(
            &self.job(seed, range.clone()),
            if refits { &quiet } else { progress },
        )?;
        let s_n = self.plan.strata.len();
        let k = self.plan.k();
        // k = 1: ȳ_d + S₀/Q_d; with clusters (k = 2) the ratio ȳ_d + S₀/ΣM_c.
        let means = |i: usize| -> Vec<f64> {
            self.plan
                .strata
                .iter()
                .zip(sums[i * s_n * k..(i + 1) * s_n * k].chunks_exact(k))
                .map(|(st, s)| {
                    let q = if k == 2 {
                        f64::from(s[1])
                    } else {
                        st.questions as f64
                    };
                    st.mean + f64::from(s[0]) / q
                })
                .collect()
        };
        let n = self.plan.statistics.len();
        let mut out = vec![0.0; range.len() * n];
        if !refits {
            for (i, row) in out.chunks_exact_mut(n).enumerate() {
                row.copy_from_slice(&self.unbalanced_statistics(u, &means(i), None));
            }
            return Ok(out);
        }
        let mut done = 0;
        for block in out.chunks_mut(REFIT_BATCH * n) {
            let first = done;
            block.par_chunks_mut(n).enumerate().for_each_init(
                || {
                    self.plan
                        .strata
                        .iter()
                        .map(|s| vec![0u32; s.questions])
                        .collect::<Vec<_>>()
                },
                |counts, (j, row)| {
                    let i = first + j;
                    let r = range.start + i as u32;
                    for (s, c) in counts.iter_mut().enumerate() {
                        u.question_counts(seed, r, s, c);
                    }
                    row.copy_from_slice(&self.unbalanced_statistics(u, &means(i), Some(counts)));
                },
            );
            done += block.len() / n;
            progress(done as u64);
        }
        Ok(out)
    }

    /// BCa accelerations of every statistic from the stratified jackknife: leaving out
    /// question i of stratum d gives θ₍dᵢ₎; influence U_di = (Q_d − 1)(θ̄₍d·₎ − θ₍dᵢ₎);
    /// with the stratum-weighted values l_di = U_di / Q_d (Davison & Hinkley 1997, §3.7),
    /// a = Σ l³ / (6 (Σ l²)^{3/2}) over all (d, i). The weights matter when strata differ in
    /// size: θ* − θ̂ ≈ Σ_d Q_d⁻¹ Σ_i (k_di − 1) U_di, so a question of a small stratum moves
    /// the replicate more, and Σ l² and Σ l³ are the linear approximation's variance and
    /// third cumulant (R's `boot` pools the U unweighted, which is this only for equal Q_d).
    /// On an unbalanced panel every θ₍dᵢ₎ refits the components without question i (in
    /// parallel).
    pub fn accelerations(&self) -> Vec<f64> {
        let full = self.exact_sums();
        let n = self.plan.statistics.len();
        let mut influence: Vec<Vec<f64>> = vec![Vec::new(); n];
        for (d, rows) in self.rows64.iter().enumerate() {
            let q = rows.len() as f64;
            if rows.len() < 2 {
                continue;
            }
            let leave_out = |r: &[f64; ROW]| {
                let mut sums = full.clone();
                // A cluster left out takes its M_c questions with it.
                sums[d].q = if self.plan.clusters.is_empty() {
                    q - 1.0
                } else {
                    full[d].q - r[1]
                };
                sums[d].s = std::array::from_fn(|j| full[d].s[j] - r[j]);
                sums
            };
            let loo: Vec<Vec<f64>> = match &self.unbalanced {
                None => rows
                    .iter()
                    .map(|r| self.plan.statistics(&leave_out(r), &self.designs))
                    .collect(),
                Some(u) => rows
                    .par_iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let mut counts: Vec<Vec<u32>> = self
                            .plan
                            .strata
                            .iter()
                            .map(|s| vec![1u32; s.questions])
                            .collect();
                        // Row i is question i, or with clusters cluster i's questions.
                        match &u.draw {
                            None => counts[d][i] = 0,
                            Some(draw) => {
                                for (w, &c) in counts[d].iter_mut().zip(draw.strata()[d].of()) {
                                    if c as usize == i {
                                        *w = 0;
                                    }
                                }
                            }
                        }
                        let means = self.means_of(&leave_out(r));
                        self.unbalanced_statistics(u, &means, Some(&counts))
                    })
                    .collect(),
            };
            for (stat, inf) in influence.iter_mut().enumerate() {
                let mean = loo.iter().map(|v| v[stat]).sum::<f64>() / q;
                inf.extend(loo.iter().map(|v| (q - 1.0) * (mean - v[stat]) / q));
            }
        }
        influence.iter().map(|u| acceleration(u)).collect()
    }

    /// SHA-256 (hex) of the data the replicates come from, for the replicates file: the
    /// engine's f32 rows ([`data_digest`]) of a balanced panel; of an unbalanced panel also
    /// every outcome in its nesting (the rows alone hold only question means).
    pub fn data_sha256(&self) -> String {
        match &self.unbalanced {
            Some(u) => u.digest.clone(),
            None => data_digest(&self.job(0, 0..0).strata),
        }
    }

    /// Prepares the bootstrap of a loaded panel: exactly [`Bootstrap::new`] when every
    /// stratum is balanced; otherwise the unbalanced layout of the module docs, with the
    /// full-sample fits that warm-start every refit.
    ///
    /// # Errors
    /// [`Error::Setting`] (`design`) for a design that does not parse or fit the strata;
    /// [`Error::Usage`] for a bad `STATS_CPU_RNG`; [`Error::Data`] for a stratum without
    /// questions.
    pub fn from_panel(panel: &Panel, spec: BootstrapSpec) -> Result<Self> {
        if panel.strata.iter().all(Stratum::is_balanced) {
            let stats: Vec<StratumStats> = panel
                .strata
                .iter()
                .map(StratumStats::from_stratum)
                .collect();
            let mut boot = Self::new(&panel.outcome, &stats, spec)?;
            boot.plan.weights = panel.weights.clone();
            return Ok(boot);
        }
        let designs: Vec<DesignSpec> = spec
            .designs
            .iter()
            .map(|d| d.parse())
            .collect::<Result<_>>()?;
        let n_s = panel.strata.len();
        let (mut shapes, mut rows64, mut nested, mut balanced, mut question_means) = (
            Vec::with_capacity(n_s),
            Vec::with_capacity(n_s),
            Vec::with_capacity(n_s),
            Vec::with_capacity(n_s),
            Vec::with_capacity(n_s),
        );
        for s in &panel.strata {
            let n = nested_stratum(s)?;
            let stats = s.is_balanced().then(|| StratumStats::from_stratum(s));
            // ȳ_q as `stats variance` computes it: the mean of the trajectory means.
            let means: Vec<f64> = match &stats {
                Some(st) => st.questions.iter().map(|x| x.mean).collect(),
                None => (0..s.q()).map(|q| question_mean(s, q)).collect(),
            };
            let mean = means.iter().sum::<f64>() / means.len() as f64;
            rows64.push(
                means
                    .iter()
                    .map(|m| {
                        let mut row = [0.0; ROW];
                        row[0] = m - mean;
                        row
                    })
                    .collect(),
            );
            let shape = n.shape();
            let (t, r) = match &stats {
                Some(st) => (st.t, st.r),
                None => (
                    shape.trajectories.mean.round() as usize,
                    shape.reads.mean.round() as usize,
                ),
            };
            shapes.push(StratumShape {
                name: s.name.clone(),
                questions: s.q(),
                trajectories: t,
                reads: r,
                mean,
                centres: [0.0; 3],
                shape: stats.is_none().then_some(shape),
                cluster: None,
            });
            nested.push(n);
            balanced.push(stats);
            question_means.push(means);
        }
        let rows32: Vec<Vec<f32>> = rows64
            .iter()
            .map(|rows: &Vec<[f64; ROW]>| rows.iter().map(|r| r[0] as f32).collect())
            .collect();
        let mut h = Sha256::new();
        h.update(b"unbalanced");
        h.update(data_digest(
            &rows32.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        ));
        for s in &panel.strata {
            for q in 0..s.q() {
                let t = s.trajectories_of(q);
                h.update((t.len() as u64).to_le_bytes());
                for reads in t {
                    h.update((reads.len() as u64).to_le_bytes());
                    for v in reads {
                        h.update(v.to_le_bytes());
                    }
                }
            }
        }
        let digest = crate::io::digest::hex(&h.finalize());
        let (start, pooled_start) = if spec.components {
            let refs: Vec<&NestedStratum> = nested.iter().collect();
            (
                nested
                    .iter()
                    .zip(&balanced)
                    .map(|(n, b)| match b {
                        Some(_) => None,
                        None => reml::fit(&[n]).ok().map(|f| f.theta),
                    })
                    .collect(),
                reml::fit(&refs).ok().map(|f| f.theta),
            )
        } else {
            (vec![None; n_s], None)
        };
        let plan = BootstrapPlan {
            outcome: panel.outcome.clone(),
            statistics: BootstrapPlan::names(&shapes, &spec),
            strata: shapes,
            spec,
            unbalanced: true,
            weights: panel.weights.clone(),
            clusters: Vec::new(),
        };
        let boot = Bootstrap {
            plan,
            designs,
            rows64,
            rows32,
            unbalanced: Some(Unbalanced {
                nested,
                balanced,
                question_means,
                start,
                pooled_start,
                digest,
                generator: Generator::from_env()?,
                draw: None,
            }),
        };
        boot.check_designs()?;
        Ok(boot)
    }

    /// The bootstrap of an unbalanced panel ([`Bootstrap::from_panel`]) drawing whole
    /// clusters of `draw` instead of questions: the engine gets one row per cluster,
    /// `[Σ_{q ∈ c} (ȳ_q − ȳ_d), M_c]` (the stratum mean is the ratio, as in
    /// [`Bootstrap::clustered`]), and the refits take each question its cluster's draw
    /// count, a question drawn twice counting as two questions (REML by
    /// [`crate::components::reml::fit_resampled`], a balanced stratum by ANOVA), as the
    /// question bootstrap counts them. For `efficiency --cluster` of an unbalanced panel.
    ///
    /// # Errors
    /// Those of [`Bootstrap::from_panel`]; [`Error::Data`] when `draw` does not have one
    /// cluster per question of every stratum, or the panel is balanced (use
    /// [`Bootstrap::clustered`]).
    pub fn from_panel_clustered(
        panel: &Panel,
        draw: &ClusterDraw,
        spec: BootstrapSpec,
    ) -> Result<Self> {
        if draw.strata().len() != panel.strata.len()
            || draw
                .strata()
                .iter()
                .zip(&panel.strata)
                .any(|(c, s)| c.units() != s.q())
        {
            return Err(Error::Data(
                "cluster bootstrap: one cluster per question of every stratum is needed".into(),
            ));
        }
        let mut boot = Self::from_panel(panel, spec)?;
        let Some(u) = boot.unbalanced.as_mut() else {
            return Err(Error::Data(
                "the clustered refits of from_panel_clustered are for unbalanced panels".into(),
            ));
        };
        u.draw = Some(draw.clone());
        boot.plan.clusters = draw.counts();
        boot.rows64 = (0..panel.strata.len())
            .map(|d| {
                let means = &u.question_means[d];
                let mean = boot.plan.strata[d].mean;
                draw.cluster_rows(d, 2, |q, j| if j == 0 { means[q] - mean } else { 1.0 })
                    .chunks_exact(2)
                    .map(|r| {
                        let mut row = [0.0; ROW];
                        row[..2].copy_from_slice(r);
                        row
                    })
                    .collect()
            })
            .collect();
        boot.rows32 = boot
            .rows64
            .iter()
            .map(|rows| {
                table_from(
                    rows.len() * 2,
                    rows.iter().flat_map(|r| r[..2].iter().map(|&v| v as f32)),
                )
            })
            .collect();
        Ok(boot)
    }

    /// Prepares the cluster bootstrap of a loaded panel: `clusters[d][q]` is the cluster of
    /// question `q` (panel order) of stratum `d`. Every replicate draws, within each stratum,
    /// G_d clusters with replacement by the shared cluster draw
    /// ([`crate::resample::clusters`]), and a drawn cluster's questions come along with all
    /// their trajectories and reads. The engine gets one row per cluster c,
    /// `[Σ_{q ∈ c} (ȳ_q − ȳ_d), M_c]` (ȳ_q the mean of question q's trajectory means, as for
    /// the question bootstrap), and a replicate's stratum mean is the ratio
    /// `ȳ*_d = ȳ_d + Σ_drawn S_c / Σ_drawn M_c` (with equal cluster sizes, the mean of the
    /// drawn clusters' means); the estimate combines them as always. Balanced and
    /// unbalanced strata are drawn alike.
    ///
    /// With components (balanced clustered panels: every cluster of a stratum has M
    /// questions, every question T trajectories of R reads) a cluster row carries four more
    /// columns, centred on their means over the stratum's clusters: S_c²/M (with S_c the
    /// first column, M(ȳ_c − ȳ_d)²), W_c = Σ_{q ∈ c} (ȳ_q − ȳ_c)², and the cluster's sums
    /// of SS_t,q and SS_r,q. Their sums over a replicate's drawn clusters are the four-level
    /// ANOVA's sums of squares of the drawn questions, a cluster drawn twice giving two
    /// clusters (see `BootstrapPlan::clustered_statistics`), so every replicate refits
    /// σ²_c, σ²_q, σ²_t, σ²_r as `variance --cluster` fits the data, and forecasts the
    /// designs (`GxM:T:R` clustered, `Q:T:R` one question per cluster) from them.
    ///
    /// # Errors
    /// [`Error::Setting`] (`cluster`) for components or designs of an unbalanced clustered
    /// panel (REML refits from cluster draws are not implemented), or a stratum with fewer
    /// than 2 clusters; [`Error::Setting`] (`design`) for a design that does not parse or
    /// fit the strata; [`Error::Data`] when `clusters` does not give one cluster per
    /// question of every stratum.
    pub fn clustered<K: Eq + std::hash::Hash + Clone>(
        panel: &Panel,
        clusters: &[Vec<K>],
        spec: BootstrapSpec,
    ) -> Result<Self> {
        let designs: Vec<DesignSpec> = spec
            .designs
            .iter()
            .map(|d| d.parse())
            .collect::<Result<_>>()?;
        let refits = spec.components || !spec.designs.is_empty();
        if clusters.len() != panel.strata.len()
            || panel
                .strata
                .iter()
                .zip(clusters)
                .any(|(s, c)| c.len() != s.q())
        {
            return Err(Error::Data(
                "cluster bootstrap: one cluster per question of every stratum is needed".into(),
            ));
        }
        let draw = ClusterDraw::new(clusters)?;
        let n_s = panel.strata.len();
        let (mut shapes, mut rows64) = (Vec::with_capacity(n_s), Vec::with_capacity(n_s));
        for (d, s) in panel.strata.iter().enumerate() {
            let g = draw.strata()[d].count();
            if g < 2 {
                return Err(Error::setting(
                    "cluster",
                    format!(
                        "stratum '{}' has {g} cluster; the cluster bootstrap needs at least 2 \
                         clusters in every stratum",
                        s.name
                    ),
                ));
            }
            let stats = s.is_balanced().then(|| StratumStats::from_stratum(s));
            let sizes = draw.strata()[d].sizes();
            let equal = sizes.iter().all(|&m| m == sizes[0]);
            if refits && (stats.is_none() || !equal) {
                return Err(Error::setting(
                    "cluster",
                    format!(
                        "stratum '{}' is unbalanced ({}): the cluster bootstrap refits \
                         components and forecasts designs only on balanced clustered panels \
                         (every cluster of a stratum with the same number of questions, every \
                         question with the same trajectories and reads); REML refits from \
                         cluster draws are not implemented yet (ask for neither, or use \
                         `variance` for the components)",
                        s.name,
                        if equal {
                            "questions differ in trajectories or reads"
                        } else {
                            "its clusters differ in size"
                        }
                    ),
                ));
            }
            let means: Vec<f64> = match &stats {
                Some(st) => st.questions.iter().map(|x| x.mean).collect(),
                None => (0..s.q()).map(|q| question_mean(s, q)).collect(),
            };
            let mean = means.iter().sum::<f64>() / means.len() as f64;
            let rows = draw.cluster_rows(d, 2, |q, j| if j == 0 { means[q] - mean } else { 1.0 });
            let mut cluster_shape = None;
            let mut rows: Vec<[f64; ROW]> = rows
                .chunks_exact(2)
                .map(|r| {
                    let mut row = [0.0; ROW];
                    row[..2].copy_from_slice(r);
                    row
                })
                .collect();
            if let (true, Some(st)) = (refits, &stats) {
                // The refit columns (see above): S_c²/M, W_c, Σ SS_t, Σ SS_r, then centred.
                // Also for designs without components (which, as for the question bootstrap,
                // are then not forecast), so that a GxM:T:R design checks as clustered.
                let m = sizes[0] as usize;
                for (row, members) in rows.iter_mut().zip(draw.strata()[d].members()) {
                    let cm = members.iter().map(|&q| means[q]).sum::<f64>() / m as f64;
                    row[2] = row[0] * row[0] / m as f64;
                    row[3] = members.iter().map(|&q| (means[q] - cm).powi(2)).sum();
                    row[4] = members.iter().map(|&q| st.questions[q].ss_trajectory).sum();
                    row[5] = members.iter().map(|&q| st.questions[q].ss_read).sum();
                }
                let g = rows.len() as f64;
                let centres: [f64; 4] =
                    std::array::from_fn(|j| rows.iter().map(|r| r[2 + j]).sum::<f64>() / g);
                for row in &mut rows {
                    for j in 0..4 {
                        row[2 + j] -= centres[j];
                    }
                }
                cluster_shape = Some(ClusterShape {
                    per_cluster: m,
                    centres,
                });
            }
            rows64.push(rows);
            let (t, r, shape) = match &stats {
                Some(st) => (st.t, st.r, None),
                None => {
                    let shape = nested_stratum(s)?.shape();
                    (
                        shape.trajectories.mean.round() as usize,
                        shape.reads.mean.round() as usize,
                        Some(shape),
                    )
                }
            };
            shapes.push(StratumShape {
                name: s.name.clone(),
                questions: s.q(),
                trajectories: t,
                reads: r,
                mean,
                centres: [0.0; 3],
                shape,
                cluster: cluster_shape,
            });
        }
        let plan = BootstrapPlan {
            outcome: panel.outcome.clone(),
            statistics: BootstrapPlan::names(&shapes, &spec),
            strata: shapes,
            spec,
            unbalanced: false,
            weights: panel.weights.clone(),
            clusters: draw.counts(),
        };
        Bootstrap::from_rows(plan, designs, rows64)
    }

    /// The statistic vector of an unbalanced panel from the stratum means and the question
    /// draw counts of a replicate (`None`: the data, every question once, fitted cold as
    /// `stats variance` fits it). See the module docs.
    fn unbalanced_statistics(
        &self,
        u: &Unbalanced,
        means: &[f64],
        counts: Option<&[Vec<u32>]>,
    ) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.plan.statistics.len());
        out.push(self.plan.combined(means));
        out.extend_from_slice(means);
        if !self.plan.spec.components {
            return out;
        }
        let count = |d: usize| counts.map(|c| c[d].as_slice());
        let mut audit = Vec::with_capacity(self.plan.strata.len());
        for (d, st) in self.plan.strata.iter().enumerate() {
            let fitted = match &u.balanced[d] {
                Some(stats) => {
                    let a = match count(d) {
                        None => AnovaSums::of_stratum(stats),
                        Some(c) => weighted_anova(stats, c),
                    };
                    fit(&a).ok().map(|f| {
                        let se = (f.ms.question / (a.questions * a.t * a.r) as f64).sqrt();
                        (f.components, se)
                    })
                }
                None => {
                    let n = &u.nested[d];
                    let f = match count(d) {
                        None => reml::fit(&[n]),
                        Some(c) => reml::fit_resampled(&[n], &[c], u.start[d]),
                    };
                    f.ok()
                        .map(|f| (f.components, question_se(&u.question_means[d], count(d))))
                }
            };
            push_components(&mut out, fitted.as_ref().map(|f| &f.0));
            audit.push(fitted.map(|(components, se)| AuditStratum {
                name: st.name.clone(),
                questions: st.questions,
                trajectories: st.trajectories,
                reads: st.reads,
                se,
                components,
                cluster: None,
            }));
        }
        let refs: Vec<&NestedStratum> = u.nested.iter().collect();
        let pooled = match counts {
            None => reml::fit(&refs),
            Some(c) => {
                let c: Vec<&[u32]> = c.iter().map(Vec::as_slice).collect();
                reml::fit_resampled(&refs, &c, u.pooled_start)
            }
        }
        .ok()
        .map(|f| f.components);
        push_components(&mut out, pooled.as_ref());
        let audit: Option<Vec<AuditStratum>> = audit.into_iter().collect();
        for d in &self.designs {
            let se = audit
                .as_ref()
                .and_then(|strata| {
                    let a = Audit {
                        strata: strata.clone(),
                        pooled,
                        weights: self.plan.weights.clone(),
                        pooled_cluster: None,
                    };
                    forecast(&a, d, self.plan.spec.pooled_forecast).ok()
                })
                .map(|f| f.se_nested)
                .unwrap_or(f64::NAN);
            out.push(se);
        }
        out
    }
}

impl Bootstrap {
    /// Whether this bootstrap refits an unbalanced panel from question draw counts.
    pub fn is_unbalanced(&self) -> bool {
        self.unbalanced.is_some()
    }

    /// The refitted components of every stratum and of the pooled fit in one statistic
    /// vector of [`Bootstrap::point`] or [`Bootstrap::run`] (with `components` in the spec):
    /// `None` for a fit that failed; a level that is not estimable is `None` inside.
    pub fn components_of(&self, stats: &[f64]) -> (Vec<Option<PerLevel>>, Option<PerLevel>) {
        let n = self.plan.strata.len();
        let at = |i: usize| {
            let base = 1 + n + 3 * i;
            let v = &stats[base..base + 3];
            let some = |x: f64| (!x.is_nan()).then_some(x);
            some(v[0]).map(|question| PerLevel {
                question,
                trajectory: some(v[1]),
                read: some(v[2]),
            })
        };
        ((0..n).map(at).collect(), at(n))
    }

    /// Count-weighted column sums of replicates `range`: for replicate r, stratum d and
    /// column j, Σ_q k_q `rows[d][q][j]` with k_q the times replicate r draws question q
    /// ([`draw_counts`], the draws the engine sums and the unbalanced refits use), so that
    /// statistics computed from these sums see exactly the resample whose components
    /// [`Bootstrap::run`] refits. Returned `[replicate][stratum][column]`; replicates run in
    /// parallel. With clusters ([`Bootstrap::from_panel_clustered`]) `rows` are one per
    /// cluster, weighted by the cluster draw's counts.
    ///
    /// # Errors
    /// [`Error::Data`] when `rows` does not have one row per question (cluster) of every
    /// stratum; a bad `STATS_CPU_RNG` (balanced bootstrap).
    pub fn weighted_sums(
        &self,
        seed: u64,
        range: std::ops::Range<u32>,
        rows: &[Vec<Vec<f64>>],
    ) -> Result<Vec<Vec<Vec<f64>>>> {
        let draw = self.unbalanced.as_ref().and_then(|u| u.draw.as_ref());
        let units: Vec<usize> = match draw {
            Some(d) => d.counts(),
            None => self.plan.strata.iter().map(|s| s.questions).collect(),
        };
        if rows.len() != units.len() || rows.iter().zip(&units).any(|(r, &n)| r.len() != n) {
            return Err(Error::Data(
                "weighted sums need one row per question (with clusters, per cluster) of every \
                 stratum"
                    .into(),
            ));
        }
        let generator = match &self.unbalanced {
            Some(u) => u.generator,
            None => Generator::from_env()?,
        };
        let reps: Vec<u32> = range.collect();
        Ok(reps
            .par_iter()
            .map_init(
                || units.iter().map(|&n| vec![0u32; n]).collect::<Vec<_>>(),
                |counts, &r| {
                    counts
                        .iter_mut()
                        .enumerate()
                        .zip(rows)
                        .map(|((s, c), rows)| {
                            match draw {
                                Some(d) => d.draw_counts(generator, seed, r, s as u32, c),
                                None => draw_counts(generator, seed, r, s as u32, c),
                            }
                            let k = rows.first().map_or(0, Vec::len);
                            let mut sums = vec![0.0; k];
                            for (row, &n) in rows.iter().zip(c.iter()) {
                                if n > 0 {
                                    let n = f64::from(n);
                                    for (a, v) in sums.iter_mut().zip(row) {
                                        *a += n * v;
                                    }
                                }
                            }
                            sums
                        })
                        .collect()
                },
            )
            .collect())
    }
}

/// Appends σ²_q, σ²_t, σ²_r (NaN where not estimable or not fitted).
fn push_components(out: &mut Vec<f64>, c: Option<&PerLevel>) {
    match c {
        Some(c) => out.extend([
            c.question,
            c.trajectory.unwrap_or(f64::NAN),
            c.read.unwrap_or(f64::NAN),
        ]),
        None => out.extend([f64::NAN; 3]),
    }
}

/// The ANOVA sums of a balanced stratum whose question i is taken `counts[i]` times:
/// Q = Σ k_i, ȳ* = Σ k_i ȳ_i / Q, SS_q = TR Σ k_i (ȳ_i − ȳ*)², SS_t = Σ k_i SS_t,i,
/// SS_r = Σ k_i SS_r,i, with the balanced degrees of freedom at Q.
fn weighted_anova(s: &StratumStats, counts: &[u32]) -> AnovaSums {
    let (mut q, mut sum, mut ss_t, mut ss_r) = (0.0, 0.0, 0.0, 0.0);
    for (x, &k) in s.questions.iter().zip(counts) {
        let k = f64::from(k);
        q += k;
        sum += k * x.mean;
        ss_t += k * x.ss_trajectory;
        ss_r += k * x.ss_read;
    }
    let mean = sum / q;
    let ss_q: f64 = s
        .questions
        .iter()
        .zip(counts)
        .map(|(x, &k)| f64::from(k) * (x.mean - mean).powi(2))
        .sum();
    let (t, r) = (s.t as f64, s.r as f64);
    AnovaSums {
        questions: q as usize,
        t: s.t,
        r: s.r,
        ss_question: t * r * ss_q,
        ss_trajectory: ss_t,
        ss_read: ss_r,
        df_question: q - 1.0,
        df_trajectory: q * (t - 1.0),
        df_read: q * t * (r - 1.0),
    }
}

/// The measured SE s(ȳ_q)/√Q of a stratum mean over question means taken `counts[i]` times
/// (once each when `None`): with Q = Σ k_i and m = Σ k_i ȳ_i / Q,
/// sqrt(Σ k_i (ȳ_i − m)² / ((Q − 1) Q)).
fn question_se(means: &[f64], counts: Option<&[u32]>) -> f64 {
    let k = |i: usize| counts.map_or(1.0, |c| f64::from(c[i]));
    let n: f64 = (0..means.len()).map(k).sum();
    let m = means.iter().enumerate().map(|(i, x)| k(i) * x).sum::<f64>() / n;
    let var = means
        .iter()
        .enumerate()
        .map(|(i, x)| k(i) * (x - m) * (x - m))
        .sum::<f64>()
        / (n - 1.0);
    (var / n).sqrt()
}

/// Checks that a design can be forecast for these strata (known names, no empty stratum),
/// so that a bad `--design` is a usage error up front rather than NaN in every replicate.
fn check_design(strata: &[StratumShape], d: &DesignSpec) -> Result<()> {
    let zero = PerLevel {
        question: 0.0,
        trajectory: None,
        read: None,
    };
    let audit = Audit {
        strata: strata
            .iter()
            .map(|s| AuditStratum {
                name: s.name.clone(),
                questions: s.questions,
                trajectories: s.trajectories,
                reads: s.reads,
                se: 0.0,
                components: zero,
                cluster: s.cluster.map(|c| AuditCluster {
                    clusters: s.questions / c.per_cluster,
                    questions_per_cluster: c.per_cluster as f64,
                    component: 0.0,
                }),
            })
            .collect(),
        pooled: Some(zero),
        weights: Vec::new(),
        pooled_cluster: strata.iter().any(|s| s.cluster.is_some()).then_some(0.0),
    };
    forecast(&audit, d, false).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panel::QuestionStats;
    use crate::resample::CpuBackend;

    /// Strata of 15 and 120 question means (one cell per question): a skewed small stratum
    /// and a symmetric large one, the data of `tests/reference/bca_weighted.py`.
    fn unequal_strata() -> Vec<StratumStats> {
        let small = [0.0; 10].into_iter().chain([0.25, 0.25, 0.5, 1.0, 1.0]);
        let large = (0..120).map(|i| (i % 5) as f64 / 4.0);
        let stratum = |name: &str, means: Vec<f64>| StratumStats {
            name: name.into(),
            t: 1,
            r: 1,
            questions: means
                .into_iter()
                .map(|mean| QuestionStats {
                    mean,
                    ss_trajectory: 0.0,
                    ss_read: 0.0,
                })
                .collect(),
        };
        vec![
            stratum("small", small.collect()),
            stratum("large", large.collect()),
        ]
    }

    /// Issue #31, item 7. The estimate's acceleration uses the stratum-weighted influence
    /// values. Reference (`/work/venv-infer/bin/python tests/reference/bca_weighted.py`,
    /// numpy 2.x): "unweighted a = 0.00235605805815756", "weighted a = 0.0568313914699762",
    /// "bootstrap skewness / 6 = 0.0560 (B = 400000)"; R's boot (`Rscript
    /// tests/reference/bca_weighted.R`, `empinf(type = "jack")` as `bca.ci` pools it) gives
    /// the unweighted 0.00235605805815756, and 0.0568313914699762 once its values are divided
    /// by n_d. The engine's own bootstrap agrees:
    /// the skewness of 20,000 replicates over 6 (Monte Carlo SE ≈ √(6/B)/6 ≈ 0.003) is
    /// within 0.01 of the weighted a, and far from the unweighted one.
    #[test]
    fn bca_acceleration_weights_influence_by_stratum_size() {
        let boot = Bootstrap::new("y", &unequal_strata(), BootstrapSpec::default()).unwrap();
        let a = boot.accelerations();
        assert!((a[0] - 0.0568313914699762).abs() < 1e-12, "{}", a[0]);
        // One stratum's mean: the weights are a common factor, so a is that stratum's.
        let small = [0.0; 10].into_iter().chain([0.25, 0.25, 0.5, 1.0, 1.0]);
        let m = 0.2;
        let dev: Vec<f64> = small.map(|v| v - m).collect();
        let want = dev.iter().map(|d| d.powi(3)).sum::<f64>()
            / (6.0 * dev.iter().map(|d| d * d).sum::<f64>().powf(1.5));
        assert!((a[1] - want).abs() < 1e-12, "{} vs {want}", a[1]);
        let b = 20_000u32;
        let reps = boot.run(&CpuBackend::new(), 11, 0..b, &|_| {}).unwrap();
        let est: Vec<f64> = reps
            .iter()
            .step_by(boot.plan.statistics.len())
            .copied()
            .collect();
        let mean = est.iter().sum::<f64>() / f64::from(b);
        let m2 = est.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / f64::from(b);
        let m3 = est.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / f64::from(b);
        let implied = m3 / m2.powf(1.5) / 6.0;
        assert!(
            (implied - a[0]).abs() < 0.01,
            "skewness/6 {implied} vs a {}",
            a[0]
        );
        assert!((implied - 0.00235605805815756).abs() > 0.04, "{implied}");
    }
}
