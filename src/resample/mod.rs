//! Resampling: Philox streams ([`philox`], [`stream`]), the resample-and-sum engine
//! ([`engine`]) with its CPU ([`cpu`]) and GPU ([`gpu_backend`]) backends, and the
//! benchmark workloads ([`workload`]).
//!
//! The engine returns, for every replicate and stratum, the column sums of `q_s` rows drawn
//! with replacement; every bootstrap statistic is host-side arithmetic on those sums.

pub mod bootstrap;
pub mod columns;
pub mod cpu;
pub mod engine;
pub mod gpu_backend;
pub mod philox;
pub mod replicates;
pub mod report;
pub mod stream;
pub mod summary;
pub mod workload;

pub use cpu::CpuBackend;
pub use engine::{
    select_backend, select_backend_for, BackendChoice, ResampleBackend, ResampleJob, CHUNK_ROWS,
    LANES, MAX_K,
};
pub use gpu_backend::GpuBackend;
pub use philox::philox4x32_10;
pub use stream::draw_index;
