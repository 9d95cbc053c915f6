//! The bootstrap of a PPI++ estimate (`bootstrap --labels`): in every replicate the
//! labelled and the unlabelled questions of each stratum are resampled with replacement
//! separately (n_d and N_d draws), λ̂ is re-tuned on the drawn questions (unless λ is
//! given), and the replicate's estimate is Σ w_d θ̂*_d. The draws and sums run on the
//! resampling engine ([`crate::resample`]), so the CPU and the GPU give the same replicates
//! bit for bit.
//!
//! Each stratum d is two engine strata: its labelled questions, rows
//! (y, ŷ, y², ŷ², yŷ), and its unlabelled ones, rows (ŷᵘ, ŷᵘ², 0, 0, 0), every y centred
//! at the labels' mean and every ŷ, ŷᵘ at the judge's mean over the stratum (centring keeps
//! the f32 sums from cancelling; θ̂ and λ̂ are shift-invariant up to adding the centre back).
//! From the sums: cov₀ = S_yŷ/n − ȳŷ̄, var₁ = (S_ŷŷ + S_uu − (S_ŷ + S_u)²/(n + N))/(n + N − 1),
//! λ* = cov₀/((1 + n/N) var₁) clipped to 0 … 1, θ̂*_d = c_y + λ*·S_u/N + ȳ − λ*·ŷ̄.

use serde::Serialize;

use super::labels::StratumUnits;
use super::ppi::ppi_mean;
use crate::document::{Engine, Report};
use crate::resample::engine::{ResampleBackend, ResampleJob};
use crate::resample::summary::{summarize, Method, Summary};
use crate::table::{Cell, Table, ToView, View};
use crate::{Error, Result};

