//! `stats bench`: draws per second of the raw Philox+Lemire loop with the scalar generator
//! and with the one the CPU engine uses (the CPU limit), of the CPU engine and of the GPU
//! engine on one workload and seed, which CPU generator ran, and whether the generators'
//! indices and the two engines' sums agree bit for bit.

use std::time::Duration;

use ragstats_core::resample::bench::{bench_cpu, BenchData, BenchSettings};
use ragstats_core::resample::workload::Workload;
use ragstats_core::rng::Generator;
use ragstats_gpu::bench::{adapter_report, bench_gpu, GpuBench};

mod text;

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

/// `--adapter-info`: the GPU engine's adapter and every adapter found; exit 0 if the
/// engine's device opened, 1 if not.
fn adapter_info(format: Format) -> anyhow::Result<u8> {
    let r = adapter_report();
    match format {
        Format::Csv => return Err(no_csv()),
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::to_value(&r)?)?
        ),
        Format::Table => {
            match (&r.engine_adapter, &r.engine_description) {
                (Some(a), Some(d)) => outln!(
                    "engine adapter: {d} (vendor {}, 64-bit Philox multiply: {})",
                    a.vendor,
                    if a.native_int64 == Some(true) {
                        "yes"
                    } else {
                        "no"
                    }
                ),
                _ => outln!(
                    "engine adapter: none ({})",
                    r.error.as_deref().unwrap_or("")
                ),
            }
            for a in &r.adapters {
                outln!(
                    "found: {} ({}, {}, vendor {}, {} {})",
                    a.name,
                    a.backend,
                    a.device_type,
                    a.vendor,
                    a.driver,
                    a.driver_info
                );
            }
        }
    }
    Ok(if r.engine_adapter.is_some() { 0 } else { 1 })
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.adapter_info {
        return adapter_info(args.format);
    }
    let settings = BenchSettings {
        workload: Workload::from(args.workload),
        questions: args.questions,
        replicates: args.replicates,
        seed: args.seed,
        k: args.k,
        min_time: args.min_time,
    };
    let data = BenchData::new(&settings)?;
    let cpu = bench_cpu(&settings, &data, Generator::from_env()?)?;
    let gpu = if args.no_gpu {
        None
    } else {
        let min = Duration::from_secs_f64(args.min_time.max(0.0));
        Some(bench_gpu(&data.job(&settings), min, cpu.draws, &cpu.sums)?)
    };
    let identical = match &gpu {
        Some(GpuBench::Ran { identical, .. }) => Some(*identical),
        _ => None,
    };
    match args.format {
        Format::Csv => return Err(no_csv()),
        Format::Json => {
            let mut doc = serde_json::to_value(&cpu)?;
            doc["gpu"] = serde_json::to_value(&gpu)?;
            doc["identical"] = identical.into();
            outln!("{}", serde_json::to_string_pretty(&doc)?);
        }
        Format::Table => out!("{}", text::text(&cpu, gpu.as_ref(), identical)),
    }
    Ok(if identical == Some(false) { 1 } else { 0 })
}

/// `--format csv`, which the flag parser already refuses: `stats bench` has no CSV form.
fn no_csv() -> anyhow::Error {
    UsageError("stats bench writes a table or JSON, not CSV".into()).into()
}
