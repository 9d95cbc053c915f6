//! Adapter selection and device creation, and the error plumbing that turns wgpu's
//! asynchronous errors (validation, out of memory, device loss) into [`Error::Gpu`]
//! values that name the adapter and what was being done. Nothing here falls back silently.

use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};

use wgpu::{Backends, DeviceType};

use ragstats_core::{Error, Result};

/// Which adapters [`GpuContext::acquire`] may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterPolicy {
    /// Any adapter, software ones (lavapipe, llvmpipe, SwiftShader) last.
    Any,
    /// Hardware adapters only (discrete first, then integrated, then virtual/other);
    /// software adapters only when `allow_software`.
    Hardware {
        /// Accept a software adapter when no hardware one exists.
        allow_software: bool,
    },
}

/// Device options beyond the adapter choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOptions {
    /// Request `wgpu::Features::SHADER_INT64` when the adapter offers it, so Philox's
    /// `mulhi32` is one 64-bit multiply; otherwise the 16-bit-halves version runs. Both
    /// give the same words.
    pub native_int64: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions { native_int64: true }
    }
}

impl GpuOptions {
    /// The defaults, except `native_int64 = false` when the environment variable
    /// `STATS_GPU_INT64` is `0` (to time or test the fallback on a device that has 64-bit
    /// integers).
    pub fn from_env() -> Self {
        GpuOptions {
            native_int64: std::env::var("STATS_GPU_INT64").as_deref() != Ok("0"),
        }
    }
}

/// An open wgpu device and queue, with what is needed to report errors well.
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter it was created from.
    pub info: wgpu::AdapterInfo,
    /// The limits the device was created with (the least the kernels need).
    pub limits: wgpu::Limits,
    /// Features the adapter offers (the device enables only those the kernels use).
    pub adapter_features: wgpu::Features,
    /// The device was opened with `SHADER_INT64`: kernels use the 64-bit `mulhi32`.
    pub native_int64: bool,
    /// Set by the device-lost callback.
    lost: Arc<Mutex<Option<String>>>,
    /// Set by the uncaptured-error handler (errors outside any error scope).
    uncaptured: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.describe())
            .finish()
    }
}

/// True for adapters that run on the CPU (software rasterisers).
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    let name = info.name.to_ascii_lowercase();
    info.device_type == DeviceType::Cpu
        || ["llvmpipe", "lavapipe", "swiftshader", "warp"]
            .iter()
            .any(|s| name.contains(s))
}

/// Preference rank (lower is better).
fn rank(info: &wgpu::AdapterInfo) -> u8 {
    if is_software(info) {
        return 4;
    }
    match info.device_type {
        DeviceType::DiscreteGpu => 0,
        DeviceType::IntegratedGpu => 1,
        DeviceType::VirtualGpu => 2,
        DeviceType::Other => 3,
        DeviceType::Cpu => 4,
    }
}

fn backend_names(b: Backends) -> String {
    let all = [
        (Backends::VULKAN, "vulkan"),
        (Backends::METAL, "metal"),
        (Backends::DX12, "dx12"),
        (Backends::GL, "gl"),
        (Backends::BROWSER_WEBGPU, "webgpu"),
    ];
    let names: Vec<&str> = all
        .iter()
        .filter(|(f, _)| b.contains(*f))
        .map(|(_, n)| *n)
        .collect();
    names.join(", ")
}

/// The limits the kernels need: WebGPU's downlevel defaults (128 MiB storage bindings,
/// 256 MiB buffers, 16 KiB workgroup memory, 65535 workgroups per dimension) are enough,
/// because data is bound one chunk at a time. Asking for no more lets every adapter qualify.
pub fn required_limits() -> wgpu::Limits {
    wgpu::Limits::downlevel_defaults()
}

/// A wgpu instance over the primary backends (Vulkan, Metal, DX12), or those named by the
/// `WGPU_BACKEND` environment variable (e.g. `gl` for OpenGL over EGL).
fn instance() -> (wgpu::Instance, Backends) {
    let backends = Backends::PRIMARY.with_env();
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    (wgpu::Instance::new(desc), backends)
}

