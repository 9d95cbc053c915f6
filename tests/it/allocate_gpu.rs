//! `stats allocate`'s exact-size paired walk on the GPU (`crates/ragstats-gpu/shaders/walk.wgsl`)
//! against its CPU twin (`ragstats_core::allocation::walk::CpuWalk`): a known answer replayed
//! from the stream's draws, bit identity on awkward shapes (several strata, sizes that are
//! not multiples of 4, 32 allocations, walks spanning several windows), for both `mulhi32`
//! variants. The whole command on the demo: `allocate_paired::paired_allocations_are_the_same_on_cpu_and_gpu`.
//!
//! Without an adapter these tests print why and pass, unless `STATS_REQUIRE_GPU=1`, in which
//! case they fail. Mesa lavapipe counts as an adapter here.

use ragstats_core::allocation::walk::{
    CpuWalk, WalkBackend, WalkJob, WalkStratum, CLUSTER_WALK_COLUMNS, MAX_ALLOCATIONS, WALK_COLUMNS,
};
use ragstats_core::rng::draw_index;
use ragstats_gpu::{AdapterPolicy, GpuOptions, GpuWalk};

use crate::common::gpu_or_skip;

/// Every `mulhi32` variant the adapter runs: the 64-bit multiply when it offers
/// `SHADER_INT64` (lavapipe does), and the 16-bit halves every adapter can run.
fn variants() -> Vec<GpuWalk> {
    let Some(native) = gpu_or_skip(GpuWalk::with_options(
        AdapterPolicy::Any,
        GpuOptions { native_int64: true },
    )) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if native.context().native_int64 {
        out.push(native);
    }
    out.extend(gpu_or_skip(GpuWalk::with_options(
        AdapterPolicy::Any,
        GpuOptions {
            native_int64: false,
        },
    )));
    out
}

/// Known answer: one stratum of 4 questions; allocation 0 holds all four (need 4), 1 holds
/// {1, 3} (need 2); question q's value in column c is 10q + c for allocation 0 and 100 + q for
/// allocation 1 (small integers: the f32 sums are exact). Replayed from `draw_index`:
/// allocation 0 sums draws 0..4, allocation 1 the first two odd draws.
#[test]
fn the_gpu_walk_takes_the_first_draws_landing_in_each_sub_panel() {
    let mut rows = vec![0.0f32; 4 * 2 * WALK_COLUMNS];
    for q in 0..4 {
        for c in 0..WALK_COLUMNS {
            rows[(q * 2) * WALK_COLUMNS + c] = (10 * q + c) as f32;
            if q % 2 == 1 {
                rows[(q * 2 + 1) * WALK_COLUMNS + c] = (100 + q) as f32;
            }
        }
    }
    let job = WalkJob {
        strata: vec![WalkStratum {
            members: vec![0b01, 0b11, 0b01, 0b11],
            need: vec![4, 2],
            rows,
        }],
        allocations: 2,
        columns: WALK_COLUMNS,
        seed: 7,
        replicates: 3..40,
    };
    for gpu in variants() {
        let out = gpu.walk(&job, &|_| {}).unwrap();
        assert_eq!(out.len(), job.output_len());
        for r in 3..40u32 {
            let first4: Vec<u32> = (0..4).map(|j| draw_index(7, r, 0, j, 4)).collect();
            let odd: Vec<u32> = (0..)
                .map(|j| draw_index(7, r, 0, j, 4))
                .filter(|x| x % 2 == 1)
                .take(2)
                .collect();
            let got = &out[((r - 3) as usize * 2) * WALK_COLUMNS..][..2 * WALK_COLUMNS];
            for c in 0..WALK_COLUMNS {
                let want0: u32 = first4.iter().map(|&q| 10 * q + c as u32).sum();
                let want1: u32 = odd.iter().map(|&q| 100 + q).sum();
                assert_eq!(got[c], want0 as f32, "replicate {r} column {c}");
                assert_eq!(
                    got[WALK_COLUMNS + c],
                    want1 as f32,
                    "replicate {r} column {c}"
                );
            }
        }
    }
}

/// A walk job of `allocations` nested and scattered sub-panels over strata of `q` questions,
/// with irregular f32 values (so every add rounds, and a different order would show).
fn awkward(
    q: &[usize],
    allocations: usize,
    columns: usize,
    seed: u64,
    replicates: std::ops::Range<u32>,
) -> WalkJob {
    let strata = q
        .iter()
        .enumerate()
        .map(|(d, &q)| {
            let mut members = vec![0u32; q];
            let mut need = vec![0u32; allocations];
            for (a, n) in need.iter_mut().enumerate() {
                for (x, m) in members.iter_mut().enumerate() {
                    // Allocation 0 holds every question; the others a prefix or every k-th.
                    let holds = match a {
                        0 => true,
                        a if a % 2 == 1 => x < q * a / (allocations + 1) + 2,
                        a => (x + d) % (a + 1) == 0,
                    };
                    if holds {
                        *m |= 1 << a;
                        *n += 1;
                    }
                }
            }
            let rows = (0..q * allocations * columns)
                .map(|i| ((i as f32 * 0.618_034 + d as f32).sin() * 0.37) / (1.0 + (i % 7) as f32))
                .collect();
            WalkStratum {
                members,
                need,
                rows,
            }
        })
        .collect();
    WalkJob {
        strata,
        allocations,
        columns,
        seed,
        replicates,
    }
}

/// CPU and GPU sums are bit-identical: three strata of 5, 223 and 1,001 questions with 3
/// allocations (one window), and one stratum of 3,001 with 32 allocations, whose walks span
/// several windows of the kernel (221 blocks each); replicate ranges that do not start at 0.
/// The same with the cluster walk's 8 columns (`--cluster`: the units are clusters, 24 and
/// 7 of them, and 1,001 in a multi-window walk) and with 1 column (every width the kernel
/// reads from its header).
#[test]
fn cpu_and_gpu_walks_are_bit_identical() {
    let jobs = [
        awkward(
            &[5, 223, 1001],
            3,
            WALK_COLUMNS,
            0x0123_4567_89ab_cdef,
            0..300,
        ),
        awkward(&[3001], MAX_ALLOCATIONS, WALK_COLUMNS, 11, 17..81),
        awkward(&[24, 7], 4, CLUSTER_WALK_COLUMNS, 48, 5..405),
        awkward(&[1001], MAX_ALLOCATIONS, CLUSTER_WALK_COLUMNS, 3, 0..40),
        awkward(&[24, 7], 3, 1, 9, 0..100),
    ];
    let gpus = variants();
    for job in &jobs {
        let cpu = CpuWalk.walk(job, &|_| {}).unwrap();
        for gpu in &gpus {
            let got = gpu.walk(job, &|_| {}).unwrap();
            assert_eq!(got.len(), cpu.len());
            let first = cpu
                .iter()
                .zip(&got)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(
                first,
                None,
                "{} ({}): first differing sum",
                gpu.description(),
                if gpu.context().native_int64 {
                    "64-bit mulhi"
                } else {
                    "16-bit halves"
                }
            );
        }
    }
}
