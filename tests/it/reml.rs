//! REML fits of unbalanced nested panels against lme4, a dense per-question reference, and
//! the balanced ANOVA fit.
//!
//! The pinned numbers come from `tests/fixtures/reml/reference.R`, run as
//! `cd tests/fixtures/reml && Rscript reference.R > reference.out` with R 4.2.2 Patched
//! (2022-11-10 r83330), lme4 1.1.31, Matrix 1.5.3, nloptr 2.0.3, numDeriv 2016.8.1.1 (Debian
//! bookworm's r-base-core and r-cran-lme4): `lmer(score ~ 1 + (1|question) +
//! (1|question:trajectory), REML = TRUE)` (pooled: `score ~ dataset + (1|dq) +
//! (1|dq:trajectory)`), its θ polished by Newton steps on lme4's own deviance function
//! (`devFunOnly = TRUE`) until the step is below 1e-10, and the model rebuilt from that θ
//! with `mkMerMod` (lme4's default optimiser stops ~1e-6 short; `reference.out` lists both).
//! The fixtures are written by `make_fixtures.R` in the same folder.

// The pinned numbers are copied digit for digit from reference.out (R's %.17g).
#![allow(clippy::excessive_precision)]

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::XorShift;
use nalgebra::{DMatrix, DVector};
use ragstats_core::components::reml::{
    criterion, fit, fit_from, fit_resampled, NestedBuilder, NestedStratum, RemlFit, Theta,
};
use ragstats_core::components::variance::{self, AnovaSums, Level};
use ragstats_core::panel::{QuestionStats, StratumStats};

/// `groups[q][t][r]` of one stratum.
type Groups = Vec<Vec<Vec<f64>>>;

/// Reads a fixture (dataset,question,trajectory,read,score) into strata of nested groups, in
/// order of first appearance. Only the grouping is used, never the labels' values.
fn read_fixture(name: &str) -> Vec<(String, Groups)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reml")
        .join(name);
    let mut rd = csv::Reader::from_path(&path).unwrap();
    let mut strata: Vec<(String, Groups)> = Vec::new();
    let mut index: HashMap<(String, String, String), (usize, usize, usize)> = HashMap::new();
    let mut qindex: HashMap<(String, String), (usize, usize)> = HashMap::new();
    for rec in rd.records() {
        let rec = rec.unwrap();
        let (d, q, t) = (rec[0].to_string(), rec[1].to_string(), rec[2].to_string());
        let y: f64 = rec[4].parse().unwrap();
        let di = match strata.iter().position(|(n, _)| *n == d) {
            Some(i) => i,
            None => {
                strata.push((d.clone(), Vec::new()));
                strata.len() - 1
            }
        };
        let (_, qi) = *qindex.entry((d.clone(), q.clone())).or_insert_with(|| {
            strata[di].1.push(Vec::new());
            (di, strata[di].1.len() - 1)
        });
        let (_, _, ti) = *index.entry((d, q, t)).or_insert_with(|| {
            strata[di].1[qi].push(Vec::new());
            (di, qi, strata[di].1[qi].len() - 1)
        });
        strata[di].1[qi][ti].push(y);
    }
    strata
}

fn stratum(g: &Groups) -> NestedStratum {
    NestedStratum::from_groups(g).unwrap()
}

/// One fixture's lme4 fit (`reference.out`, "polished").
struct Reference {
    file: &'static str,
    /// Fit only this stratum (`None`: every stratum, pooled when more than one).
    only: Option<&'static str>,
    question: f64,
    trajectory: f64,
    read: f64,
    remlcrit: f64,
    /// lme4's fixef, converted to stratum means (intercept, intercept + contrast).
    means: &'static [f64],
}

