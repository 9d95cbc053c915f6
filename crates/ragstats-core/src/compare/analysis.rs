//! `compare`: k systems (the arms of one panel) on the same questions.
//!
//! Each system's estimate and SE are `variance --arm NAME`'s, each pair's `variance
//! --contrast B-A`'s (nested components per stratum, REML when a stratum is unbalanced):
//! the panel is read once and assembled once per arm and per pair. One stratified bootstrap
//! of the questions — the same draws for every column, as every engine job with one seed
//! draws the same questions — gives every system's and every pair's replicates, from which
//! come the simultaneous critical value (the quantile of the maximum studentized
//! difference), each system's best share (the share of replicates it tops) and, through the simultaneous intervals, the rank intervals.
//!
//! The systems are the values of the `arm` column, or of another column
//! ([`LoadOptions::arm_column`], `stats compare --by COLUMN`), which then plays the arm's
//! part in every panel assembled here.
//!
//! With a cost ledger ([`CompareSettings::costs`]) the next step is priced: the closest
//! unresolved pair's components and the ledger's unit costs go to `stats plan`'s planner
//! ([`crate::allocation::planner_report::planner`]), which finds the cheapest Q:T:R whose SE
//! resolves the pair with the chosen power under the test the next step is planned for
//! ([`PlannedTest`]: Holm over the family at its first step, Bonferroni).

use std::path::{Path, PathBuf};

use crate::allocation::planner::{power_at, predictive_power, Bounds, Goal, Planner};
use crate::allocation::planner_report::{planner, unmet_goal, PlanCosts};
use crate::components::forecast::Audit;
use crate::components::variance::{analyse_panel, question_mean, VarianceReport};
use crate::costs::accounting::{Budget, PricedLedger};
use crate::ledger::{read_ledger, Prices};
use crate::panel::{load_outcomes, LoadOptions, Panel};
use crate::resample::columns::CenteredColumns;
use crate::resample::summary::Interval;
use crate::resample::summary::{normal_cdf, normal_quantile, quantile_sorted, tail_probability};
use crate::resample::{ResampleBackend, Resampling, MAX_K};
use crate::table::{format_number, Precision};
use crate::{Error, Result};

use super::multiplicity::{benjamini_hochberg, holm};
use super::ranks::{best_share, rank_intervals};
use super::report::*;

/// What to compare and how.
#[derive(Debug, Clone)]
pub struct CompareSettings {
    /// Compare every arm with this one only (Dunnett's family) instead of every pair.
    pub reference: Option<String>,
    pub resampling: Resampling,
    /// Power the next study's question count is planned for, in (0, 1).
    pub power: f64,
    /// A cost ledger to price the next study with: the cheapest (Q, T, R) that resolves the
    /// closest unresolved pair. `None`: only the questions needed at today's T and R.
    pub costs: Option<NextCosts>,
}

/// The ledger (and prices) the next study is priced from, as `stats plan --ledger` prices
/// an audit: the cost of a cell is everything the ledger bills for it (every system's
/// rows), so the allocation is what running all the compared systems again costs.
#[derive(Debug, Clone)]
pub struct NextCosts {
    pub ledger: PathBuf,
    /// Prices (TOML); needed for dollars.
    pub prices: Option<PathBuf>,
    pub budget: Budget,
    /// c_Q, a cost per question whatever its T and R (judging, annotation).
    pub question_cost: f64,
    /// The planner's search bounds.
    pub bounds: Bounds,
}

/// A panel read for `compare`: the systems' and pairs' analyses and the bootstrap columns,
/// ready for an engine.
pub struct PreparedComparison {
    metric: String,
    arms: Vec<String>,
    settings: CompareSettings,
    arm_reports: Vec<VarianceReport>,
    /// (a, b) arm indices, a < b, in order (0,1), (0,2) … (1,2) …
    pairs: Vec<(usize, usize)>,
    pair_reports: Vec<VarianceReport>,
    /// With a ledger, each pair's planner (its components and the ledger's unit costs).
    pair_planners: Vec<Planner>,
    unpaired: Vec<usize>,
    /// Pairs whose replicates are the difference of their arms' (every cell paired), else
    /// the index of the pair's own bootstrap column.
    pair_column: Vec<Option<usize>>,
    /// Per bootstrap column, per stratum, per question: the question's mean (arms first,
    /// then the pairs with unpaired cells).
    columns: Vec<Vec<Vec<f64>>>,
    questions: Vec<usize>,
    /// Every system's outcome is constant (then every SE and interval is 0 by arithmetic).
    constant: bool,
}

