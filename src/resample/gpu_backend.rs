//! The GPU backend: runs `shaders/resample.wgsl` through [`crate::gpu`].
//!
//! Layout on the device. The contract splits each stratum's rows into chunks of
//! [`CHUNK_ROWS`]; the kernel is dispatched once per chunk index `c`, in order, and adds
//! each chunk's total into the output. The rows of chunk `c` of every stratum that has one
//! are packed into *segments*: device buffers no larger than one storage binding (128 MiB
//! under the downlevel limits, which lavapipe has), each bound whole at offset 0, with
//! each stratum's f32 offset inside the segment passed in the params table. One chunk of
//! one stratum is at most `CHUNK_ROWS * MAX_K * 4` = 64 MiB, so it always fits, and inputs
//! far larger than `max_buffer_size` work. Segments are uploaded once per prepared job.
//!
//! Windows. Each lane's walk over its blocks is cut into windows of [`WINDOW`] lane-steps,
//! one dispatch each, with the lane accumulators parked exactly in a scratch buffer between
//! windows. Mesa's llvmpipe (lavapipe) silently stops an invocation after 65535 loop
//! iterations, which truncated sums for strata above about 850,000 rows before windows
//! existed; windows also keep each dispatch short on desktop GPUs with watchdogs. Each
//! dispatch reads its header (replicate base, chunk, window) from its own 256-byte slot of
//! a uniform buffer, so one submit can carry every window.
//!
//! Replicates run in batches (one submit each): at most 65535 replicates (the dispatch's
//! x dimension), an output and a scratch no larger than one binding, and about 2^30 draws.
//! The batch size and the window size change nothing in the results.

use std::ops::Range;

use super::engine::{ResampleBackend, ResampleJob, CHUNK_ROWS, LANES};
use crate::gpu::pipelines::{self, ResamplePipeline};
use crate::gpu::{AdapterPolicy, GpuContext};
use crate::rng::stream::lemire_threshold;
use crate::Result;

/// Draws per batch (one submit) the batcher aims for.
const DRAWS_PER_BATCH: u64 = 1 << 30;
/// Lane-steps (blocks per lane) per dispatch window; at most 4 * 64 * WINDOW draws of a
/// stratum are walked by one dispatch.
pub const WINDOW: u32 = 4096;
/// Bytes of one dispatch header (8 u32), and the stride of header slots (the largest
/// uniform-buffer offset alignment WebGPU allows).
const HEADER_BYTES: u64 = 32;
const HEADER_STRIDE: u64 = 256;

/// One stratum's entry in a segment's params table (mirrors `StratumInfo` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StratumInfo {
    q: u32,
    stratum: u32,
    base: u32,
    threshold: u32,
}

/// Chunk `chunk` of a group of strata, resident on the device.
struct Segment {
    chunk: u32,
    data: wgpu::Buffer,
    data_bytes: u64,
    table: wgpu::Buffer,
    table_bytes: u64,
    /// One header slot per window.
    headers: wgpu::Buffer,
    windows: u32,
    n_strata: u32,
}

/// A job's data uploaded to the device, ready for any replicate range.
pub struct PreparedJob {
    k: u32,
    seed: u64,
    n_strata: u32,
    draws_per_replicate: u64,
    segments: Vec<Segment>,
    /// Bytes uploaded (data and params tables).
    pub uploaded_bytes: u64,
}

impl PreparedJob {
    /// Number of data segments (one binding and one dispatch per batch each).
    pub fn segments(&self) -> usize {
        self.segments.len()
    }
}

/// The wgpu resampling backend.
pub struct GpuBackend {
    ctx: GpuContext,
    pipeline: ResamplePipeline,
    max_segment_bytes: Option<u64>,
}

impl GpuBackend {
    /// Opens a device per `policy` and compiles the kernel.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) when no adapter fits or the device or kernel cannot be created.
    pub fn new(policy: AdapterPolicy) -> Result<Self> {
        let ctx = GpuContext::acquire(policy)?;
        let pipeline = ResamplePipeline::new(&ctx)?;
        Ok(GpuBackend {
            ctx,
            pipeline,
            max_segment_bytes: None,
        })
    }

    /// Caps the bytes of one data segment below the device's storage-binding limit (at
    /// least one stratum's chunk always goes in a segment). Results do not change; this
    /// exists to exercise multi-segment dispatch on small inputs.
    pub fn with_max_segment_bytes(mut self, bytes: u64) -> Self {
        self.max_segment_bytes = Some(bytes);
        self
    }

