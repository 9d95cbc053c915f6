//! Criterion bench of the resampling engine on the paper workload (2 strata x 223 rows,
//! k = 1, B = 10,000): the raw Philox+Lemire loop with the scalar generator and with the
//! one the CPU engine uses (`STATS_CPU_RNG`, else the widest the CPU supports: the CPU
//! limit), the CPU engine, and the GPU engine (kernel and read-back; upload excluded) when
//! an adapter exists.
//! Run: `cargo bench --bench resample`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ragstats_core::resample::workload::{raw_draw_checksum, synthetic_rows, Workload};
use ragstats_core::resample::{CpuBackend, ResampleBackend, ResampleJob};
use ragstats_core::rng::Generator;
use ragstats_gpu::AdapterPolicy;
use ragstats_gpu::GpuBackend;

const SEED: u64 = 20_261_129;
const B: u32 = 10_000;

fn paper(c: &mut Criterion) {
    let rows = Workload::Paper.strata_rows(None);
    let data: Vec<Vec<f32>> = rows
        .iter()
        .enumerate()
        .map(|(s, &q)| synthetic_rows(SEED + s as u64, q, 1))
        .collect();
    let job = ResampleJob {
        strata: data.iter().map(|d| &d[..]).collect(),
        k: 1,
        seed: SEED,
        replicates: 0..B,
    };
    let q32 = job.rows();
    let mut g = c.benchmark_group("paper_B10000");
    g.throughput(Throughput::Elements(job.draws_per_replicate() * B as u64));
    g.sample_size(20);
    let generator = Generator::from_env().expect("STATS_CPU_RNG");
    g.bench_function("raw_philox_lemire_scalar", |b| {
        b.iter(|| raw_draw_checksum(Generator::Scalar, SEED, &q32, 0..B))
    });
    if generator != Generator::Scalar {
        g.bench_function(format!("raw_philox_lemire_{generator}"), |b| {
            b.iter(|| raw_draw_checksum(generator, SEED, &q32, 0..B))
        });
    }
    let cpu = CpuBackend::new().with_generator(generator);
    g.bench_function("cpu_engine", |b| {
        b.iter(|| cpu.resample_sums(&job, &|_| {}).unwrap())
    });
    match GpuBackend::new(AdapterPolicy::Any) {
        Ok(gpu) => {
            let prep = gpu.prepare(&job).unwrap();
            g.bench_function("gpu_engine", |b| {
                b.iter(|| gpu.run(&prep, 0..B, &|_| {}).unwrap())
            });
        }
        Err(e) => eprintln!("gpu_engine skipped: {e}"),
    }
    g.finish();
}

criterion_group!(benches, paper);
criterion_main!(benches);
