//! The GPU backend: runs `shaders/resample.wgsl` through the [`crate::device`] and
//! [`crate::pipelines`] plumbing.
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
//! Kernels. One compute pipeline per column count `k` (cached; see
//! [`ResamplePipeline`]), built from the 64-bit-multiply variant of Philox when the device
//! has `SHADER_INT64`. Both variants and every `k` give the same bits as the CPU.
//!
//! Windows. Each lane's walk over its blocks is cut into windows of [`WINDOW`] lane-steps,
//! one dispatch each, with the lane accumulators parked exactly in a scratch buffer between
//! windows. Mesa's llvmpipe (lavapipe) silently stops an invocation after 65535 loop
//! iterations, which truncated sums for strata above about 850,000 rows before windows
//! existed. Each dispatch reads its header (replicate base, chunk, window, pair count)
//! from its own 256-byte slot of a uniform buffer.
//!
//! Submits. A job is one submit and one read-back: every (segment, window) dispatch covers
//! all (replicate, stratum) pairs of the batch at once (the kernel flattens a 2-D grid of
//! up to 65535 x 65535 workgroups, so the per-dimension limit does not split replicates),
//! and the only partial wave of workgroups is the last one of each dispatch. Replicates are
//! split into several batches (one submit and one read-back each) only when the output or
//! the parked accumulators would exceed one storage binding, or when a test caps the batch
//! ([`GpuBackend::with_max_batch_replicates`]). The batch size and the window size change
//! nothing in the results. [`GpuBackend::submits`] counts submits, for tests. A dispatch
//! therefore lasts as long as its batch's work (the large workload: predicted tens of ms on
//! an H200); a GPU that also drives a display may have a driver watchdog that stops long
//! dispatches, which the old 2^30-draw batches stayed under.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::pipelines::{self, ResamplePipeline, RESAMPLE_HEADER_BYTES};
use crate::{AdapterPolicy, GpuContext, GpuOptions};
use ragstats_core::resample::engine::{ResampleBackend, ResampleJob, CHUNK_ROWS, LANES, MAX_K};
use ragstats_core::rng::stream::lemire_threshold;
use ragstats_core::Result;

/// Lane-steps (blocks per lane) per dispatch window; at most 4 * 64 * WINDOW draws of a
/// stratum are walked by one dispatch.
pub const WINDOW: u32 = 4096;
/// Stride of dispatch header slots (the largest uniform-buffer offset alignment WebGPU
/// allows).
const HEADER_STRIDE: u64 = 256;

// The kernel's column limit is the engine's.
const _: () = assert!(pipelines::MAX_K == MAX_K);

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
    /// Bytes bound: the rows, padded to a whole `vec4<f32>`.
    data_bytes: u64,
    table: wgpu::Buffer,
    table_bytes: u64,
    /// Dispatch windows this segment's largest stratum needs.
    windows: u32,
    n_strata: u32,
}

/// A job's data uploaded to the device, ready for any replicate range.
pub struct PreparedJob {
    k: u32,
    seed: u64,
    n_strata: u32,
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

/// How [`GpuBackend::run`] splits a replicate range: `submits` batches of at most
/// `batch_replicates` replicates, each one submit of `dispatches_per_submit` dispatches and
/// one read-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Replicates per batch (the last batch may have fewer).
    pub batch_replicates: u32,
    /// Batches, i.e. submits and read-backs.
    pub submits: u32,
    /// Dispatches recorded in each submit: one per (segment, window).
    pub dispatches_per_submit: u32,
}

/// The wgpu resampling backend.
pub struct GpuBackend {
    ctx: GpuContext,
    pipeline: ResamplePipeline,
    max_segment_bytes: Option<u64>,
    max_batch_replicates: Option<u32>,
    submits: AtomicU64,
}

impl GpuBackend {
    /// Opens a device per `policy` (options from the environment, see
    /// [`GpuOptions::from_env`]) and compiles the kernel.
    ///
    /// # Errors
    /// [`Error::Gpu`](ragstats_core::Error::Gpu) when no adapter fits or the device or kernel
    /// cannot be created.
    pub fn new(policy: AdapterPolicy) -> Result<Self> {
        Self::with_options(policy, GpuOptions::from_env())
    }

