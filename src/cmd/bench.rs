//! `stats bench`: draws per second of the raw Philox+Lemire loop with the scalar generator
//! and with the one the CPU engine uses (the CPU limit), of the CPU engine and of the GPU
//! engine on one workload and seed, which CPU generator ran, and whether the generators'
//! indices and the two engines' sums agree bit for bit.

use std::time::{Duration, Instant};

use anyhow::Context;
use ragstats_core::resample::cpu::{walk_legend, walk_name, PairOrder};
use ragstats_core::resample::workload::{
    given_draw_sums, raw_draw_checksum, synthetic_rows, Workload,
};
use ragstats_core::resample::{CpuBackend, ResampleBackend, ResampleJob, MAX_K};
use ragstats_core::rng::Generator;
use ragstats_gpu::device::{adapters, is_software};
use ragstats_gpu::AdapterPolicy;
use ragstats_gpu::GpuBackend;
use serde_json::json;

use super::common::Format;
use super::UsageError;

flag_enum! {
    /// `--workload`.
    pub enum WorkloadArg => Workload {
        /// The audit panel's shape: 2 strata of 223 questions (446 in all).
        Paper,
        /// 2 strata of N/2 questions (N = 1,000,000 by default).
        Large,
    }
}

/// Flags of this command.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// paper = 2 strata x 223 questions; large = 2 strata x N/2 questions.
    #[arg(long, value_enum, default_value_t = WorkloadArg::Paper)]
    workload: WorkloadArg,
    /// Total questions N over both strata (default 446 for paper, 1,000,000 for large).
    #[arg(long)]
    questions: Option<u64>,
    /// Bootstrap replicates B.
    #[arg(long, default_value_t = 10_000)]
    replicates: u32,
    /// Seed (Philox key) of the draws and of the synthetic centred rows.
    #[arg(long, default_value_t = 20_261_129)]
    seed: u64,
    /// Statistics per question (columns summed), 1 to 16.
    #[arg(long, default_value_t = 1)]
    k: usize,
    /// Skip the GPU engine even when an adapter exists.
    #[arg(long)]
    no_gpu: bool,
    /// Minimum seconds spent timing each path (repeated runs; the fastest is reported).
    #[arg(long, default_value_t = 1.0)]
    min_time: f64,
    /// Output format.
    #[arg(long, default_value = "table", value_parser = Format::parser(&[Format::Table, Format::Json]))]
    format: Format,
    /// Only report the GPU adapter the engine would run on (name, PCI vendor, device type,
    /// backend, driver, whether Philox uses 64-bit integers) and every adapter wgpu finds,
    /// then exit: 0 if the engine's device opened, 1 if not. For checking a machine's setup.
    #[arg(long)]
    adapter_info: bool,
}

/// One adapter as `--adapter-info` reports it.
fn adapter_json(info: &wgpu::AdapterInfo, features: wgpu::Features) -> serde_json::Value {
    json!({
        "name": info.name,
        "vendor": format!("{:#06x}", info.vendor),
        "device": format!("{:#06x}", info.device),
        "device_type": format!("{:?}", info.device_type),
        "backend": format!("{:?}", info.backend),
        "driver": info.driver,
        "driver_info": info.driver_info,
        "software": is_software(info),
        "shader_int64": features.contains(wgpu::Features::SHADER_INT64),
    })
}

