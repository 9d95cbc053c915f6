//! Which resample backend runs a job: the `--backend auto|cpu|gpu` choice and the sizing
//! rule that keeps small `auto` jobs on the CPU. Kept apart from [`super::engine`] so the
//! engine contract does not import the backends that implement it.

use super::cpu::CpuBackend;
use super::engine::ResampleBackend;
use super::gpu_backend::GpuBackend;
use crate::gpu::AdapterPolicy;
use crate::Result;

/// Which backend to run on (`--backend auto|cpu|gpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// A hardware GPU adapter if wgpu finds one (a software one only with
    /// `STATS_ALLOW_SOFTWARE_GPU=1`), else the CPU.
    #[default]
    Auto,
    /// The rayon CPU backend.
    Cpu,
    /// Any GPU adapter, including software ones; an error if there is none.
    Gpu,
}

/// Below this many draws (B × Σ q_s), `auto` runs on the CPU without probing for a GPU:
/// starting a GPU device and uploading costs tens of milliseconds, more than the CPU needs
/// for the whole job (e.g. the paper's 2 × 223 questions × 10,000 replicates = 4.5 M draws
/// take about 12 ms on two cores). Results are bit-identical either way.
pub const AUTO_GPU_MIN_DRAWS: u64 = 1 << 26;

/// [`select_backend`] for a job of `draws` draws: `auto` keeps small jobs on the CPU.
///
/// # Errors
/// As [`select_backend`].
pub fn select_backend_for(choice: BackendChoice, draws: u64) -> Result<Box<dyn ResampleBackend>> {
    if matches!(choice, BackendChoice::Auto) && draws < AUTO_GPU_MIN_DRAWS {
        return Ok(Box::new(CpuBackend::with_note(format!(
            "auto: {draws} draws is a small job, faster on the CPU than starting a GPU; --backend gpu forces the GPU"
        ))));
    }
    select_backend(choice)
}

/// Builds the backend for `choice`.
///
/// `Auto` prefers a discrete GPU, then an integrated one, then (only with the environment
/// variable `STATS_ALLOW_SOFTWARE_GPU=1`) a software adapter such as lavapipe, and falls
/// back to the CPU otherwise; the CPU backend's description then says why. On Linux,
/// without `STATS_ALLOW_SOFTWARE_GPU=1` and without a device node that reaches a hardware
/// GPU ([`crate::gpu::device::has_gpu_device_node`]), no Vulkan instance is created at all.
/// `Gpu` takes any adapter and never falls back.
///
/// # Errors
/// [`Error::Gpu`](crate::Error::Gpu) when `Gpu` is chosen and no adapter or device can be obtained.
pub fn select_backend(choice: BackendChoice) -> Result<Box<dyn ResampleBackend>> {
    match choice {
        BackendChoice::Cpu => Ok(Box::new(CpuBackend::new())),
        BackendChoice::Gpu => Ok(Box::new(GpuBackend::new(AdapterPolicy::Any)?)),
        BackendChoice::Auto => {
            let allow_software = std::env::var("STATS_ALLOW_SOFTWARE_GPU").as_deref() == Ok("1");
            match GpuBackend::new(AdapterPolicy::Hardware { allow_software }) {
                Ok(g) => Ok(Box::new(g)),
                Err(e) => Ok(Box::new(CpuBackend::with_note(format!("no GPU used: {e}")))),
            }
        }
    }
}
