//! The coverage grid of docs/COVERAGE.md: the study of [`super::coverage`] on simulated
//! designs rather than a user's panel.
//!
//! A full factorial (6 question counts × 3 strata layouts × 3 T × 3 R × 3 score types × 3
//! arm counts = 1,458 designs) is too big, so the grid varies one factor at a time around a
//! base design — 2 strata × 50 questions, T = 2, R = 2, an F1-like score, k = 2 arms — and
//! adds the corners where intervals are known to struggle: few binary questions, one stratum
//! of 20 binary one-cell questions (2 and 5 arms), unequal
//! strata with several arms, few questions with several arms.
//!
//! Scores (bounded generator, [`super::generate`]): F1-like m = 0.5, components
//! (σ²_q, σ²_t, σ²_r) = (0.04, 0.01, 0.02) (the demo panel's); binary EM m = 0.4,
//! (0.10, 0.03, ·) with Bernoulli reads; skewed m = 0.85, (0.03, 0.01, 0.02). Arm j of k has
//! mean m + 0.1 (j/(k−1) − 1/2); the arms' question effects have correlation 0.7. The
//! analyses are `variance` and `bootstrap` of the contrast arm 2 − arm 1 and `compare` of
//! every arm.

use serde::Serialize;

use super::model::{Components, Model, Scale, StratumModel};
use super::{coverage, Analysis, CoverageJob, CoverageReport, Generator, Outcome};
use crate::panel::{Panel, Stratum};
use crate::resample::ResampleBackend;
use crate::Result;

/// A score type of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// Continuous in [0, 1], mean 0.5.
    F1,
    /// Binary, mean 0.4.
    Em,
    /// Continuous in [0, 1], mean 0.85.
    Skewed,
}

impl Score {
    fn params(self) -> (f64, Components, Scale) {
        let c = |question, trajectory, read| Components {
            question,
            trajectory,
            read,
        };
        match self {
            Score::F1 => (0.5, c(0.04, 0.01, 0.02), Scale::Bounded),
            Score::Em => (0.4, c(0.10, 0.03, 0.0), Scale::Binary),
            Score::Skewed => (0.85, c(0.03, 0.01, 0.02), Scale::Bounded),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Score::F1 => "F1-like",
            Score::Em => "binary EM",
            Score::Skewed => "skewed (mean 0.85)",
        }
    }
}

/// One simulated design of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Design {
    /// What the cell varies, e.g. `Q = 10` or `base`.
    pub label: String,
    /// Questions per stratum.
    pub strata: Vec<usize>,
    pub trajectories: usize,
    pub reads: usize,
    pub score: Score,
    pub arms: usize,
}

impl Design {
    /// The design in one line: `2 × 50 questions, T 2, R 2, F1-like, k 2`.
    pub fn describe(&self) -> String {
        let q = if self.strata.iter().all(|&q| q == self.strata[0]) {
            format!("{} × {}", self.strata.len(), self.strata[0])
        } else {
            self.strata
                .iter()
                .map(|q| q.to_string())
                .collect::<Vec<_>>()
                .join(" + ")
        };
        format!(
            "{q} questions, T {}, R {}, {}, k {}",
            self.trajectories,
            self.reads,
            self.score.name(),
            self.arms
        )
    }

    /// The model of the design (see the module documentation).
    pub fn model(&self) -> Model {
        let (m, c, scale) = self.score.params();
        let k = self.arms;
        let arms: Vec<String> = (1..=k).map(|j| format!("arm{j}")).collect();
        let names: Vec<String> = (1..=self.strata.len()).map(|d| format!("d{d}")).collect();
        let strata = names
            .iter()
            .map(|name| StratumModel {
                name: name.clone(),
                means: (0..k)
                    .map(|j| m + 0.1 * (j as f64 / (k - 1).max(1) as f64 - 0.5))
                    .collect(),
                components: vec![c; k],
                correlation: (0..k * k)
                    .map(|i| if i / k == i % k { 1.0 } else { 0.7 })
                    .collect(),
            })
            .collect();
        let templates = arms
            .iter()
            .map(|arm| Panel {
                notes: Vec::new(),
                weights: Vec::new(),
                source: "grid".into(),
                metric: "score".into(),
                outcome: format!("score ({arm})"),
                selectors: Vec::new(),
                selector: None,
                strata: names
                    .iter()
                    .zip(&self.strata)
                    .map(|(name, &q)| Stratum {
                        name: name.clone(),
                        questions: (0..q).map(|i| format!("q{i}")).collect(),
                        trajectories: (1..=self.trajectories).map(|t| t.to_string()).collect(),
                        reads: (1..=self.reads).map(|r| r.to_string()).collect(),
                        y: vec![0.0; q * self.trajectories * self.reads],
                        ..Default::default()
                    })
                    .collect(),
            })
            .collect();
        Model {
            arms,
            scale,
            strata,
            templates,
        }
    }
}

