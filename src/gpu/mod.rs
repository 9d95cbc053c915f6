//! wgpu plumbing: adapter and device acquisition, buffers, shader modules and compute
//! pipelines. No statistics live here: the resampling backend in
//! `resample::gpu_backend` decides what to dispatch.

pub mod device;
pub mod pipelines;
pub mod shaders;

pub use device::{AdapterPolicy, GpuContext, GpuOptions};
