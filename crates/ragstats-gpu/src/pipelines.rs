//! Compute pipelines with explicit bind group layouts (never `layout: None`, so the
//! binding contract is written down here and checked by wgpu at pipeline creation).

use std::num::NonZeroU64;
use std::sync::Mutex;

use super::device::GpuContext;
use super::shaders;
use ragstats_core::Result;

/// Largest column count of the resample kernel (`MAX_K` in `crates/ragstats-gpu/shaders/resample.wgsl`).
pub const MAX_K: usize = 16;

/// A compute-stage storage-buffer binding.
pub fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A bind group layout of `entries` and the pipeline layout of that one group.
pub(crate) fn bind_group_layout(
    ctx: &GpuContext,
    label: &str,
    entries: &[wgpu::BindGroupLayoutEntry],
) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let bgl = ctx
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries,
        });
    let layout = ctx
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&bgl)],
            immediate_size: 0,
        });
    (bgl, layout)
}

/// The compute pipeline of `entry` in `module`, with pipeline-overridable `constants`.
pub(crate) fn compute_pipeline(
    ctx: &GpuContext,
    label: &str,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    ctx.device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(layout),
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        })
}

/// The WGSL `source` compiled on the device.
pub(crate) fn shader_module(ctx: &GpuContext, label: &str, source: &str) -> wgpu::ShaderModule {
    ctx.device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
}

fn pipeline(
    ctx: &GpuContext,
    label: &str,
    source: &str,
    entry: &str,
    layout_entries: &[wgpu::BindGroupLayoutEntry],
) -> Result<(wgpu::ComputePipeline, wgpu::BindGroupLayout)> {
    ctx.scoped(
        || format!("compiling kernel '{entry}'"),
        || {
            let module = shader_module(ctx, label, source);
            let (bgl, layout) = bind_group_layout(ctx, label, layout_entries);
            let pipe = compute_pipeline(ctx, label, &layout, &module, entry, &[]);
            (pipe, bgl)
        },
    )
}

/// A byte range of a buffer to bind.
#[derive(Debug, Clone, Copy)]
pub struct Range<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset (a multiple of `min_storage_buffer_offset_alignment`).
    pub offset: u64,
    /// Bytes bound (non-zero).
    pub size: u64,
}

impl<'a> Range<'a> {
    /// The first `size` bytes of `buffer`.
    pub fn whole(buffer: &'a wgpu::Buffer, size: u64) -> Range<'a> {
        Range {
            buffer,
            offset: 0,
            size,
        }
    }

    /// The bind-group entry binding this range at `binding`.
    pub fn binding(self, binding: u32) -> wgpu::BindGroupEntry<'a> {
        wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: self.buffer,
                offset: self.offset,
                size: NonZeroU64::new(self.size),
            }),
        }
    }
}

/// The `resample_sums` kernel of `crates/ragstats-gpu/shaders/resample.wgsl`: binding 0 = the dispatch header
/// (uniform, 48 bytes), 1 = the strata table (read-only storage), 2 = one data segment
/// (read-only storage, a multiple of 16 bytes), 3 = output sums and 4 = parked lane
/// accumulators (read-write storage).
///
/// One compute pipeline per column count `k` (the WGSL override constant `K`), compiled
/// from one shader module the first time a job with that `k` runs and kept for the life of
/// the backend. The module is the 64-bit-multiply variant when the device has
/// `SHADER_INT64` (see [`GpuContext::native_int64`]).
pub struct ResamplePipeline {
    module: wgpu::ShaderModule,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    /// Index k - 1.
    by_k: Mutex<[Option<wgpu::ComputePipeline>; MAX_K]>,
}

/// Bytes of one `resample_sums` dispatch header.
pub const RESAMPLE_HEADER_BYTES: u64 = 48;

