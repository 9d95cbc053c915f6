//! The GPU permutation backend: runs `crates/ragstats-gpu/shaders/permute.wgsl` (shuffle, then cross sums) in
//! batches of permutations. Results equal [`CpuPermute`](ragstats_core::correlate::permute::CpuPermute)'s exactly.

use crate::pipelines::{bind_group_layout, compute_pipeline, shader_module, storage_entry, Range};
use crate::{shaders, AdapterPolicy, GpuContext};
use ragstats_core::correlate::permute::{PermuteBackend, PermuteJob};
use ragstats_core::{Error, Result};

/// Pairs per workgroup (`MAX_PAIRS` in the kernel).
const MAX_PAIRS: usize = 16;
/// Bytes of the params header before the pair table.
const HEADER_BYTES: u64 = 32;

/// The wgpu permutation backend.
pub struct GpuPermute {
    ctx: GpuContext,
    shuffle: wgpu::ComputePipeline,
    cross: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl GpuPermute {
    /// Opens a device per `policy` and compiles both kernels.
    ///
    /// # Errors
    /// [`Error::Gpu`] when no adapter fits or compilation fails.
    pub fn new(policy: AdapterPolicy) -> Result<Self> {
        let ctx = GpuContext::acquire(policy)?;
        let (shuffle, cross, layout) = ctx.scoped(
            || "compiling the permutation kernels".to_string(),
            || {
                let module = shader_module(&ctx, "permute", shaders::PERMUTE);
                let (layout, pl) = bind_group_layout(
                    &ctx,
                    "permute",
                    &[
                        storage_entry(0, true),
                        storage_entry(1, false),
                        storage_entry(2, true),
                        storage_entry(3, false),
                    ],
                );
                let make = |ep: &str| compute_pipeline(&ctx, ep, &pl, &module, ep, &[]);
                (make("permute_shuffle"), make("permute_cross"), layout)
            },
        )?;
        Ok(GpuPermute {
            ctx,
            shuffle,
            cross,
            layout,
        })
    }
}

impl PermuteBackend for GpuPermute {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn description(&self) -> String {
        self.ctx.describe()
    }

    fn cross_sums(&self, job: &PermuteJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<i64>> {
        use wgpu::BufferUsages as U;
        let n = job.n();
        let np = job.pairs.len();
        let total = (job.permutations.end - job.permutations.start) as usize;
        if total == 0 || np == 0 || n == 0 {
            return Ok(vec![0; total * np]);
        }
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size);
        let col_bytes = n as u64 * 4;
        let n_cols = (job.xq.len() + job.yq.len()) as u64;
        let data_bytes = col_bytes * n_cols;
        if data_bytes > limit || n as u64 * n_cols > u32::MAX as u64 {
            return Err(self.ctx.error(format!(
                "permutation data of {n} rows × {} columns exceeds one storage binding \
                 ({limit} bytes); use the cpu backend",
                job.xq.len() + job.yq.len()
            )));
        }
        let data = self
            .ctx
            .buffer("permute columns", data_bytes, U::STORAGE | U::COPY_DST)?;
        for (c, col) in job.xq.iter().chain(job.yq).enumerate() {
            self.ctx
                .queue
                .write_buffer(&data, c as u64 * col_bytes, bytemuck::cast_slice(col));
        }
        let nx = job.xq.len() as u32;
        let mut table: Vec<u32> = Vec::with_capacity(2 * np);
        for &(x, y) in &job.pairs {
            table.extend([x * n as u32, (nx + y) * n as u32]);
        }
        let params_bytes = HEADER_BYTES + 4 * table.len() as u64;
        let params = self
            .ctx
            .buffer("permute params", params_bytes, U::STORAGE | U::COPY_DST)?;
        self.ctx
            .queue
            .write_buffer(&params, HEADER_BYTES, bytemuck::cast_slice(&table));
        // Permutations per batch: scratch within one binding, output within one binding,
        // at most 65535 workgroups, and about 2^26 shuffle steps per submit.
        let batch = (limit / col_bytes)
            .min(limit / (np as u64 * 8))
            .min(65_535)
            .min(((1u64 << 26) / n as u64).max(1))
            .max(1)
            .min(total as u64) as u32;
        let perm_bytes = batch as u64 * col_bytes;
        let out_bytes = batch as u64 * np as u64 * 8;
        let perm = self.ctx.buffer("permute scratch", perm_bytes, U::STORAGE)?;
        let cross = self
            .ctx
            .buffer("permute cross", out_bytes, U::STORAGE | U::COPY_SRC)?;
        let readback = self
            .ctx
            .buffer("permute readback", out_bytes, U::MAP_READ | U::COPY_DST)?;
        let bg = self
            .ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("permute"),
                layout: &self.layout,
                entries: &[
                    Range::whole(&params, params_bytes).binding(0),
                    Range::whole(&perm, perm_bytes).binding(1),
                    Range::whole(&data, data_bytes).binding(2),
                    Range::whole(&cross, out_bytes).binding(3),
                ],
            });
        let mut out = Vec::with_capacity(total * np);
        let mut start = job.permutations.start;
        while start < job.permutations.end {
            let reps = (job.permutations.end - start).min(batch);
            let header = [
                job.seed as u32,
                (job.seed >> 32) as u32,
                start,
                n as u32,
                reps,
                np as u32,
                0,
                0,
            ];
            let bytes = reps as u64 * np as u64 * 8;
            self.ctx.scoped(
                || format!("running permutations {start}..{}", start + reps),
                || {
                    self.ctx
                        .queue
                        .write_buffer(&params, 0, bytemuck::cast_slice(&header));
                    let mut enc = self.ctx.device.create_command_encoder(&Default::default());
                    {
                        let mut pass = enc.begin_compute_pass(&Default::default());
                        pass.set_bind_group(0, &bg, &[]);
                        pass.set_pipeline(&self.shuffle);
                        pass.dispatch_workgroups(reps.div_ceil(64), 1, 1);
                    }
                    {
                        // A second pass orders the shuffle's writes before the reads.
                        let mut pass = enc.begin_compute_pass(&Default::default());
                        pass.set_bind_group(0, &bg, &[]);
                        pass.set_pipeline(&self.cross);
                        pass.dispatch_workgroups(reps, np.div_ceil(MAX_PAIRS) as u32, 1);
                    }
                    enc.copy_buffer_to_buffer(&cross, 0, &readback, 0, bytes);
                    self.ctx.queue.submit([enc.finish()]);
                },
            )?;
            let raw = self.ctx.read_back(&readback, bytes)?;
            let words: Vec<u32> = bytemuck::pod_collect_to_vec(&raw);
            out.extend(
                words
                    .chunks_exact(2)
                    .map(|w| ((w[1] as u64) << 32 | w[0] as u64) as i64),
            );
            start += reps;
            progress((start - job.permutations.start) as u64);
        }
        if out.len() != total * np {
            return Err(Error::Gpu(format!(
                "permutation kernel returned {} sums, expected {}",
                out.len(),
                total * np
            )));
        }
        Ok(out)
    }
}