/// `--adapter-info`: opens the GPU engine as the benchmark would and describes it.
fn adapter_info(format: Format) -> anyhow::Result<u8> {
    let all: Vec<serde_json::Value> = adapters()
        .iter()
        .map(|(i, f)| adapter_json(i, *f))
        .collect();
    let engine = GpuBackend::new(AdapterPolicy::Any);
    let (chosen, error) = match &engine {
        Ok(g) => {
            let ctx = g.context();
            let mut v = adapter_json(&ctx.info, ctx.adapter_features);
            v["native_int64"] = ctx.native_int64.into();
            (v, serde_json::Value::Null)
        }
        Err(e) => (serde_json::Value::Null, e.to_string().into()),
    };
    match format {
        Format::Csv => return Err(no_csv()),
        Format::Json => {
            let doc = json!({
                "wgpu_backend_env": std::env::var("WGPU_BACKEND").ok(),
                "engine_adapter": chosen,
                "error": error,
                "adapters": all,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Format::Table => {
            match &engine {
                Ok(g) => outln!(
                    "engine adapter: {} (vendor {}, 64-bit Philox multiply: {})",
                    g.description(),
                    chosen["vendor"].as_str().unwrap_or("?"),
                    if g.context().native_int64 {
                        "yes"
                    } else {
                        "no"
                    }
                ),
                Err(e) => outln!("engine adapter: none ({e})"),
            }
            for a in &all {
                outln!(
                    "found: {} ({}, {}, vendor {}, {} {})",
                    a["name"].as_str().unwrap_or(""),
                    a["backend"].as_str().unwrap_or(""),
                    a["device_type"].as_str().unwrap_or(""),
                    a["vendor"].as_str().unwrap_or(""),
                    a["driver"].as_str().unwrap_or(""),
                    a["driver_info"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(if engine.is_ok() { 0 } else { 1 })
}

/// Runs `f` at least once and until `min` has elapsed (at most 50 times); returns the
/// fastest wall time and the last result.
fn fastest<T>(min: Duration, mut f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(f64, T)> {
    let begin = Instant::now();
    let mut best = f64::INFINITY;
    let mut n = 0;
    loop {
        let t = Instant::now();
        let out = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        n += 1;
        if begin.elapsed() >= min || n >= 50 {
            return Ok((best, out));
        }
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.adapter_info {
        return adapter_info(args.format);
    }
    if args.k == 0 || args.k > MAX_K {
        return Err(UsageError(format!("--k {}: expected 1 to {MAX_K}", args.k)).into());
    }
    if args.replicates == 0 {
        return Err(UsageError("--replicates must be at least 1".into()).into());
    }
    let workload = Workload::from(args.workload);
    let rows = workload.strata_rows(args.questions);
    if rows.iter().any(|&q| q == 0 || q > u32::MAX as usize) {
        return Err(UsageError(format!(
            "--questions {}: expected 2 to 2^33 - 2 (two non-empty strata)",
            args.questions.unwrap_or_default()
        ))
        .into());
    }
    let k = args.k;
    let data: Vec<Vec<f32>> = rows
        .iter()
        .enumerate()
        .map(|(s, &q)| synthetic_rows(args.seed.wrapping_add(s as u64), q, k))
        .collect();
    let job = ResampleJob {
        strata: data.iter().map(|d| &d[..]).collect(),
        k,
        seed: args.seed,
        replicates: 0..args.replicates,
    };
    let draws = job.draws_per_replicate() as f64 * args.replicates as f64;
    let min = Duration::from_secs_f64(args.min_time.max(0.0));
    let q32: Vec<u32> = job.rows();
    // The walk the CPU engine takes for each stratum's table.
    let walks: Vec<&str> = rows
        .iter()
        .map(|&q| walk_name(q * k * std::mem::size_of::<f32>()))
        .collect();
    // How its threads share the (replicate, stratum) pairs.
    let order = PairOrder::for_strata(&job.strata).name();

    // The raw loops and the CPU engine are timed in alternation, so that load from other
    // processes on a shared machine hits all alike and their ratios stay meaningful.
    let generator = Generator::from_env()?;
    let cpu = CpuBackend::new().with_generator(generator);
    let vector = generator != Generator::Scalar;
    let (mut scalar_s, mut raw_s, mut cpu_s) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let mut adds_s = f64::INFINITY;
    let (mut scalar_sum, mut checksum, mut cpu_sums) = (0, 0, Vec::new());
    let begin = Instant::now();
    for n in 1..=50 {
        if vector {
            let t = Instant::now();
            scalar_sum =
                raw_draw_checksum(Generator::Scalar, args.seed, &q32, job.replicates.clone());
            scalar_s = scalar_s.min(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        checksum = raw_draw_checksum(generator, args.seed, &q32, job.replicates.clone());
        raw_s = raw_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        cpu_sums = cpu.resample_sums(&job, &|_| {})?;
        cpu_s = cpu_s.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(given_draw_sums(generator, &job)?);
        adds_s = adds_s.min(t.elapsed().as_secs_f64());
        if begin.elapsed() >= 2 * min || n == 50 {
            break;
        }
    }
    if !vector {
        (scalar_s, scalar_sum) = (raw_s, checksum);
    }
    if scalar_sum != checksum {
        anyhow::bail!(
            "the {generator} generator's index checksum {checksum} differs from the scalar one's {scalar_sum}"
        );
    }

    let mut gpu_json = json!(null);
    let mut gpu_line = None;
    let mut identical = None;
    if !args.no_gpu {
        match GpuBackend::new(AdapterPolicy::Any) {
            Err(e) => {
                gpu_json = json!({ "available": false, "reason": e.to_string() });
                gpu_line = Some(format!("GPU engine: not run ({e})"));
            }
            Ok(gpu) => {
                let t = Instant::now();
                let prep = gpu.prepare(&job).context("uploading to the GPU")?;
                gpu.context().wait()?;
                let upload_s = t.elapsed().as_secs_f64();
                let (gpu_s, sums) = fastest(min, || {
                    Ok(gpu.run(&prep, job.replicates.clone(), &|_| {})?)
                })?;
                let same = sums.len() == cpu_sums.len()
                    && sums
                        .iter()
                        .zip(&cpu_sums)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                identical = Some(same);
                gpu_json = json!({
                    "available": true,
                    "adapter": gpu.description(),
                    "upload_seconds": upload_s,
                    "uploaded_bytes": prep.uploaded_bytes,
                    "seconds": gpu_s,
                    "draws_per_second": draws / gpu_s,
                });
                gpu_line = Some(format!(
                    "{:<38} {:>10.4} {:>12} {:>9}   upload {:.4} s; {}",
                    "GPU engine",
                    gpu_s,
                    rate(draws / gpu_s),
                    "",
                    upload_s,
                    gpu.description()
                ));
            }
        }
    }
    let ratio = raw_s / cpu_s;
    match args.format {
        Format::Csv => return Err(no_csv()),
        Format::Json => {
            let doc = json!({
                "workload": workload,
                "strata_rows": rows,
                "k": k,
                "replicates": args.replicates,
                "seed": args.seed,
                "draws": draws,
                "threads": rayon::current_num_threads(),
                "cpu_rng": generator.name(),
                "cpu_rngs_supported": Generator::supported().iter().map(|g| g.name()).collect::<Vec<_>>(),
                "raw_scalar": { "seconds": scalar_s, "draws_per_second": draws / scalar_s, "index_checksum": scalar_sum },
                "raw": { "generator": generator.name(), "seconds": raw_s, "draws_per_second": draws / raw_s, "index_checksum": checksum },
                "raw_over_scalar": scalar_s / raw_s,
                "cpu": { "backend": cpu.description(), "generator": generator.name(), "walks": walks, "pair_order": order, "seconds": cpu_s, "draws_per_second": draws / cpu_s },
                "cpu_over_raw": ratio,
                "adds_alone": { "seconds": adds_s, "draws_per_second": draws / adds_s },
                "cpu_over_adds_alone": adds_s / cpu_s,
                "gpu": gpu_json,
                "identical": identical,
            });
            outln!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Format::Table => {
            outln!(
                "workload {:?}: strata {:?} rows, k = {k}, B = {}, seed {} ({} draws)",
                workload,
                rows,
                args.replicates,
                args.seed,
                draws as u64
            );
            outln!(
                "CPU generator: {generator} (supported here: {}; {} forces one)",
                Generator::supported()
                    .iter()
                    .map(|g| g.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                ragstats_core::rng::blocks::ENV_VAR
            );
            outln!(
                "CPU engine walk per stratum: {} ({}); threads take {}",
                walks.join(", "),
                walk_legend(),
                order
            );
            outln!(
                "{:<38} {:>10} {:>12} {:>9}",
                "path",
                "seconds",
                "draws/s",
                "vs raw"
            );
            if vector {
                outln!(
                    "{:<38} {:>10.4} {:>12} {:>8.1}%",
                    "raw Philox+Lemire, scalar",
                    scalar_s,
                    rate(draws / scalar_s),
                    100.0 * raw_s / scalar_s
                );
            }
            outln!(
                "{:<38} {:>10.4} {:>12} {:>8.1}%",
                format!("raw Philox+Lemire, {generator} (CPU limit)"),
                raw_s,
                rate(draws / raw_s),
                100.0
            );
            outln!(
                "{:<38} {:>10.4} {:>12} {:>8.1}%",
                format!("CPU engine ({}, {generator})", cpu.description()),
                cpu_s,
                rate(draws / cpu_s),
                100.0 * ratio
            );
            outln!(
                "{:<38} {:>10.4} {:>12} {:>8.1}%   (engine at {:.0}% of it)",
                "CPU adds alone (draws given)",
                adds_s,
                rate(draws / adds_s),
                100.0 * raw_s / adds_s,
                100.0 * adds_s / cpu_s
            );
            if let Some(l) = gpu_line {
                outln!("{l}");
            }
            match identical {
                Some(true) => outln!("CPU and GPU sums: identical, bit for bit"),
                Some(false) => outln!("CPU and GPU sums: DIFFER"),
                None => {}
            }
        }
    }
    Ok(if identical == Some(false) { 1 } else { 0 })
}

/// `123.4 M/s`-style rate.
fn rate(per_s: f64) -> String {
    if per_s >= 1e9 {
        format!("{:.2} G/s", per_s / 1e9)
    } else {
        format!("{:.1} M/s", per_s / 1e6)
    }
}

/// `--format csv`, which the flag parser already refuses: `stats bench` has no CSV form.
fn no_csv() -> anyhow::Error {
    UsageError("stats bench writes a table or JSON, not CSV".into()).into()
}
