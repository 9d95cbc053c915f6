//! `stats correlate` as one library call ([`correlate`]): every x × y pair's point estimate,
//! p-value and Fisher-z interval ([`estimates`]), the bootstrap of all pairs on the
//! resample engine ([`bootstrap_replicates`], rows or whole clusters; percentile intervals
//! of the defined replicates), and the permutation tests ([`permutation_tests`],
//! p = (1 + #{|r*| ≥ |r|}) / (permutations + 1)), with what the reader should know as notes.

use serde::Serialize;

use super::analysis::{
    attach_bootstrap, bootstrap_replicates, estimates, is_rank, permutation_tests, PairResult,
    Prepared,
};
use super::estimate::Method;
use super::permute::{CpuPermute, PermuteBackend};
use super::table::Dataset;
use crate::document::{Engine, Report};
use crate::resample::engine::ResampleBackend;
use crate::resample::{CpuBackend, Resampling};
use crate::table::{format_number, Precision};
use crate::{Error, Result};

/// How the pairs are resampled and permuted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrelateJob {
    /// The bootstrap (replicates: 0 for none, else at least 2), the seed of the bootstrap
    /// and permutation streams, and the confidence level of the Fisher-z and bootstrap
    /// intervals.
    pub resampling: Resampling,
    /// Random permutations of the y rows (0 for no permutation test).
    pub permutations: u32,
    /// Whether the GPU was asked for explicitly: Kendall's permutations, which run on the
    /// CPU only, then say so in a note.
    pub gpu_requested: bool,
}

/// The stage a progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorrelateStage {
    /// Engine calls of the bootstrap (of `replicates × bootstrap_calls`).
    Bootstrap,
    /// Permutations done (of `permutations`).
    Permutations,
}

/// The coding of a point-biserial y column: which value is 0 and which 1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coding {
    pub column: String,
    pub zero: f64,
    pub one: f64,
}

/// r and p of every pair as x × y matrices (`r[i][j]`: x column i, y column j).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    pub x: Vec<String>,
    pub y: Vec<String>,
    pub r: Vec<Vec<f64>>,
    pub p: Vec<Vec<f64>>,
}

/// What `correlate` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrelateReport {
    pub method: Method,
    /// The reference distribution of the p-values, in words.
    pub p_value: &'static str,
    /// Rows (or units) analysed.
    pub n: usize,
    pub rows_read: usize,
    pub dropped: usize,
    pub aggregated_from: Option<usize>,
    /// Clusters the bootstrap resampled whole, if any.
    pub clusters: Option<usize>,
    /// The confidence level of the Fisher-z and bootstrap intervals (in the document's
    /// `run` envelope, [`Report::engine`]).
    #[serde(skip)]
    pub confidence: f64,
    /// The seed of the bootstrap and permutation streams (`run.seed`).
    #[serde(skip)]
    pub seed: u64,
    /// Bootstrap replicates, 0 for none (`run.replicates`).
    #[serde(skip)]
    pub replicates: u32,
    /// The bootstrap engine's name and description (`None` without a bootstrap; `run.backend`
    /// and `run.adapter`).
    #[serde(skip)]
    pub bootstrap_backend: Option<&'static str>,
    #[serde(skip)]
    pub bootstrap_adapter: Option<String>,
    /// The permutation test's count and backend stay in the body: the envelope has one
    /// engine, the bootstrap's, and the permutations may run on another.
    pub permutations: u32,
    /// The permutation backend's name and description (`None` without permutations).
    pub permutation_backend: Option<&'static str>,
    pub permutation_adapter: Option<String>,
    /// Point-biserial codings of the y columns.
    pub coding: Vec<Coding>,
    pub notes: Vec<String>,
    /// Every pair, x-major.
    pub pairs: Vec<PairResult>,
    pub matrix: Matrix,
}

impl Report for CorrelateReport {
    /// The bootstrap's engine (`None` without a bootstrap) and the settings every interval
    /// and stream used: replicates (0 without a bootstrap), seed (also the permutations'),
    /// confidence (also the Fisher-z intervals').
    fn engine(&self) -> Engine {
        Engine {
            backend: self.bootstrap_backend.map(str::to_string),
            adapter: self.bootstrap_adapter.clone(),
            replicates: Some(u64::from(self.replicates)),
            seed: Some(self.seed),
            confidence: Some(self.confidence),
        }
    }
}

