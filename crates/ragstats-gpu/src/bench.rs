//! `stats bench`'s GPU half: the GPU engine timed on the CPU half's job
//! (`ragstats_core::resample::bench`), and whether its sums equal the CPU engine's bit for bit.

use std::time::Duration;

use ragstats_core::resample::bench::fastest;
use ragstats_core::resample::{ResampleBackend, ResampleJob};
use ragstats_core::{Error, Result};
use serde::Serialize;

use crate::{AdapterPolicy, GpuBackend};

/// The GPU engine's part of the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GpuBench {
    /// No adapter or device could be used (`available` is false).
    NotRun { available: bool, reason: String },
    /// The engine ran (`available` is true).
    Ran {
        available: bool,
        adapter: String,
        /// Seconds to upload the tables (once; not part of `seconds`).
        upload_seconds: f64,
        uploaded_bytes: u64,
        /// The fastest run of all replicates.
        seconds: f64,
        draws_per_second: f64,
        /// The sums equal `cpu_sums`, bit for bit.
        #[serde(skip)]
        identical: bool,
    },
}

/// Times the GPU engine on `job` (`draws` draws in all) for at least `min`, and compares its
/// sums with the CPU engine's `cpu_sums`. No usable adapter is a result, not an error.
///
/// # Errors
/// [`Error::Gpu`] when the upload or a run fails on a device that opened.
pub fn bench_gpu(
    job: &ResampleJob,
    min: Duration,
    draws: f64,
    cpu_sums: &[f32],
) -> Result<GpuBench> {
    let gpu = match GpuBackend::new(AdapterPolicy::Any) {
        Ok(g) => g,
        Err(e) => {
            return Ok(GpuBench::NotRun {
                available: false,
                reason: e.to_string(),
            })
        }
    };
    let t = std::time::Instant::now();
    let prep = gpu
        .prepare(job)
        .map_err(|e| Error::Gpu(format!("uploading to the GPU: {e}")))?;
    gpu.context().wait()?;
    let upload_seconds = t.elapsed().as_secs_f64();
    let (seconds, sums) = fastest(min, || gpu.run(&prep, job.replicates.clone(), &|_| {}))?;
    let identical = sums.len() == cpu_sums.len()
        && sums
            .iter()
            .zip(cpu_sums)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    Ok(GpuBench::Ran {
        available: true,
        adapter: gpu.description(),
        upload_seconds,
        uploaded_bytes: prep.uploaded_bytes,
        seconds,
        draws_per_second: draws / seconds,
        identical,
    })
}

/// One adapter as `stats bench --adapter-info` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterSummary {
    pub name: String,
    /// PCI vendor id, `0x10de`-style.
    pub vendor: String,
    pub device: String,
    pub device_type: String,
    pub backend: String,
    pub driver: String,
    pub driver_info: String,
    /// A software rasteriser (lavapipe, WARP, SwiftShader).
    pub software: bool,
    /// The adapter offers 64-bit integers in shaders.
    pub shader_int64: bool,
    /// The engine's Philox uses them (only for the adapter the engine opened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_int64: Option<bool>,
}

impl AdapterSummary {
    fn new(info: &wgpu::AdapterInfo, features: wgpu::Features) -> AdapterSummary {
        AdapterSummary {
            name: info.name.clone(),
            vendor: format!("{:#06x}", info.vendor),
            device: format!("{:#06x}", info.device),
            device_type: format!("{:?}", info.device_type),
            backend: format!("{:?}", info.backend),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            software: crate::device::is_software(info),
            shader_int64: features.contains(wgpu::Features::SHADER_INT64),
            native_int64: None,
        }
    }
}

/// The GPU the engine would run on, and every adapter wgpu finds (`--adapter-info`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterReport {
    /// `WGPU_BACKEND`, when set.
    pub wgpu_backend_env: Option<String>,
    /// The adapter the engine opened (None when none could be).
    pub engine_adapter: Option<AdapterSummary>,
    /// The engine's description of it.
    #[serde(skip)]
    pub engine_description: Option<String>,
    /// Why no engine adapter could be opened.
    pub error: Option<String>,
    pub adapters: Vec<AdapterSummary>,
}

/// Opens the GPU engine as the benchmark would and describes it, with every adapter found.
pub fn adapter_report() -> AdapterReport {
    let adapters = crate::device::adapters()
        .iter()
        .map(|(i, f)| AdapterSummary::new(i, *f))
        .collect();
    let (engine_adapter, engine_description, error) = match GpuBackend::new(AdapterPolicy::Any) {
        Ok(g) => {
            let ctx = g.context();
            let mut a = AdapterSummary::new(&ctx.info, ctx.adapter_features);
            a.native_int64 = Some(ctx.native_int64);
            (Some(a), Some(g.description()), None)
        }
        Err(e) => (None, None, Some(e.to_string())),
    };
    AdapterReport {
        wgpu_backend_env: std::env::var("WGPU_BACKEND").ok(),
        engine_adapter,
        engine_description,
        error,
        adapters,
    }
}
