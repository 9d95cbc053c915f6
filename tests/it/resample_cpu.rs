//! CPU engine: against independent references (a literal, lane-by-lane reading of the
//! accumulation contract built on `draw_index`, and a naive f64 sum), thread-count and
//! replicate-range independence, Lemire uniformity, and shape validation.

// The reference is written with explicit indices on purpose: it mirrors the contract text.
#![allow(clippy::needless_range_loop)]

use ragstats_core::resample::workload::synthetic_rows;
use ragstats_core::resample::{CpuBackend, ResampleBackend, ResampleJob, CHUNK_ROWS, LANES};
use ragstats_core::rng::draw_index;

fn no_progress(_: u64) {}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The contract read literally, the way the GPU executes it: chunk by chunk, lane by lane,
/// every draw recomputed with `draw_index`, then the tree over lanes.
fn literal_contract(job: &ResampleJob) -> Vec<f32> {
    let k = job.k;
    let mut out = Vec::new();
    for r in job.replicates.clone() {
        for (s, data) in job.strata.iter().enumerate() {
            let q = (data.len() / k) as u64;
            let n_chunks = (q as usize).div_ceil(CHUNK_ROWS);
            let mut total = vec![0f32; k];
            for c in 0..n_chunks {
                let mut acc = vec![vec![0f32; k]; LANES];
                for (l, a) in acc.iter_mut().enumerate() {
                    let mut j = l as u64;
                    while 4 * j < q {
                        for w in 0..4 {
                            let i = 4 * j + w;
                            if i >= q {
                                break;
                            }
                            let row = draw_index(job.seed, r, s as u32, i, q as u32) as usize;
                            if row / CHUNK_ROWS == c {
                                for col in 0..k {
                                    a[col] += data[row * k + col];
                                }
                            }
                        }
                        j += LANES as u64;
                    }
                }
                for stride in [32, 16, 8, 4, 2, 1] {
                    for l in 0..stride {
                        for col in 0..k {
                            let add = acc[l + stride][col];
                            acc[l][col] += add;
                        }
                    }
                }
                for col in 0..k {
                    total[col] += acc[0][col];
                }
            }
            out.extend(total);
        }
    }
    out
}

#[test]
fn cpu_engine_matches_literal_contract_bit_for_bit() {
    let a = synthetic_rows(1, 1, 3);
    let b = synthetic_rows(2, 131, 3);
    let c = synthetic_rows(3, 1000, 3);
    let job = ResampleJob {
        strata: vec![&a, &b, &c],
        k: 3,
        seed: 0xDEAD_BEEF_0000_0001,
        replicates: 5..9,
    };
    let got = CpuBackend::new().resample_sums(&job, &no_progress).unwrap();
    assert_eq!(bits(&got), bits(&literal_contract(&job)));
}

#[test]
fn cpu_engine_matches_literal_contract_across_chunks() {
    // A stratum of CHUNK_ROWS + 5 rows: its draws fall in two chunks.
    let big = synthetic_rows(4, CHUNK_ROWS + 5, 1);
    let small = synthetic_rows(5, 7, 1);
    let job = ResampleJob {
        strata: vec![&small, &big],
        k: 1,
        seed: 99,
        replicates: 0..1,
    };
    let got = CpuBackend::new().resample_sums(&job, &no_progress).unwrap();
    assert_eq!(bits(&got), bits(&literal_contract(&job)));
}

#[test]
fn cpu_engine_agrees_with_naive_f64_reference() {
    let k = 2;
    let a = synthetic_rows(6, 223, k);
    let b = synthetic_rows(7, 57, k);
    let job = ResampleJob {
        strata: vec![&a, &b],
        k,
        seed: 2026,
        replicates: 0..50,
    };
    let got = CpuBackend::new().resample_sums(&job, &no_progress).unwrap();
    let mut idx = 0;
    for r in 0..50u32 {
        for (s, data) in job.strata.iter().enumerate() {
            let q = (data.len() / k) as u32;
            let mut sum = vec![0f64; k];
            let mut abs = vec![0f64; k];
            for i in 0..q as u64 {
                let row = draw_index(2026, r, s as u32, i, q) as usize;
                for c in 0..k {
                    sum[c] += data[row * k + c] as f64;
                    abs[c] += (data[row * k + c] as f64).abs();
                }
            }
            for c in 0..k {
                let err = (got[idx] as f64 - sum[c]).abs();
                assert!(
                    err <= 1e-5 * abs[c],
                    "r={r} s={s} c={c}: engine {} vs f64 {}",
                    got[idx],
                    sum[c]
                );
                idx += 1;
            }
        }
    }
}