/// Correlates every x × y pair of `data` as `prep` (from [`super::prepare`]: the columns
/// as `prep.method` uses them) holds them: estimates and tests; with a positive
/// `settings.resampling.replicates` the bootstrap on `bootstrap` (required then), rows or, when `data`
/// has clusters, whole clusters; with a positive `settings.permutations` the permutation
/// tests on `permute` (the CPU when `None`, and always for Kendall, whose S is not a sum).
///
/// # Errors
/// [`Error::Setting`] (`cluster`) for a cluster bootstrap of fewer than 2 clusters;
/// [`Error::Usage`] for replicates without
/// a bootstrap engine; engine and backend errors.
pub fn correlate(
    data: &Dataset,
    prep: &Prepared,
    settings: &CorrelateJob,
    bootstrap: Option<&dyn ResampleBackend>,
    permute: Option<&dyn PermuteBackend>,
    progress: &(dyn Fn(CorrelateStage, u64) + Sync),
) -> Result<CorrelateReport> {
    let method = prep.method;
    let Resampling {
        seed,
        replicates,
        confidence,
    } = settings.resampling;
    let mut results = estimates(prep, confidence);
    let mut notes: Vec<String> = Vec::new();
    let clusters = data
        .clusters
        .as_ref()
        .map(|(ids, names)| (ids.as_slice(), names.len()));
    if method == Method::Spearman {
        notes.push(
            "Spearman bootstrap re-ranks every resample; permutations keep the full-sample \
             ranks, which is the same (a permutation does not change the values ranked)"
                .into(),
        );
    }
    if let Some((ids, g)) = clusters {
        // Rows of one cluster are not independent: the t test and the Fisher interval
        // become the delete-one-cluster jackknife's (super::cluster).
        let mut est: Vec<&mut super::estimate::Estimate> =
            results.iter_mut().map(|r| &mut r.estimate).collect();
        let undefined = super::cluster::apply(prep, ids, g, confidence, &mut est);
        for p in undefined {
            notes.push(format!(
                "{} x {}: the cluster jackknife is undefined (fewer than 3 clusters, or r is \
                 undefined or ±1 with a cluster left out), so there is no p-value or interval",
                results[p].x, results[p].y
            ));
        }
    }
    let mut boot_ran = None;
    if replicates > 0 {
        if let Some((_, c)) = clusters {
            if c < 2 {
                return Err(Error::setting(
                    "cluster",
                    format!("only {c} cluster; the cluster bootstrap needs at least 2"),
                ));
            }
        }
        // The rank methods re-rank every resample on the CPU (super::rank_boot), from the
        // draws every engine makes: no engine is needed, and the CPU is what ran.
        let cpu = CpuBackend::new();
        let engine: &dyn ResampleBackend = if is_rank(method) {
            if settings.gpu_requested {
                notes.push(format!(
                    "the {} bootstrap re-ranks every resample on the CPU (a rank is not a \
                     sum), drawing the resamples the GPU engine draws",
                    method.name()
                ));
            }
            &cpu
        } else {
            bootstrap.ok_or_else(|| {
                Error::Usage("a bootstrap needs a resampling engine (or 0 replicates)".into())
            })?
        };
        let reps = bootstrap_replicates(prep, clusters, &settings.resampling, engine, &|d| {
            progress(CorrelateStage::Bootstrap, d)
        })?;
        attach_bootstrap(&mut results, &reps, confidence);
        boot_ran = Some((engine.name(), engine.description()));
    }
    let mut perm_ran = None;
    if settings.permutations > 0 {
        if method == Method::Kendall && settings.gpu_requested {
            notes.push("Kendall permutations run on the CPU (S is not a sum)".into());
        }
        let backend: &dyn PermuteBackend = match permute {
            Some(b) if method != Method::Kendall => b,
            _ => &CpuPermute,
        };
        let perms = permutation_tests(prep, backend, seed, settings.permutations, &|d| {
            progress(CorrelateStage::Permutations, d)
        })?;
        for (r, p) in results.iter_mut().zip(perms) {
            r.permutation = Some(p);
        }
        perm_ran = Some((backend.name(), backend.description()));
    }
    let num = |v: f64| format_number(v, Precision::Auto);
    for r in &results {
        let e = &r.estimate;
        let fisher_bad = e.fisher.is_some_and(|f| !f.is_finite());
        // An undefined cluster jackknife (NaN) has its own note above.
        let jackknife_undefined = clusters.is_some() && e.statistic.is_nan();
        if (!e.statistic.is_finite() && !jackknife_undefined) || fisher_bad {
            notes.push(format!(
                "{} x {}: r = {}, so the test statistic is undefined (infinite: null in JSON) and the p-value is {}",
                r.x,
                r.y,
                num(e.r),
                num(e.p)
            ));
        }
    }
    let ny = prep.y_names.len();
    let grid = |f: fn(&PairResult) -> f64| -> Vec<Vec<f64>> {
        (0..prep.x_names.len())
            .map(|i| (0..ny).map(|j| f(&results[i * ny + j])).collect())
            .collect()
    };
    let matrix = Matrix {
        x: prep.x_names.clone(),
        y: prep.y_names.clone(),
        r: grid(|p| p.estimate.r),
        p: grid(|p| p.estimate.p),
    };
    let (bootstrap_backend, bootstrap_adapter) = boot_ran.unzip();
    let (permutation_backend, permutation_adapter) = perm_ran.unzip();
    Ok(CorrelateReport {
        method,
        p_value: match (method, clusters) {
            (_, Some(_)) => "cluster jackknife of Fisher's z, Student t with G - 2 df (G clusters)",
            (Method::Kendall, None) => "normal approximation, tie-corrected variance of S",
            _ => "Student t with n - 2 df",
        },
        n: prep.n(),
        rows_read: data.rows_read,
        dropped: data.dropped,
        aggregated_from: data.aggregated_from,
        clusters: clusters.map(|c| c.1),
        confidence,
        seed,
        replicates,
        bootstrap_backend,
        bootstrap_adapter,
        permutations: settings.permutations,
        permutation_backend,
        permutation_adapter,
        coding: prep
            .coding
            .iter()
            .map(|(c, v)| Coding {
                column: c.clone(),
                zero: v[0],
                one: v[1],
            })
            .collect(),
        notes,
        pairs: results,
        matrix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::prepare;
    use crate::document::{document, Inputs};
    use crate::resample::CpuBackend;
    use serde_json::{json, Value};

    /// x = 1..5, y = (2, 1, 4, 3, 5): deviations (-2, -1, 0, 1, 2) and (-1, -2, 1, 0, 2),
    /// Sxy = 8, Sxx = Syy = 10, so r = 8 / 10 = 0.8.
    fn five_rows() -> Dataset {
        Dataset {
            x_names: vec!["x".into()],
            y_names: vec!["y".into()],
            x: vec![vec![1., 2., 3., 4., 5.]],
            y: vec![vec![2., 1., 4., 3., 5.]],
            clusters: None,
            rows_read: 5,
            dropped: 0,
            aggregated_from: None,
        }
    }

    #[test]
    fn the_document_has_the_bootstrap_engine_in_run_and_the_permutations_in_the_body() {
        let data = five_rows();
        let prep = prepare(&data, Method::Pearson).unwrap();
        let settings = CorrelateJob {
            resampling: Resampling {
                seed: 7,
                replicates: 50,
                confidence: 0.9,
            },
            permutations: 99,
            gpu_requested: false,
        };
        let engine = CpuBackend::new();
        let r = correlate(&data, &prep, &settings, Some(&engine), None, &|_, _| {}).unwrap();
        let d = document("correlate", Inputs::new().with("table", "t.csv"), &r);
        let run = &d["run"];
        assert_eq!(run["command"], "correlate");
        assert_eq!(run["inputs"], json!({"table": "t.csv"}));
        assert_eq!(run["backend"], "cpu");
        assert_eq!(run["adapter"], Value::from(engine.description()));
        assert_eq!(
            (&run["replicates"], &run["seed"], &run["confidence"]),
            (&json!(50), &json!(7), &json!(0.9))
        );
        for key in [
            "backend",
            "adapter",
            "bootstrap_backend",
            "bootstrap_adapter",
            "replicates",
            "seed",
            "confidence",
        ] {
            assert!(d.get(key).is_none(), "{key} is in the body");
        }
        // The permutation engine's facts stay in the body, as they were.
        assert_eq!(d["permutations"], 99);
        assert_eq!(d["permutation_backend"], "cpu");
        assert_eq!(
            d["permutation_adapter"],
            Value::from(CpuPermute.description())
        );
        assert_eq!((&d["n"], &d["method"]), (&json!(5), &json!("pearson")));
        let r0 = d["pairs"][0]["r"].as_f64().unwrap();
        assert!((r0 - 0.8).abs() < 1e-15, "{r0}");
        assert_eq!(d["matrix"]["r"][0][0], d["pairs"][0]["r"]);
        assert_eq!(d["pairs"][0]["permutation"]["permutations"], 99);
    }

    #[test]
    fn without_a_bootstrap_the_engine_is_null_but_the_settings_are_kept() {
        let data = five_rows();
        let prep = prepare(&data, Method::Spearman).unwrap();
        let settings = CorrelateJob {
            resampling: Resampling {
                seed: 3,
                replicates: 0,
                confidence: 0.95,
            },
            permutations: 0,
            gpu_requested: false,
        };
        let r = correlate(&data, &prep, &settings, None, None, &|_, _| {}).unwrap();
        let e = r.engine();
        assert_eq!((e.backend, e.adapter), (None, None));
        assert_eq!(
            (e.replicates, e.seed, e.confidence),
            (Some(0), Some(3), Some(0.95))
        );
        let body = crate::document::to_body(&r);
        assert_eq!(body["permutation_backend"], Value::Null);
        assert_eq!(body["permutations"], 0);
        assert!(body.get("seed").is_none() && body.get("bootstrap_backend").is_none());
    }
}
