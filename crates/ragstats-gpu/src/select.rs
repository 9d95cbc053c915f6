//! Which backend runs a job: the one `--backend auto|cpu|gpu` choice, its one rule for which
//! adapters `auto` accepts ([`adapter_policy`]), and the sizing rule that
//! keeps small `auto` resampling jobs on the CPU. The resampling engine
//! ([`select_backend`]), the permutation engine ([`select_permute`]) and `allocate`'s walk
//! ([`select_walk`]) are chosen by it.

use crate::permute::GpuPermute;
use crate::resample::GpuBackend;
use crate::walk::GpuWalk;
use crate::AdapterPolicy;
use ragstats_core::resample::cpu::CpuBackend;
use ragstats_core::resample::engine::ResampleBackend;
use ragstats_core::Result;

/// Which backend to run on: the library's resampling setting `backend`.
pub use ragstats_core::resample::Backend as BackendChoice;

/// The GPU adapters `choice` accepts: none for `Cpu` (run on the CPU), any for `Gpu`,
/// and for `Auto` a hardware one, or a software one (lavapipe) only when the environment
/// variable `STATS_ALLOW_SOFTWARE_GPU=1` is set.
pub fn adapter_policy(choice: BackendChoice) -> Option<AdapterPolicy> {
    match choice {
        BackendChoice::Cpu => None,
        BackendChoice::Gpu => Some(AdapterPolicy::Any),
        BackendChoice::Auto => Some(AdapterPolicy::Hardware {
            allow_software: std::env::var("STATS_ALLOW_SOFTWARE_GPU").as_deref() == Ok("1"),
        }),
    }
}

/// The engines of this crate for the library's analyses ([`ragstats_core::analyses::Engines`]):
/// [`select_backend_for`] and [`select_permute`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Engines;

impl ragstats_core::analyses::Engines for Engines {
    fn resampler(&self, backend: BackendChoice, draws: u64) -> Result<Box<dyn ResampleBackend>> {
        select_backend_for(backend, draws)
    }

    fn permuter(
        &self,
        backend: BackendChoice,
    ) -> Result<Option<Box<dyn ragstats_core::correlate::permute::PermuteBackend>>> {
        Ok(select_permute(backend)?.map(|g| Box::new(g) as _))
    }

    fn walker(
        &self,
        backend: BackendChoice,
        draws: u64,
    ) -> Result<Box<dyn ragstats_core::allocation::walk::WalkBackend>> {
        Ok(match select_walk(backend, draws)? {
            Some(g) => Box::new(g),
            None => Box::new(ragstats_core::allocation::walk::CpuWalk),
        })
    }
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
            "auto: {draws} draws is a small job, faster on the CPU than starting a GPU; the gpu backend forces the GPU"
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
/// GPU ([`crate::device::has_gpu_device_node`]), no Vulkan instance is created at all.
/// `Gpu` takes any adapter and never falls back.
///
/// # Errors
/// [`Error::Gpu`](ragstats_core::Error::Gpu) when `Gpu` is chosen and no adapter or device can be obtained.
pub fn select_backend(choice: BackendChoice) -> Result<Box<dyn ResampleBackend>> {
    let Some(policy) = adapter_policy(choice) else {
        return Ok(Box::new(CpuBackend::new()));
    };
    match GpuBackend::new(policy) {
        Ok(g) => Ok(Box::new(g)),
        Err(e) if choice == BackendChoice::Auto => {
            Ok(Box::new(CpuBackend::with_note(format!("no GPU used: {e}"))))
        }
        Err(e) => Err(e),
    }
}

/// The GPU permutation engine for `choice` (`stats correlate`), or None to permute on the
/// CPU: by the same rule as [`select_backend`], `Auto` falls back to the CPU when no
/// accepted adapter can be used.
///
/// # Errors
/// [`Error::Gpu`](ragstats_core::Error::Gpu) when `Gpu` is chosen and no adapter can be used.
pub fn select_permute(choice: BackendChoice) -> Result<Option<GpuPermute>> {
    let Some(policy) = adapter_policy(choice) else {
        return Ok(None);
    };
    match GpuPermute::new(policy) {
        Ok(g) => Ok(Some(g)),
        Err(_) if choice == BackendChoice::Auto => Ok(None),
        Err(e) => Err(e),
    }
}

/// The GPU walk of `stats allocate` for `choice` and a job of `draws` draws, or None to walk
/// on the CPU: by the rules of [`select_backend_for`], `Auto` keeps small jobs on the CPU and
/// falls back to it when no accepted adapter can be used.
///
/// # Errors
/// [`Error::Gpu`](ragstats_core::Error::Gpu) when `Gpu` is chosen and no adapter can be used.
pub fn select_walk(choice: BackendChoice, draws: u64) -> Result<Option<GpuWalk>> {
    let Some(policy) = adapter_policy(choice) else {
        return Ok(None);
    };
    if choice == BackendChoice::Auto && draws < AUTO_GPU_MIN_DRAWS {
        return Ok(None);
    }
    match GpuWalk::new(policy) {
        Ok(g) => Ok(Some(g)),
        Err(_) if choice == BackendChoice::Auto => Ok(None),
        Err(e) => Err(e),
    }
}