    /// The device this backend runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Validates `job` and uploads its rows (its replicate range is ignored here).
    ///
    /// # Errors
    /// Shape errors from [`ResampleJob::validate`]; [`Error::Gpu`](crate::Error::Gpu) on allocation failure.
    pub fn prepare(&self, job: &ResampleJob) -> Result<PreparedJob> {
        job.validate()?;
        let k = job.k;
        let rows = job.rows();
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size)
            .min(self.max_segment_bytes.unwrap_or(u64::MAX));
        let max_y = self.ctx.limits.max_compute_workgroups_per_dimension as usize;
        let n_chunks = rows
            .iter()
            .map(|&q| (q as usize).div_ceil(CHUNK_ROWS))
            .max()
            .unwrap_or(0);
        let mut segments = Vec::new();
        let mut uploaded = 0u64;
        for c in 0..n_chunks {
            // (stratum, first row, rows) of chunk c, grouped into bindings.
            let mut group: Vec<(usize, usize, usize)> = Vec::new();
            let mut group_bytes = 0u64;
            for (s, &q) in rows.iter().enumerate() {
                let lo = c * CHUNK_ROWS;
                if lo >= q as usize {
                    continue;
                }
                let n = (q as usize - lo).min(CHUNK_ROWS);
                let bytes = (n * k * 4) as u64;
                if !group.is_empty() && (group_bytes + bytes > limit || group.len() >= max_y) {
                    segments.push(self.upload_segment(job, c, &group, group_bytes)?);
                    uploaded += group_bytes;
                    group.clear();
                    group_bytes = 0;
                }
                group.push((s, lo, n));
                group_bytes += bytes;
            }
            if !group.is_empty() {
                segments.push(self.upload_segment(job, c, &group, group_bytes)?);
                uploaded += group_bytes;
            }
        }
        uploaded += segments.iter().map(|s| s.table_bytes).sum::<u64>();
        Ok(PreparedJob {
            k: k as u32,
            seed: job.seed,
            n_strata: job.strata.len() as u32,
            draws_per_replicate: job.draws_per_replicate(),
            segments,
            uploaded_bytes: uploaded,
        })
    }

    fn upload_segment(
        &self,
        job: &ResampleJob,
        chunk: usize,
        group: &[(usize, usize, usize)],
        data_bytes: u64,
    ) -> Result<Segment> {
        use wgpu::BufferUsages as U;
        let k = job.k;
        let data = self
            .ctx
            .buffer("resample data chunk", data_bytes, U::STORAGE | U::COPY_DST)?;
        let mut table = Vec::with_capacity(group.len());
        let mut offset = 0u64;
        for &(s, lo, n) in group {
            let rows = &job.strata[s][lo * k..(lo + n) * k];
            self.ctx
                .queue
                .write_buffer(&data, offset, bytemuck::cast_slice(rows));
            let q = (job.strata[s].len() / k) as u32;
            table.push(StratumInfo {
                q,
                stratum: s as u32,
                base: (offset / 4) as u32,
                threshold: lemire_threshold(q),
            });
            offset += (n * k * 4) as u64;
        }
        let table_bytes = 16 * table.len() as u64;
        let tbuf = self.ctx.buffer(
            "resample strata table",
            table_bytes,
            U::STORAGE | U::COPY_DST,
        )?;
        self.ctx
            .queue
            .write_buffer(&tbuf, 0, bytemuck::cast_slice(&table));
        let steps = table
            .iter()
            .map(|t| (t.q as u64).div_ceil(4).div_ceil(LANES as u64))
            .max()
            .unwrap_or(1);
        let windows = steps.div_ceil(WINDOW as u64) as u32;
        let headers = self.ctx.buffer(
            "resample headers",
            windows as u64 * HEADER_STRIDE,
            U::UNIFORM | U::COPY_DST,
        )?;
        Ok(Segment {
            chunk: chunk as u32,
            data,
            data_bytes,
            table: tbuf,
            table_bytes,
            headers,
            windows,
            n_strata: group.len() as u32,
        })
    }

    /// Runs replicates `replicates` of a prepared job; output layout as
    /// [`ResampleBackend::resample_sums`].
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) on device loss, out of memory or a failed mapping.
    pub fn run(
        &self,
        prep: &PreparedJob,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f32>> {
        use wgpu::BufferUsages as U;
        let n_reps = replicates.end.saturating_sub(replicates.start) as u64;
        let pair_bytes = prep.n_strata as u64 * prep.k as u64 * 4;
        let mut out = Vec::with_capacity((n_reps * pair_bytes / 4) as usize);
        if n_reps == 0 {
            return Ok(out);
        }
        let limits = &self.ctx.limits;
        let windowed = prep.segments.iter().any(|s| s.windows > 1);
        // Parked accumulators: LANES per (replicate, stratum) pair, when any window follows.
        let scratch_per_rep = if windowed {
            pair_bytes * LANES as u64
        } else {
            0
        };
        let by_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            / pair_bytes.max(scratch_per_rep);
        let by_work = (DRAWS_PER_BATCH / prep.draws_per_replicate.max(1)).max(1);
        let batch = n_reps
            .min(limits.max_compute_workgroups_per_dimension as u64)
            .min(by_binding)
            .min(by_work)
            .max(1);
        let out_bytes = batch * pair_bytes;
        let sums = self.ctx.buffer(
            "resample sums",
            out_bytes,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        let readback =
            self.ctx
                .buffer("resample readback", out_bytes, U::MAP_READ | U::COPY_DST)?;
        let scratch = self.ctx.buffer(
            "resample lane scratch",
            (batch * scratch_per_rep).max(4),
            U::STORAGE,
        )?;
        let mut start = replicates.start;
        while start < replicates.end {
            let reps = (replicates.end - start).min(batch as u32);
            let bytes = reps as u64 * pair_bytes;
            self.ctx.scoped(
                || {
                    format!(
                        "running replicates {start}..{} ({bytes} output bytes)",
                        start + reps
                    )
                },
                || self.submit_batch(prep, start, reps, [&sums, &scratch, &readback], bytes),
            )?;
            let raw = self.ctx.read_back(&readback, bytes)?;
            out.extend(bytemuck::pod_collect_to_vec::<u8, f32>(&raw));
            start += reps;
            progress((start - replicates.start) as u64);
        }
        Ok(out)
    }

    fn submit_batch(
        &self,
        prep: &PreparedJob,
        start: u32,
        reps: u32,
        [sums, scratch, readback]: [&wgpu::Buffer; 3],
        bytes: u64,
    ) {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        // Sums start at +0.0, as on the CPU.
        enc.clear_buffer(sums, 0, Some(bytes));
        // Dispatch order: segments in chunk order, windows in order within a segment.
        for seg in &prep.segments {
            let mut slots = vec![0u8; (seg.windows as u64 * HEADER_STRIDE) as usize];
            for w in 0..seg.windows {
                let h = [
                    prep.seed as u32,
                    (prep.seed >> 32) as u32,
                    start,
                    seg.chunk,
                    prep.k,
                    prep.n_strata,
                    w * WINDOW,
                    (w + 1).saturating_mul(WINDOW),
                ];
                let at = (w as u64 * HEADER_STRIDE) as usize;
                slots[at..at + HEADER_BYTES as usize].copy_from_slice(bytemuck::cast_slice(&h));
            }
            self.ctx.queue.write_buffer(&seg.headers, 0, &slots);
            for w in 0..seg.windows {
                self.pipeline.record(
                    &self.ctx,
                    &mut enc,
                    pipelines::Range {
                        buffer: &seg.headers,
                        offset: w as u64 * HEADER_STRIDE,
                        size: HEADER_BYTES,
                    },
                    pipelines::Range {
                        buffer: &seg.table,
                        offset: 0,
                        size: seg.table_bytes,
                    },
                    pipelines::Range {
                        buffer: &seg.data,
                        offset: 0,
                        size: seg.data_bytes,
                    },
                    pipelines::Range {
                        buffer: sums,
                        offset: 0,
                        size: bytes,
                    },
                    pipelines::Range {
                        buffer: scratch,
                        offset: 0,
                        size: scratch.size(),
                    },
                    (reps, seg.n_strata),
                );
            }
        }
        enc.copy_buffer_to_buffer(sums, 0, readback, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
    }
}

impl ResampleBackend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn description(&self) -> String {
        self.ctx.describe()
    }

    fn resample_sums(
        &self,
        job: &ResampleJob,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f32>> {
        let prep = self.prepare(job)?;
        self.run(&prep, job.replicates.clone(), progress)
    }
}