const REFERENCES: &[Reference] = &[
    Reference {
        file: "missing_read.csv",
        only: None,
        question: 0.039431879915934574,
        trajectory: 0.0061730646704959988,
        read: 0.0074362465384037128,
        remlcrit: -78.206461340750963,
        means: &[0.59282850244151597],
    },
    Reference {
        file: "failed_trajectory.csv",
        only: None,
        question: 0.05606609509409937,
        trajectory: 0.012826924900997532,
        read: 0.0070417712311376069,
        remlcrit: -116.58801754989145,
        means: &[0.55258245103478354],
    },
    Reference {
        file: "scattered_missing.csv",
        only: None,
        question: 0.026714388442614385,
        trajectory: 0.0073809399088840787,
        read: 0.0048341289060870153,
        remlcrit: -427.3236272822935,
        means: &[0.44165825748049914],
    },
    Reference {
        file: "extra_trajectory.csv",
        only: None,
        question: 0.066621542207269846,
        trajectory: 0.010788197314818716,
        read: 0.0067338541730050548,
        remlcrit: -124.09771473953685,
        means: &[0.4650864041048276],
    },
    Reference {
        file: "unique_labels.csv",
        only: None,
        question: 0.035401481702047835,
        trajectory: 0.003184147217216052,
        read: 0.0061909124291108734,
        remlcrit: -150.77941612196778,
        means: &[0.44587875495694479],
    },
    Reference {
        file: "binary.csv",
        only: None,
        question: 0.13838852256506146,
        trajectory: 0.041213477535322118,
        read: 0.072347798181111658,
        remlcrit: 153.91938070757627,
        means: &[0.46390235872537083],
    },
    Reference {
        file: "boundary_trajectory.csv",
        only: None,
        question: 0.076596257341384574,
        trajectory: 0.0,
        read: 0.0086973149837436536,
        remlcrit: -120.38731706178348,
        means: &[0.48340325663119765],
    },
    Reference {
        file: "boundary_question.csv",
        only: None,
        question: 0.0,
        trajectory: 0.01818870344247624,
        read: 0.0072139486563009341,
        remlcrit: -50.071116259894971,
        means: &[0.48884382326184062],
    },
    Reference {
        file: "pooled.csv",
        only: None,
        question: 0.059752448900400414,
        trajectory: 0.010991498835632765,
        read: 0.004411604819168964,
        remlcrit: -197.14100284413647,
        // fixef: (Intercept) 0.55639700534641501, datasetmusique -0.26681176200979007.
        means: &[
            0.55639700534641501,
            0.55639700534641501 - 0.26681176200979007,
        ],
    },
    Reference {
        file: "pooled.csv",
        only: Some("hotpot"),
        question: 0.039100397476506253,
        trajectory: 0.006067859609188998,
        read: 0.0068300502368852109,
        remlcrit: -99.222225253305226,
        means: &[0.55582013556568721],
    },
    Reference {
        file: "pooled.csv",
        only: Some("musique"),
        question: 0.085429217184246842,
        trajectory: 0.019754970409682038,
        read: 0.0021893535212816184,
        remlcrit: -116.06696461947563,
        means: &[0.28945295738509907],
    },
];

/// Relative tolerance on the components. The polished lme4 optimum is determined to ~1e-9
/// (numerical gradient ~1e-8 there); the fits here agree with it to 6e-10 or better; the
/// issue asks for 1e-6.
const REL: f64 = 1e-8;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1e-300) || got == want
}

fn fit_reference(r: &Reference) -> (Vec<NestedStratum>, RemlFit) {
    let strata: Vec<NestedStratum> = read_fixture(r.file)
        .iter()
        .filter(|(name, _)| r.only.is_none_or(|o| o == name))
        .map(|(_, g)| stratum(g))
        .collect();
    let refs: Vec<&NestedStratum> = strata.iter().collect();
    let f = fit(&refs).unwrap();
    (strata, f)
}