/// Cells of a panel: every outcome of every stratum.
fn cells(p: &Panel) -> usize {
    p.strata
        .iter()
        .map(|s| s.nested.as_ref().map_or(s.y.len(), |n| n.y.len()))
        .sum()
}

/// Reads the panel at `path` once and analyses every arm and every pair of arms.
///
/// # Errors
/// [`Error::Input`] for a panel with fewer than two arms, an unknown reference, arm names
/// that make a contrast ambiguous, or an arm without a cell on some question (the systems
/// must answer the same questions); the errors of loading each arm and pair panel.
pub fn prepare(
    path: &Path,
    opts: &LoadOptions,
    settings: &CompareSettings,
) -> Result<PreparedComparison> {
    let mut pairs = Vec::new();
    let column = opts.arm_column.as_deref().unwrap_or("arm");
    // The systems' names as messages call them: arms, or the values of the --by column.
    let (systems, system) = if column == "arm" {
        ("arms", "arm".to_string())
    } else {
        ("systems", format!("'{column}' value"))
    };
    let (arms, panels) = load_outcomes(path, opts, |arms| {
        if arms.len() < 2 {
            return Err(Error::input(
                path,
                None,
                format!(
                    "compare needs at least two {systems} in the '{column}' column; the panel has {}",
                    if arms.is_empty() {
                        format!("no '{column}' column")
                    } else {
                        format!("only '{}'", arms[0])
                    }
                ),
            ));
        }
        if let Some(r) = &settings.reference {
            if !arms.contains(r) {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "--reference {r}: no such {system}; the panel's {systems} are: {}",
                        arms.join(", ")
                    ),
                ));
            }
        }
        for a in 0..arms.len() {
            for b in a + 1..arms.len() {
                let spec = format!("{}-{}", arms[b], arms[a]);
                // The loader splits B-A at the first '-' that leaves two arm names.
                let first = spec.match_indices('-').map(|(i, _)| i).find(|&i| {
                    arms.contains(&spec[..i].to_string())
                        && arms.contains(&spec[i + 1..].to_string())
                });
                if first != Some(arms[b].len()) {
                    return Err(Error::input(
                        path,
                        None,
                        format!(
                            "{systems} '{}' and '{}' cannot be contrasted unambiguously: '{spec}' splits into other {systems}' names; rename one",
                            arms[b], arms[a]
                        ),
                    ));
                }
                pairs.push((a, b));
            }
        }
        let arm_opts = arms.iter().map(|a| LoadOptions {
            arm: Some(a.clone()),
            contrast: None,
            // A failure score belongs to a contrast: an arm alone has no missing partner.
            failure_score: None,
            ..opts.clone()
        });
        let pair_opts = pairs.iter().map(|&(a, b)| LoadOptions {
            arm: None,
            contrast: Some(format!("{}-{}", arms[b], arms[a])),
            ..opts.clone()
        });
        Ok(arm_opts.chain(pair_opts).collect())
    })?;
    let k = arms.len();
    let (arm_panels, pair_panels) = panels.split_at(k);
    use rayon::prelude::*;
    let reports: Vec<Result<VarianceReport>> = panels.par_iter().map(analyse_panel).collect();
    let mut reports = reports.into_iter().collect::<Result<Vec<_>>>()?;
    let pair_reports = reports.split_off(k);
    let arm_reports = reports;
    let pair_planners = match &settings.costs {
        Some(nc) => pair_planners(nc, pair_panels, &pair_reports)?,
        None => Vec::new(),
    };

    // The master questions: every stratum and question of the first arm, which every arm
    // must have (and no other).
    let master: Vec<(&str, Vec<&str>)> = arm_panels[0]
        .strata
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.questions.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let positions = |p: &Panel, what: &str| -> Result<Vec<(usize, Vec<usize>)>> {
        let mut out = Vec::with_capacity(master.len());
        for (name, qs) in &master {
            let si = p.strata.iter().position(|s| s.name == *name).ok_or_else(|| {
                Error::input(path, None, format!("{what} has no cells in dataset '{name}'; compare needs every {system} on the same questions"))
            })?;
            let s = &p.strata[si];
            let index: std::collections::HashMap<&str, usize> = s
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| (q.as_str(), i))
                .collect();
            let mut at = Vec::with_capacity(qs.len());
            for q in qs {
                at.push(*index.get(q).ok_or_else(|| {
                    Error::input(path, None, format!("{what} has no cell for question '{q}' of dataset '{name}'; compare needs every {system} on the same questions"))
                })?);
            }
            if s.questions.len() != qs.len() {
                let extra = s
                    .questions
                    .iter()
                    .find(|q| !qs.contains(&q.as_str()))
                    .expect("a question not in the master list");
                return Err(Error::input(path, None, format!("{what} has question '{extra}' of dataset '{name}', which {system} '{}' lacks; compare needs every {system} on the same questions", arms[0])));
            }
            out.push((si, at));
        }
        if p.strata.len() != master.len() {
            let extra = p
                .strata
                .iter()
                .find(|s| !master.iter().any(|(n, _)| *n == s.name))
                .expect("an extra stratum");
            return Err(Error::input(
                path,
                None,
                format!(
                    "{what} has dataset '{}', which {system} '{}' lacks",
                    extra.name, arms[0]
                ),
            ));
        }
        Ok(out)
    };
    let column_of = |p: &Panel, what: &str| -> Result<Vec<Vec<f64>>> {
        Ok(positions(p, what)?
            .into_iter()
            .map(|(si, at)| {
                at.into_iter()
                    .map(|q| question_mean(&p.strata[si], q))
                    .collect()
            })
            .collect())
    };
    let mut columns = Vec::new();
    for (a, p) in arms.iter().zip(arm_panels) {
        columns.push(column_of(p, &format!("{system} '{a}'"))?);
    }
    let mut pair_column = Vec::with_capacity(pairs.len());
    let mut unpaired = Vec::with_capacity(pairs.len());
    for (&(a, b), p) in pairs.iter().zip(pair_panels) {
        let n = cells(p);
        unpaired.push(p.strata.iter().map(|s| s.unpaired_cells.len()).sum());
        if n == cells(&arm_panels[a]) && n == cells(&arm_panels[b]) {
            pair_column.push(None);
        } else {
            pair_column.push(Some(columns.len()));
            columns.push(column_of(p, &format!("contrast {}-{}", arms[b], arms[a]))?);
        }
    }
    Ok(PreparedComparison {
        constant: arm_panels.iter().all(Panel::outcome_is_constant),
        metric: arm_panels[0].metric.clone(),
        questions: master.iter().map(|(_, q)| q.len()).collect(),
        arms,
        settings: settings.clone(),
        arm_reports,
        pairs,
        pair_reports,
        pair_planners,
        unpaired,
        pair_column,
        columns,
    })
}

