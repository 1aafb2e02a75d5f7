//! [`Gpu`]: an adapter, the device opened on it, its queue, and the pipeline cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use naga::valid::Capabilities;

use super::bind_cache::BindGroupCache;
use wgsl_dsl_core::shader::TargetLimits;
use wgsl_dsl_core::types::{CoopShape, ScalarTy};
use wgsl_dsl_exec::BindingLayout;
use wgsl_dsl_exec::Shortfall;
use wgsl_dsl_exec::{DeviceError, DispatchError, DispatchErrorKind, Limits, error_chain};

/// Features requested when the adapter has them: those kernels can use (subgroups, `f16`)
/// and GPU timestamps for benchmarks.
const WANTED_FEATURES: wgpu::Features = wgpu::Features::SUBGROUP
    .union(wgpu::Features::SUBGROUP_BARRIER)
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::TIMESTAMP_QUERY)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// Ids that tell apart the [`Gpu`]s of one process (so a buffer of one is not bound on another).
pub(crate) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What a compilation produces, shared by every [`Kernel`](super::Kernel) made from the same WGSL.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// Unique among pipelines of the process: the first word of a bind group cache key.
    pub id: u64,
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group_layout: wgpu::BindGroupLayout,
    pub layouts: Vec<BindingLayout>,
}

/// How [`Gpu::with_options`] chooses an adapter.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Backends to consider (`WGPU_BACKEND`, e.g. `vulkan` or `vulkan,gl`).
    pub backends: wgpu::Backends,
    /// Take the first adapter whose name contains this, case-insensitively
    /// (`WGPU_ADAPTER_NAME`). No match is [`DeviceError::NoAdapter`].
    pub adapter_name: Option<String>,
    /// Among hardware adapters, prefer discrete (`high`) or integrated (`low`) GPUs
    /// (`WGPU_POWER_PREF`).
    pub power_preference: wgpu::PowerPreference,
    /// Whether a software adapter (`DeviceType::Cpu`, e.g. Mesa lavapipe) may be taken when
    /// there is no hardware adapter.
    pub allow_software: bool,
    /// How long [`GpuBuffer::read`](super::GpuBuffer::read) and [`Gpu::wait`] wait for the GPU
    /// before returning [`DeviceError::Timeout`].
    pub readback_timeout: Duration,
    /// Open the device with wgpu's experimental `EXPERIMENTAL_COOPERATIVE_MATRIX` feature when
    /// the adapter has it (tensor cores; `VK_KHR_cooperative_matrix`), so that kernels using
    /// [`CoopMat`](wgsl_dsl_core::types::CoopMat) compile. Off by default: wgpu marks the feature
    /// experimental (it may have bugs), and on Vulkan it turns on the Vulkan memory model for
    /// every shader of the device.
    pub cooperative_matrix: bool,
    /// The limits to open the device with, each within the adapter's (else
    /// [`DeviceError::RequestDevice`]); `None`: all the adapter's. Lower limits make the
    /// device check kernels as a smaller GPU would ([`Gpu::compile`] refuses a kernel that
    /// needs more), e.g. `wgpu::Limits::default()` (WebGPU's defaults, which every WebGPU
    /// device has).
    pub limits: Option<wgpu::Limits>,
    /// The features to open the device with, each one the adapter's (else
    /// [`DeviceError::RequestDevice`]); `None`: those of `SUBGROUP`, `SUBGROUP_BARRIER`,
    /// `SHADER_F16` and the timestamp queries the adapter has. The cooperative-matrix feature
    /// is added by [`GpuOptions::cooperative_matrix`] either way.
    pub features: Option<wgpu::Features>,
}

impl Default for GpuOptions {
    /// All backends, no name filter, high performance, software allowed, 120 s timeout, the
    /// adapter's limits and wanted features; environment variables ignored.
    fn default() -> Self {
        GpuOptions {
            backends: wgpu::Backends::all(),
            adapter_name: None,
            power_preference: wgpu::PowerPreference::HighPerformance,
            allow_software: true,
            readback_timeout: Duration::from_secs(120),
            cooperative_matrix: false,
            limits: None,
            features: None,
        }
    }
}