    /// [`Self::new`] with explicit device options (e.g. the 16-bit-halves multiply on a
    /// device that has 64-bit integers).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_options(policy: AdapterPolicy, options: GpuOptions) -> Result<Self> {
        let ctx = GpuContext::acquire_with(policy, options)?;
        let pipeline = ResamplePipeline::new(&ctx)?;
        Ok(GpuBackend {
            ctx,
            pipeline,
            max_segment_bytes: None,
            max_batch_replicates: None,
            submits: AtomicU64::new(0),
        })
    }

    /// Caps the replicates of one batch (one submit and read-back each). Results do not
    /// change; this exists to exercise multi-batch runs on small inputs.
    pub fn with_max_batch_replicates(mut self, replicates: u32) -> Self {
        self.max_batch_replicates = Some(replicates.max(1));
        self
    }

    /// Queue submits made so far by [`Self::run`] (one per batch).
    pub fn submits(&self) -> u64 {
        self.submits.load(Ordering::Relaxed)
    }

    /// Column counts whose kernel pipeline has been compiled so far.
    pub fn compiled_pipelines(&self) -> Vec<usize> {
        self.pipeline.compiled()
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

    /// Validates `job`, compiles the kernel pipeline for its `k` (once per backend) and
    /// uploads its rows (its replicate range is ignored here).
    ///
    /// # Errors
    /// Shape errors from [`ResampleJob::validate`]; [`Error::Gpu`](ragstats_core::Error::Gpu) on
    /// allocation failure.
    pub fn prepare(&self, job: &ResampleJob) -> Result<PreparedJob> {
        job.validate()?;
        let k = job.k;
        // Compile this k's pipeline now, so that `run` times only the work.
        self.pipeline.for_k(&self.ctx, k)?;
        let rows = job.rows();
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size)
            .min(self.max_segment_bytes.unwrap_or(u64::MAX));
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
                if !group.is_empty() && group_bytes + bytes > limit {
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
            segments,
            uploaded_bytes: uploaded,
        })
    }

    fn upload_segment(
        &self,
        job: &ResampleJob,
        chunk: usize,
        group: &[(usize, usize, usize)],
        rows_bytes: u64,
    ) -> Result<Segment> {
        use wgpu::BufferUsages as U;
        let k = job.k;
        // The kernel reads the segment as vec4<f32>; the zero tail is never read.
        let data_bytes = rows_bytes.next_multiple_of(16);
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
            // For k = 4, 8, ... every offset is a multiple of 16 bytes, so rows are whole
            // vec4s.
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
        Ok(Segment {
            chunk: chunk as u32,
            data,
            data_bytes,
            table: tbuf,
            table_bytes,
            windows: steps.div_ceil(WINDOW as u64) as u32,
            n_strata: group.len() as u32,
        })
    }

    /// How [`Self::run`] would run `replicates` replicates of `prep` on this device.
    pub fn plan(&self, prep: &PreparedJob, replicates: u32) -> Plan {
        let limits = &self.ctx.limits;
        let pair_bytes = prep.n_strata as u64 * prep.k as u64 * 4;
        let windowed = prep.segments.iter().any(|s| s.windows > 1);
        // Parked accumulators: LANES per (replicate, stratum) pair, when any window follows.
        let scratch_per_rep = if windowed {
            pair_bytes * LANES as u64
        } else {
            0
        };
        let binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let by_binding = binding / pair_bytes.max(scratch_per_rep);
        let max_dim = limits.max_compute_workgroups_per_dimension as u64;
        let seg_strata = prep.segments.iter().map(|s| s.n_strata).max().unwrap_or(1);
        let by_grid = max_dim * max_dim / seg_strata.max(1) as u64;
        let batch = (replicates as u64)
            .min(by_binding)
            .min(by_grid)
            .min(self.max_batch_replicates.unwrap_or(u32::MAX) as u64)
            .max(1) as u32;
        Plan {
            batch_replicates: batch,
            submits: replicates.div_ceil(batch),
            dispatches_per_submit: prep.segments.iter().map(|s| s.windows).sum(),
        }
    }

    /// Runs replicates `replicates` of a prepared job; output layout as
    /// [`ResampleBackend::resample_sums`].
    ///
    /// # Errors
    /// [`Error::Gpu`](ragstats_core::Error::Gpu) on device loss, out of memory or a failed
    /// mapping.
    pub fn run(
        &self,
        prep: &PreparedJob,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f32>> {
        use wgpu::BufferUsages as U;
        let n_reps = replicates.end.saturating_sub(replicates.start);
        let pair_bytes = prep.n_strata as u64 * prep.k as u64 * 4;
        let mut out = Vec::with_capacity((n_reps as u64 * pair_bytes / 4) as usize);
        if n_reps == 0 {
            return Ok(out);
        }
        let plan = self.plan(prep, n_reps);
        let pipeline = self.pipeline.for_k(&self.ctx, prep.k as usize)?;
        let batch = plan.batch_replicates as u64;
        let windowed = prep.segments.iter().any(|s| s.windows > 1);
        let out_bytes = batch * pair_bytes;
        let sums = self.ctx.buffer(
            "resample sums",
            out_bytes,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        let readback =
            self.ctx
                .buffer("resample readback", out_bytes, U::MAP_READ | U::COPY_DST)?;
        let scratch_bytes = if windowed {
            out_bytes * LANES as u64
        } else {
            4
        };
        let scratch = self
            .ctx
            .buffer("resample lane scratch", scratch_bytes, U::STORAGE)?;
        let headers = self.ctx.buffer(
            "resample headers",
            plan.dispatches_per_submit as u64 * HEADER_STRIDE,
            U::UNIFORM | U::COPY_DST,
        )?;
        let mut start = replicates.start;
        while start < replicates.end {
            let reps = (replicates.end - start).min(plan.batch_replicates);
            let bytes = reps as u64 * pair_bytes;
            self.ctx.scoped(
                || {
                    format!(
                        "running replicates {start}..{} ({bytes} output bytes)",
                        start + reps
                    )
                },
                || {
                    self.submit_batch(
                        prep,
                        &pipeline,
                        start,
                        reps,
                        [&headers, &sums, &scratch, &readback],
                        bytes,
                    )
                },
            )?;
            let raw = self.ctx.read_back(&readback, bytes)?;
            out.extend(bytemuck::pod_collect_to_vec::<u8, f32>(&raw));
            start += reps;
            progress((start - replicates.start) as u64);
        }
        Ok(out)
    }

    /// Records and submits one batch: replicates `start..start + reps`, every segment in
    /// chunk order and every window in order, then the copy to `readback`.
    fn submit_batch(
        &self,
        prep: &PreparedJob,
        pipeline: &wgpu::ComputePipeline,
        start: u32,
        reps: u32,
        [headers, sums, scratch, readback]: [&wgpu::Buffer; 4],
        bytes: u64,
    ) {
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;
        let mut slots = vec![0u8; headers.size() as usize];
        let mut dispatches = Vec::new();
        for seg in &prep.segments {
            // Pairs of this dispatch, on a grid of at most max_dim x max_dim workgroups
            // (the plan keeps n_pairs <= max_dim^2).
            let n_pairs = reps * seg.n_strata;
            let gx = n_pairs.min(max_dim);
            let gy = n_pairs.div_ceil(gx);
            for w in 0..seg.windows {
                let h: [u32; 12] = [
                    prep.seed as u32,
                    (prep.seed >> 32) as u32,
                    start,
                    seg.chunk,
                    prep.n_strata,
                    w * WINDOW,
                    (w + 1).saturating_mul(WINDOW),
                    seg.n_strata,
                    n_pairs,
                    0,
                    0,
                    0,
                ];
                let at = dispatches.len() * HEADER_STRIDE as usize;
                slots[at..at + RESAMPLE_HEADER_BYTES as usize]
                    .copy_from_slice(bytemuck::cast_slice(&h));
                dispatches.push((seg, at as u64, (gx, gy)));
            }
        }
        self.ctx.queue.write_buffer(headers, 0, &slots);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        // Sums start at +0.0, as on the CPU.
        enc.clear_buffer(sums, 0, Some(bytes));
        for (seg, offset, groups) in dispatches {
            self.pipeline.record(
                &self.ctx,
                pipeline,
                &mut enc,
                pipelines::Range {
                    buffer: headers,
                    offset,
                    size: RESAMPLE_HEADER_BYTES,
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
                groups,
            );
        }
        enc.copy_buffer_to_buffer(sums, 0, readback, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        self.submits.fetch_add(1, Ordering::Relaxed);
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
