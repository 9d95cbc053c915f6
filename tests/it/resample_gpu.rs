//! GPU backend: the WGSL Philox against Random123's vectors, GPU draw indices against the
//! CPU's (including the rejection path), and CPU/GPU bit identity on awkward shapes, for
//! both `mulhi32` variants (the 64-bit multiply when the adapter offers `SHADER_INT64`, as
//! lavapipe does, and the 16-bit-halves fallback); one submit per job; one pipeline per k.
//!
//! Without an adapter these tests print why and pass, unless `STATS_REQUIRE_GPU=1`, in
//! which case they fail. Mesa lavapipe counts as an adapter here.

use std::sync::OnceLock;

use ragstats_core::resample::workload::{synthetic_rows, Workload};
use ragstats_core::resample::{CpuBackend, ResampleBackend, ResampleJob, CHUNK_ROWS};
use ragstats_core::rng::stream::lemire_threshold;
use ragstats_core::rng::{draw_index, philox4x32_10};
use ragstats_gpu::pipelines::{draw_indices_on_device, philox_on_device};
use ragstats_gpu::GpuBackend;
use ragstats_gpu::{AdapterPolicy, GpuOptions};

use crate::common;

fn require_gpu() -> bool {
    common::gpu_required()
}

fn open(native_int64: bool) -> Option<GpuBackend> {
    match GpuBackend::with_options(AdapterPolicy::Any, GpuOptions { native_int64 }) {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(
                !require_gpu(),
                "STATS_REQUIRE_GPU=1 but no GPU adapter could be opened: {e}"
            );
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// The backend with the 16-bit-halves `mulhi32` (every adapter can run it).
fn gpu() -> Option<&'static GpuBackend> {
    static GPU: OnceLock<Option<GpuBackend>> = OnceLock::new();
    GPU.get_or_init(|| open(false)).as_ref()
}

/// Every `mulhi32` variant this adapter runs: the 64-bit one first when it offers
/// `SHADER_INT64`, then the 16-bit-halves one.
fn variants() -> Vec<&'static GpuBackend> {
    static NATIVE: OnceLock<Option<GpuBackend>> = OnceLock::new();
    let native = NATIVE.get_or_init(|| open(true)).as_ref();
    let mut out: Vec<&GpuBackend> = native
        .filter(|g| g.context().native_int64)
        .into_iter()
        .collect();
    out.extend(gpu());
    out
}

/// A backend of its own (for counting its submits and pipelines while other tests run).
fn fresh() -> Option<GpuBackend> {
    open(true)
}

fn no_progress(_: u64) {}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Runs `job` on both backends and asserts bit-identical sums.
fn assert_identical(g: &GpuBackend, job: &ResampleJob) {
    let cpu = CpuBackend::new().resample_sums(job, &no_progress).unwrap();
    let gpu = g.resample_sums(job, &no_progress).unwrap();
    assert_eq!(cpu.len(), job.output_len());
    assert_eq!(gpu.len(), cpu.len());
    if let Some(i) = (0..cpu.len()).find(|&i| cpu[i].to_bits() != gpu[i].to_bits()) {
        panic!(
            "k={} rows={:?} reps={:?} int64={}: first difference at {i}: cpu {} gpu {}",
            job.k,
            job.rows(),
            job.replicates,
            g.context().native_int64,
            cpu[i],
            gpu[i]
        );
    }
}

#[test]
fn the_int64_variant_runs_where_the_adapter_offers_it() {
    let Some(halves) = gpu() else { return };
    let ctx = halves.context();
    assert!(!ctx.native_int64, "native_int64: false was asked for");
    let offered = ctx.adapter_features.contains(wgpu::Features::SHADER_INT64);
    let v = variants();
    assert_eq!(v.len(), if offered { 2 } else { 1 });
    assert_eq!(v[0].context().native_int64, offered);
    // lavapipe offers shaderInt64: under STATS_REQUIRE_GPU=1 (CI runs lavapipe) both
    // variants must run, or the tests below would silently cover only one.
    if require_gpu() && ctx.info.name.contains("llvmpipe") {
        assert!(offered, "lavapipe should offer SHADER_INT64");
    }
}

