//! `compare --labels`'s simultaneous and rank intervals: the PPI++ bootstrap of every pair
//! of systems on one shared draw of questions, and from its replicates the max-|t|
//! critical value, as `compare` makes them without labels ([`crate::compare`]).
//!
//! **The shared draw.** `bootstrap --labels` ([`super::boot`]) draws, within each stratum,
//! the labelled and the unlabelled questions separately (n_d and N_d draws with
//! replacement). Here every pair b − a is a column, and a question may be labelled for
//! one pair and not for another (a pair's labelled questions are those labelled in both
//! arms). So each stratum's questions are split into classes by the set of columns they are
//! labelled in, and each class is one engine stratum, drawn with replacement at its own
//! size; a column sums its labelled classes' rows as its labelled draw and the others as
//! its unlabelled draw. When every pair has the same labelled questions (the labelling
//! sheet labels both arms of each question) there are two classes and the draws are
//! `bootstrap --labels`' own. The rows of a column are `bootstrap --labels`' rows (centred
//! (y, ŷ, y², ŷ², yŷ) for a labelled question, (ŷᵘ, ŷᵘ², 0, 0, 0) for an unlabelled one),
//! three columns to an engine job (15 of its 16 values); every job has the same strata and
//! seed, so it draws the same questions, and λ̂ is re-tuned in every replicate unless λ is
//! given. CPU and GPU give the same replicates bit for bit.
//!
//! **The intervals.** With the pairs' replicates' covariance, the critical value c is the
//! `confidence` quantile of max_p |Z_p| / sd(Z_p) over the family, Z normal with that
//! covariance ([`crate::inference::max_t`], on infinite df: the PPI intervals are normal),
//! never below the value for independent equal-variance systems (Tukey's or Dunnett's),
//! kept between the marginal z and Bonferroni's z — `compare`'s rule. Each pair's
//! simultaneous interval is θ̂ ± c·SE with its analytic PPI++ SE; the rank intervals come
//! from the all-pairs simultaneous intervals ([`crate::compare::ranks::rank_intervals`]).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::boot::{labelled_row, prepare, theta, unlabelled_row, Prepared};
use super::labels::StratumUnits;
use crate::compare::analysis::covariance;
use crate::compare::ranks::rank_intervals;
use crate::inference::max_t::{family_laws, Combination};
use crate::resample::engine::{ResampleBackend, ResampleJob};
use crate::resample::summary::normal_quantile;
use crate::Result;

/// Columns per engine job: 3 × 5 values of the 16 a row may hold.
const PER_JOB: usize = 3;

/// The simultaneous intervals of `compare --labels`.
#[derive(Debug, Clone, Serialize)]
pub struct PpiSimultaneous {
    /// The family's critical value c (each pair's interval is θ̂ ± c·SE).
    pub critical: f64,
    /// The max-|t| quantile under the bootstrap's correlations (`None` with one pair).
    pub max_t: Option<f64>,
    /// The value for independent equal-variance systems (Tukey's or Dunnett's).
    pub independent: f64,
    /// Bonferroni's z.
    pub bonferroni: f64,
    /// The all-pairs family's critical value, which the rank intervals use.
    pub critical_ranks: f64,
    /// Per pair of the family (in its order), the simultaneous interval.
    #[serde(skip)]
    pub intervals: Vec<[f64; 2]>,
    /// Per system, its rank interval (1 = best).
    #[serde(skip)]
    pub ranks: Vec<[usize; 2]>,
    pub replicates: u32,
    pub seed: u64,
    pub backend: String,
    pub adapter: String,
    pub method: &'static str,
}

/// What the shared bootstrap is run with.
pub struct SharedDraw<'a> {
    pub engine: &'a dyn ResampleBackend,
    pub seed: u64,
    pub replicates: u32,
    /// λ (`None`: re-tuned in every replicate).
    pub lambda: Option<f64>,
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// One column's (an arm's or a pair's) question values in one stratum: labelled questions
/// (human, judge) and unlabelled ones (judge), by id.
struct ColumnStratum<'a> {
    labelled: HashMap<&'a str, (f64, f64)>,
    unlabelled: HashMap<&'a str, f64>,
    prepared: Prepared,
}