impl ResamplePipeline {
    /// Compiles the shader module (pipelines follow per `k`, see [`Self::for_k`]).
    ///
    /// # Errors
    /// [`Error::Gpu`](ragstats_core::Error::Gpu) when the module does not compile on this device.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let source = shaders::variant(shaders::RESAMPLE, ctx.native_int64);
        ctx.scoped(
            || "compiling kernel 'resample_sums'".to_string(),
            || {
                let module = shader_module(ctx, "resample_sums", &source);
                let (layout, pipeline_layout) = bind_group_layout(
                    ctx,
                    "resample_sums",
                    &[
                        wgpu::BindGroupLayoutEntry {
                            binding: 0,
                            visibility: wgpu::ShaderStages::COMPUTE,
                            ty: wgpu::BindingType::Buffer {
                                ty: wgpu::BufferBindingType::Uniform,
                                has_dynamic_offset: false,
                                min_binding_size: NonZeroU64::new(RESAMPLE_HEADER_BYTES),
                            },
                            count: None,
                        },
                        storage_entry(1, true),
                        storage_entry(2, true),
                        storage_entry(3, false),
                        storage_entry(4, false),
                    ],
                );
                ResamplePipeline {
                    module,
                    layout,
                    pipeline_layout,
                    by_k: Mutex::new(Default::default()),
                }
            },
        )
    }

    /// The pipeline for `k` columns (1..=16), compiled on first use.
    ///
    /// # Errors
    /// [`Error::Gpu`](ragstats_core::Error::Gpu) when the pipeline cannot be created.
    pub fn for_k(&self, ctx: &GpuContext, k: usize) -> Result<wgpu::ComputePipeline> {
        assert!((1..=MAX_K).contains(&k), "k = {k} outside 1..=16");
        let mut cache = self.by_k.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = &cache[k - 1] {
            return Ok(p.clone());
        }
        let p = ctx.scoped(
            || format!("compiling kernel 'resample_sums' for k = {k}"),
            || {
                compute_pipeline(
                    ctx,
                    "resample_sums",
                    &self.pipeline_layout,
                    &self.module,
                    "resample_sums",
                    &[("K", k as f64)],
                )
            },
        )?;
        cache[k - 1] = Some(p.clone());
        Ok(p)
    }

    /// Column counts whose pipeline has been compiled so far.
    pub fn compiled(&self) -> Vec<usize> {
        let cache = self.by_k.lock().unwrap_or_else(|e| e.into_inner());
        (1..=MAX_K).filter(|k| cache[k - 1].is_some()).collect()
    }

    /// Records one dispatch of `pipeline` (from [`Self::for_k`]) over `groups.0 * groups.1`
    /// workgroups.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        ctx: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        encoder: &mut wgpu::CommandEncoder,
        header: Range,
        table: Range,
        data: Range,
        sums: Range,
        scratch: Range,
        groups: (u32, u32),
    ) {
        let bg = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("resample_sums"),
            layout: &self.layout,
            entries: &[
                header.binding(0),
                table.binding(1),
                data.binding(2),
                sums.binding(3),
                scratch.binding(4),
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("resample_sums"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, 1);
    }
}

/// Runs a one-dimensional diagnostic kernel of `crates/ragstats-gpu/shaders/philox_test.wgsl` with one input and
/// one output binding; returns the output's bytes.
fn run_diagnostic(
    ctx: &GpuContext,
    entry: &str,
    bindings: (u32, u32),
    input: &[u8],
    out_bytes: u64,
    invocations: u32,
) -> Result<Vec<u8>> {
    let source = shaders::variant(shaders::PHILOX_TEST, ctx.native_int64);
    let (pipe, bgl) = pipeline(
        ctx,
        entry,
        &source,
        entry,
        &[
            storage_entry(bindings.0, true),
            storage_entry(bindings.1, false),
        ],
    )?;
    use wgpu::BufferUsages as U;
    let inb = ctx.buffer(entry, input.len() as u64, U::STORAGE | U::COPY_DST)?;
    let outb = ctx.buffer(entry, out_bytes, U::STORAGE | U::COPY_SRC)?;
    let readb = ctx.buffer(entry, out_bytes, U::MAP_READ | U::COPY_DST)?;
    ctx.scoped(
        || format!("running diagnostic kernel '{entry}'"),
        || {
            ctx.queue.write_buffer(&inb, 0, input);
            let bg = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(entry),
                layout: &bgl,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: bindings.0,
                        resource: inb.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: bindings.1,
                        resource: outb.as_entire_binding(),
                    },
                ],
            });
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipe);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(invocations.div_ceil(64), 1, 1);
            }
            enc.copy_buffer_to_buffer(&outb, 0, &readb, 0, out_bytes);
            ctx.queue.submit([enc.finish()]);
        },
    )?;
    ctx.read_back(&readb, out_bytes)
}

/// Philox4x32-10 computed on the device for each `(counter, key)`: a check of the WGSL
/// port against the Rust one and the Random123 vectors.
pub fn philox_on_device(
    ctx: &GpuContext,
    inputs: &[([u32; 4], [u32; 2])],
) -> Result<Vec<[u32; 4]>> {
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut words: Vec<u32> = Vec::with_capacity(inputs.len() * 8);
    for (c, k) in inputs {
        words.extend_from_slice(c);
        words.extend_from_slice(&[k[0], k[1], 0, 0]);
    }
    let n = inputs.len() as u32;
    let bytes = run_diagnostic(
        ctx,
        "philox_kat",
        (0, 1),
        bytemuck::cast_slice(&words),
        n as u64 * 16,
        n,
    )?;
    let out: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
    Ok(out
        .chunks_exact(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .collect())
}

/// Draw indices `0..n` of (`replicate`, `stratum`) in `[0, q)` computed on the device by
/// the same WGSL code the resampling kernel uses. `threshold` must be `2^32 mod q`.
pub fn draw_indices_on_device(
    ctx: &GpuContext,
    seed: u64,
    replicate: u32,
    stratum: u32,
    q: u32,
    threshold: u32,
    n: u32,
) -> Result<Vec<u32>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let params = [
        seed as u32,
        (seed >> 32) as u32,
        replicate,
        stratum,
        q,
        threshold,
        n,
        0,
    ];
    let bytes = run_diagnostic(
        ctx,
        "draw_indices",
        (2, 3),
        bytemuck::cast_slice(&params),
        n as u64 * 4,
        n,
    )?;
    Ok(bytemuck::pod_collect_to_vec(&bytes))
}