#[test]
fn components_equal_lme4_on_every_fixture() {
    for r in REFERENCES {
        let (_, f) = fit_reference(r);
        let c = f.components;
        let label = format!("{} {:?}: {f:?}", r.file, r.only);
        assert!(close(c.question, r.question, REL), "question {label}");
        assert!(
            close(c.trajectory.unwrap(), r.trajectory, REL),
            "trajectory {label}"
        );
        assert!(close(c.read.unwrap(), r.read, REL), "read {label}");
        assert!(close(f.criterion, r.remlcrit, 1e-12), "criterion {label}");
        assert_eq!(f.means.len(), r.means.len());
        for (m, want) in f.means.iter().zip(r.means) {
            assert!(close(*m, *want, 1e-9), "mean {label}");
        }
        assert!(f.iterations < 30, "{label}");
    }
}

#[test]
fn boundary_fits_put_the_component_at_exactly_zero_as_lme4_does() {
    let by_file = |file: &str| REFERENCES.iter().find(|r| r.file == file).unwrap();
    let (_, t) = fit_reference(by_file("boundary_trajectory.csv"));
    assert_eq!(t.components.trajectory, Some(0.0));
    assert_eq!(t.theta.trajectory, 0.0);
    assert_eq!(t.boundary, vec![Level::Trajectory]);
    let (_, q) = fit_reference(by_file("boundary_question.csv"));
    assert_eq!(q.components.question, 0.0);
    assert_eq!(q.theta.question, 0.0);
    assert_eq!(q.boundary, vec![Level::Question]);
    let (_, inner) = fit_reference(by_file("missing_read.csv"));
    assert!(inner.boundary.is_empty());
    assert!(inner.notes.is_empty());
}

/// The fixtures have what the issue lists: a missing read, a failed trajectory, scattered
/// missing cells, questions with an extra trajectory, trajectory labels unique per question.
#[test]
fn fixtures_have_the_shapes_they_are_named_for() {
    let shape = |file: &str| stratum(&read_fixture(file)[0].1).shape();
    let s = shape("missing_read.csv");
    assert_eq!(
        (s.questions, s.reads.total, s.reads.min, s.reads.max),
        (12, 71, 1, 2)
    );
    let s = shape("failed_trajectory.csv");
    assert_eq!(
        (s.trajectories.min, s.trajectories.max, s.trajectories.total),
        (3, 4, 59)
    );
    let s = shape("extra_trajectory.csv");
    assert_eq!(
        (s.trajectories.min, s.trajectories.max, s.trajectories.total),
        (3, 4, 63)
    );
    let s = shape("scattered_missing.csv");
    assert_eq!((s.questions, s.reads.total), (25, 262));
    assert!(s.reads.min < s.reads.max);
    let s = shape("unique_labels.csv");
    assert_eq!((s.trajectories.min, s.trajectories.max), (2, 4));
    assert_eq!((s.reads.min, s.reads.max), (1, 3));
    // Every trajectory label appears under one question only.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reml/unique_labels.csv");
    let mut owner: HashMap<String, String> = HashMap::new();
    for rec in csv::Reader::from_path(path).unwrap().records() {
        let rec = rec.unwrap();
        let q = owner
            .entry(rec[2].to_string())
            .or_insert(rec[1].to_string());
        assert_eq!(q, &rec[1]);
    }
    assert_eq!(owner.len(), 52);
}