/// Every pair's planner: the pair's components (its `stats variance --contrast` fit) with
/// the unit costs the ledger gives its cells, as `stats plan --audit PANEL --contrast B-A
/// --ledger L` builds it.
fn pair_planners(
    nc: &NextCosts,
    panels: &[Panel],
    reports: &[VarianceReport],
) -> Result<Vec<Planner>> {
    let entries = read_ledger(&nc.ledger)?;
    let prices = nc.prices.as_deref().map(Prices::read).transpose()?;
    let priced = PricedLedger {
        entries: &entries,
        path: &nc.ledger,
        prices: prices.as_ref(),
        prices_path: nc.prices.as_deref(),
    };
    // Every pair panel is of the same selector choice.
    let selector = panels.first().and_then(|p| p.selector.as_deref());
    let cells = priced.cell_costs(selector, nc.budget)?;
    panels
        .iter()
        .zip(reports)
        .map(|(p, r)| {
            let costs = PlanCosts::of_panel(p, &cells, &nc.ledger)?;
            planner(
                &Audit::from_report(r),
                Some(p),
                &costs,
                nc.question_cost,
                None,
                nc.bounds,
            )
        })
        .collect()
}

/// Two-sided p of a Wald z test of estimate/SE: 2Φ(−|z|); with SE 0, 1 for a zero
/// estimate and 0 otherwise.
fn wald_p(estimate: f64, se: f64) -> (Option<f64>, f64) {
    if se > 0.0 {
        let z = estimate / se;
        (Some(z), 2.0 * normal_cdf(-z.abs()))
    } else {
        (None, if estimate == 0.0 { 1.0 } else { 0.0 })
    }
}

