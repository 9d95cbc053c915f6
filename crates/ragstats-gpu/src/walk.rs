//! The GPU twin of `stats allocate`'s exact-size paired walk: runs
//! `crates/ragstats-gpu/shaders/walk.wgsl` over batches of replicates. Results equal
//! [`CpuWalk`](ragstats_core::allocation::walk::CpuWalk)'s bit for bit (the contract of
//! `ragstats_core::allocation::walk`).

use crate::pipelines::{bind_group_layout, compute_pipeline, shader_module, storage_entry, Range};
use crate::{shaders, AdapterPolicy, GpuContext, GpuOptions};
use ragstats_core::allocation::walk::{WalkBackend, WalkJob};
use ragstats_core::Result;

/// Bytes of the kernel's uniform header (12 words: 9 used, padded to 16 bytes).
const HEADER_BYTES: u64 = 48;
/// Loop iterations one invocation may spend in a window: Mesa's llvmpipe stops an invocation
/// after 65535 in total, so windows stay at half that.
const ITERATIONS_PER_WINDOW: u64 = 32_768;

/// The wgpu walk backend.
pub struct GpuWalk {
    ctx: GpuContext,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl GpuWalk {
    /// Opens a device per `policy` (options from the environment) and compiles the kernel.
    ///
    /// # Errors
    /// [`ragstats_core::Error::Gpu`] when no adapter fits or compilation fails.
    pub fn new(policy: AdapterPolicy) -> Result<Self> {
        Self::with_options(policy, GpuOptions::from_env())
    }

    /// [`Self::new`] with explicit options (the `mulhi32` variant).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_options(policy: AdapterPolicy, options: GpuOptions) -> Result<Self> {
        let ctx = GpuContext::acquire_with(policy, options)?;
        let (pipeline, layout) = ctx.scoped(
            || "compiling the allocation walk kernel".to_string(),
            || {
                let source = shaders::variant(shaders::WALK, ctx.native_int64);
                let module = shader_module(&ctx, "walk", &source);
                let (layout, pl) = bind_group_layout(
                    &ctx,
                    "walk",
                    &[
                        wgpu::BindGroupLayoutEntry {
                            binding: 0,
                            visibility: wgpu::ShaderStages::COMPUTE,
                            ty: wgpu::BindingType::Buffer {
                                ty: wgpu::BufferBindingType::Uniform,
                                has_dynamic_offset: false,
                                min_binding_size: None,
                            },
                            count: None,
                        },
                        storage_entry(1, true),
                        storage_entry(2, true),
                        storage_entry(3, false),
                        storage_entry(4, false),
                    ],
                );
                let pipeline = compute_pipeline(&ctx, "walk_sums", &pl, &module, "walk_sums", &[]);
                (pipeline, layout)
            },
        )?;
        Ok(GpuWalk {
            ctx,
            pipeline,
            layout,
        })
    }

    /// The device context (adapter, limits, `mulhi32` variant).
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }
}

impl WalkBackend for GpuWalk {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn description(&self) -> String {
        self.ctx.describe()
    }

