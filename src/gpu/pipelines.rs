//! Compute pipelines with explicit bind group layouts (never `layout: None`, so the
//! binding contract is written down here and checked by wgpu at pipeline creation).

use std::num::NonZeroU64;

use super::device::GpuContext;
use super::shaders;
use crate::Result;

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
            let module = ctx
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(source.into()),
                });
            let bgl = ctx
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(label),
                    entries: layout_entries,
                });
            let layout = ctx
                .device
                .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some(label),
                    bind_group_layouts: &[Some(&bgl)],
                    immediate_size: 0,
                });
            let pipe = ctx
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(label),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
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
    fn binding(self, binding: u32) -> wgpu::BindGroupEntry<'a> {
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

/// The `resample_sums` kernel of `shaders/resample.wgsl`: binding 0 = the dispatch header
/// (uniform, 32 bytes), 1 = the strata table (read-only storage), 2 = one data segment
/// (read-only storage), 3 = output sums and 4 = parked lane accumulators (read-write
/// storage).
pub struct ResamplePipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl ResamplePipeline {
    /// Compiles the kernel.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let (pipeline, layout) = pipeline(
            ctx,
            "resample_sums",
            shaders::RESAMPLE,
            "resample_sums",
            &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(32),
                    },
                    count: None,
                },
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, false),
                storage_entry(4, false),
            ],
        )?;
        Ok(ResamplePipeline { pipeline, layout })
    }

    /// Records one dispatch of `groups_x * groups_y` workgroups.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        ctx: &GpuContext,
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
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, 1);
    }
}

/// Runs a one-dimensional diagnostic kernel of `shaders/philox_test.wgsl` with one input and
/// one output binding; returns the output's bytes.
fn run_diagnostic(
    ctx: &GpuContext,
    entry: &str,
    bindings: (u32, u32),
    input: &[u8],
    out_bytes: u64,
    invocations: u32,
) -> Result<Vec<u8>> {
    let (pipe, bgl) = pipeline(
        ctx,
        entry,
        shaders::PHILOX_TEST,
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