#[test]
fn cpu_results_do_not_depend_on_thread_count() {
    let a = synthetic_rows(8, 223, 4);
    let b = synthetic_rows(9, 1001, 4);
    let job = ResampleJob {
        strata: vec![&a, &b],
        k: 4,
        seed: 17,
        replicates: 0..300,
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| CpuBackend::new().resample_sums(&job, &no_progress).unwrap())
    };
    let one = run(1);
    let three = run(3);
    assert_eq!(bits(&one), bits(&three));
}

#[test]
fn cpu_replicate_ranges_concatenate() {
    let a = synthetic_rows(10, 223, 2);
    let b = synthetic_rows(11, 5, 2);
    let job = |range| ResampleJob {
        strata: vec![&a, &b],
        k: 2,
        seed: 5,
        replicates: range,
    };
    let cpu = CpuBackend::new();
    let whole = cpu.resample_sums(&job(0..7), &no_progress).unwrap();
    let mut parts = cpu.resample_sums(&job(0..3), &no_progress).unwrap();
    parts.extend(cpu.resample_sums(&job(3..7), &no_progress).unwrap());
    assert_eq!(bits(&whole), bits(&parts));
    assert_eq!(whole.len(), 7 * 2 * 2);
}

#[test]
fn progress_is_monotone_and_ends_at_b() {
    let a = synthetic_rows(12, 1 << 16, 1);
    let job = ResampleJob {
        strata: vec![&a],
        k: 1,
        seed: 1,
        replicates: 10..800,
    };
    let seen = std::sync::Mutex::new(Vec::new());
    CpuBackend::new()
        .resample_sums(&job, &|n| seen.lock().unwrap().push(n))
        .unwrap();
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() > 1, "expected several batches, got {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*seen.last().unwrap(), 790);
}

#[test]
fn q_one_resamples_the_only_row() {
    let a = [0.25f32, -1.5];
    let job = ResampleJob {
        strata: vec![&a],
        k: 2,
        seed: 3,
        replicates: 0..4,
    };
    let got = CpuBackend::new().resample_sums(&job, &no_progress).unwrap();
    assert_eq!(got, vec![0.25, -1.5, 0.25, -1.5, 0.25, -1.5, 0.25, -1.5]);
}

#[test]
fn empty_replicate_range_gives_empty_output() {
    let a = [1.0f32];
    let job = ResampleJob {
        strata: vec![&a],
        k: 1,
        seed: 3,
        replicates: 4..4,
    };
    assert!(CpuBackend::new()
        .resample_sums(&job, &no_progress)
        .unwrap()
        .is_empty());
}

#[test]
fn lemire_draws_are_uniform_chi_square() {
    // 70,000 draws in [0, 7): chi-square with 6 df must stay below its 0.999 quantile 22.46.
    let mut counts = [0u64; 7];
    for i in 0..70_000u64 {
        counts[draw_index(12345, (i / 10_000) as u32, 0, i % 10_000, 7) as usize] += 1;
    }
    let e = 10_000.0;
    let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
    assert!(chi2 < 22.46, "chi2 = {chi2}, counts = {counts:?}");
}

#[test]
fn lemire_draws_with_frequent_rejection_are_balanced() {
    // q = 2^31 + 1 rejects almost half the words; the accepted draws must still split
    // evenly between the lower and upper half of the range.
    let q = 0x8000_0001u32;
    let n = 20_000u64;
    let low = (0..n)
        .filter(|&i| draw_index(7, 0, 0, i, q) < q / 2)
        .count() as f64;
    let z = (low - n as f64 / 2.0) / (n as f64 / 4.0).sqrt();
    assert!(z.abs() < 4.0, "z = {z}");
}

#[test]
fn bad_shapes_are_clear_errors() {
    let a: &[f32] = &[1.0, 2.0, 3.0];
    let empty: &[f32] = &[];
    let cpu = CpuBackend::new();
    let check = |strata: Vec<&[f32]>, k: usize, want: &str| {
        let job = ResampleJob {
            strata,
            k,
            seed: 0,
            replicates: 0..2,
        };
        let err = cpu.resample_sums(&job, &no_progress).unwrap_err();
        assert!(
            err.to_string().contains(want),
            "'{err}' does not say '{want}'"
        );
        assert_eq!(err.exit_code(), 2);
    };
    check(vec![a], 0, "expected 1 to 16");
    check(vec![a], 17, "expected 1 to 16");
    check(vec![a], 2, "not a multiple of k = 2");
    check(vec![a, empty], 1, "stratum 1 has no rows");
    check(vec![], 1, "no strata");
}