/// The PPI++ replicates of every column (`columns[c]`: its units per stratum) on one
/// shared draw of questions, weighted by the strata's `weights`: `[column][replicate]`
/// (see the module). `None` when the columns' strata do not hold the same questions (then
/// no draw can be shared).
///
/// # Errors
/// The engine's.
pub fn shared_replicates(
    columns: &[&[StratumUnits]],
    weights: &[f64],
    draw: &SharedDraw<'_>,
) -> Result<Option<Vec<Vec<f64>>>> {
    let Some(first) = columns.first() else {
        return Ok(Some(Vec::new()));
    };
    let strata = first.len();
    if columns.iter().any(|c| c.len() != strata) {
        return Ok(None);
    }
    // Per stratum: every column's values, and the classes (labelled-in mask → ids).
    let mut per: Vec<Vec<ColumnStratum>> = Vec::with_capacity(strata);
    let mut classes: Vec<Vec<Vec<&str>>> = Vec::with_capacity(strata);
    for d in 0..strata {
        let cols: Vec<ColumnStratum> = columns
            .iter()
            .map(|c| {
                let u = &c[d];
                ColumnStratum {
                    labelled: u
                        .labelled_questions
                        .iter()
                        .map(String::as_str)
                        .zip(u.y.iter().copied().zip(u.yhat.iter().copied()))
                        .collect(),
                    unlabelled: u
                        .unlabelled_questions
                        .iter()
                        .map(String::as_str)
                        .zip(u.yhat_unlabelled.iter().copied())
                        .collect(),
                    prepared: prepare(u),
                }
            })
            .collect();
        let u0 = &first[d];
        let ids: Vec<&str> = u0
            .labelled_questions
            .iter()
            .chain(&u0.unlabelled_questions)
            .map(String::as_str)
            .collect();
        let same = cols.iter().all(|c| {
            c.labelled.len() + c.unlabelled.len() == ids.len()
                && ids
                    .iter()
                    .all(|q| c.labelled.contains_key(q) || c.unlabelled.contains_key(q))
        });
        if !same {
            return Ok(None);
        }
        // Classes in a fixed order: labelled in every column first (a reversed mask).
        let mut by: BTreeMap<Vec<bool>, Vec<&str>> = BTreeMap::new();
        for q in ids {
            let mask: Vec<bool> = cols.iter().map(|c| !c.labelled.contains_key(q)).collect();
            by.entry(mask).or_default().push(q);
        }
        classes.push(by.into_values().collect());
        per.push(cols);
    }
    let b = draw.replicates as usize;
    let mut out = vec![vec![0.0; b]; columns.len()];
    let groups: Vec<Vec<usize>> = (0..columns.len())
        .collect::<Vec<_>>()
        .chunks(PER_JOB)
        .map(<[usize]>::to_vec)
        .collect();
    for (g, group) in groups.iter().enumerate() {
        let k = 5 * group.len();
        // Engine strata: every stratum's classes, in order; a row holds every column of the
        // group.
        let mut rows: Vec<Vec<f32>> = Vec::new();
        let mut at: Vec<(usize, usize)> = Vec::new();
        for (d, cs) in classes.iter().enumerate() {
            for (ci, class) in cs.iter().enumerate() {
                let mut r = Vec::with_capacity(k * class.len());
                for q in class {
                    for &c in group {
                        let col = &per[d][c];
                        r.extend(match col.labelled.get(q) {
                            Some(&(y, h)) => labelled_row(&col.prepared, y, h),
                            None => unlabelled_row(&col.prepared, col.unlabelled[q]),
                        });
                    }
                }
                rows.push(r);
                at.push((d, ci));
            }
        }
        let job = ResampleJob {
            strata: rows.iter().map(Vec::as_slice).collect(),
            k,
            seed: draw.seed,
            replicates: 0..draw.replicates,
        };
        job.validate()?;
        let done = u64::from(draw.replicates) * g as u64;
        let sums = draw
            .engine
            .resample_sums(&job, &|n| (draw.progress)(done + n))?;
        let s = job.strata.len();
        for (j, &c) in group.iter().enumerate() {
            for (r, value) in out[c].iter_mut().enumerate() {
                let mut lab = vec![[0.0f64; 5]; strata];
                let mut unl = vec![[0.0f64; 2]; strata];
                for (e, &(d, ci)) in at.iter().enumerate() {
                    let x = &sums[(r * s + e) * k + 5 * j..(r * s + e) * k + 5 * j + 5];
                    let labelled = per[d][c].labelled.contains_key(classes[d][ci][0]);
                    if labelled {
                        for i in 0..5 {
                            lab[d][i] += f64::from(x[i]);
                        }
                    } else {
                        unl[d][0] += f64::from(x[0]);
                        unl[d][1] += f64::from(x[1]);
                    }
                }
                *value = (0..strata)
                    .map(|d| {
                        let p = &per[d][c].prepared;
                        let u = (p.big_n > 0.0).then_some(&unl[d][..]);
                        weights[d] * theta(p, &lab[d], u, draw.lambda)
                    })
                    .sum();
            }
        }
    }
    Ok(Some(out))
}