/// The grid's designs: one factor at a time around the base, then the corners.
pub fn designs() -> Vec<Design> {
    let base = Design {
        label: "base".into(),
        strata: vec![50, 50],
        trajectories: 2,
        reads: 2,
        score: Score::F1,
        arms: 2,
    };
    let with = |label: String, f: &dyn Fn(&mut Design)| {
        let mut d = base.clone();
        f(&mut d);
        d.label = label;
        d
    };
    let mut out = vec![base.clone()];
    for q in [5, 10, 20, 200, 1000] {
        out.push(with(format!("Q = {q} per stratum"), &|d| {
            d.strata = vec![q, q]
        }));
    }
    out.push(with("one stratum".into(), &|d| d.strata = vec![50]));
    out.push(with("unequal strata 8 + 40".into(), &|d| {
        d.strata = vec![8, 40]
    }));
    for t in [1, 5] {
        out.push(with(format!("T = {t}"), &|d| d.trajectories = t));
    }
    for r in [1, 5] {
        out.push(with(format!("R = {r}"), &|d| d.reads = r));
    }
    out.push(with("binary EM".into(), &|d| d.score = Score::Em));
    out.push(with("skewed scores".into(), &|d| d.score = Score::Skewed));
    for k in [5, 10] {
        out.push(with(format!("k = {k} arms"), &|d| d.arms = k));
    }
    for q in [5, 10, 20] {
        out.push(with(format!("corner: binary, Q = {q}"), &|d| {
            d.score = Score::Em;
            d.strata = vec![q, q];
        }));
    }
    out.push(with("corner: binary, Q = 10, T = 1, R = 1".into(), &|d| {
        d.score = Score::Em;
        d.strata = vec![10, 10];
        d.trajectories = 1;
        d.reads = 1;
    }));
    // One stratum of binary single-cell questions: where compare's score methods (Wilson,
    // Newcombe, exact McNemar) replace the t ones, as on bayes_evals' 20 × 9 matrix.
    for k in [2, 5] {
        out.push(with(
            format!("corner: binary, one stratum of 20, T = R = 1, k = {k}"),
            &|d| {
                d.score = Score::Em;
                d.strata = vec![20];
                d.trajectories = 1;
                d.reads = 1;
                d.arms = k;
            },
        ));
    }
    out.push(with("corner: unequal 8 + 40, k = 5".into(), &|d| {
        d.strata = vec![8, 40];
        d.arms = 5;
    }));
    out.push(with("corner: Q = 10, k = 5".into(), &|d| {
        d.strata = vec![10, 10];
        d.arms = 5;
    }));
    out
}

/// One design's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridCell {
    pub design: Design,
    pub report: CoverageReport,
    /// Seconds this design took.
    pub seconds: f64,
}

/// The whole grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridReport {
    pub panels: u32,
    pub replicates: u32,
    pub seed: u64,
    pub confidence: f64,
    pub cells: Vec<GridCell>,
    /// Seconds the grid took.
    pub seconds: f64,
    #[serde(skip)]
    pub engine: crate::document::Engine,
}

impl crate::document::Report for GridReport {
    fn engine(&self) -> crate::document::Engine {
        self.engine.clone()
    }
}

/// Runs the grid: every design of [`designs`] with the bounded generator and every
/// analysis, `panels` panels × `replicates` replicates each. `progress(design, done)` is
/// called with the design's index and its work done.
///
/// # Errors
/// Those of [`coverage`] (bad settings).
pub fn grid(
    designs: &[Design],
    panels: u32,
    replicates: u32,
    seed: u64,
    confidence: f64,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(usize, u64) + Sync),
) -> Result<GridReport> {
    let start = std::time::Instant::now();
    let settings = CoverageJob {
        analyses: Analysis::ALL.to_vec(),
        generators: vec![Generator::Bounded],
        panels,
        replicates,
        seed,
        confidence,
        look_every: 25,
    };
    let mut cells = Vec::with_capacity(designs.len());
    for (i, d) in designs.iter().enumerate() {
        let t = std::time::Instant::now();
        let model = d.model();
        let report = coverage(
            &model,
            Some(Outcome::Contrast { b: 1, a: 0 }),
            Some("score: arm2-arm1".into()),
            &settings,
            backend,
            &|n| progress(i, n),
        )?;
        cells.push(GridCell {
            design: d.clone(),
            report,
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok(GridReport {
        panels,
        replicates,
        seed,
        confidence,
        cells,
        seconds: start.elapsed().as_secs_f64(),
        engine: crate::document::Engine::resampled(
            backend.name().to_string(),
            backend.description(),
            u64::from(replicates),
            seed,
            confidence,
        ),
    })
}