/// The bootstrap of a PPI++ estimate.
#[derive(Debug, Clone, Serialize)]
pub struct PpiBootstrap {
    pub outcome: String,
    pub labels: String,
    pub label_metric: String,
    /// `power-tuned` (re-tuned in every replicate) or the λ given.
    pub lambda: String,
    pub method: Method,
    /// θ̂ of the data, the replicates' SD and the interval.
    #[serde(flatten)]
    pub summary: Summary,
    /// The analytic PPI SE of the data, for comparison.
    pub analytic_se: f64,
    pub replicates: u32,
    pub seed: u64,
    pub confidence: f64,
    pub backend: String,
    pub adapter: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report for PpiBootstrap {
    fn engine(&self) -> Engine {
        Engine::resampled(
            self.backend.clone(),
            self.adapter.clone(),
            u64::from(self.replicates),
            self.seed,
            self.confidence,
        )
    }
}

/// One stratum's engine rows and centres.
pub(crate) struct Prepared {
    pub(crate) labelled: Vec<f32>,
    pub(crate) unlabelled: Vec<f32>,
    pub(crate) n: f64,
    pub(crate) big_n: f64,
    /// The labels' mean and the judge's mean over the stratum: the rows' centres.
    pub(crate) c_y: f64,
    pub(crate) c_h: f64,
}

/// The engine row of a labelled question (human `y`, judge `h`), centred at `p`'s centres.
pub(crate) fn labelled_row(p: &Prepared, y: f64, h: f64) -> [f32; 5] {
    let (y, h) = (y - p.c_y, h - p.c_h);
    [y, h, y * y, h * h, y * h].map(|v| v as f32)
}

/// The engine row of an unlabelled question (judge `h`), centred at `p`'s judge centre.
pub(crate) fn unlabelled_row(p: &Prepared, h: f64) -> [f32; 5] {
    let h = h - p.c_h;
    [h, h * h, 0.0, 0.0, 0.0].map(|v| v as f32)
}

pub(crate) fn prepare(u: &StratumUnits) -> Prepared {
    let c_y = u.y.iter().sum::<f64>() / u.y.len() as f64;
    let all = u.yhat.len() + u.yhat_unlabelled.len();
    let c_h = u.yhat.iter().chain(&u.yhat_unlabelled).sum::<f64>() / all as f64;
    let mut p = Prepared {
        labelled: Vec::with_capacity(5 * u.y.len()),
        unlabelled: Vec::with_capacity(5 * u.yhat_unlabelled.len()),
        n: u.y.len() as f64,
        big_n: u.yhat_unlabelled.len() as f64,
        c_y,
        c_h,
    };
    for (y, h) in u.y.iter().zip(&u.yhat) {
        let row = labelled_row(&p, *y, *h);
        p.labelled.extend(row);
    }
    for h in &u.yhat_unlabelled {
        let row = unlabelled_row(&p, *h);
        p.unlabelled.extend(row);
    }
    p
}

/// θ̂*_d from one stratum's replicate sums (`lab`: the 5 labelled sums; `unl`: the
/// unlabelled ones, `None` without unlabelled questions) — the module's formulas.
pub(crate) fn theta(p: &Prepared, lab: &[f64], unl: Option<&[f64]>, lambda: Option<f64>) -> f64 {
    let s = |x: &[f64], i: usize| x[i];
    let (n, big_n) = (p.n, p.big_n);
    let (my, mh) = (s(lab, 0) / n, s(lab, 1) / n);
    let Some(unl) = unl else {
        // No unlabelled questions: the labels alone (λ = 0).
        return p.c_y + my;
    };
    let lam = lambda.unwrap_or_else(|| {
        let cov = s(lab, 4) / n - my * mh;
        let tot = s(lab, 1) + s(unl, 0);
        let var = (s(lab, 3) + s(unl, 1) - tot * tot / (n + big_n)) / (n + big_n - 1.0);
        let denom = (1.0 + n / big_n) * var;
        if denom.is_nan() || denom <= 0.0 {
            0.0
        } else {
            (cov / denom).clamp(0.0, 1.0)
        }
    });
    p.c_y + lam * s(unl, 0) / big_n + my - lam * mh
}

/// The bootstrap of the PPI++ estimate of `units` with the strata's `weights` on `engine`
/// (replicates 0..`replicates` of `seed`); see the module for the resampling.
///
/// # Errors
/// [`Error::Setting`] for BCa (its jackknife is not made for PPI), fewer than 2 labelled
/// questions in a stratum (those of [`ppi_mean`]), and the engine's.
#[allow(clippy::too_many_arguments)]
pub fn ppi_bootstrap(
    head: (&str, &str, &str),
    units: &[StratumUnits],
    weights: &[f64],
    lambda: Option<f64>,
    engine: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    method: Method,
    confidence: f64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PpiBootstrap> {
    if method == Method::Bca {
        return Err(Error::setting(
            "method",
            "bca cannot be used with labels: choose percentile or basic",
        ));
    }
    let mut theta_hat = 0.0;
    let mut var = 0.0;
    for (u, w) in units.iter().zip(weights) {
        let p = ppi_mean(&u.y, &u.yhat, &u.yhat_unlabelled, lambda).map_err(|e| match e {
            Error::Data(m) => Error::Data(format!("stratum '{}': {m}", u.name)),
            e => e,
        })?;
        theta_hat += w * p.estimate;
        var += w * w * p.se * p.se;
    }
    let prepared: Vec<Prepared> = units.iter().map(prepare).collect();
    // Engine strata: each stratum's labelled rows, then its unlabelled rows where it has any.
    let mut strata: Vec<&[f32]> = Vec::new();
    let mut index: Vec<(usize, Option<usize>)> = Vec::new();
    for p in &prepared {
        let l = strata.len();
        strata.push(&p.labelled);
        let u = (!p.unlabelled.is_empty()).then(|| {
            strata.push(&p.unlabelled);
            l + 1
        });
        index.push((l, u));
    }
    let job = ResampleJob {
        strata,
        k: 5,
        seed,
        replicates: 0..replicates,
    };
    job.validate()?;
    let sums = engine.resample_sums(&job, progress)?;
    let s = job.strata.len();
    let reps: Vec<f64> = (0..replicates as usize)
        .map(|r| {
            let at = |e: usize| -> [f64; 5] {
                let x = &sums[(r * s + e) * 5..(r * s + e) * 5 + 5];
                std::array::from_fn(|i| f64::from(x[i]))
            };
            prepared
                .iter()
                .zip(&index)
                .zip(weights)
                .map(|((p, &(l, u)), w)| {
                    w * theta(p, &at(l), u.map(at).as_ref().map(|x| &x[..]), lambda)
                })
                .sum()
        })
        .collect();
    let (outcome, labels, label_metric) = head;
    let fewest = units.iter().map(|u| u.y.len()).min().unwrap_or(0);
    let mut notes = Vec::new();
    if fewest < 100 {
        notes.push(format!(
            "note: {fewest} labelled questions in a stratum: the percentile interval of the \
             PPI++ bootstrap covered 0.928 ± 0.012 of 95% at 60 labels of 600 \
             (docs/COVERAGE.md); the analytic interval of variance with labels held 0.949"
        ));
    }
    Ok(PpiBootstrap {
        outcome: outcome.to_string(),
        labels: labels.to_string(),
        label_metric: label_metric.to_string(),
        lambda: lambda.map_or("power-tuned".to_string(), |l| format!("{l}")),
        method,
        summary: summarize(theta_hat, &reps, method, confidence, 0.0),
        analytic_se: var.sqrt(),
        replicates,
        seed,
        confidence,
        backend: engine.name().to_string(),
        adapter: engine.description(),
        notes,
    })
}

impl ToView for PpiBootstrap {
    fn to_view(&self) -> View {
        let mut t = Table::new(&["estimate", "se", "lower", "upper", "analytic_se"]);
        t.row([
            Cell::num(self.summary.estimate),
            Cell::num(self.summary.se),
            Cell::num(self.summary.ci.lower()),
            Cell::num(self.summary.ci.upper()),
            Cell::num(self.analytic_se),
        ]);
        let mut v = View::new(t);
        v.text(format!(
            "{}: bootstrap of the human-scale estimate (PPI++, labels {} [{}], lambda {}; \
             labelled and unlabelled questions resampled within strata)\n",
            self.outcome, self.labels, self.label_metric, self.lambda
        ));
        v.text(format!(
            "estimate {}  bootstrap SE {}  {} {} CI [{}, {}]  (analytic SE {})\n",
            crate::table::number(self.summary.estimate),
            crate::table::number(self.summary.se),
            crate::table::percent(self.confidence),
            match self.method {
                Method::Basic => "basic",
                _ => "percentile",
            },
            crate::table::number(self.summary.ci.lower()),
            crate::table::number(self.summary.ci.upper()),
            crate::table::number(self.analytic_se)
        ));
        v.text(format!(
            "backend {} ({}), {} replicates, seed {}\n",
            self.backend, self.adapter, self.replicates, self.seed
        ));
        for n in &self.notes {
            v.text(format!("{n}\n"));
        }
        v
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::resample::CpuBackend;
    use crate::rng::draw_index;
    use crate::rng::keyed::KeyedStream;

    /// A stratum of `n` labelled and `big_n` unlabelled questions (ids `q0`, `q1`, …; the
    /// first n labelled), a judge 0.4·Y + 0.3 + U(0, 0.2) of a 0/1 human score.
    pub(crate) fn units(name: &str, seed: u64, n: usize, big_n: usize) -> StratumUnits {
        let mut s = KeyedStream::new(seed, &[]);
        let mut judge = |h: f64| 0.4 * h + 0.3 + 0.2 * s.uniform();
        let y: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 3 != 0))).collect();
        let yhat: Vec<f64> = y.iter().map(|&h| judge(h)).collect();
        let yhat_unlabelled: Vec<f64> = (0..big_n)
            .map(|i| judge(f64::from(u8::from(i % 2 == 0))))
            .collect();
        StratumUnits {
            name: name.into(),
            y,
            yhat,
            yhat_unlabelled,
            labelled_questions: (0..n).map(|i| format!("q{i}")).collect(),
            unlabelled_questions: (n..n + big_n).map(|i| format!("q{i}")).collect(),
            pairs: Vec::new(),
        }
    }