impl PreparedComparison {
    /// Draws the engine makes: Σ Q_s per replicate, per group of at most 16 columns.
    pub fn draws(&self) -> u64 {
        let groups = self.columns.len().div_ceil(MAX_K) as u64;
        groups
            * u64::from(self.settings.resampling.replicates)
            * self.questions.iter().sum::<usize>() as u64
    }

    /// Replicates of every column: the equal-weight mean over strata of the mean of the
    /// drawn questions' values, `[column][replicate]`.
    fn replicates(
        &self,
        backend: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<f64>>> {
        let rs = &self.settings.resampling;
        let b = rs.replicates;
        let d = self.questions.len() as f64;
        let groups: Vec<&[Vec<Vec<f64>>]> = self.columns.chunks(MAX_K).collect();
        let mut out = Vec::with_capacity(self.columns.len());
        for (g, cols) in groups.iter().enumerate() {
            let strata: Vec<Vec<Vec<f64>>> = (0..self.questions.len())
                .map(|s| {
                    (0..self.questions[s])
                        .map(|q| cols.iter().map(|c| c[s][q]).collect())
                        .collect()
                })
                .collect();
            let centred = CenteredColumns::new(&strata)?;
            let done = u64::from(b) * g as u64;
            let sums = centred.resample(backend, rs.seed, 0..b, &|n| progress(done + n))?;
            for j in 0..cols.len() {
                out.push(
                    sums.iter()
                        .map(|rep| {
                            rep.iter()
                                .zip(&self.questions)
                                .map(|(s, &q)| s[j] / q as f64)
                                .sum::<f64>()
                                / d
                        })
                        .collect(),
                );
            }
        }
        Ok(out)
    }

    /// Total replicate work for a progress bar: replicates × column groups.
    pub fn work(&self) -> u64 {
        u64::from(self.settings.resampling.replicates) * self.columns.len().div_ceil(MAX_K) as u64
    }

    /// Runs the bootstrap on `backend` and builds the report.
    ///
    /// # Errors
    /// Whatever the backend reports.
    pub fn run(
        &self,
        backend: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CompareReport> {
        let rs = &self.settings.resampling;
        let k = self.arms.len();
        let reps = self.replicates(backend, progress)?;
        let pair_reps = |p: usize| -> Vec<f64> {
            match self.pair_column[p] {
                Some(c) => reps[c].clone(),
                None => {
                    let (a, b) = self.pairs[p];
                    reps[b].iter().zip(&reps[a]).map(|(x, y)| x - y).collect()
                }
            }
        };
        let pair_reps: Vec<Vec<f64>> = (0..self.pairs.len()).map(pair_reps).collect();
        let tail = tail_probability(rs.confidence);
        let alpha = 2.0 * tail;
        let z = normal_quantile(1.0 - tail);
        let family: Vec<usize> = match &self.settings.reference {
            Some(r) => {
                let ri = self
                    .arms
                    .iter()
                    .position(|a| a == r)
                    .expect("reference checked");
                (0..self.pairs.len())
                    .filter(|&p| self.pairs[p].0 == ri || self.pairs[p].1 == ri)
                    .collect()
            }
            None => (0..self.pairs.len()).collect(),
        };
        let all: Vec<usize> = (0..self.pairs.len()).collect();
        // c: the `confidence` quantile of max over the family of |d* − d̂| / SE, kept between
        // the marginal z and Bonferroni's z (between which it lies in theory; bootstrap noise
        // could push it out).
        let critical = |members: &[usize]| -> (f64, f64, f64) {
            let m = members.len().max(1) as f64;
            let bonferroni = normal_quantile(1.0 - tail / m);
            let studentized: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&p| self.pair_reports[p].se > 0.0)
                .collect();
            if studentized.is_empty() {
                return (z, z, bonferroni);
            }
            let mut max_t: Vec<f64> = (0..rs.replicates as usize)
                .map(|r| {
                    studentized
                        .iter()
                        .map(|&p| {
                            ((pair_reps[p][r] - self.pair_reports[p].estimate)
                                / self.pair_reports[p].se)
                                .abs()
                        })
                        .fold(0.0, f64::max)
                })
                .collect();
            max_t.sort_by(f64::total_cmp);
            let boot = quantile_sorted(&max_t, rs.confidence);
            (boot, boot.clamp(z, bonferroni), bonferroni)
        };
        let (boot, c, bonferroni) = critical(&family);
        let (_, c_all, _) = critical(&all);
        let interval = |est: f64, se: f64, c: f64| Interval::new(est - c * se, est + c * se);

        // Ranks from the all-pairs simultaneous intervals; best shares from the arm replicates.
        let mut diff = vec![vec![[0.0; 2]; k]; k];
        for (p, &(a, b)) in self.pairs.iter().enumerate() {
            let r = &self.pair_reports[p];
            let i = interval(r.estimate, r.se, c_all);
            diff[b][a] = i.0;
            diff[a][b] = [-i.upper(), -i.lower()];
        }
        let ranks = rank_intervals(k, |j, i| diff[j][i]);
        let best = best_share(
            k,
            (0..rs.replicates as usize).map(|r| (0..k).map(|a| reps[a][r]).collect::<Vec<_>>()),
        );
        let systems: Vec<System> = (0..k)
            .map(|a| {
                let r = &self.arm_reports[a];
                System {
                    name: self.arms[a].clone(),
                    estimate: r.estimate,
                    se: r.se,
                    ci: interval(r.estimate, r.se, z),
                    rank_ci: ranks[a],
                    best_share: best[a],
                    top_group: ranks[a][0] == 1,
                    questions: r.strata.iter().map(|s| s.questions).sum(),
                }
            })
            .collect();

        let raw_p: Vec<(Option<f64>, f64)> = family
            .iter()
            .map(|&p| wald_p(self.pair_reports[p].estimate, self.pair_reports[p].se))
            .collect();
        let ps: Vec<f64> = raw_p.iter().map(|x| x.1).collect();
        let (p_holm, q_bh) = (holm(&ps), benjamini_hochberg(&ps));
        let pairs: Vec<PairResult> = family
            .iter()
            .enumerate()
            .map(|(f, &p)| {
                let (a, b) = self.pairs[p];
                let r = &self.pair_reports[p];
                PairResult {
                    a: self.arms[a].clone(),
                    b: self.arms[b].clone(),
                    estimate: r.estimate,
                    se: r.se,
                    ci: interval(r.estimate, r.se, z),
                    ci_simultaneous: interval(r.estimate, r.se, c),
                    z: raw_p[f].0,
                    p: raw_p[f].1,
                    p_holm: p_holm[f],
                    q_bh: q_bh[f],
                    resolved: p_holm[f] <= alpha,
                    unpaired_cells: self.unpaired[p],
                }
            })
            .collect();

        let strata = self.strata(&family);
        let planned = PlannedTest::holm_first_step(family.len(), alpha, bonferroni);
        let (next, next_undefined) = self.next_step(&pairs, &planned);
        Ok(CompareReport {
            metric: self.metric.clone(),
            family: Family {
                kind: if self.settings.reference.is_some() {
                    "vs-reference"
                } else {
                    "all-pairs"
                },
                reference: self.settings.reference.clone(),
                size: family.len(),
            },
            methods: METHODS,
            critical_values: CriticalValues {
                marginal: z,
                max_t_bootstrap: boot,
                simultaneous: c,
                bonferroni,
                ranks_simultaneous: c_all,
            },
            top_group: systems
                .iter()
                .filter(|s| s.top_group)
                .map(|s| s.name.clone())
                .collect(),
            systems,
            pairs,
            strata,
            next,
            next_undefined,
            notes: crate::resample::summary::no_spread_notes(self.constant),
            engine: crate::document::Engine {
                backend: Some(backend.name().to_string()),
                adapter: Some(backend.description()),
                replicates: Some(u64::from(rs.replicates)),
                seed: Some(rs.seed),
                confidence: Some(rs.confidence),
            },
        })
    }

    /// Each stratum's systems and the family's pairs in it, Holm within the stratum.
    fn strata(&self, family: &[usize]) -> Vec<StratumComparison> {
        let alpha_free = |r: &VarianceReport, name: &str| {
            r.strata
                .iter()
                .find(|s| s.name == name)
                .map(|s| (s.mean, s.se))
        };
        self.arm_reports[0]
            .strata
            .iter()
            .map(|s0| {
                let systems = self
                    .arms
                    .iter()
                    .zip(&self.arm_reports)
                    .map(|(a, r)| {
                        let (mean, se) =
                            alpha_free(r, &s0.name).expect("every arm has every stratum");
                        StratumSystem {
                            name: a.clone(),
                            mean,
                            se,
                        }
                    })
                    .collect();
                let est: Vec<(f64, f64)> = family
                    .iter()
                    .map(|&p| {
                        alpha_free(&self.pair_reports[p], &s0.name)
                            .expect("every pair has every stratum")
                    })
                    .collect();
                let ps: Vec<f64> = est.iter().map(|&(m, se)| wald_p(m, se).1).collect();
                let adjusted = holm(&ps);
                let pairs = family
                    .iter()
                    .enumerate()
                    .map(|(f, &p)| {
                        let (a, b) = self.pairs[p];
                        StratumPair {
                            a: self.arms[a].clone(),
                            b: self.arms[b].clone(),
                            estimate: est[f].0,
                            se: est[f].1,
                            p: ps[f],
                            p_holm: adjusted[f],
                        }
                    })
                    .collect();
                StratumComparison {
                    name: s0.name.clone(),
                    questions: s0.questions,
                    systems,
                    pairs,
                }
            })
            .collect()
    }

    /// The unresolved pair of the family closest to resolution (largest |z|) and the
    /// questions that would resolve it with the settings' power under the `planned` test
    /// (its critical value c), beside the power at today's estimate and the predictive power
    /// over its uncertainty ([`crate::allocation::planner::predictive_power`]).
    fn next_step(
        &self,
        pairs: &[PairResult],
        planned: &PlannedTest,
    ) -> (Option<NextStep>, Option<String>) {
        let open: Vec<&PairResult> = pairs.iter().filter(|p| !p.resolved).collect();
        if open.is_empty() {
            return (None, Some("every pair of the family is resolved".into()));
        }
        let Some(p) = open
            .iter()
            .filter(|p| p.z.is_some_and(|z| z != 0.0))
            .max_by(|x, y| x.z.unwrap().abs().total_cmp(&y.z.unwrap().abs()))
        else {
            return (
                None,
                Some("every unresolved pair has a zero difference or a zero SE".into()),
            );
        };
        let power = self.settings.power;
        let c = planned.critical_value;
        let z = p.z.expect("filtered").abs();
        let q: usize = self.questions.iter().sum();
        // Resolved with `power`: |d| / SE ≥ c + z_power.
        let reach = c + normal_quantile(power);
        let factor = (reach / z).powi(2);
        let needed = (q as f64 * factor).ceil() as u64;
        let target_se = p.estimate.abs() / reach;
        let power_at_estimate = power_at(p.estimate, target_se, c);
        let predictive = predictive_power(p.estimate, p.se, target_se, c);
        let mut text = format!(
            "The closest unresolved pair is {b} − {a}: {est:.4} (SE {se:.4}, z = {z:.2}; Holm-adjusted p = {ph:.3}). \
             Planned for {test}, critical value {c:.3}: if the difference is really {est:.4}, resolving it \
             with {pw:.0}% power needs SE {target_se:.4}, about {needed} questions ({factor:.1} × the {q} questions \
             now), in today's strata proportions and with the same trajectories and reads per question. \
             That power takes today's estimate for the truth; over its uncertainty (SE {se:.4}) a new study \
             of that size resolves the pair with predictive power {predictive:.3}.",
            a = p.a,
            b = p.b,
            est = p.estimate,
            se = p.se,
            ph = p.p_holm,
            test = planned.name,
            pw = 100.0 * power,
        );
        let (allocation, allocation_undefined) = match &self.settings.costs {
            None => (None, None),
            Some(nc) => {
                let at = self
                    .pairs
                    .iter()
                    .position(|&(a, b)| self.arms[a] == p.a && self.arms[b] == p.b)
                    .expect("a pair of the panel");
                let planner = &self.pair_planners[at];
                let unit = nc.budget.unit();
                let goal = Goal::TargetSe(target_se);
                let cheapest = planner
                    .search(goal)
                    .map_err(|e| e.to_string())
                    .and_then(|found| {
                        found
                            .into_iter()
                            .next()
                            .ok_or_else(|| unmet_goal(planner, goal, unit))
                    });
                match cheapest {
                    Ok(a) => {
                        let strata: Vec<String> =
                            planner.strata.iter().map(|s| s.name.clone()).collect();
                        let cost = a.cost.expect("a ledger prices every stratum");
                        text.push(' ');
                        text.push_str(&allocation_text(
                            &a,
                            &strata,
                            target_se,
                            cost,
                            unit,
                            planner.bounds,
                        ));
                        (
                            Some(NextAllocation {
                                questions: a.questions,
                                per_stratum: a.per_stratum,
                                strata,
                                trajectories: a.trajectories,
                                reads: a.reads,
                                se: a.se,
                                cost,
                                currency: unit.to_string(),
                            }),
                            None,
                        )
                    }
                    Err(why) => {
                        text.push_str(&format!(" With the ledger's costs: {why}."));
                        (None, Some(why))
                    }
                }
            }
        };
        (
            Some(NextStep {
                a: p.a.clone(),
                b: p.b.clone(),
                estimate: p.estimate,
                se: p.se,
                questions: q,
                questions_needed: needed,
                power,
                test: planned.name.clone(),
                critical_value: c,
                target_se,
                power_at_estimate,
                predictive_power: predictive,
                allocation,
                allocation_undefined,
                text,
            }),
            None,
        )
    }
}

/// The priced half of the next-step paragraph: the cheapest allocation `a` (strata named
/// `strata`) reaching `target` SE, its `cost` in `unit`, found within `bounds`.
fn allocation_text(
    a: &crate::allocation::planner::Allocation,
    strata: &[String],
    target: f64,
    cost: f64,
    unit: &str,
    bounds: Bounds,
) -> String {
    let num = |v: f64| format_number(v, Precision::Auto);
    let split = if strata.len() > 1 {
        let parts: Vec<String> = strata
            .iter()
            .zip(&a.per_stratum)
            .map(|(s, q)| format!("{s} {q}"))
            .collect();
        format!(" ({})", parts.join(", "))
    } else {
        String::new()
    };
    let b = bounds;
    format!(
        "With the ledger's unit costs, the cheapest design that does it is Q:T:R = {q}:{t}:{r}: \
         {q} questions{split}, {t} {traj} per question, {r} {reads} per trajectory (SE \
         {se:.4} ≤ the target {target:.4} = |difference| / (critical value + z_power)), \
         costing {cost} {unit} (`stats plan`'s least-cost search over Q ≤ {mq}, T ≤ {mt}, \
         R ≤ {mr}).",
        q = a.questions,
        t = a.trajectories,
        traj = if a.trajectories == 1 {
            "trajectory"
        } else {
            "trajectories"
        },
        r = a.reads,
        reads = if a.reads == 1 { "read" } else { "reads" },
        se = a.se,
        cost = num(cost),
        mq = b.max_questions,
        mt = b.max_trajectories,
        mr = b.max_reads,
    )
}

/// The methods, as the report names them.
const METHODS: Methods = Methods {
    se: "nested variance components per stratum (REML where a stratum is unbalanced), as `stats variance`; strata combined with equal weights",
    p: "two-sided Wald z test of estimate / SE",
    adjusted: "Holm step-down (family-wise error) and Benjamini-Hochberg (false discovery rate) over the family",
    simultaneous: "estimate ± c·SE, c the bootstrap quantile of max over the family of |d* − d̂| / SE (stratified question bootstrap, one draw of questions shared by every pair), kept between z and Bonferroni's z",
    ranks: "simultaneous rank intervals from the all-pairs simultaneous intervals (Mogstad, Romano, Shaikh & Wilhelm 2024)",
    best_share: "share of bootstrap replicates in which the system has the highest estimate, ties split; not the probability that it is best",
};

/// [`prepare`] then [`PreparedComparison::run`].
///
/// # Errors
/// Those of both.
pub fn compare(
    path: &Path,
    opts: &LoadOptions,
    settings: &CompareSettings,
    backend: &dyn ResampleBackend,
) -> Result<CompareReport> {
    prepare(path, opts, settings)?.run(backend, &|_| {})
}