impl GpuOptions {
    /// The defaults, overridden by `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and `WGPU_POWER_PREF`
    /// where set (read with wgpu's own parsers).
    pub fn from_env() -> Self {
        let d = GpuOptions::default();
        GpuOptions {
            backends: wgpu::Backends::from_env().unwrap_or(d.backends),
            adapter_name: std::env::var("WGPU_ADAPTER_NAME")
                .ok()
                .filter(|s| !s.is_empty()),
            power_preference: wgpu::PowerPreference::from_env().unwrap_or(d.power_preference),
            ..d
        }
    }
}

/// A device to run kernels on: the adapter chosen, the device and queue opened on it, and a
/// cache of compiled pipelines (one per kernel per `Gpu`).
///
/// `Gpu` is `Send + Sync`. wgpu's error scopes are per thread, so errors are attributed to
/// the call that caused them when each thread records its own work.
pub struct Gpu {
    pub(crate) id: u64,
    adapter: wgpu::Adapter,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    lost: Arc<Mutex<Option<String>>>,
    pub(crate) pipelines: Mutex<HashMap<String, Arc<Compiled>>>,
    pub(crate) compiles: AtomicUsize,
    pub(crate) bind_groups: Mutex<BindGroupCache>,
    pub(crate) readback_timeout: Duration,
}