/// REML criterion of `groups` at θ by dense per-question algebra (nalgebra): H_q = I +
/// a blockdiag(J) + c J built entry by entry, Cholesky log-determinant and solves.
fn dense_criterion(strata: &[Groups], theta: Theta) -> (f64, f64) {
    let (a, c) = (theta.trajectory.powi(2), theta.question.powi(2));
    let p = strata.len();
    let mut logdet = 0.0;
    let mut xhx = vec![0.0; p];
    let mut xhy = vec![0.0; p];
    let mut yhy = 0.0;
    let mut n = 0usize;
    for (d, g) in strata.iter().enumerate() {
        for q in g {
            let traj: Vec<usize> = q
                .iter()
                .enumerate()
                .flat_map(|(t, r)| vec![t; r.len()])
                .collect();
            let y = DVector::from_iterator(traj.len(), q.iter().flatten().copied());
            let nq = traj.len();
            n += nq;
            let h = DMatrix::from_fn(nq, nq, |i, j| {
                f64::from(u8::from(i == j)) + a * f64::from(u8::from(traj[i] == traj[j])) + c
            });
            let chol = h.cholesky().unwrap();
            logdet += 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
            let one = DVector::from_element(nq, 1.0);
            let h1 = chol.solve(&one);
            let hy = chol.solve(&y);
            xhx[d] += one.dot(&h1);
            xhy[d] += one.dot(&hy);
            yhy += y.dot(&hy);
        }
    }
    let rss = yhy - (0..p).map(|d| xhy[d] * xhy[d] / xhx[d]).sum::<f64>();
    let nu = (n - p) as f64;
    let l = logdet
        + xhx.iter().map(|v| v.ln()).sum::<f64>()
        + nu * (1.0 + (2.0 * std::f64::consts::PI * rss / nu).ln());
    (l, rss / nu)
}

#[test]
fn closed_forms_equal_dense_per_question_algebra() {
    for file in [
        "scattered_missing.csv",
        "unique_labels.csv",
        "pooled.csv",
        "binary.csv",
    ] {
        let groups: Vec<Groups> = read_fixture(file).into_iter().map(|(_, g)| g).collect();
        let strata: Vec<NestedStratum> = groups.iter().map(stratum).collect();
        let refs: Vec<&NestedStratum> = strata.iter().collect();
        for theta in [
            Theta {
                question: 1.0,
                trajectory: 1.0,
            },
            Theta {
                question: 0.0,
                trajectory: 2.5,
            },
            Theta {
                question: 3.0,
                trajectory: 0.0,
            },
            Theta {
                question: 0.2,
                trajectory: 0.7,
            },
        ] {
            let (dense, _) = dense_criterion(&groups, theta);
            let closed = criterion(&refs, theta).unwrap();
            assert!(
                close(closed, dense, 1e-11),
                "{file} {theta:?}: {closed} vs {dense}"
            );
        }
        // At the optimum the dense σ² times θ² reproduces the components.
        let f = fit(&refs).unwrap();
        let (dense, sigma2) = dense_criterion(&groups, f.theta);
        assert!(close(f.criterion, dense, 1e-11));
        assert!(close(f.components.read.unwrap(), sigma2, 1e-11));
        assert!(close(
            f.components.question,
            sigma2 * f.theta.question.powi(2),
            1e-11
        ));
    }
}

/// A balanced Q × T × R panel y = a_q + b_qt + e_qtr from xorshift values (offset `mu`).
fn balanced(seed: u64, q: usize, t: usize, r: usize, mu: f64, sd: [f64; 3]) -> Groups {
    let mut x = XorShift(seed);
    let mut u = move || x.grid(1_000_003) - 0.5;
    (0..q)
        .map(|_| {
            let a = sd[0] * u();
            (0..t)
                .map(|_| {
                    let b = sd[1] * u();
                    (0..r).map(|_| mu + a + b + sd[2] * u()).collect()
                })
                .collect()
        })
        .collect()
}

fn anova(g: &Groups) -> AnovaSums {
    let (t, r) = (g[0].len(), g[0][0].len());
    let traj: Vec<usize> = (0..t).collect();
    let reads: Vec<usize> = (0..r).collect();
    AnovaSums::of_stratum(&StratumStats {
        name: "d".into(),
        t,
        r,
        questions: g
            .iter()
            .map(|q| QuestionStats::from_cells(&traj, &reads, |i, j| q[i][j]))
            .collect(),
    })
}