    fn walk(&self, job: &WalkJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<f32>> {
        use wgpu::BufferUsages as U;
        job.validate()?;
        let total = (job.replicates.end - job.replicates.start) as u64;
        let (s_n, a_n) = (job.strata.len() as u64, job.allocations as u64);
        let mut out = Vec::with_capacity(job.output_len());
        if total == 0 || s_n == 0 {
            return Ok(out);
        }
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size);
        // The read-only words: per stratum (q, 2^32 mod q, members' offset, rows' offset),
        // the needs, the member masks; and the rows.
        let mut info: Vec<u32> = Vec::new();
        let mut members: Vec<u32> = Vec::new();
        let mut rows: Vec<f32> = Vec::new();
        let head = 4 * s_n + s_n * a_n;
        for s in &job.strata {
            let q = s.members.len() as u32;
            info.extend([
                q,
                ragstats_core::rng::stream::lemire_threshold(q),
                (head + members.len() as u64) as u32,
                rows.len() as u32,
            ]);
            members.extend(&s.members);
            rows.extend(&s.rows);
        }
        for s in &job.strata {
            info.extend(&s.need);
        }
        info.extend(members);
        let info_bytes = 4 * info.len() as u64;
        let rows_bytes = 4 * rows.len().max(1) as u64;
        if info_bytes > limit || rows_bytes > limit || rows.len() > u32::MAX as usize {
            return Err(self.ctx.error(format!(
                "the allocation walk's {} questions × {a_n} allocations exceed one storage \
                 binding ({limit} bytes); use the cpu backend",
                job.strata.iter().map(|s| s.members.len()).sum::<usize>()
            )));
        }
        let info_buf = self
            .ctx
            .buffer("walk info", info_bytes, U::STORAGE | U::COPY_DST)?;
        self.ctx
            .queue
            .write_buffer(&info_buf, 0, bytemuck::cast_slice(&info));
        let rows_buf = self
            .ctx
            .buffer("walk rows", rows_bytes, U::STORAGE | U::COPY_DST)?;
        if !rows.is_empty() {
            self.ctx
                .queue
                .write_buffer(&rows_buf, 0, bytemuck::cast_slice(&rows));
        }
        // Replicates per batch: sums and counts within one binding, at most 65535 × 65535
        // workgroups of 64, and about 2^22 pairs per submit.
        let per_rep_sums = s_n * a_n * job.columns as u64 * 4;
        let batch = (limit / per_rep_sums)
            .min((limit - 4) / (s_n * a_n * 4))
            .min((1 << 22) / s_n)
            .max(1)
            .min(total);
        let sums_bytes = batch * per_rep_sums;
        let state_bytes = 4 + batch * s_n * a_n * 4;
        let sums = self.ctx.buffer(
            "walk sums",
            sums_bytes,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        let state = self.ctx.buffer(
            "walk state",
            state_bytes,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        let header = self
            .ctx
            .buffer("walk header", HEADER_BYTES, U::UNIFORM | U::COPY_DST)?;
        let readback = self.ctx.buffer(
            "walk readback",
            sums_bytes.max(4),
            U::MAP_READ | U::COPY_DST,
        )?;
        let bg = self
            .ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("walk"),
                layout: &self.layout,
                entries: &[
                    Range::whole(&header, HEADER_BYTES).binding(0),
                    Range::whole(&info_buf, info_bytes).binding(1),
                    Range::whole(&rows_buf, rows_bytes).binding(2),
                    Range::whole(&sums, sums_bytes).binding(3),
                    Range::whole(&state, state_bytes).binding(4),
                ],
            });
        // Blocks per window: each block costs at most 9 Philox rounds, 4 words and, per word,
        // one pass per allocation it fills plus one (Lemire retries are rare: 2^32 mod q
        // words in 2^32).
        let window = (ITERATIONS_PER_WINDOW / (16 + 4 * (a_n + 1))).max(1) as u32;
        let mut start = job.replicates.start;
        while start < job.replicates.end {
            let reps = (job.replicates.end - start).min(batch as u32);
            let pairs = reps * s_n as u32;
            let groups = pairs.div_ceil(64);
            let (gx, gy) = (groups.min(65_535), groups.div_ceil(65_535));
            let mut blk_lo = 0u32;
            let mut first = true;
            loop {
                let blk_hi = blk_lo.saturating_add(window);
                let words = [
                    job.seed as u32,
                    (job.seed >> 32) as u32,
                    start,
                    s_n as u32,
                    a_n as u32,
                    pairs,
                    blk_lo,
                    blk_hi,
                    job.columns as u32,
                    0,
                    0,
                    0,
                ];
                self.ctx.scoped(
                    || {
                        format!(
                            "walking replicates {start}..{} (blocks {blk_lo}..{blk_hi})",
                            start + reps
                        )
                    },
                    || {
                        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
                        if first {
                            enc.clear_buffer(&sums, 0, None);
                            enc.clear_buffer(&state, 0, None);
                        } else {
                            enc.clear_buffer(&state, 0, Some(4));
                        }
                        self.ctx
                            .queue
                            .write_buffer(&header, 0, bytemuck::cast_slice(&words));
                        {
                            let mut pass = enc.begin_compute_pass(&Default::default());
                            pass.set_bind_group(0, &bg, &[]);
                            pass.set_pipeline(&self.pipeline);
                            pass.dispatch_workgroups(gx, gy, 1);
                        }
                        enc.copy_buffer_to_buffer(&state, 0, &readback, 0, 4);
                        self.ctx.queue.submit([enc.finish()]);
                    },
                )?;
                first = false;
                let open = self.ctx.read_back(&readback, 4)?;
                if u32::from_le_bytes([open[0], open[1], open[2], open[3]]) == 0 {
                    break;
                }
                if blk_hi == u32::MAX {
                    return Err(self.ctx.error(
                        "the allocation walk ran past 2^32 blocks without filling every sub-panel",
                    ));
                }
                blk_lo = blk_hi;
            }
            let bytes = u64::from(reps) * per_rep_sums;
            self.ctx.scoped(
                || {
                    format!(
                        "reading the walk's sums of replicates {start}..{}",
                        start + reps
                    )
                },
                || {
                    let mut enc = self.ctx.device.create_command_encoder(&Default::default());
                    enc.copy_buffer_to_buffer(&sums, 0, &readback, 0, bytes);
                    self.ctx.queue.submit([enc.finish()]);
                },
            )?;
            let raw = self.ctx.read_back(&readback, bytes)?;
            out.extend(bytemuck::pod_collect_to_vec::<u8, f32>(&raw));
            start += reps;
            progress(u64::from(start - job.replicates.start));
        }
        Ok(out)
    }
}
