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

use serde::{Deserialize, Serialize};

use crate::components::forecast::{forecast, Audit, AuditStratum, DesignSpec};
use crate::components::variance::{fit, AnovaSums, Fit, PerLevel};
use crate::panel::StratumStats;
use crate::resample::engine::{ResampleBackend, ResampleJob};
use crate::resample::summary::acceleration;
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
    /// Centres c₁, c₂, c₃ of the other columns (zero when components are off).
    pub centres: [f64; 3],
}

/// Everything needed to turn replicate sums into statistics, and to summarise them:
/// the layout written at the head of a replicates file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapPlan {
    pub outcome: String,
    pub strata: Vec<StratumShape>,
    pub spec: BootstrapSpec,
    /// Names of the statistics, in the order of every replicate's vector.
    pub statistics: Vec<String>,
}

/// Per-stratum f64 sums of the K columns over the questions of one (re)sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnSums {
    pub q: f64,
    pub s: [f64; 4],
}

/// The prepared bootstrap: the plan and the rows that go to the engine.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    pub plan: BootstrapPlan,
    designs: Vec<DesignSpec>,
    /// Per stratum, Q_d rows of K centred f64 values (exact, for the point estimate and jackknife).
    rows64: Vec<Vec<[f64; 4]>>,
    /// The same rows as f32, row-major, for the engine.
    rows32: Vec<Vec<f32>>,
}

impl BootstrapPlan {
    /// Columns per question row: 1 for the estimate alone, 4 with components.
    pub fn k(&self) -> usize {
        if self.spec.components {
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
        }
        n
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
        out.push(means.iter().sum::<f64>() / means.len() as f64);
        out.extend_from_slice(&means);
        if !self.spec.components {
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

impl Bootstrap {
    /// Prepares the rows and plan from the per-question statistics of each stratum.
    ///
    /// # Errors
    /// [`Error::Usage`] for a design that does not parse or fit the strata.
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
                    "--components: stratum '{}' has {} question(s); refitting the variance components needs at least 2 questions per stratum",
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
            });
        }
        let plan = BootstrapPlan {
            outcome: outcome.to_string(),
            statistics: BootstrapPlan::names(&shapes, &spec),
            strata: shapes,
            spec,
        };
        let k = plan.k();
        let rows32 = rows64
            .iter()
            .map(|rows: &Vec<[f64; 4]>| {
                rows.iter()
                    .flat_map(|r| r[..k].iter().map(|&v| v as f32))
                    .collect()
            })
            .collect();
        let boot = Bootstrap {
            plan,
            designs,
            rows64,
            rows32,
        };
        for (text, d) in boot.plan.spec.designs.iter().zip(&boot.designs) {
            check_design(&boot.plan.strata, d)
                .map_err(|e| Error::Usage(format!("--design {text}: {e}")))?;
        }
        Ok(boot)
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
                let mut s = [0.0; 4];
                for r in rows {
                    for j in 0..4 {
                        s[j] += r[j];
                    }
                }
                ColumnSums {
                    q: rows.len() as f64,
                    s,
                }
            })
            .collect()
    }

    /// The statistics at the data (from exact f64 sums).
    pub fn point(&self) -> Vec<f64> {
        self.plan.statistics(&self.exact_sums(), &self.designs)
    }

    /// Statistics of every replicate from the engine's f32 sums (`B × S × K`), row-major
    /// `B × n_statistics`.
    pub fn replicate_statistics(&self, sums: &[f32]) -> Vec<f64> {
        let k = self.plan.k();
        let s_n = self.plan.strata.len();
        let mut out = Vec::with_capacity(sums.len() / (s_n * k) * self.plan.statistics.len());
        let mut cs = vec![
            ColumnSums {
                q: 0.0,
                s: [0.0; 4]
            };
            s_n
        ];
        for rep in sums.chunks_exact(s_n * k) {
            for (s, c) in cs.iter_mut().enumerate() {
                c.q = self.plan.strata[s].questions as f64;
                for j in 0..k {
                    c.s[j] = rep[s * k + j] as f64;
                }
            }
            out.extend(self.plan.statistics(&cs, &self.designs));
        }
        out
    }

    /// Runs replicates `range` on `backend` and returns their statistics (`B × n_statistics`).
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
        let sums = backend.resample_sums(&self.job(seed, range), progress)?;
        Ok(self.replicate_statistics(&sums))
    }

    /// BCa accelerations of every statistic from the stratified jackknife: leaving out
    /// question i of stratum d gives θ₍dᵢ₎; influence U_di = (Q_d − 1)(θ̄₍d·₎ − θ₍dᵢ₎);
    /// a = Σ U³ / (6 (Σ U²)^{3/2}) over all (d, i).
    pub fn accelerations(&self) -> Vec<f64> {
        let full = self.exact_sums();
        let n = self.plan.statistics.len();
        let mut influence: Vec<Vec<f64>> = vec![Vec::new(); n];
        for (d, rows) in self.rows64.iter().enumerate() {
            let q = rows.len() as f64;
            if rows.len() < 2 {
                continue;
            }
            let mut loo: Vec<Vec<f64>> = Vec::with_capacity(rows.len());
            let mut sums = full.clone();
            for r in rows {
                sums[d].q = q - 1.0;
                sums[d].s = std::array::from_fn(|j| full[d].s[j] - r[j]);
                loo.push(self.plan.statistics(&sums, &self.designs));
            }
            for (stat, inf) in influence.iter_mut().enumerate() {
                let mean = loo.iter().map(|v| v[stat]).sum::<f64>() / q;
                inf.extend(loo.iter().map(|v| (q - 1.0) * (mean - v[stat])));
            }
        }
        influence.iter().map(|u| acceleration(u)).collect()
    }
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
            })
            .collect(),
        pooled: Some(zero),
    };
    forecast(&audit, d, false).map(|_| ())
}