/// How the report names the method.
pub const METHOD: &str = "estimate ± c·SE (the analytic PPI++ SE), c the quantile of the maximum |z| over the family: multivariate normal with the correlations of the PPI++ bootstrap's replicates of every pair (labelled and unlabelled questions drawn separately within strata on one shared draw, lambda re-tuned per replicate), never below the value for independent systems, kept between the marginal z and Bonferroni's z; ranks from the all-pairs simultaneous intervals (Mogstad, Romano, Shaikh & Wilhelm 2024)";

/// The simultaneous intervals of the pairs (`columns[p]`: pair p's units, `pairs[p]` its
/// arms (a, b) among k, every pair of the k systems; `estimates[p]` its PPI++ estimate and
/// SE; `family` the pairs reported) on `draw`; `None` when the pairs do not hold the same
/// questions.
///
/// # Errors
/// The engine's.
#[allow(clippy::too_many_arguments)]
pub fn ppi_simultaneous(
    k: usize,
    pairs: &[(usize, usize)],
    columns: &[&[StratumUnits]],
    estimates: &[(f64, f64)],
    family: &[usize],
    weights: &[f64],
    confidence: f64,
    draw: &SharedDraw<'_>,
) -> Result<Option<PpiSimultaneous>> {
    let Some(reps) = shared_replicates(columns, weights, draw)? else {
        return Ok(None);
    };
    let cov = covariance(&reps);
    let tail = (1.0 - confidence) / 2.0;
    // `compare`'s rule on infinite df: max-|z| under the bootstrap's correlations, never
    // below the independent systems' value, between the marginal z and Bonferroni's.
    let critical = |members: &[usize]| -> (f64, Option<f64>, f64, f64) {
        let fam: Vec<Combination> = members.iter().map(|&p| vec![(p, 1.0)]).collect();
        let arms: Vec<(usize, usize)> = members.iter().map(|&p| pairs[p]).collect();
        let (max_t, independent) = family_laws(&cov, &fam, k, &arms);
        let marginal = normal_quantile(1.0 - tail);
        let bonferroni = normal_quantile(1.0 - tail / members.len().max(1) as f64);
        let max_t = max_t.map(|l| l.quantile(f64::INFINITY, confidence));
        let independent = independent.map_or(marginal, |l| l.quantile(f64::INFINITY, confidence));
        let c = match max_t {
            Some(c) => c.max(independent).clamp(marginal, bonferroni),
            None => marginal,
        };
        (c, max_t, independent, bonferroni)
    };
    let (c, max_t, independent, bonferroni) = critical(family);
    let c_all = if family.len() == pairs.len() {
        c
    } else {
        critical(&(0..pairs.len()).collect::<Vec<_>>()).0
    };
    let interval = |p: usize, c: f64| {
        let (e, se) = estimates[p];
        [e - c * se, e + c * se]
    };
    let mut diff = vec![vec![[0.0; 2]; k]; k];
    for (p, &(a, b)) in pairs.iter().enumerate() {
        let i = interval(p, c_all);
        diff[b][a] = i;
        diff[a][b] = [-i[1], -i[0]];
    }
    Ok(Some(PpiSimultaneous {
        critical: c,
        max_t,
        independent,
        bonferroni,
        critical_ranks: c_all,
        intervals: family.iter().map(|&p| interval(p, c)).collect(),
        ranks: rank_intervals(k, |j, i| diff[j][i]),
        replicates: draw.replicates,
        seed: draw.seed,
        backend: draw.engine.name().to_string(),
        adapter: draw.engine.description(),
        method: METHOD,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judges::boot::ppi_bootstrap;
    use crate::resample::summary::{summarize, Method};
    use crate::resample::CpuBackend;
    use crate::rng::keyed::KeyedStream;

    /// A stratum of `n` labelled and `big_n` unlabelled questions (ids `q0`, `q1`, …; the
    /// first n labelled), a judge 0.4·Y + 0.3 + U(0, 0.2) of a 0/1 human score.
    fn units(name: &str, seed: u64, n: usize, big_n: usize) -> StratumUnits {
        let mut s = KeyedStream::new(seed, &[]);
        let mut judge = |h: f64| 0.4 * h + 0.3 + 0.2 * s.uniform();
        let y: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 3 != 0))).collect();
        StratumUnits {
            name: name.into(),
            yhat: y.iter().map(|&h| judge(h)).collect(),
            y,
            yhat_unlabelled: (0..big_n)
                .map(|i| judge(f64::from(u8::from(i % 2 == 0))))
                .collect(),
            labelled_questions: (0..n).map(|i| format!("q{i}")).collect(),
            unlabelled_questions: (n..n + big_n).map(|i| format!("q{i}")).collect(),
            pairs: Vec::new(),
        }
    }

    /// One column whose labelled questions are one class: the shared draw is `bootstrap
    /// --labels`' own (engine strata: each stratum's labelled questions, then its
    /// unlabelled ones), so the replicates summarise to its SE and interval bit for bit.
    #[test]
    fn one_column_is_the_ppi_bootstrap() {
        let u = [units("a", 1, 13, 37), units("b", 2, 9, 21)];
        let w = [0.7, 0.3];
        let engine = CpuBackend::new();
        let draw = SharedDraw {
            engine: &engine,
            seed: 11,
            replicates: 300,
            lambda: None,
            progress: &|_| {},
        };
        let reps = shared_replicates(&[&u[..]], &w, &draw).unwrap().unwrap();
        let boot = ppi_bootstrap(
            ("x", "l", "m"),
            &u,
            &w,
            None,
            &engine,
            11,
            300,
            Method::Percentile,
            0.95,
            &|_| {},
        )
        .unwrap();
        let mine = summarize(
            boot.summary.estimate,
            &reps[0],
            Method::Percentile,
            0.95,
            0.0,
        );
        assert_eq!(mine.se, boot.summary.se);
        assert_eq!(mine.ci.0, boot.summary.ci.0);
    }

    /// Two columns labelled on different questions (q0–q9 in the first, q0–q4 and q10–q14
    /// in the second) share one draw of four classes, and each column's replicates are the
    /// PPI++ estimates (f64, by hand) of the questions its classes drew: class c is engine
    /// stratum c, classes ordered labelled-in-both, first only, second only, neither.
    #[test]
    fn columns_labelled_on_different_questions_share_the_draws_of_their_classes() {
        let base = units("all", 5, 20, 40);
        let all: Vec<(String, f64, f64)> = (0..60)
            .map(|i| {
                let h = if i < 20 {
                    base.yhat[i]
                } else {
                    base.yhat_unlabelled[i - 20]
                };
                let y = if i < 20 {
                    base.y[i]
                } else {
                    f64::from(u8::from(i % 2 == 0))
                };
                (format!("q{i}"), y, h)
            })
            .collect();
        let column = |labelled: &dyn Fn(usize) -> bool| {
            let mut u = StratumUnits {
                name: "all".into(),
                y: Vec::new(),
                yhat: Vec::new(),
                yhat_unlabelled: Vec::new(),
                labelled_questions: Vec::new(),
                unlabelled_questions: Vec::new(),
                pairs: Vec::new(),
            };
            for (i, (q, y, h)) in all.iter().enumerate() {
                if labelled(i) {
                    u.y.push(*y);
                    u.yhat.push(*h);
                    u.labelled_questions.push(q.clone());
                } else {
                    u.yhat_unlabelled.push(*h);
                    u.unlabelled_questions.push(q.clone());
                }
            }
            vec![u]
        };
        let first = column(&|i| i < 10);
        let second = column(&|i| i < 5 || (10..15).contains(&i));
        let engine = CpuBackend::new();
        let (seed, b) = (3, 40);
        let draw = SharedDraw {
            engine: &engine,
            seed,
            replicates: b,
            lambda: None,
            progress: &|_| {},
        };
        let reps = shared_replicates(&[&first[..], &second[..]], &[1.0], &draw)
            .unwrap()
            .unwrap();
        let classes: [Vec<usize>; 4] = [
            (0..5).collect(),
            (5..10).collect(),
            (10..15).collect(),
            (15..60).collect(),
        ];
        for r in 0..u64::from(b) {
            let drawn: Vec<Vec<usize>> = classes
                .iter()
                .enumerate()
                .map(|(c, members)| {
                    let q = members.len() as u32;
                    (0..u64::from(q))
                        .map(|i| {
                            members[crate::rng::draw_index(seed, r as u32, c as u32, i, q) as usize]
                        })
                        .collect()
                })
                .collect();
            for (col, labelled) in [(0usize, [0usize, 1]), (1, [0, 2])] {
                let (mut y, mut h, mut hu) = (Vec::new(), Vec::new(), Vec::new());
                for (c, qs) in drawn.iter().enumerate() {
                    for &q in qs {
                        if labelled.contains(&c) {
                            y.push(all[q].1);
                            h.push(all[q].2);
                        } else {
                            hu.push(all[q].2);
                        }
                    }
                }
                let want = crate::judges::ppi::ppi_mean(&y, &h, &hu, None)
                    .unwrap()
                    .estimate;
                let got = reps[col][r as usize];
                assert!(
                    (got - want).abs() < 1e-5,
                    "column {col} replicate {r}: {got} vs {want}"
                );
            }
        }
    }
}