#[test]
fn balanced_reml_equals_anova_when_every_component_is_positive() {
    let g = balanced(7, 40, 3, 2, 0.5, [0.8, 0.5, 0.3]);
    let s = stratum(&g);
    assert_eq!(s.balanced(), Some((3, 2)));
    let a = variance::fit(&anova(&g)).unwrap();
    assert!(a.truncated.is_empty());
    let f = fit(&[&s]).unwrap();
    assert!(f.boundary.is_empty());
    assert!(
        close(f.components.question, a.components.question, 1e-9),
        "{f:?} {a:?}"
    );
    assert!(close(
        f.components.trajectory.unwrap(),
        a.components.trajectory.unwrap(),
        1e-9
    ));
    assert!(close(
        f.components.read.unwrap(),
        a.components.read.unwrap(),
        1e-9
    ));

    // Pooled: two balanced strata with a common design, different means.
    let g2 = balanced(11, 25, 3, 2, 2.0, [0.6, 0.4, 0.3]);
    let s2 = stratum(&g2);
    let pa = variance::fit(&AnovaSums::pooled(&[anova(&g), anova(&g2)]).unwrap()).unwrap();
    assert!(pa.truncated.is_empty());
    let pf = fit(&[&s, &s2]).unwrap();
    assert!(close(pf.components.question, pa.components.question, 1e-9));
    assert!(close(
        pf.components.trajectory.unwrap(),
        pa.components.trajectory.unwrap(),
        1e-9
    ));
    assert!(close(
        pf.components.read.unwrap(),
        pa.components.read.unwrap(),
        1e-9
    ));
    // Balanced: the GLS means are the plain stratum means.
    assert!(close(pf.means[1], s2.mean(), 1e-12));

    // R = 1 and T = 1: the level below is folded into the one above, as ANOVA reports it.
    for (t, r) in [(3, 1), (1, 3)] {
        let g = balanced(5, 30, t, r, 0.0, [0.8, 0.5, 0.3]);
        let a = variance::fit(&anova(&g)).unwrap();
        assert!(a.truncated.is_empty());
        let f = fit(&[&stratum(&g)]).unwrap();
        assert_eq!(
            f.components.trajectory.is_some(),
            a.components.trajectory.is_some()
        );
        assert_eq!(f.components.read.is_some(), a.components.read.is_some());
        assert!(close(f.components.question, a.components.question, 1e-9));
        let below = |c: &variance::PerLevel| c.trajectory.or(c.read).unwrap();
        assert!(close(below(&f.components), below(&a.components), 1e-9));
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
    }
}

/// Where ANOVA's trajectory component is negative, ANOVA truncates it to 0 and keeps the
/// others; REML refits on the boundary: σ²_t = 0, σ²_r = the pooled within-question mean
/// square (SS_t + SS_r)/(df_t + df_r), σ²_q = (MS_q − σ²_r)/(TR).
#[test]
fn balanced_negative_anova_component_is_a_boundary_refit() {
    let g = balanced(3, 30, 3, 3, 0.0, [1.0, 0.0, 0.5]);
    let sums = anova(&g);
    let a = variance::fit(&sums).unwrap();
    assert_eq!(
        a.truncated,
        vec![Level::Trajectory],
        "pick a seed with MS_t < MS_r"
    );
    let f = fit(&[&stratum(&g)]).unwrap();
    assert_eq!(f.components.trajectory, Some(0.0));
    assert_eq!(f.boundary, vec![Level::Trajectory]);
    let within = (sums.ss_trajectory + sums.ss_read) / (sums.df_trajectory + sums.df_read);
    let question = (sums.ss_question / sums.df_question - within) / 9.0;
    assert!(close(f.components.read.unwrap(), within, 1e-10));
    assert!(close(f.components.question, question, 1e-9));
    // …which differs from ANOVA's truncation in the read and question components.
    assert!(!close(a.components.read.unwrap(), within, 1e-3));
}

