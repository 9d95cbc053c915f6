//! `allocation::subsets` against a brute-force computation written differently (explicit index
//! lists, direct question means and two-pass variances, draws from `draw_index`), and the
//! CPU and GPU backends against each other bit for bit.
//!
//! GPU tests print why and pass without an adapter, unless `STATS_REQUIRE_GPU=1`.

use crate::common;

use std::collections::HashMap;

use ragstats_core::allocation::subsets::SubsetStudy;
use ragstats_core::components::forecast::{forecast, Audit, AuditStratum, DesignSpec};
use ragstats_core::components::variance::PerLevel;
use ragstats_core::panel::Stratum;
use ragstats_core::resample::{CpuBackend, Resampling};
use ragstats_core::rng::draw_index;
use ragstats_core::Error;
use ragstats_gpu::AdapterPolicy;
use ragstats_gpu::GpuBackend;

/// A stratum with irregular, question-dependent outcomes.
fn stratum(name: &str, q: usize, t: usize, r: usize, seed: u64) -> Stratum {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut y = Vec::with_capacity(q * t * r);
    for qi in 0..q {
        for ti in 0..t {
            for _ in 0..r {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let noise = (x % 10_000) as f64 / 10_000.0;
                y.push(0.3 * (qi % 4) as f64 + 0.2 * ((qi + ti) % 3) as f64 + noise - 0.5);
            }
        }
    }
    Stratum {
        name: name.into(),
        questions: (0..q).map(|i| format!("{name}-{i}")).collect(),
        trajectories: (0..t).map(|i| i.to_string()).collect(),
        reads: (0..r).map(|i| i.to_string()).collect(),
        y,
        dropped: 0,
        ..Default::default()
    }
}

fn audit(names: &[&str]) -> Audit {
    Audit {
        strata: names
            .iter()
            .enumerate()
            .map(|(i, n)| AuditStratum {
                name: n.to_string(),
                questions: 100 + 10 * i,
                trajectories: 2,
                reads: 1,
                se: 0.02 + 0.01 * i as f64,
                components: PerLevel {
                    question: 0.04,
                    trajectory: Some(0.03 + 0.01 * i as f64),
                    read: Some(0.02),
                },
                cluster: None,
            })
            .collect(),
        pooled: None,
        pooled_cluster: None,
        weights: Vec::new(),
    }
}

/// All k-element subsets of 0..n as sorted index lists (recursive, lexicographic).
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for first in 0..n {
        for rest in combinations(n, k - 1) {
            if rest.first().is_none_or(|&x| x > first) {
                let mut v = vec![first];
                v.extend(rest);
                out.push(v);
            }
        }
    }
    out
}

/// SE of the combined estimate of the sub-panel keeping trajectories `ts` and reads `rs`,
/// using questions `draws[s]` of each stratum (with repetition).
fn brute_se(strata: &[Stratum], draws: &[Vec<usize>], ts: &[usize], rs: &[usize]) -> f64 {
    let mut se2 = 0.0;
    for (s, d) in strata.iter().zip(draws) {
        let means: Vec<f64> = d
            .iter()
            .map(|&q| {
                let mut acc = 0.0;
                for &t in ts {
                    for &r in rs {
                        acc += s.y(q, t, r);
                    }
                }
                acc / (ts.len() * rs.len()) as f64
            })
            .collect();
        let n = means.len() as f64;
        let m = means.iter().sum::<f64>() / n;
        let var = means.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
        se2 += var / n;
    }
    se2.sqrt() / strata.len() as f64
}

/// Brute-force configuration means (t′-major, r′ minor) for the given question draws.
fn brute_configs(strata: &[Stratum], draws: &[Vec<usize>]) -> Vec<f64> {
    let (t, r) = (strata[0].t(), strata[0].r());
    let mut out = Vec::new();
    for tp in 1..=t {
        for rp in 1..=r {
            let mut all = Vec::new();
            for ts in combinations(t, tp) {
                for rs in combinations(r, rp) {
                    all.push(brute_se(strata, draws, &ts, &rs));
                }
            }
            out.push(all.iter().sum::<f64>() / all.len() as f64);
        }
    }
    out
}

