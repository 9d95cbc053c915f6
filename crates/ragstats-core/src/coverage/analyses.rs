//! The analyses run on every simulated panel, through the same library calls the commands
//! make, and what each prints turned into observations: an interval covers its truth or
//! not, a test rejects or not.
//!
//! * `variance` ([`crate::components::variance::analyse_panel`]): the estimate's and each
//!   stratum mean's interval — the printed estimate ± t·SE on the Satterthwaite df, and
//!   for a stratum (whose interval is not printed) mean ± t(Q − 1)·SE.
//! * `bootstrap` ([`crate::bootstrap::analysis::bootstrap`], BCa, and the same replicates
//!   summarised as percentile intervals): the estimate's and each stratum mean's interval.
//! * `compare` ([`crate::compare::prepare_panels`] and its `run`): each system's marginal
//!   interval (and, for a binary outcome with one cell per question, its Clopper–Pearson
//!   interval, `--interval clopper-pearson`), each pair's marginal interval, the simultaneous intervals (family-wise: all
//!   pairs covered at once) and the rank intervals (all systems at once); under the null,
//!   each pair's Wald p, Holm's and Benjamini–Hochberg's family-wise rejection (any adjusted
//!   p ≤ α) and the per-stratum tests.
//! * `sequential` ([`crate::sequential::Sequence`], not in `all`: asked for by name): the
//!   panel's questions arriving one stratum after another in turn, looked at every K
//!   questions; the sequence covers the truth at every look at once, and under the null
//!   how often it, and a fixed-n Wald interval checked at every look, declare the
//!   comparison resolved at some look (the error of continuous monitoring).

use serde::Serialize;

use super::tally::{Kind, Observation};
use crate::bootstrap::analysis::{bootstrap, BootstrapJob};
use crate::bootstrap::report::build_report;
use crate::bootstrap::stratified::BootstrapSpec;
use crate::compare::{cell_difference, prepare_panels, CompareJob};
use crate::components::levels::question_mean;
use crate::components::variance::analyse_panel;
use crate::inference::t::t_quantile;
use crate::panel::Panel;
use crate::resample::summary::Method;
use crate::resample::{ResampleBackend, Resampling};
use crate::Result;

/// An analysis whose intervals and tests are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Analysis {
    Variance,
    Bootstrap,
    Compare,
    Sequential,
}

impl Analysis {
    pub const ALL: [Analysis; 3] = [Analysis::Variance, Analysis::Bootstrap, Analysis::Compare];

    pub fn name(self) -> &'static str {
        match self {
            Analysis::Variance => "variance",
            Analysis::Bootstrap => "bootstrap",
            Analysis::Compare => "compare",
            Analysis::Sequential => "sequential",
        }
    }

    /// Whether the analysis prints tests (then null panels are simulated too).
    pub fn has_tests(self) -> bool {
        matches!(self, Analysis::Compare | Analysis::Sequential)
    }
}

/// The outcome `variance` and `bootstrap` analyse: one arm, or the contrast b − a (arm
/// indices of the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Arm(usize),
    Contrast { b: usize, a: usize },
}

/// The true values the intervals should cover: each arm's combined mean (equal weights, or
/// the panel's `--weights`) and its
/// stratum means.
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    pub arms: Vec<f64>,
    pub strata: Vec<Vec<f64>>,
}

impl Truth {
    fn outcome(&self, o: Outcome) -> (f64, Vec<f64>) {
        match o {
            Outcome::Arm(a) => (self.arms[a], self.strata.iter().map(|s| s[a]).collect()),
            Outcome::Contrast { b, a } => (
                self.arms[b] - self.arms[a],
                self.strata.iter().map(|s| s[b] - s[a]).collect(),
            ),
        }
    }
}

/// What one simulated panel is analysed with.
pub struct Run<'a> {
    pub analyses: &'a [Analysis],
    pub outcome: Option<Outcome>,
    pub arm_names: &'a [String],
    pub replicates: u32,
    pub confidence: f64,
    /// The sequential analysis looks every this many questions.
    pub look_every: u64,
    pub backend: &'a dyn ResampleBackend,
}