/// Every adapter wgpu finds on the backends [`GpuContext::acquire`] tries, usable or not,
/// with its features: for diagnosing a machine (`stats bench --adapter-info`).
pub fn adapters() -> Vec<(wgpu::AdapterInfo, wgpu::Features)> {
    let (instance, backends) = instance();
    pollster::block_on(instance.enumerate_adapters(backends))
        .iter()
        .map(|a| (a.get_info(), a.features()))
        .collect()
}

/// Whether the Linux device directory `dev` has a node through which a hardware GPU is
/// reached: a DRM render node (`dri/renderD*`: Mesa's drivers, AMD, Intel), an NVIDIA
/// node (`nvidia0`, ...), WSL2's `dxg`, or AMD's compute node `kfd`. Without one, no
/// Vulkan, GL or compute driver can offer a hardware adapter on Linux.
pub fn has_gpu_device_node(dev: &Path) -> bool {
    let starts = |dir: &Path, prefix: &str| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        })
    };
    starts(&dev.join("dri"), "renderD")
        || starts(dev, "nvidia")
        || dev.join("dxg").exists()
        || dev.join("kfd").exists()
}

impl GpuContext {
    /// Finds an adapter allowed by `policy` (the `WGPU_BACKEND` environment variable can
    /// narrow the backends tried) and opens a device on it, with
    /// [`GpuOptions::from_env`].
    ///
    /// # Errors
    /// [`Error::Gpu`] when no suitable adapter exists or the device cannot be created.
    pub fn acquire(policy: AdapterPolicy) -> Result<GpuContext> {
        Self::acquire_with(policy, GpuOptions::from_env())
    }