    /// Every replicate is the PPI++ estimate (f64, [`ppi_mean`]) of the questions the
    /// stream draws for it: engine stratum 2d the labelled questions of stratum d, 2d + 1
    /// its unlabelled ones (draw i of replicate r is `draw_index(seed, r, stratum, i, q)`),
    /// weighted as the strata are; to f32 sums' precision.
    #[test]
    fn replicates_are_ppi_of_the_drawn_questions() {
        let u = [units("a", 1, 13, 37), units("b", 2, 9, 21)];
        let w = [0.7, 0.3];
        let seed = 11;
        let reps = 50;
        let boot = ppi_bootstrap(
            ("x", "l", "m"),
            &u,
            &w,
            None,
            &CpuBackend::new(),
            seed,
            reps,
            Method::Percentile,
            0.95,
            &|_| {},
        )
        .unwrap();
        let mut by_hand = Vec::new();
        for r in 0..reps {
            let mut est = 0.0;
            for (d, (s, wd)) in u.iter().zip(w).enumerate() {
                let draw = |stratum: usize, q: usize| {
                    (0..q as u64)
                        .map(|i| draw_index(seed, r, stratum as u32, i, q as u32) as usize)
                        .collect::<Vec<_>>()
                };
                let li = draw(2 * d, s.y.len());
                let ui = draw(2 * d + 1, s.yhat_unlabelled.len());
                let y: Vec<f64> = li.iter().map(|&i| s.y[i]).collect();
                let h: Vec<f64> = li.iter().map(|&i| s.yhat[i]).collect();
                let hu: Vec<f64> = ui.iter().map(|&i| s.yhat_unlabelled[i]).collect();
                est += wd * ppi_mean(&y, &h, &hu, None).unwrap().estimate;
            }
            by_hand.push(est);
        }
        let want = summarize(
            boot.summary.estimate,
            &by_hand,
            Method::Percentile,
            0.95,
            0.0,
        );
        assert!(
            (boot.summary.se - want.se).abs() < 1e-5,
            "{} {}",
            boot.summary.se,
            want.se
        );
        assert!((boot.summary.ci.lower() - want.ci.lower()).abs() < 1e-5);
        assert!((boot.summary.ci.upper() - want.ci.upper()).abs() < 1e-5);
        // The data's estimate is the analytic one.
        let direct: f64 = u
            .iter()
            .zip(w)
            .map(|(s, wd)| {
                wd * ppi_mean(&s.y, &s.yhat, &s.yhat_unlabelled, None)
                    .unwrap()
                    .estimate
            })
            .sum();
        assert_eq!(boot.summary.estimate, direct);
        assert!(ppi_bootstrap(
            ("x", "l", "m"),
            &u,
            &w,
            None,
            &CpuBackend::new(),
            1,
            10,
            Method::Bca,
            0.95,
            &|_| {}
        )
        .is_err());
    }