/// The outcome panel of `arms`: one arm's, or the contrast's (`None` when the two arms'
/// cells differ).
pub fn outcome_panel(arms: &[Panel], o: Outcome) -> Option<Panel> {
    match o {
        Outcome::Arm(a) => Some(arms[a].clone()),
        Outcome::Contrast { b, a } => {
            let strata = cell_difference(&arms[a], &arms[b])?;
            Some(Panel {
                strata,
                ..arms[a].clone()
            })
        }
    }
}

fn covers(ci: [f64; 2], truth: f64) -> bool {
    ci[0] <= truth && truth <= ci[1]
}

impl Run<'_> {
    /// The observations of one simulated panel (`null`: the arms' means equalised, where
    /// only tests are observed; otherwise only intervals). `seed` keys its bootstraps.
    /// An analysis that fails adds its name to the second list instead.
    pub fn observe(
        &self,
        arms: &[Panel],
        truth: &Truth,
        null: bool,
        seed: u64,
    ) -> (Vec<Observation>, Vec<&'static str>) {
        let mut obs = Vec::new();
        let mut errors = Vec::new();
        for &analysis in self.analyses {
            let result = match analysis {
                Analysis::Variance | Analysis::Bootstrap if null => continue,
                Analysis::Variance => self.variance(arms, truth, &mut obs),
                Analysis::Bootstrap => self.bootstrap(arms, truth, seed, &mut obs),
                Analysis::Compare => self.compare(arms, truth, null, seed, &mut obs),
                Analysis::Sequential => self.sequential(arms, truth, null, &mut obs),
            };
            match result {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => errors.push(analysis.name()),
            }
        }
        (obs, errors)
    }

    /// The sequences over the outcome panel's questions (strata in turn: the first question
    /// of each, then the second, …), the strata combined by the union bound and in rounds
    /// (the plan of the strata's sizes, whatever the default would choose), looked at every
    /// `look_every` questions and at the last.
    /// Not null: whether each covered the truth at every look. Null: whether each, and the
    /// stratified Wald interval (estimate ± z·√(Σ w_d² s_d²/n_d)) checked at the same looks,
    /// excluded 0 at some look. The range is [0, 1] (a contrast's [−1, 1]); a panel whose
    /// question means leave it is an error of the analysis (counted, not observed).
    fn sequential(
        &self,
        arms: &[Panel],
        truth: &Truth,
        null: bool,
        obs: &mut Vec<Observation>,
    ) -> Result<bool> {
        use crate::resample::summary::{normal_quantile, tail_probability};
        use crate::sequential::{Bound, RoundPlan, Sequence};
        let Some(o) = self.outcome else {
            return Ok(false);
        };
        let Some(panel) = outcome_panel(arms, o) else {
            return Ok(false);
        };
        let bound = match o {
            Outcome::Arm(_) => Bound::Range { lo: 0.0, hi: 1.0 },
            Outcome::Contrast { .. } => Bound::Range { lo: -1.0, hi: 1.0 },
        };
        let weights = panel.stratum_weights();
        let strata: Vec<(String, f64)> = panel
            .strata
            .iter()
            .zip(&weights)
            .map(|(s, w)| (s.name.clone(), *w))
            .collect();
        let sizes: Vec<u64> = panel.strata.iter().map(|s| s.q() as u64).collect();
        let Some(plan) = RoundPlan::of_sizes(&sizes) else {
            return Ok(false);
        };
        let mut union = Sequence::new(&strata, bound, self.confidence)?;
        let mut rounds =
            Sequence::in_rounds(&strata, bound, self.confidence, &plan.sizes, plan.rounds)?;
        let means: Vec<Vec<f64>> = panel
            .strata
            .iter()
            .map(|s| (0..s.q()).map(|q| question_mean(s, q)).collect())
            .collect();
        let total: usize = means.iter().map(Vec::len).sum();
        let z = normal_quantile(1.0 - tail_probability(self.confidence));
        let (t, _) = truth.outcome(o);
        let mut sums = vec![(0.0f64, 0.0f64, 0usize); means.len()];
        // (covered at every look, resolved at some look) for the union bound and the rounds.
        let (mut union_hits, mut round_hits) = ((true, false), (true, false));
        let mut wald_resolved = false;
        let mut seen = 0usize;
        let longest = means.iter().map(Vec::len).max().unwrap_or(0);
        for q in 0..longest {
            for (d, m) in means.iter().enumerate() {
                let Some(&x) = m.get(q) else { continue };
                union.observe(d, x)?;
                rounds.observe(d, x)?;
                let s = &mut sums[d];
                s.0 += x;
                s.1 += x * x;
                s.2 += 1;
                seen += 1;
                if !(seen as u64).is_multiple_of(self.look_every.max(1)) && seen != total {
                    continue;
                }
                for (seq, hits) in [(&union, &mut union_hits), (&rounds, &mut round_hits)] {
                    let i = seq.interval();
                    hits.0 &= i.lower.is_none_or(|l| l <= t) && i.upper.is_none_or(|u| t <= u);
                    hits.1 |= i.excludes(0.0);
                }
                if sums.iter().all(|s| s.2 >= 2) {
                    let (mut est, mut var) = (0.0, 0.0);
                    for (s, w) in sums.iter().zip(&weights) {
                        let n = s.2 as f64;
                        let mean = s.0 / n;
                        est += w * mean;
                        var += w * w * ((s.1 - n * mean * mean) / (n - 1.0)).max(0.0) / n;
                    }
                    let half = z * var.sqrt();
                    wald_resolved |= half > 0.0 && est.abs() > half;
                }
            }
        }
        let k = self.look_every;
        for (rule, (covered, resolved)) in [("union", union_hits), ("rounds", round_hits)] {
            obs.push(if null {
                Observation {
                    analysis: "sequential",
                    statistic: format!("{rule}: sequence excludes 0 at some look (every {k})"),
                    kind: Kind::Test,
                    hit: resolved,
                }
            } else {
                Observation {
                    analysis: "sequential",
                    statistic: format!("{rule}: sequence covers at every look (every {k})"),
                    kind: Kind::Interval,
                    hit: covered,
                }
            });
        }
        if null {
            obs.push(Observation {
                analysis: "sequential",
                statistic: format!("Wald interval excludes 0 at some look (every {k})"),
                kind: Kind::Test,
                hit: wald_resolved,
            });
        }
        Ok(true)
    }

    fn variance(&self, arms: &[Panel], truth: &Truth, obs: &mut Vec<Observation>) -> Result<bool> {
        let Some(o) = self.outcome else {
            return Ok(false);
        };
        let Some(panel) = outcome_panel(arms, o) else {
            return Ok(false);
        };
        let r = analyse_panel(&panel)?;
        let (t, ts) = truth.outcome(o);
        let level = 0.5 + self.confidence / 2.0;
        // `stats variance` prints estimate ± t·SE on the Satterthwaite df
        // (`PanelVariance::ci`, at 95%; here at the study's level).
        let q = t_quantile(level, r.df().unwrap_or(f64::INFINITY));
        obs.push(Observation {
            analysis: "variance",
            statistic: "estimate: printed interval (t on Satterthwaite df)".into(),
            kind: Kind::Interval,
            hit: covers([r.estimate - q * r.se, r.estimate + q * r.se], t),
        });
        for (i, s) in r.strata.iter().enumerate() {
            let q = t_quantile(level, s.questions as f64 - 1.0);
            obs.push(Observation {
                analysis: "variance",
                statistic: "stratum means: mean ± t(Q − 1)·SE (not printed)".into(),
                kind: Kind::Interval,
                hit: covers([s.mean - q * s.se, s.mean + q * s.se], ts[i]),
            });
        }
        Ok(true)
    }

    fn bootstrap(
        &self,
        arms: &[Panel],
        truth: &Truth,
        seed: u64,
        obs: &mut Vec<Observation>,
    ) -> Result<bool> {
        let Some(o) = self.outcome else {
            return Ok(false);
        };
        let Some(panel) = outcome_panel(arms, o) else {
            return Ok(false);
        };
        let settings = BootstrapJob {
            spec: BootstrapSpec::default(),
            seed,
            replicates: 0..self.replicates,
            method: Method::Bca,
            confidence: self.confidence,
        };
        let run = bootstrap(&panel, &settings, self.backend, &|_| {})?;
        let mut reps = run.replicates.clone();
        reps.header.method = Method::Percentile;
        reps.header.acceleration = None;
        let percentile = build_report(&reps);
        let (t, ts) = truth.outcome(o);
        for (name, r) in [("percentile", &percentile), ("BCa", &run.report)] {
            obs.push(Observation {
                analysis: "bootstrap",
                statistic: format!("estimate: {name} interval"),
                kind: Kind::Interval,
                hit: covers(r.summary.ci.0, t),
            });
            for (i, s) in r.strata.iter().enumerate() {
                obs.push(Observation {
                    analysis: "bootstrap",
                    statistic: format!("stratum means: {name} interval"),
                    kind: Kind::Interval,
                    hit: covers(s.summary.ci.0, ts[i]),
                });
            }
        }
        Ok(true)
    }

    fn compare(
        &self,
        arms: &[Panel],
        truth: &Truth,
        null: bool,
        seed: u64,
        obs: &mut Vec<Observation>,
    ) -> Result<bool> {
        if arms.len() < 2 {
            return Ok(false);
        }
        let settings = CompareJob {
            reference: None,
            resampling: Resampling {
                seed,
                replicates: self.replicates,
                confidence: self.confidence,
            },
            power: 0.8,
            intervals: crate::inference::IntervalRule::Auto,
            costs: None,
        };
        let prepared = prepare_panels(self.arm_names.to_vec(), arms.to_vec(), &settings)?;
        let r = prepared.run(self.backend, &|_| {})?;
        let alpha = 1.0 - self.confidence;
        let mut push = |statistic: &str, kind, hit| {
            obs.push(Observation {
                analysis: "compare",
                statistic: statistic.into(),
                kind,
                hit,
            })
        };
        let index = |name: &str| {
            self.arm_names
                .iter()
                .position(|a| a == name)
                .expect("an arm")
        };
        if null {
            for p in &r.pairs {
                push("pairs: Wald p ≤ α (each pair)", Kind::Test, p.p <= alpha);
            }
            push(
                "family: Holm, any adjusted p ≤ α",
                Kind::Test,
                r.pairs.iter().any(|p| p.p_holm <= alpha),
            );
            push(
                "family: Benjamini-Hochberg, any q ≤ α",
                Kind::Test,
                r.pairs.iter().any(|p| p.q_bh <= alpha),
            );
            for s in &r.strata {
                for p in &s.pairs {
                    push(
                        "strata: Wald p ≤ α (each stratum and pair)",
                        Kind::Test,
                        p.p <= alpha,
                    );
                }
                push(
                    "strata: Holm within stratum, any adjusted p ≤ α",
                    Kind::Test,
                    s.pairs.iter().any(|p| p.p_holm <= alpha),
                );
            }
            return Ok(true);
        }
        for s in &r.systems {
            push(
                "systems: marginal interval",
                Kind::Interval,
                covers(s.ci.0, truth.arms[index(&s.name)]),
            );
        }
        // Where the score methods apply, `--interval clopper-pearson`'s exact interval too
        // (the systems in the arms' order, as the report lists them).
        for (s, ci) in r.systems.iter().zip(
            prepared
                .clopper_pearson_systems(self.confidence)
                .unwrap_or_default(),
        ) {
            push(
                "systems: Clopper-Pearson interval",
                Kind::Interval,
                covers(ci.0, truth.arms[index(&s.name)]),
            );
        }
        let mut all = true;
        for p in &r.pairs {
            let t = truth.arms[index(&p.b)] - truth.arms[index(&p.a)];
            push(
                "pairs: marginal interval",
                Kind::Interval,
                covers(p.ci.0, t),
            );
            all &= covers(p.ci_simultaneous.0, t);
        }
        push(
            "family: simultaneous intervals, all pairs covered",
            Kind::Interval,
            all,
        );
        // A system's true rank (1 = best) ranges over its ties: 1 + #{better} … #{at least as good}.
        let ranks = r.systems.iter().all(|s| {
            let m = truth.arms[index(&s.name)];
            let lo = 1 + truth.arms.iter().filter(|&&x| x > m).count();
            let hi = truth.arms.iter().filter(|&&x| x >= m).count();
            s.rank_ci[0] <= hi && lo <= s.rank_ci[1]
        });
        push(
            "ranks: rank intervals, all systems covered",
            Kind::Interval,
            ranks,
        );
        Ok(true)
    }
}
