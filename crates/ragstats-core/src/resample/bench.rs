//! `stats bench`'s CPU half: the synthetic workload, and the timings of the raw
//! Philox+Lemire loop (with the scalar generator and the engine's), the CPU engine and its
//! adds alone. The GPU engine's timing is `ragstats_gpu::bench`, on the same job.
//!
//! Timings are the fastest of repeated runs, taken in alternation (one run of each path per
//! round) so that load from other processes hits all paths alike and their ratios stay
//! meaningful on a shared machine.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::cpu::{walk_name, PairOrder};
use super::workload::{given_draw_sums, raw_draw_checksum, synthetic_rows, Workload};
use super::{CpuBackend, ResampleBackend, ResampleJob, MAX_K};
use crate::rng::Generator;
use crate::{Error, Result};

/// Most timed rounds of a path.
const MAX_ROUNDS: u32 = 50;

/// What to time: the workload's shape, the replicates and seed, the statistics per
/// question, and how long to keep timing.
#[derive(Debug, Clone, Copy)]
pub struct BenchSettings {
    pub workload: Workload,
    /// Total questions over both strata (`None`: the workload's default).
    pub questions: Option<u64>,
    pub replicates: u32,
    pub seed: u64,
    /// Statistics (columns) per question, 1 to [`MAX_K`].
    pub k: usize,
    /// Minimum seconds spent timing each path.
    pub min_time: f64,
}

/// The benchmark's data: one table of synthetic centred rows per stratum.
#[derive(Debug, Clone)]
pub struct BenchData {
    /// Questions per stratum.
    pub rows: Vec<usize>,
    /// Row-major `rows[s] × k` values per stratum.
    pub tables: Vec<Vec<f32>>,
}

impl BenchData {
    /// The synthetic rows of `settings` (stratum s from seed `seed + s`).
    ///
    /// # Errors
    /// [`Error::Setting`] for k outside 1..=[`MAX_K`], no replicates, or a stratum with no
    /// questions or more than 2³² − 1.
    pub fn new(settings: &BenchSettings) -> Result<BenchData> {
        if settings.k == 0 || settings.k > MAX_K {
            return Err(Error::setting(
                "k",
                format!("expected 1 to {MAX_K}, not {}", settings.k),
            ));
        }
        if settings.replicates == 0 {
            return Err(Error::setting("replicates", "must be at least 1"));
        }
        let rows = settings.workload.strata_rows(settings.questions);
        if rows.iter().any(|&q| q == 0 || q > u32::MAX as usize) {
            return Err(Error::setting(
                "questions",
                format!(
                    "expected 2 to 2^33 - 2 (two non-empty strata), not {}",
                    settings.questions.unwrap_or_default()
                ),
            ));
        }
        let tables = rows
            .iter()
            .enumerate()
            .map(|(s, &q)| synthetic_rows(settings.seed.wrapping_add(s as u64), q, settings.k))
            .collect();
        Ok(BenchData { rows, tables })
    }

    /// The resampling job over this data.
    pub fn job(&self, settings: &BenchSettings) -> ResampleJob<'_> {
        ResampleJob {
            strata: self.tables.iter().map(|d| &d[..]).collect(),
            k: settings.k,
            seed: settings.seed,
            replicates: 0..settings.replicates,
        }
    }
}

/// One timed path: its fastest run and the rate that gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    pub seconds: f64,
    pub draws_per_second: f64,
}

impl Timing {
    fn new(seconds: f64, draws: f64) -> Timing {
        Timing {
            seconds,
            draws_per_second: draws / seconds,
        }
    }
}

/// The raw draw loop with one generator: its timing and the checksum of its indices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawTiming {
    /// The generator (absent for the scalar reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<&'static str>,
    pub seconds: f64,
    pub draws_per_second: f64,
    pub index_checksum: u64,
}

/// The CPU engine: which walks and pair order it took, and its timing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineTiming {
    pub backend: String,
    pub generator: &'static str,
    /// The walk per stratum (by table size).
    pub walks: Vec<&'static str>,
    /// How the engine's threads share the (replicate, stratum) pairs.
    pub pair_order: &'static str,
    pub seconds: f64,
    pub draws_per_second: f64,
}

/// Everything `stats bench` measures on the CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuBench {
    pub workload: Workload,
    pub strata_rows: Vec<usize>,
    pub k: usize,
    pub replicates: u32,
    pub seed: u64,
    /// Draws over all replicates: B × Σ q_s.
    pub draws: f64,
    pub threads: usize,
    pub cpu_rng: &'static str,
    pub cpu_rngs_supported: Vec<&'static str>,
    pub raw_scalar: RawTiming,
    pub raw: RawTiming,
    /// Scalar time over the engine generator's time.
    pub raw_over_scalar: f64,
    pub cpu: EngineTiming,
    /// Raw loop time over engine time: the share of the CPU limit the engine reaches.
    pub cpu_over_raw: f64,
    pub adds_alone: Timing,
    /// Adds-alone time over engine time.
    pub cpu_over_adds_alone: f64,
    /// The engine's sums, for comparing another engine's bit for bit.
    #[serde(skip)]
    pub sums: Vec<f32>,
}