#[test]
fn warm_starts_and_resamples_give_the_same_optimum() {
    let g = read_fixture("scattered_missing.csv").remove(0).1;
    let s = stratum(&g);
    let full = fit(&[&s]).unwrap();
    let warm = fit_from(&[&s], full.theta).unwrap();
    assert!(warm.iterations <= 2, "{warm:?}");
    assert!(close(
        warm.components.question,
        full.components.question,
        1e-10
    ));
    assert!(close(
        warm.components.read.unwrap(),
        full.components.read.unwrap(),
        1e-10
    ));

    // Counts: question i drawn counts[i] times equals a stratum holding those copies.
    let mut x = XorShift(99);
    let counts: Vec<u32> = (0..g.len()).map(|_| (x.next() % 3) as u32).collect();
    let copies: Groups = g
        .iter()
        .zip(&counts)
        .flat_map(|(q, &k)| std::iter::repeat_n(q.clone(), k as usize))
        .collect();
    let explicit = fit(&[&stratum(&copies)]).unwrap();
    let resampled = fit_resampled(&[&s], &[&counts], Some(full.theta)).unwrap();
    for l in Level::ALL {
        let (e, r) = (
            explicit.components.get(l).unwrap(),
            resampled.components.get(l).unwrap(),
        );
        assert!(close(r, e, 1e-9), "{l:?}: {r} vs {e}");
    }
    assert!(close(resampled.criterion, explicit.criterion, 1e-10));
    assert!(close(resampled.means[0], explicit.means[0], 1e-12));
    assert!(fit_resampled(&[&s], &[&counts[1..]], None).is_err());
}

/// Reads that agree exactly (a deterministic reader): σ²_r = 0 on the boundary (the REML
/// likelihood grows without bound as σ²_r → 0), the rest fitted to the trajectory means.
#[test]
fn exactly_agreeing_reads_give_a_zero_read_component() {
    let g = read_fixture("failed_trajectory.csv").remove(0).1;
    let agreeing: Groups = g
        .iter()
        .enumerate()
        .map(|(qi, q)| {
            q.iter()
                .enumerate()
                .map(|(ti, t)| vec![t[0]; 1 + (qi + ti) % 3])
                .collect()
        })
        .collect();
    let one_read: Groups = g
        .iter()
        .map(|q| q.iter().map(|t| vec![t[0]]).collect())
        .collect();
    let f = fit(&[&stratum(&agreeing)]).unwrap();
    let reference = fit(&[&stratum(&one_read)]).unwrap();
    assert_eq!(f.components.read, Some(0.0));
    assert_eq!(f.boundary, vec![Level::Read]);
    assert_eq!(f.criterion, f64::NEG_INFINITY);
    assert_eq!(reference.components.read, None);
    assert!(close(
        f.components.trajectory.unwrap(),
        reference.components.trajectory.unwrap(),
        1e-12
    ));
    assert!(close(
        f.components.question,
        reference.components.question,
        1e-12
    ));

    // Trajectories agreeing too: only the question component is left, the variance of the
    // question values with one mean: Σ (y_q − ȳ)²/(Q − 1).
    let flat: Groups = (0..6).map(|q| vec![vec![q as f64; 2]; 1 + q % 2]).collect();
    let f = fit(&[&stratum(&flat)]).unwrap();
    assert_eq!(f.components.trajectory, Some(0.0));
    assert_eq!(f.components.read, Some(0.0));
    assert!(close(f.components.question, 3.5, 1e-14), "{f:?}");
}

#[test]
fn too_little_data_is_an_error() {
    let one = stratum(&vec![vec![vec![1.0, 2.0], vec![3.0]]]);
    let err = fit(&[&one]).unwrap_err().to_string();
    assert!(err.contains("at least 2 questions"), "{err}");
    assert!(fit(&[]).is_err());
}

/// The builder gives the same stratum as nested vectors.
#[test]
fn builder_equals_from_groups() {
    let g = read_fixture("unique_labels.csv").remove(0).1;
    let mut b = NestedBuilder::new();
    for q in &g {
        for t in q {
            b.trajectory(t).unwrap();
        }
        b.end_question().unwrap();
    }
    assert_eq!(b.finish().unwrap(), stratum(&g));
}