#[test]
fn wgsl_philox_matches_random123_kat_vectors() {
    for g in variants() {
        philox_kat_on(g);
    }
}

fn philox_kat_on(g: &GpuBackend) {
    let kat = [
        (
            [0u32, 0, 0, 0],
            [0u32, 0],
            [0x6627_e8d5u32, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [0xffff_ffff; 4],
            [0xffff_ffff; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    let inputs: Vec<_> = kat.iter().map(|(c, k, _)| (*c, *k)).collect();
    let out = philox_on_device(g.context(), &inputs).unwrap();
    assert_eq!(out.len(), 3);
    for ((c, k, want), got) in kat.iter().zip(&out) {
        assert_eq!(
            got,
            want,
            "ctr={c:08x?} key={k:08x?} int64={}",
            g.context().native_int64
        );
    }
    // And a spread of counters and keys against the Rust implementation.
    let many: Vec<_> = (0..1000u32)
        .map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9);
            (
                [x, !x, i, x.rotate_left(7)],
                [x ^ 0xA5A5_A5A5, i.wrapping_mul(31)],
            )
        })
        .collect();
    let out = philox_on_device(g.context(), &many).unwrap();
    assert_eq!(out.len(), many.len());
    for ((c, k), got) in many.iter().zip(&out) {
        assert_eq!(*got, philox4x32_10(*c, *k));
    }
}

#[test]
fn gpu_draw_indices_equal_cpu_draw_indices() {
    for g in variants() {
        let seed = 0xABCD_0123_4567_89EF;
        for q in [1u32, 7, 223, CHUNK_ROWS as u32 + 5, u32::MAX] {
            let n = 4099;
            let got =
                draw_indices_on_device(g.context(), seed, 3, 2, q, lemire_threshold(q), n).unwrap();
            let want: Vec<u32> = (0..n as u64)
                .map(|i| draw_index(seed, 3, 2, i, q))
                .collect();
            assert_eq!(got, want, "q = {q}");
        }
    }
}

#[test]
fn gpu_and_cpu_agree_on_the_rejection_path() {
    for g in variants() {
        // q = 2^31 + 1: the rejection zone is 2^31 - 1 words wide, so about half the retry-0
        // words are rejected and many draws need two or more retries.
        let q = 0x8000_0001u32;
        let t = lemire_threshold(q);
        let n = 8192u32;
        let key = [42u32, 0];
        let rejected = (0..n)
            .filter(|&i| {
                let x = philox4x32_10([1, 0, i / 4, 0], key)[(i % 4) as usize];
                ((x as u64 * q as u64) as u32) < t
            })
            .count();
        assert!(rejected > 3000, "only {rejected} rejections");
        let got = draw_indices_on_device(g.context(), 42, 1, 0, q, t, n).unwrap();
        let want: Vec<u32> = (0..n as u64).map(|i| draw_index(42, 1, 0, i, q)).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn bit_identical_on_awkward_shapes() {
    for g in variants() {
        let one = synthetic_rows(1, 1, 3);
        let three = synthetic_rows(2, 3, 3);
        let s130 = synthetic_rows(3, 130, 3);
        let s257 = synthetic_rows(4, 257, 3);
        // Q = 1; Q not a multiple of 4 or 64; B = 1; B = 13; a range not starting at 0.
        let cases: Vec<(Vec<&[f32]>, std::ops::Range<u32>)> = vec![
            (vec![&one], 0..5),
            (vec![&three, &s130, &s257], 0..13),
            (vec![&s257], 0..1),
            (vec![&one, &s257], 1000..1009),
        ];
        for (strata, reps) in cases {
            assert_identical(
                g,
                &ResampleJob {
                    strata,
                    k: 3,
                    seed: 0x1234_5678_9ABC_DEF0,
                    replicates: reps,
                },
            );
        }
    }
}

#[test]
fn bit_identical_for_every_k() {
    for g in variants() {
        for k in 1..=16 {
            let a = synthetic_rows(k as u64, 67, k);
            let b = synthetic_rows(100 + k as u64, 250, k);
            assert_identical(
                g,
                &ResampleJob {
                    strata: vec![&a, &b],
                    k,
                    seed: k as u64,
                    replicates: 0..6,
                },
            );
        }
    }
}

#[test]
fn bit_identical_with_one_tiny_and_one_huge_stratum() {
    let tiny = synthetic_rows(5, 1, 2);
    let huge = synthetic_rows(6, 200_003, 2);
    for g in variants() {
        assert_identical(
            g,
            &ResampleJob {
                strata: vec![&tiny, &huge],
                k: 2,
                seed: 8,
                replicates: 0..3,
            },
        );
    }
}

#[test]
fn bit_identical_across_data_chunks() {
    // k = 1: one stratum of CHUNK_ROWS + 5 rows (two chunks) beside a small one.
    let big = synthetic_rows(7, CHUNK_ROWS + 5, 1);
    let small = synthetic_rows(8, 9, 1);
    // k = 3: the row offset inside the second chunk depends on k; k = 4: the second
    // chunk's rows are vec4 loads too.
    let big3 = synthetic_rows(9, CHUNK_ROWS + 5, 3);
    let big4 = synthetic_rows(10, CHUNK_ROWS + 3, 4);
    let small4 = synthetic_rows(11, 9, 4);
    for g in variants() {
        assert_identical(
            g,
            &ResampleJob {
                strata: vec![&big, &small],
                k: 1,
                seed: 77,
                replicates: 0..2,
            },
        );
        assert_identical(
            g,
            &ResampleJob {
                strata: vec![&big3],
                k: 3,
                seed: 78,
                replicates: 4..5,
            },
        );
        assert_identical(
            g,
            &ResampleJob {
                strata: vec![&small4, &big4],
                k: 4,
                seed: 79,
                replicates: 0..1,
            },
        );
    }
}

#[test]
fn bit_identical_when_batches_and_segments_split() {
    let Some(g) = gpu() else { return };
    // B = 65537 replicates x 2 strata is more pairs than one grid dimension holds (65535
    // workgroups): the kernel's flattened 2-D grid runs them in one dispatch.
    let a = synthetic_rows(10, 2, 1);
    let b = synthetic_rows(11, 3, 1);
    let job = ResampleJob {
        strata: vec![&a, &b],
        k: 1,
        seed: 3,
        replicates: 0..65_537,
    };
    assert_identical(g, &job);
    // Batches of 1000 replicates (66 submits) give the same bits as one.
    let Some(batched) = fresh() else { return };
    let batched = batched.with_max_batch_replicates(1000);
    assert_identical(&batched, &job);
    assert_eq!(batched.submits(), 66);
    // Segments of at most 64 bytes: every stratum gets its own binding and dispatch
    // (k = 4 also puts every stratum's rows at a vec4 boundary of its own segment).
    for k in [2, 4] {
        let small = fresh().unwrap().with_max_segment_bytes(64);
        let strata: Vec<Vec<f32>> = (0..5)
            .map(|s| synthetic_rows(20 + s, 5 + s as usize, k))
            .collect();
        let job = ResampleJob {
            strata: strata.iter().map(|v| &v[..]).collect(),
            k,
            seed: 4,
            replicates: 0..10,
        };
        assert_identical(&small, &job);
        assert_eq!(small.prepare(&job).unwrap().segments(), 5);
    }
}

/// The large workload (2 strata x 500,000 questions, B = 10,000: 10^10 draws) is
/// planned as one submit and one read-back on this device, for k = 1 and k = 4 (before,
/// a cap of 2^30 draws per submit split it into 10). `run` follows the plan, as the
/// executed run of the same data below shows by its submit count; the full 10^10 draws
/// take minutes on lavapipe, so only 4 replicates are executed and compared with the CPU.
#[test]
fn the_large_workload_is_one_submit() {
    let Some(g) = fresh() else { return };
    let rows = Workload::Large.strata_rows(None);
    assert_eq!(rows, vec![500_000, 500_000]);
    for k in [1, 4] {
        let data: Vec<Vec<f32>> = rows
            .iter()
            .enumerate()
            .map(|(s, &q)| synthetic_rows(40 + s as u64, q, k))
            .collect();
        let job = ResampleJob {
            strata: data.iter().map(|d| &d[..]).collect(),
            k,
            seed: 20_261_129,
            replicates: 0..10_000,
        };
        let prep = g.prepare(&job).unwrap();
        let plan = g.plan(&prep, 10_000);
        assert_eq!(plan.submits, 1, "k = {k}: {plan:?}");
        assert_eq!(plan.batch_replicates, 10_000);
        // One segment (chunk 0 of both strata), one window (1,954 lane-steps < 4,096).
        assert_eq!(plan.dispatches_per_submit, 1);
        if k == 1 {
            let before = g.submits();
            let few = ResampleJob {
                replicates: 0..4,
                ..job.clone()
            };
            let seen = std::sync::Mutex::new(Vec::new());
            let sums = g
                .run(&prep, few.replicates.clone(), &|n| {
                    seen.lock().unwrap().push(n)
                })
                .unwrap();
            assert_eq!(g.submits() - before, 1);
            assert_eq!(seen.into_inner().unwrap(), vec![4]);
            let cpu = CpuBackend::new().resample_sums(&few, &no_progress).unwrap();
            assert_eq!(bits(&sums), bits(&cpu));
        }
    }
}

#[test]
fn one_pipeline_per_k_compiled_once() {
    let Some(g) = fresh() else { return };
    assert!(g.compiled_pipelines().is_empty());
    let a = synthetic_rows(30, 9, 3);
    let job = ResampleJob {
        strata: vec![&a],
        k: 3,
        seed: 2,
        replicates: 0..2,
    };
    let first = g.resample_sums(&job, &no_progress).unwrap();
    let again = g.resample_sums(&job, &no_progress).unwrap();
    assert_eq!(bits(&first), bits(&again));
    assert_eq!(g.compiled_pipelines(), vec![3]);
    let b = synthetic_rows(31, 9, 1);
    g.resample_sums(
        &ResampleJob {
            strata: vec![&b],
            k: 1,
            ..job.clone()
        },
        &no_progress,
    )
    .unwrap();
    assert_eq!(g.compiled_pipelines(), vec![1, 3]);
}

#[test]
fn gpu_replicate_ranges_concatenate() {
    let Some(g) = gpu() else { return };
    let a = synthetic_rows(12, 223, 2);
    let b = synthetic_rows(13, 31, 2);
    let job = |range| ResampleJob {
        strata: vec![&a, &b],
        k: 2,
        seed: 6,
        replicates: range,
    };
    let whole = g.resample_sums(&job(0..7), &no_progress).unwrap();
    let mut parts = g.resample_sums(&job(0..3), &no_progress).unwrap();
    parts.extend(g.resample_sums(&job(3..7), &no_progress).unwrap());
    assert_eq!(bits(&whole), bits(&parts));
    let cpu = CpuBackend::new()
        .resample_sums(&job(0..7), &no_progress)
        .unwrap();
    assert_eq!(bits(&whole), bits(&cpu));
}

#[test]
fn gpu_progress_ends_at_b() {
    let Some(g) = fresh() else { return };
    let a = synthetic_rows(14, 3, 1);
    let job = ResampleJob {
        strata: vec![&a],
        k: 1,
        seed: 1,
        replicates: 5..70_005,
    };
    // One batch: one submit, one progress call.
    let seen = std::sync::Mutex::new(Vec::new());
    let whole = g
        .resample_sums(&job, &|n| seen.lock().unwrap().push(n))
        .unwrap();
    assert_eq!(seen.into_inner().unwrap(), vec![70_000]);
    assert_eq!(g.submits(), 1);
    // Batches of 30,000: a progress call after each, and the same bits.
    let g = g.with_max_batch_replicates(30_000);
    let seen = std::sync::Mutex::new(Vec::new());
    let batched = g
        .resample_sums(&job, &|n| seen.lock().unwrap().push(n))
        .unwrap();
    assert_eq!(seen.into_inner().unwrap(), vec![30_000, 60_000, 70_000]);
    assert_eq!(g.submits(), 4);
    assert_eq!(bits(&whole), bits(&batched));
}

#[test]
fn gpu_rejects_bad_shapes_like_the_cpu() {
    let Some(g) = gpu() else { return };
    let a = [1.0f32, 2.0, 3.0];
    let job = ResampleJob {
        strata: vec![&a],
        k: 2,
        seed: 0,
        replicates: 0..1,
    };
    let err = g.resample_sums(&job, &no_progress).unwrap_err();
    assert!(err.to_string().contains("not a multiple of k = 2"), "{err}");
}

#[test]
fn bit_identical_for_a_stratum_past_the_llvmpipe_loop_cap() {
    // Regression: with one loop iteration per draw and per column, an invocation walking
    // 900,000 rows passed llvmpipe's 65535-iteration cap and its sums were truncated.
    let big = synthetic_rows(15, 900_000, 4);
    for g in variants() {
        assert_identical(
            g,
            &ResampleJob {
                strata: vec![&big],
                k: 4,
                seed: 15,
                replicates: 0..2,
            },
        );
    }
}

/// `stats bench --adapter-info` names the adapter the engine opens (the same one
/// `GpuBackend::new` picks), which scripts/gpu-check.sh asserts is NVIDIA hardware.
#[test]
fn bench_adapter_info_names_the_engine_adapter() {
    let Some(g) = gpu() else { return };
    let out = crate::common::stats()
        .args(["bench", "--adapter-info", "--format", "json"])
        .env_remove("STATS_GPU_INT64")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let info = &g.context().info;
    let a = &v["engine_adapter"];
    assert_eq!(a["name"], info.name.as_str());
    assert_eq!(a["vendor"], format!("{:#06x}", info.vendor));
    assert_eq!(a["backend"], format!("{:?}", info.backend));
    let offered = g
        .context()
        .adapter_features
        .contains(wgpu::Features::SHADER_INT64);
    assert_eq!(a["shader_int64"], offered);
    assert_eq!(a["native_int64"], offered);
    assert_eq!(v["error"], serde_json::Value::Null);
    assert!(v["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["name"] == a["name"]));
    if info.name.contains("llvmpipe") {
        assert_eq!(a["software"], true);
        assert_eq!(a["vendor"], "0x10005"); // Mesa's Vulkan vendor id
    }
}

/// `stats bench`'s library halves called directly: the GPU engine timed on the CPU half's
/// job gives the CPU engine's sums bit for bit, and says which adapter ran.
#[test]
fn the_gpu_bench_compares_with_the_cpu_bench_bit_for_bit() {
    use ragstats_core::resample::bench::{bench_cpu, BenchData, BenchSettings};
    use ragstats_core::resample::workload::Workload;
    use ragstats_gpu::bench::{bench_gpu, GpuBench};
    let s = BenchSettings {
        workload: Workload::Paper,
        questions: Some(101),
        replicates: 7,
        seed: 5,
        k: 3,
        min_time: 0.0,
    };
    let data = BenchData::new(&s).unwrap();
    assert_eq!(data.rows, vec![51, 50]);
    let cpu = bench_cpu(&s, &data, ragstats_core::rng::Generator::Scalar).unwrap();
    assert_eq!(cpu.draws, 7.0 * 101.0);
    assert_eq!(cpu.sums.len(), 7 * 2 * 3);
    let gpu = bench_gpu(
        &data.job(&s),
        std::time::Duration::ZERO,
        cpu.draws,
        &cpu.sums,
    )
    .unwrap();
    match gpu {
        GpuBench::Ran {
            available,
            identical,
            adapter,
            seconds,
            draws_per_second,
            ..
        } => {
            assert!(available && identical, "{adapter}");
            assert_eq!(draws_per_second, cpu.draws / seconds);
        }
        GpuBench::NotRun { reason, .. } => {
            let _ = common::gpu_or_skip::<(), _>(Err(reason));
        }
    }
}