/// Replicates `0..replicates` from `seed`, intervals at `confidence`.
fn boot(seed: u64, replicates: u32, confidence: f64) -> Resampling {
    Resampling {
        seed,
        replicates,
        confidence,
    }
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-12)
}

#[test]
fn every_subset_se_matches_brute_force_on_a_tiny_panel() {
    let strata = vec![stratum("a", 5, 3, 2, 1), stratum("b", 4, 3, 2, 2)];
    let study = SubsetStudy::new(&strata, &audit(&["a", "b"]), 1).unwrap();
    let rows = study.point_subsets();
    assert_eq!(rows.len(), 7 * 3);
    let all: Vec<Vec<usize>> = strata.iter().map(|s| (0..s.q()).collect()).collect();
    let got: HashMap<(Vec<usize>, Vec<usize>), f64> = rows
        .iter()
        .map(|r| ((r.trajectories.clone(), r.reads.clone()), r.se))
        .collect();
    let mut n = 0;
    for tp in 1..=3 {
        for rp in 1..=2 {
            for ts in combinations(3, tp) {
                for rs in combinations(2, rp) {
                    let want = brute_se(&strata, &all, &ts, &rs);
                    let have = got[&(ts.clone(), rs.clone())];
                    assert!(
                        rel_close(have, want, 1e-11),
                        "{ts:?} {rs:?}: {have} vs {want}"
                    );
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 21);
}

#[test]
fn hand_computed_subset_se() {
    // One stratum, Q = 2, T = 2, R = 1: question 0 has cells (0, 1), question 1 has (2, 6).
    // Trajectory {0}: means 0, 2 -> s² = 2, SE² = 1. {1}: 1, 6 -> s² = 12.5, SE² = 6.25.
    // {0,1}: 0.5, 4 -> s² = 6.125, SE² = 3.0625.
    let s = Stratum {
        name: "d".into(),
        questions: vec!["x".into(), "y".into()],
        trajectories: vec!["0".into(), "1".into()],
        reads: vec!["0".into()],
        y: vec![0.0, 1.0, 2.0, 6.0],
        dropped: 0,
        ..Default::default()
    };
    let rows = SubsetStudy::new(&[s], &audit(&["d"]), 1)
        .unwrap()
        .point_subsets();
    let se: Vec<f64> = rows.iter().map(|r| r.se).collect();
    let want = [1.0, 6.25f64.sqrt(), 3.0625f64.sqrt()];
    for (a, b) in se.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{se:?}");
    }
    assert_eq!(rows[2].trajectories, vec![0, 1]);
}

#[test]
fn replicate_configuration_means_match_brute_force_draws() {
    let strata = vec![stratum("a", 9, 3, 2, 3), stratum("b", 6, 3, 2, 4)];
    let study = SubsetStudy::new(&strata, &audit(&["a", "b"]), 2).unwrap();
    let seed = 42;
    let reps = study
        .replicate_config_means(&CpuBackend::new(), seed, 3..8, &|_| {})
        .unwrap();
    assert_eq!(reps.len(), 5);
    for (i, got) in reps.iter().enumerate() {
        let r = 3 + i as u32;
        let draws: Vec<Vec<usize>> = strata
            .iter()
            .enumerate()
            .map(|(s, st)| {
                (0..st.q() as u64)
                    .map(|k| draw_index(seed, r, s as u32, k, st.q() as u32) as usize)
                    .collect()
            })
            .collect();
        let want = brute_configs(&strata, &draws);
        for (c, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                rel_close(*a, *b, 2e-5),
                "replicate {r} config {c}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn report_forecasts_and_maes_follow_their_definitions() {
    let strata = vec![stratum("a", 12, 3, 2, 5), stratum("b", 8, 3, 2, 6)];
    let aud = audit(&["b", "a", "extra"]);
    let study = SubsetStudy::new(&strata, &aud, 2).unwrap();
    let rep = study
        .run(&boot(7, 200, 0.95), &CpuBackend::new(), &|_| {})
        .unwrap();
    assert_eq!(rep.configurations.len(), 6);
    let mut sn = 0.0;
    let mut sq = 0.0;
    let mut n = 0;
    for c in &rep.configurations {
        let f = forecast(
            &Audit {
                strata: vec![aud.strata[1].clone(), aud.strata[0].clone()],
                pooled: None,
                pooled_cluster: None,
                weights: Vec::new(),
            },
            &DesignSpec::PerStratum {
                questions: vec![("a".into(), 12), ("b".into(), 8)],
                t: c.trajectories,
                r: c.reads,
            },
            false,
        )
        .unwrap();
        assert_eq!(c.se_nested, f.se_nested);
        assert_eq!(c.se_q_only, f.se_q_only);
        // Q-only ignores t', r': sqrt(Σ SE_d² Q_audit,d/Q_d)/D, with audit "a" (SE 0.03,
        // 110 questions) against 12 depth questions and "b" (0.02, 100) against 8.
        let want_q =
            ((0.03f64.powi(2) * 110.0 / 12.0) + (0.02f64.powi(2) * 100.0 / 8.0)).sqrt() / 2.0;
        assert!(
            (c.se_q_only - want_q).abs() < 1e-14,
            "{} vs {want_q}",
            c.se_q_only
        );
        assert_eq!(c.in_mae, c.trajectories >= 2);
        if c.in_mae {
            sn += (c.se_nested - c.se_measured.estimate).abs();
            sq += (c.se_q_only - c.se_measured.estimate).abs();
            n += 1;
        }
        assert!(c.se_measured.ci[0] <= c.se_measured.ci[1]);
    }
    assert_eq!(n, 4);
    assert!((rep.mae_nested.estimate - sn / 4.0).abs() < 1e-15);
    assert!((rep.mae_q_only.estimate - sq / 4.0).abs() < 1e-15);
    assert!((rep.advantage.estimate - (sq - sn) / 4.0).abs() < 1e-15);
    assert!(rep.advantage.ci[0] < rep.advantage.ci[1]);
    assert_eq!(rep.configurations[0].subsets, 6);
}

#[test]
fn bad_inputs_are_errors() {
    let strata = vec![stratum("a", 5, 3, 2, 1)];
    let e = SubsetStudy::new(&strata, &audit(&["zzz"]), 1).unwrap_err();
    assert!(e.to_string().contains("'a' has no audit stratum"), "{e}");
    let e = SubsetStudy::new(&strata, &audit(&["a"]), 4).unwrap_err();
    assert!(
        matches!(&e, Error::Setting { setting: "min_trajectories", msg } if msg == "expected 1 to T = 3 (the depth panel's trajectories), not 4"),
        "{e}"
    );
    let e = SubsetStudy::new(&[stratum("a", 1, 3, 2, 1)], &audit(&["a"]), 1).unwrap_err();
    assert!(e.to_string().contains("at least 2"), "{e}");
    let mixed = vec![stratum("a", 5, 3, 2, 1), stratum("b", 5, 2, 2, 1)];
    let e = SubsetStudy::new(&mixed, &audit(&["a", "b"]), 1).unwrap_err();
    assert!(e.to_string().contains("same T and R"), "{e}");
}

#[test]
fn cpu_and_gpu_replicates_are_bit_identical() {
    let Some(gpu) = common::gpu_or_skip(GpuBackend::new(AdapterPolicy::Any)) else {
        return;
    };
    // T = 4, R = 3: 12 cells, 90 moment columns, 6 engine calls; strata of 70 and 9 rows.
    let strata = vec![stratum("a", 70, 4, 3, 8), stratum("b", 9, 4, 3, 9)];
    let study = SubsetStudy::new(&strata, &audit(&["a", "b"]), 1).unwrap();
    assert_eq!(study.engine_calls(), 6);
    let cpu = study
        .replicate_config_means(&CpuBackend::new(), 11, 0..40, &|_| {})
        .unwrap();
    let gpu = study
        .replicate_config_means(&gpu, 11, 0..40, &|_| {})
        .unwrap();
    assert_eq!(cpu.len(), 40);
    for (r, (a, b)) in cpu.iter().zip(&gpu).enumerate() {
        for (c, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "replicate {r} config {c}: cpu {x} gpu {y}"
            );
        }
    }
}

#[test]
fn replicates_do_not_depend_on_how_the_range_is_split() {
    // The command processes replicates in chunks; a chunk is a replicate range, so
    // 0..10 must equal 0..4 followed by 4..10, bit for bit.
    let strata = vec![stratum("a", 11, 2, 3, 12)];
    let study = SubsetStudy::new(&strata, &audit(&["a"]), 1).unwrap();
    let cpu = CpuBackend::new();
    let whole = study
        .replicate_config_means(&cpu, 3, 0..10, &|_| {})
        .unwrap();
    let mut parts = study
        .replicate_config_means(&cpu, 3, 0..4, &|_| {})
        .unwrap();
    parts.extend(
        study
            .replicate_config_means(&cpu, 3, 4..10, &|_| {})
            .unwrap(),
    );
    assert_eq!(whole, parts);
    // Different replicates do differ.
    assert_ne!(whole[0], whole[1]);
}

/// The library entry point on the hand-computed case above (SE of trajectory {0} = 1,
/// {1} = 2.5, {0,1} = 1.75): with `per_subset` it lists those SEs, names the engine, and
/// its report is `SubsetStudy::run`'s for the same replicates (bit for bit).
#[test]
fn analyse_subsets_lists_the_hand_computed_subset_ses() {
    use ragstats_core::allocation::subsets::{analyse_subsets, SubsetJob};
    let s = Stratum {
        name: "d".into(),
        questions: vec!["x".into(), "y".into()],
        trajectories: vec!["0".into(), "1".into()],
        reads: vec!["0".into()],
        y: vec![0.0, 1.0, 2.0, 6.0],
        dropped: 0,
        ..Default::default()
    };
    let study = SubsetStudy::new(&[s], &audit(&["d"]), 1).unwrap();
    let settings = SubsetJob {
        resampling: boot(3, 50, 0.9),
        per_subset: true,
    };
    let engine = CpuBackend::new();
    let a = analyse_subsets("f1", &study, &settings, &engine, &|_| {}).unwrap();
    let se: Vec<f64> = a.subsets.as_ref().unwrap().iter().map(|r| r.se).collect();
    for (got, want) in se.iter().zip([1.0, 2.5, 1.75]) {
        assert!((got - want).abs() < 1e-12, "{se:?}");
    }
    assert_eq!(a.backend, "cpu");
    // Configuration t' = 1 is the mean of the two one-trajectory subsets: (1 + 2.5)/2.
    assert!((a.report.configurations[0].se_measured.estimate - 1.75).abs() < 1e-12);
    let direct = study.run(&boot(3, 50, 0.9), &engine, &|_| {}).unwrap();
    assert_eq!(
        serde_json::to_value(&a.report).unwrap(),
        serde_json::to_value(&direct).unwrap()
    );
    // The seed and confidence are not in the serde form (they are the document's envelope).
    assert_eq!(
        (a.report.seed, a.report.confidence),
        (direct.seed, direct.confidence)
    );
    assert_eq!(a.outcome, "f1");
    let without = SubsetJob {
        per_subset: false,
        ..settings
    };
    assert!(analyse_subsets("f1", &study, &without, &engine, &|_| {})
        .unwrap()
        .subsets
        .is_none());
}