    /// The coverage of the PPI++ bootstrap's 95% percentile interval (docs/COVERAGE.md,
    /// "PPI"): 500 studies of 600 one-cell questions, 60 labelled, the biased judge of
    /// `judges::ppi`'s coverage test (θ = 1/2), 400 replicates each. Fails below 0.92
    /// (0.95 less 2.5 Monte Carlo SEs of 0.0097). A coverage study (90 s in the test build):
    /// run with `--ignored`.
    #[test]
    #[ignore = "a coverage study, 90 s in the test build: cargo test -p ragstats-core --lib judges::boot -- --ignored --nocapture"]
    fn the_ppi_bootstrap_interval_covers_with_a_biased_judge() {
        let studies = 500u64;
        let mut hits = 0;
        for seed in 0..studies {
            let mut s = KeyedStream::new(seed, &[4949]);
            let mut u = StratumUnits::empty("all");
            for i in 0..600 {
                let x = s.uniform();
                let human = f64::from(u8::from(s.uniform() < x));
                let judge = 0.5 * x + 0.2 * human + 0.3 + 0.1 * s.normal();
                if i < 60 {
                    u.y.push(human);
                    u.yhat.push(judge);
                } else {
                    u.yhat_unlabelled.push(judge);
                }
            }
            let b = ppi_bootstrap(
                ("x", "l", "m"),
                std::slice::from_ref(&u),
                &[1.0],
                None,
                &CpuBackend::new(),
                seed,
                400,
                Method::Percentile,
                0.95,
                &|_| {},
            )
            .unwrap();
            hits += usize::from(b.summary.ci.lower() <= 0.5 && 0.5 <= b.summary.ci.upper());
        }
        let rate = hits as f64 / studies as f64;
        // docs/COVERAGE.md's row: `cargo test -p ragstats-core --lib judges::boot -- --ignored --nocapture`.
        eprintln!(
            "PPI++ bootstrap percentile coverage, 60 labels of 600, {studies} studies: {rate}"
        );
        assert!(rate >= 0.92, "{rate}");
    }
}