    /// [`Self::acquire`] with explicit options.
    ///
    /// # Errors
    /// As [`Self::acquire`].
    pub fn acquire_with(policy: AdapterPolicy, options: GpuOptions) -> Result<GpuContext> {
        if matches!(
            policy,
            AdapterPolicy::Hardware {
                allow_software: false
            }
        ) && cfg!(target_os = "linux")
            && !has_gpu_device_node(Path::new("/dev"))
        {
            // Creating a Vulkan instance only to find a software adapter that this policy
            // then refuses costs tens of milliseconds (60 ms with lavapipe installed).
            return Err(Error::Gpu(
                "no GPU device node (/dev/dri/renderD*, /dev/nvidia*, /dev/dxg, /dev/kfd), so no hardware adapter".into(),
            ));
        }
        let (instance, backends) = instance();
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let need = required_limits();
        let mut usable: Vec<wgpu::Adapter> = adapters
            .into_iter()
            .filter(|a| {
                a.get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
                    && need.check_limits(&a.limits())
            })
            .collect();
        usable.sort_by_key(|a| rank(&a.get_info()));
        if usable.is_empty() {
            return Err(Error::Gpu(format!(
                "no GPU adapter found (wgpu backends tried: {}); install a Vulkan driver, or use the cpu backend",
                backend_names(backends)
            )));
        }
        let adapter = match policy {
            AdapterPolicy::Any => usable.swap_remove(0),
            AdapterPolicy::Hardware { allow_software } => {
                let first = usable.swap_remove(0);
                let info = first.get_info();
                if is_software(&info) && !allow_software {
                    return Err(Error::Gpu(format!(
                        "only a software GPU adapter was found ({}); set STATS_ALLOW_SOFTWARE_GPU=1 or choose the gpu backend (not auto) to run on it",
                        info.name
                    )));
                }
                first
            }
        };
        let adapter_features = adapter.features();
        let native_int64 =
            options.native_int64 && adapter_features.contains(wgpu::Features::SHADER_INT64);
        let required_features = if native_int64 {
            wgpu::Features::SHADER_INT64
        } else {
            wgpu::Features::empty()
        };
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("ragstats"),
            required_features,
            required_limits: need.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| Error::Gpu(format!("{}: cannot open a device: {e}", info.name)))?;
        let lost = Arc::new(Mutex::new(None));
        let lost2 = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, msg| {
            if let Ok(mut l) = lost2.lock() {
                *l = Some(format!("{reason:?}: {msg}"));
            }
        });
        let uncaptured = Arc::new(Mutex::new(None));
        let unc2 = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut u) = unc2.lock() {
                u.get_or_insert_with(|| e.to_string());
            }
        }));
        Ok(GpuContext {
            device,
            queue,
            info,
            limits: need,
            adapter_features,
            native_int64,
            lost,
            uncaptured,
        })
    }

    /// Adapter name, backend, device type and driver, e.g.
    /// `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu, llvmpipe Mesa 22.3.6)`.
    pub fn describe(&self) -> String {
        let i = &self.info;
        format!(
            "{} ({:?}, {:?}, {} {})",
            i.name, i.backend, i.device_type, i.driver, i.driver_info
        )
    }

    /// An [`Error::Gpu`] naming the adapter.
    pub fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::Gpu(format!("GPU {}: {what}", self.info.name))
    }

    /// Fails if the device was lost or reported an error outside an error scope.
    pub fn check_health(&self) -> Result<()> {
        if let Some(msg) = self.lost.lock().ok().and_then(|l| l.clone()) {
            return Err(self.error(format!("device lost ({msg})")));
        }
        if let Some(msg) = self.uncaptured.lock().ok().and_then(|u| u.clone()) {
            return Err(self.error(format!("device error: {msg}")));
        }
        Ok(())
    }

    /// Runs `f` inside out-of-memory, validation and internal error scopes and turns any
    /// captured error into [`Error::Gpu`] that says what was being done (`what`).
    pub fn scoped<T>(&self, what: impl FnOnce() -> String, f: impl FnOnce() -> T) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let int = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let out = f();
        let e_int = pollster::block_on(int.pop());
        let e_val = pollster::block_on(val.pop());
        let e_oom = pollster::block_on(oom.pop());
        if let Some(e) = e_oom {
            return Err(self.error(format!("out of memory while {}: {e}", what())));
        }
        if let Some(e) = e_val.or(e_int) {
            return Err(self.error(format!("{} failed: {e}", what())));
        }
        self.check_health()?;
        Ok(out)
    }

    /// A buffer of `size` bytes, or [`Error::Gpu`] naming the size on failure.
    pub fn buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        if size > self.limits.max_buffer_size {
            return Err(self.error(format!(
                "buffer '{label}' of {size} bytes exceeds the device limit of {} bytes",
                self.limits.max_buffer_size
            )));
        }
        self.scoped(
            || format!("allocating buffer '{label}' of {size} bytes"),
            || {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            },
        )
    }

    /// Waits until all submitted work has finished.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| self.error(format!("waiting for the device: {e}")))?;
        self.check_health()
    }

    /// Copies the first `size` bytes of a `MAP_READ` buffer to the host (waits for the
    /// device).
    pub fn read_back(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>> {
        let (tx, rx) = mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, 0..size, move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|_| self.error(format!("mapping {size} bytes for reading: no answer")))?
            .map_err(|e| self.error(format!("mapping {size} bytes for reading: {e}")))?;
        let bytes = {
            let view = buffer
                .get_mapped_range(0..size)
                .map_err(|e| self.error(format!("reading {size} mapped bytes: {e}")))?;
            view.to_vec()
        };
        buffer.unmap();
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_nodes_that_reach_a_hardware_gpu() {
        let dev = tempfile::tempdir().unwrap();
        let d = dev.path();
        assert!(!has_gpu_device_node(d), "empty /dev");
        // A card node without a render node, and unrelated nodes, do not count.
        std::fs::create_dir(d.join("dri")).unwrap();
        std::fs::write(d.join("dri/card0"), "").unwrap();
        std::fs::write(d.join("null"), "").unwrap();
        std::fs::write(d.join("nvme0"), "").unwrap();
        assert!(!has_gpu_device_node(d));
        std::fs::write(d.join("dri/renderD128"), "").unwrap();
        assert!(has_gpu_device_node(d));
        for node in ["nvidia0", "dxg", "kfd"] {
            let other = tempfile::tempdir().unwrap();
            std::fs::write(other.path().join(node), "").unwrap();
            assert!(has_gpu_device_node(other.path()), "{node}");
        }
    }
}