/// Times the CPU paths on `data` with `generator`: each round runs the scalar raw loop (when
/// `generator` is a vector one), the raw loop with `generator`, the CPU engine, and the adds
/// with the draws given, until 2 × `min_time` has passed or 50 rounds; the fastest run of
/// each counts.
///
/// # Errors
/// [`Error::Runtime`] when the generator's index checksum differs from the scalar one's;
/// engine errors.
pub fn bench_cpu(
    settings: &BenchSettings,
    data: &BenchData,
    generator: Generator,
) -> Result<CpuBench> {
    let job = data.job(settings);
    let draws = job.draws_per_replicate() as f64 * f64::from(settings.replicates);
    let min = Duration::from_secs_f64(settings.min_time.max(0.0));
    let q32: Vec<u32> = job.rows();
    let k = settings.k;
    let walks: Vec<&'static str> = data
        .rows
        .iter()
        .map(|&q| walk_name(q * k * std::mem::size_of::<f32>()))
        .collect();
    let order = PairOrder::for_strata(&job.strata).name();
    let cpu = CpuBackend::new().with_generator(generator);
    let vector = generator != Generator::Scalar;
    let (mut scalar_s, mut raw_s, mut cpu_s) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let mut adds_s = f64::INFINITY;
    let (mut scalar_sum, mut checksum, mut sums) = (0, 0, Vec::new());
    let begin = Instant::now();
    for n in 1..=MAX_ROUNDS {
        if vector {
            let t = Instant::now();
            scalar_sum = raw_draw_checksum(
                Generator::Scalar,
                settings.seed,
                &q32,
                job.replicates.clone(),
            );
            scalar_s = scalar_s.min(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        checksum = raw_draw_checksum(generator, settings.seed, &q32, job.replicates.clone());
        raw_s = raw_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        sums = cpu.resample_sums(&job, &|_| {})?;
        cpu_s = cpu_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(given_draw_sums(generator, &job)?);
        adds_s = adds_s.min(t.elapsed().as_secs_f64());
        if begin.elapsed() >= 2 * min || n == MAX_ROUNDS {
            break;
        }
    }
    if !vector {
        (scalar_s, scalar_sum) = (raw_s, checksum);
    }
    if scalar_sum != checksum {
        return Err(Error::Runtime(format!(
            "the {generator} generator's index checksum {checksum} differs from the scalar one's {scalar_sum}"
        )));
    }
    Ok(CpuBench {
        workload: settings.workload,
        strata_rows: data.rows.clone(),
        k,
        replicates: settings.replicates,
        seed: settings.seed,
        draws,
        threads: rayon::current_num_threads(),
        cpu_rng: generator.name(),
        cpu_rngs_supported: Generator::supported().iter().map(|g| g.name()).collect(),
        raw_scalar: RawTiming {
            generator: None,
            seconds: scalar_s,
            draws_per_second: draws / scalar_s,
            index_checksum: scalar_sum,
        },
        raw: RawTiming {
            generator: Some(generator.name()),
            seconds: raw_s,
            draws_per_second: draws / raw_s,
            index_checksum: checksum,
        },
        raw_over_scalar: scalar_s / raw_s,
        cpu: EngineTiming {
            backend: cpu.description(),
            generator: generator.name(),
            walks,
            pair_order: order,
            seconds: cpu_s,
            draws_per_second: draws / cpu_s,
        },
        cpu_over_raw: raw_s / cpu_s,
        adds_alone: Timing::new(adds_s, draws),
        cpu_over_adds_alone: adds_s / cpu_s,
        sums,
    })
}

/// Runs `f` at least once and until `min` has elapsed (at most 50 times); returns the
/// fastest wall time and the last result.
///
/// # Errors
/// `f`'s error.
pub fn fastest<T>(min: Duration, mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let begin = Instant::now();
    let mut best = f64::INFINITY;
    let mut n = 0;
    loop {
        let t = Instant::now();
        let out = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        n += 1;
        if begin.elapsed() >= min || n >= MAX_ROUNDS {
            return Ok((best, out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(questions: u64) -> BenchSettings {
        BenchSettings {
            workload: Workload::Large,
            questions: Some(questions),
            replicates: 3,
            seed: 7,
            k: 2,
            min_time: 0.0,
        }
    }

    /// The engine's sums are those of the contract, whatever the timing: the same job run
    /// again on a fresh CPU backend gives them bit for bit; the draw count is B × Σ q_s.
    #[test]
    fn the_cpu_bench_reports_the_engines_own_sums() {
        let s = settings(40);
        let data = BenchData::new(&s).unwrap();
        assert_eq!(data.rows, vec![20, 20]);
        let b = bench_cpu(&s, &data, Generator::Scalar).unwrap();
        assert_eq!(b.draws, 3.0 * 40.0);
        assert_eq!(b.raw_scalar.index_checksum, b.raw.index_checksum);
        assert_eq!(b.raw_over_scalar, 1.0);
        let again = CpuBackend::new()
            .with_generator(Generator::Scalar)
            .resample_sums(&data.job(&s), &|_| {})
            .unwrap();
        assert_eq!(b.sums.len(), 3 * 2 * 2);
        assert!(b
            .sums
            .iter()
            .zip(&again)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn bad_settings_are_setting_errors() {
        let mut s = settings(40);
        s.k = MAX_K + 1;
        let e = BenchData::new(&s).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("k: expected 1 to {MAX_K}, not {}", MAX_K + 1)
        );
        assert_eq!(e.exit_code(), 2);
        let mut s = settings(40);
        s.replicates = 0;
        assert!(matches!(
            BenchData::new(&s),
            Err(Error::Setting { setting: "replicates", msg }) if msg == "must be at least 1"
        ));
        let s = settings(1);
        assert!(matches!(
            BenchData::new(&s),
            Err(Error::Setting { setting: "questions", msg })
                if msg == "expected 2 to 2^33 - 2 (two non-empty strata), not 1"
        ));
    }
}
