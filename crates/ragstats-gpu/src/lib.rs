//! `ragstats-gpu`: the GPU twins of the core engines, through wgpu.
//!
//! - [`device`], [`pipelines`], [`shaders`]: adapter and device acquisition, buffers, the
//!   WGSL sources (`shaders/`) and compute pipelines. No statistics live there.
//! - [`resample`]: [`GpuBackend`], the GPU implementation of
//!   `ragstats_core::resample::ResampleBackend` (the CPU twin is `CpuBackend`).
//! - [`permute`]: [`GpuPermute`], the GPU implementation of
//!   `ragstats_core::correlate::permute::PermuteBackend`.
//! - [`walk`]: [`GpuWalk`], the GPU implementation of
//!   `ragstats_core::allocation::walk::WalkBackend` (`stats allocate`'s exact-size paired
//!   walk; the CPU twin is `CpuWalk`).
//! - [`select`]: the one backend choice (`cpu`, `gpu`, `auto`) every command uses.
//!
//! Every engine draws exactly the resamples of their CPU twins, so results match bit for bit.

// A library never prints: progress and notes reach the front end through return values
// and callbacks. (Tests may say why they skip.)
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod bench;
pub mod device;
pub mod permute;
pub mod pipelines;
pub mod resample;
pub mod select;
pub mod shaders;
pub mod walk;

pub use device::{AdapterPolicy, GpuContext, GpuOptions};
pub use permute::GpuPermute;
pub use resample::GpuBackend;
pub use select::{
    select_backend, select_backend_for, select_permute, select_walk, BackendChoice, Engines,
};
pub use walk::GpuWalk;