/// How often the bind group cache of a [`Gpu`] was used: see [`Gpu::bind_group_stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BindGroupStats {
    /// Bind groups cached now.
    pub entries: usize,
    /// Dispatches that found their bind group in the cache (no checks, no creation).
    pub hits: u64,
    /// Dispatches that checked their arguments and made a bind group.
    pub misses: u64,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.info.name)
            .field("backend", &self.info.backend)
            .field("device_type", &self.info.device_type)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Open a device on the adapter [`GpuOptions::from_env`] selects: the one
    /// `WGPU_ADAPTER_NAME` names, else a hardware adapter (discrete or integrated first as
    /// `WGPU_POWER_PREF` says), else a software one (Mesa lavapipe/llvmpipe), logged with
    /// `log::warn!`. The adapter chosen is logged with `log::info!`. Native backends (Vulkan,
    /// Metal, DX12) are searched first; GL only when none of them offers an adapter.
    ///
    /// The device gets all the adapter's limits (largest storage bindings, workgroup storage
    /// and invocations it offers) and, where available, `SUBGROUP`, `SUBGROUP_BARRIER`,
    /// `SHADER_F16` and the timestamp-query features ([`GpuOptions::limits`] and
    /// [`GpuOptions::features`] choose others). [`Gpu::compile`] checks every kernel against
    /// them.
    ///
    /// # Errors
    /// [`DeviceError::NoAdapter`] (its message says what to install) or
    /// [`DeviceError::RequestDevice`].
    pub fn new() -> Result<Gpu, DeviceError> {
        Gpu::with_options(&GpuOptions::from_env())
    }

    /// As [`Gpu::new`], with explicit options (no environment variables are read).
    ///
    /// # Errors
    /// As [`Gpu::new`].
    pub fn with_options(options: &GpuOptions) -> Result<Gpu, DeviceError> {
        // Native backends first; GL (whose EGL probing is noisy and whose compute support is
        // weakest) only when no native backend offers an adapter.
        let tiers = [
            options.backends & wgpu::Backends::PRIMARY,
            options.backends & !wgpu::Backends::PRIMARY,
        ];
        let mut reasons = Vec::new();
        let mut chosen = None;
        for backends in tiers.into_iter().filter(|b| !b.is_empty()) {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
            desc.backends = backends;
            let instance = wgpu::Instance::new(desc);
            let adapters = pollster::block_on(instance.enumerate_adapters(backends));
            match choose_adapter(adapters, options) {
                Ok(a) => {
                    chosen = Some(a);
                    break;
                }
                Err(reason) => reasons.push(format!("{backends:?}: {reason}")),
            }
        }
        let adapter = chosen.ok_or_else(|| DeviceError::NoAdapter {
            reason: reasons.join("; "),
        })?;
        let info = adapter.get_info();
        if info.device_type == wgpu::DeviceType::Cpu {
            log::warn!(
                "no hardware GPU adapter found; using the software adapter `{}` ({:?}): kernels run on the CPU",
                info.name,
                info.backend
            );
        }
        log::info!(
            "wgpu adapter: `{}` ({:?}, {:?}, driver {} {})",
            info.name,
            info.backend,
            info.device_type,
            info.driver,
            info.driver_info
        );
        if info.name.contains("llvmpipe") {
            log::warn!(
                "Mesa lavapipe (llvmpipe) ends any one loop after 65535 iterations per invocation, \
                 counted over all its entries (seen with Mesa 22.3): longer loops exit early"
            );
        }
        let mut required_features = options
            .features
            .unwrap_or(adapter.features() & WANTED_FEATURES);
        let mut experimental_features = wgpu::ExperimentalFeatures::disabled();
        let coop = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
        if options.cooperative_matrix && adapter.features().contains(coop) {
            required_features |= coop;
            // SAFETY: wgpu asks callers of experimental features to accept that its
            // implementation of them may have bugs. The only experimental feature requested is
            // the cooperative matrix, and only when the caller opted in
            // (`GpuOptions::cooperative_matrix`); kernels using it are validated by naga
            // against the `COOPERATIVE_MATRIX` capability and their multiply-add shapes are
            // checked against the adapter's by `Gpu::compile`.
            #[allow(unsafe_code)]
            {
                experimental_features = unsafe { wgpu::ExperimentalFeatures::enabled() };
            }
        }
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("wgsl-dsl"),
            required_features,
            required_limits: options.limits.clone().unwrap_or_else(|| adapter.limits()),
            experimental_features,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| {
                DeviceError::RequestDevice {
                    adapter: info.name.clone(),
                    message: error_chain(&e),
                }
            })?;
        let lost = Arc::new(Mutex::new(None));
        let lost_cb = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            log::error!("GPU device lost ({reason:?}): {message}");
            if let Ok(mut l) = lost_cb.lock() {
                *l = Some(format!("{reason:?}: {message}"));
            }
        });
        // Errors outside our error scopes would otherwise panic (wgpu's default handler).
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            log::error!("uncaptured wgpu error: {}", error_chain(&e));
        }));
        Ok(Gpu::assemble(
            adapter,
            device,
            queue,
            lost,
            options.readback_timeout,
        ))
    }

    /// A `Gpu` on a device the caller opened (ARCHITECTURE.md decision *Bring your own device*): kernels compiled on it
    /// run among the caller's own work, on the caller's buffers
    /// ([`GpuBuffer::from_wgpu`](super::GpuBuffer::from_wgpu)), recorded into the caller's
    /// command encoder or compute pass ([`TypedKernel::record_in_encoder`](super::TypedKernel::record_in_encoder),
    /// [`TypedKernel::record_in_pass`](super::TypedKernel::record_in_pass)). `adapter` must be the adapter `device` was opened
    /// on (its downlevel flags and cooperative-matrix configurations are read from it);
    /// `adapter`, `device` and `queue` are cloned (wgpu handles), so the caller keeps using
    /// its own.
    ///
    /// Each of `kernels` is checked against the device now, as [`Gpu::compile`] would check
    /// it ([`check_limits`](super::check_limits)): the features its capabilities need
    /// (`SUBGROUP`, `SUBGROUP_BARRIER`, `SHADER_F16`, `EXPERIMENTAL_COOPERATIVE_MATRIX`: the
    /// device must have been opened with them, in `DeviceDescriptor::required_features`), then
    /// every limit ([`DeviceLimit`](super::DeviceLimit): workgroup size and memory, bindings
    /// per stage, binding sizes; the device's limits are those it was opened with,
    /// `DeviceDescriptor::required_limits`, not the adapter's), then cooperative-matrix
    /// shapes. Pass `&[]` to check nothing beyond compute support; [`Gpu::compile`] checks
    /// each kernel again either way.
    ///
    /// Unlike [`Gpu::new`], this installs neither a device-lost callback nor an
    /// uncaptured-error handler: the caller's stay. A lost device is then reported by the
    /// errors of the calls that fail on it ([`DispatchErrorKind::Wgpu`], [`DeviceError::Map`])
    /// rather than as [`DeviceError::Lost`]. Errors of this crate's own calls are caught in
    /// wgpu error scopes as with [`Gpu::new`] (pushed and popped around each call, so they
    /// nest inside the caller's scopes).
    ///
    /// # Errors
    /// [`DeviceError::NoComputeShaders`] if the adapter cannot run compute shaders (a GL
    /// adapter without them); [`DeviceError::MissingFeatures`] naming the first kernel whose
    /// capabilities need features the device was not opened with, and those features;
    /// [`DeviceError::InsufficientLimit`] naming the first kernel and limit the device's
    /// limits do not cover, the kernel's need and the device's value;
    /// [`DeviceError::UnsupportedCooperativeShape`] for a cooperative-matrix configuration
    /// the adapter does not offer.
    pub fn from_wgpu(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        kernels: &[&wgsl_dsl_core::Shader],
    ) -> Result<Gpu, DeviceError> {
        let info = adapter.get_info();
        if !adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        {
            return Err(DeviceError::NoComputeShaders {
                adapter: info.name.clone(),
            });
        }
        let gpu = Gpu::assemble(
            adapter.clone(),
            device.clone(),
            queue.clone(),
            Arc::new(Mutex::new(None)),
            GpuOptions::default().readback_timeout,
        );
        for shader in kernels {
            gpu.check_device_for(shader)?;
        }
        Ok(gpu)
    }

    /// Whether this device runs `shader`: [`Gpu::from_wgpu`]'s check of one kernel.
    fn check_device_for(&self, shader: &wgsl_dsl_core::Shader) -> Result<(), DeviceError> {
        let sig = &shader.signature;
        let kernel = sig.name.clone();
        wgsl_dsl_exec::check_device(shader, &self.device_limits(), self.capabilities()).map_err(
            |e| match e {
                Shortfall::Capabilities(missing) => DeviceError::MissingFeatures {
                    kernel: kernel.clone(),
                    features: format!("{:?}", features_for(missing)),
                    capabilities: missing,
                },
                Shortfall::Limit {
                    limit,
                    binding,
                    needed,
                    device,
                } => DeviceError::InsufficientLimit {
                    kernel: kernel.clone(),
                    limit,
                    binding,
                    needed,
                    device,
                },
            },
        )?;
        let supported = self.cooperative_shapes();
        if let Some(shape) = sig
            .cooperative_shapes
            .iter()
            .find(|s| !supported.contains(s))
        {
            return Err(DeviceError::UnsupportedCooperativeShape {
                kernel,
                shape: *shape,
            });
        }
        Ok(())
    }

    /// The `Gpu` around an opened device.
    fn assemble(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        lost: Arc<Mutex<Option<String>>>,
        readback_timeout: Duration,
    ) -> Gpu {
        let info = adapter.get_info();
        let limits = device.limits();
        Gpu {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            adapter,
            device,
            queue,
            info,
            limits,
            lost,
            pipelines: Mutex::new(HashMap::new()),
            compiles: AtomicUsize::new(0),
            bind_groups: Mutex::new(BindGroupCache::default()),
            readback_timeout,
        }
    }

    /// The adapter's name, vendor, device type, driver and backend.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The adapter's subgroup size when it has only one (`subgroup_min_size ==
    /// subgroup_max_size`, e.g. 32 on NVIDIA): what kernels that assume their subgroups'
    /// size (cooperative-matrix tiles) need. `None` for a range of sizes or none reported.
    pub fn single_subgroup_size(&self) -> Option<u32> {
        let (min, max) = (self.info.subgroup_min_size, self.info.subgroup_max_size);
        (min == max && min > 0).then_some(min)
    }

    /// True when the adapter is a software one (`DeviceType::Cpu`, e.g. lavapipe).
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The device's limits: the adapter's, or those of [`GpuOptions::limits`].
    /// [`Gpu::compile`] checks every kernel against them.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The device's limits as the executors' checks read them ([`Limits`]: those of
    /// [`Gpu::limits`] a compute kernel can exceed); what to give the interpreter
    /// (`InterpOptions::limits`) for it to check kernels and dispatches as this device does.
    pub fn device_limits(&self) -> Limits {
        limits_of(&self.limits)
    }

    /// The features the device was opened with (a subset of the adapter's).
    pub fn features(&self) -> wgpu::Features {
        self.device.features()
    }

    /// The naga capabilities the device's features provide (`SUBGROUP`, `SUBGROUP_BARRIER`,
    /// `SHADER_FLOAT16`, `COOPERATIVE_MATRIX`; `SHADER_FLOAT16_IN_FLOAT32` from the adapter's
    /// downlevel flags, as wgpu maps them); kernels needing any other capability are refused
    /// by [`Gpu::compile`].
    pub fn capabilities(&self) -> Capabilities {
        let f = self.features();
        let mut caps = Capabilities::empty();
        if f.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            caps |= Capabilities::COOPERATIVE_MATRIX;
        }
        if f.contains(wgpu::Features::SUBGROUP) {
            caps |= Capabilities::SUBGROUP;
        }
        if f.contains(wgpu::Features::SUBGROUP_BARRIER) {
            caps |= Capabilities::SUBGROUP_BARRIER;
        }
        if f.contains(wgpu::Features::SHADER_F16) {
            caps |= Capabilities::SHADER_FLOAT16;
        }
        if self
            .adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::SHADER_F16_IN_F32)
        {
            caps |= Capabilities::SHADER_FLOAT16_IN_FLOAT32;
        }
        caps
    }

    /// The cooperative-matrix multiply-add configurations the device runs: the adapter's
    /// (`wgpu::Adapter::cooperative_matrix_properties`), or none when the device was opened
    /// without the feature (see [`GpuOptions::cooperative_matrix`]).
    pub fn cooperative_shapes(&self) -> Vec<CoopShape> {
        if !self
            .features()
            .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        {
            return Vec::new();
        }
        let scalar = |t: wgpu::CooperativeScalarType| match t {
            wgpu::CooperativeScalarType::F32 => Some(ScalarTy::F32),
            wgpu::CooperativeScalarType::F16 => Some(ScalarTy::F16),
            wgpu::CooperativeScalarType::I32 => Some(ScalarTy::I32),
            wgpu::CooperativeScalarType::U32 => Some(ScalarTy::U32),
        };
        self.adapter
            .cooperative_matrix_properties()
            .into_iter()
            .filter_map(|p| {
                Some(CoopShape {
                    m: u8::try_from(p.m_size).ok()?,
                    n: u8::try_from(p.n_size).ok()?,
                    k: u8::try_from(p.k_size).ok()?,
                    input: scalar(p.ab_type)?,
                    accumulator: scalar(p.cr_type)?,
                })
            })
            .collect()
    }

    /// The limits to build kernels against for this device:
    /// `KernelBuilder::build_for(&gpu.target_limits())`.
    pub fn target_limits(&self) -> TargetLimits {
        let l = self.limits();
        TargetLimits {
            max_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_workgroup_size: [
                l.max_compute_workgroup_size_x,
                l.max_compute_workgroup_size_y,
                l.max_compute_workgroup_size_z,
            ],
            max_workgroup_storage_size: l.max_compute_workgroup_storage_size,
            capabilities: self.capabilities(),
        }
    }

    /// The wgpu adapter, for advanced use.
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The wgpu device, for advanced use. Work recorded on it directly is not checked.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The wgpu queue, for advanced use.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// How many pipelines this `Gpu` has compiled (cache misses of [`Gpu::compile`]).
    pub fn pipelines_compiled(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// Use of the bind group cache: a dispatch whose kernel and buffers were dispatched
    /// before reuses that bind group without checking its arguments again (they were checked
    /// then, and a buffer's type and size never change).
    pub fn bind_group_stats(&self) -> BindGroupStats {
        let (entries, hits, misses) = self
            .bind_groups
            .lock()
            .map(|c| c.stats())
            .unwrap_or_default();
        BindGroupStats {
            entries,
            hits,
            misses,
        }
    }

    /// Drop cached bind groups of buffers that were dropped (their memory comes back).
    pub(crate) fn sweep_bind_groups(&self) {
        if let Ok(mut c) = self.bind_groups.lock() {
            c.sweep();
        }
    }

    /// Block until all work submitted so far has finished.
    ///
    /// # Errors
    /// [`DeviceError::Lost`], or [`DeviceError::Timeout`] after the read-back timeout.
    pub fn wait(&self) -> Result<(), DeviceError> {
        self.wait_for(None)
    }

    pub(crate) fn wait_for(&self, index: Option<wgpu::SubmissionIndex>) -> Result<(), DeviceError> {
        self.check_lost()?;
        let waited = self.readback_timeout;
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: index,
            timeout: Some(waited),
        });
        self.check_lost()?;
        match r {
            Ok(_) => Ok(()),
            Err(wgpu::PollError::Timeout) => Err(DeviceError::Timeout { waited }),
            Err(e) => {
                // A destroyed device fails its submissions (so the index is "not returned by
                // a successful submission") before its lost callback has run: one more poll
                // runs the callback, and the loss is what is reported.
                let _ = self.device.poll(wgpu::PollType::Poll);
                self.check_lost()?;
                Err(DeviceError::Map(e.to_string()))
            }
        }
    }

    /// Map `buffer` for reading once the submission `index` (all work, for `None`) is done,
    /// and block until the mapping has completed: [`Gpu::request_map`], then
    /// [`Gpu::await_map`].
    ///
    /// # Errors
    /// As [`Gpu::await_map`].
    pub(crate) fn map_read(
        &self,
        buffer: &wgpu::Buffer,
        index: Option<wgpu::SubmissionIndex>,
    ) -> Result<(), DeviceError> {
        let request = Self::request_map(buffer);
        self.await_map(&request, index)
    }

    /// Request the mapping of `buffer` for reading (`map_async`) without waiting; the returned
    /// request is collected with [`Gpu::await_map`].
    pub(crate) fn request_map(buffer: &wgpu::Buffer) -> MapRequest {
        let (tx, rx) = std::sync::mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        MapRequest(rx)
    }

    /// Block until the submission `index` (all work, for `None`) is done and the mapping of
    /// `request` has completed, within the read-back timeout.
    ///
    /// Safe under concurrent use of one `Gpu`: wgpu runs a map callback on whichever thread's
    /// poll collects it, possibly after this thread's own poll has returned, so the callback is
    /// awaited on its channel (polling again meanwhile), not assumed to have run.
    ///
    /// # Errors
    /// [`DeviceError::Lost`], [`DeviceError::Timeout`] after the read-back timeout,
    /// [`DeviceError::Map`] if wgpu fails the mapping.
    pub(crate) fn await_map(
        &self,
        request: &MapRequest,
        index: Option<wgpu::SubmissionIndex>,
    ) -> Result<(), DeviceError> {
        use std::sync::mpsc::RecvTimeoutError;
        let start = std::time::Instant::now();
        self.wait_for(index)?;
        loop {
            match request.0.recv_timeout(Duration::from_millis(1)) {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => {
                    self.check_lost()?;
                    return Err(DeviceError::Map(e.to_string()));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.check_lost()?;
                    return Err(DeviceError::Map(
                        "the map callback was dropped without running".into(),
                    ));
                }
                Err(RecvTimeoutError::Timeout) => {
                    let waited = start.elapsed();
                    if waited >= self.readback_timeout {
                        return Err(DeviceError::Timeout { waited });
                    }
                    // Another thread's poll may hold the callback; or none has collected the
                    // mapping yet: collect it here.
                    self.check_lost()?;
                    self.device
                        .poll(wgpu::PollType::Poll)
                        .map_err(|e| DeviceError::Map(e.to_string()))?;
                }
            }
        }
    }

    /// [`DeviceError::Lost`] if the device-lost callback has fired.
    pub(crate) fn check_lost(&self) -> Result<(), DeviceError> {
        match self.lost.lock() {
            Ok(l) => match &*l {
                Some(m) => Err(DeviceError::Lost(m.clone())),
                None => Ok(()),
            },
            Err(_) => Err(DeviceError::Lost("device-lost state poisoned".into())),
        }
    }

    /// Run `f` inside wgpu error scopes (validation, out-of-memory, internal) and turn the
    /// first error caught into [`DispatchErrorKind::Wgpu`].
    pub(crate) fn scoped<R>(&self, f: impl FnOnce() -> R) -> Result<R, DispatchError> {
        self.check_lost()?;
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let r = f();
        let errors = [
            pollster::block_on(validation.pop()),
            pollster::block_on(oom.pop()),
            pollster::block_on(internal.pop()),
        ];
        self.first_error(errors, r)
    }

    /// As [`Gpu::scoped`], catching validation errors only: for calls that allocate nothing
    /// large (bind groups), on the per-dispatch path.
    pub(crate) fn validated<R>(&self, f: impl FnOnce() -> R) -> Result<R, DispatchError> {
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let r = f();
        let error = pollster::block_on(validation.pop());
        self.first_error([error], r)
    }

    fn first_error<R, const N: usize>(
        &self,
        errors: [Option<wgpu::Error>; N],
        r: R,
    ) -> Result<R, DispatchError> {
        match errors.into_iter().flatten().next() {
            Some(e) => {
                // A destroyed or lost device reports through its callback on the next poll:
                // report the loss rather than the validation error it caused.
                let _ = self.device.poll(wgpu::PollType::Poll);
                self.check_lost()?;
                Err(DispatchError::from(DispatchErrorKind::Wgpu(error_chain(
                    &e,
                ))))
            }
            None => Ok(r),
        }
    }
}

/// Rank the adapters: the named one if a name is given; else hardware before software,
/// the preferred GPU type first, and native backends before GL. `Err` says what was seen.
fn choose_adapter(
    adapters: Vec<wgpu::Adapter>,
    options: &GpuOptions,
) -> Result<wgpu::Adapter, String> {
    let seen: Vec<String> = adapters
        .iter()
        .map(|a| {
            let i = a.get_info();
            format!("`{}` ({:?}, {:?})", i.name, i.backend, i.device_type)
        })
        .collect();
    let seen = if seen.is_empty() {
        "no adapter".to_string()
    } else {
        format!("adapters seen: {}", seen.join(", "))
    };
    let compute = |a: &wgpu::Adapter| {
        a.get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    };
    if let Some(name) = &options.adapter_name {
        let want = name.to_lowercase();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&want) && compute(a))
            .ok_or_else(|| {
                format!("WGPU_ADAPTER_NAME=`{name}` matches no compute adapter; {seen}")
            });
    }
    let rank = |a: &wgpu::Adapter| {
        use wgpu::DeviceType as T;
        let i = a.get_info();
        let (first, second) = match options.power_preference {
            wgpu::PowerPreference::LowPower => (T::IntegratedGpu, T::DiscreteGpu),
            _ => (T::DiscreteGpu, T::IntegratedGpu),
        };
        let kind = match i.device_type {
            t if t == first => 0,
            t if t == second => 1,
            T::VirtualGpu => 2,
            T::Cpu => 4,
            _ => 3,
        };
        let backend = match i.backend {
            wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
            _ => 1,
        };
        (kind, backend)
    };
    let software = if options.allow_software {
        ""
    } else {
        " (software adapters not allowed)"
    };
    adapters
        .into_iter()
        .filter(|a| compute(a))
        .filter(|a| options.allow_software || a.get_info().device_type != wgpu::DeviceType::Cpu)
        .min_by_key(rank)
        .ok_or_else(|| format!("{seen}{software}"))
}

/// A mapping requested by [`Gpu::request_map`]: the outcome of its callback, on a channel.
#[derive(Debug)]
pub(crate) struct MapRequest(std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>);

/// The first `bytes` of the mapped `buffer` as elements of `T`; unmaps it.
///
/// # Errors
/// [`DeviceError::Map`] if the buffer is not mapped.
pub(crate) fn take_mapped<T: bytemuck::Pod>(
    buffer: &wgpu::Buffer,
    bytes: usize,
) -> Result<Vec<T>, DeviceError> {
    let out = {
        let view = buffer
            .slice(..)
            .get_mapped_range()
            .map_err(|e| DeviceError::Map(e.to_string()))?;
        bytemuck::pod_collect_to_vec(&view[..bytes])
    };
    buffer.unmap();
    Ok(out)
}

/// The wgpu features that give the naga `capabilities` (as [`Gpu::capabilities`] maps them
/// back). `SHADER_FLOAT16_IN_FLOAT32` comes from a downlevel flag, not a feature.
fn features_for(capabilities: Capabilities) -> wgpu::Features {
    let mut f = wgpu::Features::empty();
    for (cap, feature) in [
        (Capabilities::SUBGROUP, wgpu::Features::SUBGROUP),
        (
            Capabilities::SUBGROUP_BARRIER,
            wgpu::Features::SUBGROUP_BARRIER,
        ),
        (Capabilities::SHADER_FLOAT16, wgpu::Features::SHADER_F16),
        (
            Capabilities::COOPERATIVE_MATRIX,
            wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        ),
    ] {
        if capabilities.contains(cap) {
            f |= feature;
        }
    }
    f
}

/// The executors' [`Limits`] of wgpu's `limits`: its fields a compute kernel can exceed.
pub fn limits_of(limits: &wgpu::Limits) -> Limits {
    Limits {
        max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
        max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        max_compute_workgroup_size_x: limits.max_compute_workgroup_size_x,
        max_compute_workgroup_size_y: limits.max_compute_workgroup_size_y,
        max_compute_workgroup_size_z: limits.max_compute_workgroup_size_z,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
        max_uniform_buffers_per_shader_stage: limits.max_uniform_buffers_per_shader_stage,
        max_storage_textures_per_shader_stage: limits.max_storage_textures_per_shader_stage,
        max_sampled_textures_per_shader_stage: limits.max_sampled_textures_per_shader_stage,
        max_bindings_per_bind_group: limits.max_bindings_per_bind_group,
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_uniform_buffer_binding_size: limits.max_uniform_buffer_binding_size,
    }
}
