//! The executors' two error stages: [`DeviceError`] (finding an adapter, opening a device,
//! waiting on it) and [`DispatchError`] (checking a kernel and its arguments, recording,
//! submitting). A dispatch that fails because the device failed wraps the [`DeviceError`].
//! Both are the runtime's and the interpreter's: one set of checks, the same errors.

use std::panic::Location;
use std::time::Duration;

use naga::valid::Capabilities;

use crate::limits::DeviceLimit;
use wgsl_dsl_core::types::CoopShape;

/// What went wrong with the adapter or the device. `Debug` prints the message, as
/// [`BuildError`](wgsl_dsl_core::BuildError)'s does.
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// No adapter (GPU or software) could be found, or none matched `WGPU_ADAPTER_NAME`.
    #[error(
        "no GPU adapter found ({reason}); for a software Vulkan driver on Debian/Ubuntu run \
         `apt-get install mesa-vulkan-drivers` (Mesa lavapipe)"
    )]
    NoAdapter {
        /// Which adapters were seen and why none was taken.
        reason: String,
    },
    /// The adapter refused to open a device with the requested features and limits.
    #[error("adapter `{adapter}` could not open a device: {message}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's message.
        message: String,
    },
    /// The device was lost (driver reset, out of memory, destroyed).
    #[error("the GPU device was lost: {0}")]
    Lost(String),
    /// Waiting for the GPU took longer than the read-back timeout.
    #[error("the GPU did not finish within {waited:?} (read-back timeout)")]
    Timeout {
        /// How long we waited.
        waited: Duration,
    },
    /// Mapping a buffer for reading failed, or the copy feeding it was rejected.
    #[error("reading a buffer back failed: {0}")]
    Map(String),
    /// A buffer or texture made on one `Gpu` was read with another.
    #[error("a buffer or texture was used with a different Gpu than the one that created it")]
    WrongDevice,
    /// A caller's adapter (`Gpu::from_wgpu`) cannot run compute
    /// shaders (`wgpu::DownlevelFlags::COMPUTE_SHADERS` is missing, as on some GL adapters).
    #[error("adapter `{adapter}` cannot run compute shaders")]
    NoComputeShaders {
        /// The adapter's name.
        adapter: String,
    },
    /// A kernel given to `Gpu::from_wgpu` needs capabilities the
    /// caller's device was not opened with.
    #[error(
        "kernel `{kernel}` needs {capabilities:?}: open the device with the wgpu features \
         {features} (`DeviceDescriptor::required_features`){}",
        wgsl_dsl_core::__private::capability_hint(*capabilities)
    )]
    MissingFeatures {
        /// The kernel.
        kernel: String,
        /// The wgpu features that provide them, as wgpu names them (`wgpu::Features`'
        /// `Debug`; empty for `SHADER_FLOAT16_IN_FLOAT32`, which comes with every adapter but
        /// WebGL's).
        features: String,
        /// The naga capabilities missing.
        capabilities: Capabilities,
    },
    /// A kernel given to `Gpu::from_wgpu` needs more of a limit than
    /// the caller's device was opened with.
    #[error(
        "kernel `{kernel}`{}: needs {needed} {} but the device's {limit} is {device} (open the \
         device with a higher `DeviceDescriptor::required_limits.{limit}`, up to the adapter's)",
        binding.as_ref().map(|b| format!(", binding {b}")).unwrap_or_default(),
        limit.unit()
    )]
    InsufficientLimit {
        /// The kernel.
        kernel: String,
        /// Which limit.
        limit: DeviceLimit,
        /// The binding concerned (its number and name), for the per-binding limits.
        binding: Option<String>,
        /// What the kernel needs.
        needed: u64,
        /// The device's value of the limit.
        device: u64,
    },
    /// A kernel given to `Gpu::from_wgpu` multiplies cooperative
    /// matrices in a configuration the adapter does not offer.
    #[error(
        "kernel `{kernel}` multiplies cooperative matrices of {shape}, which the adapter does not offer"
    )]
    UnsupportedCooperativeShape {
        /// The kernel.
        kernel: String,
        /// The configuration it uses.
        shape: CoopShape,
    },
}

/// What is wrong with a kernel, its arguments, or a recorded command: the kernel concerned,
/// once ([`kernel`](Self::kernel); none for a buffer's or the device's own errors), what
/// is wrong ([`kind`](Self::kind)), and the Rust line that made the call
/// ([`caller`](Self::caller)). `Debug` prints the message, as
/// [`BuildError`](wgsl_dsl_core::BuildError)'s does, so `?` in `main` reads well:
/// ``kernel `saxpy`, binding 1 `x`: needs at least 16 bytes, the buffer has 8 (called at
/// src/main.rs:31:9)``.
///
/// Match on the kind: `Err(e) if matches!(e.kind, DispatchErrorKind::TooSmall { .. })`.
#[derive(Clone)]
pub struct DispatchError {
    /// The kernel whose compile, check or dispatch failed; `None` for errors of a buffer, a
    /// recorder or the device outside any kernel.
    pub kernel: Option<String>,
    /// What is wrong.
    pub kind: DispatchErrorKind,
    /// The Rust call that dispatched, recorded or checked the kernel (the caller of
    /// `Gpu::dispatch`, `Recorder::dispatch`, `Interpreter::dispatch`, their typed forms,
    /// `check`, `record_in_pass` and `record_in_encoder`, a backward pass's `dispatch` and
    /// `record`, `PrefixScan::run`, `Recorder::clear` and `copy`), shown after the message:
    /// `(called at src/main.rs:40:10)`. `None` for errors made elsewhere (compiling, buffers,
    /// the device).
    pub caller: Option<&'static Location<'static>>,
}

impl DispatchError {
    /// `kind` in kernel `kernel`.
    pub fn new(kernel: impl Into<String>, kind: DispatchErrorKind) -> Self {
        DispatchError {
            kernel: Some(kernel.into()),
            kind,
            caller: None,
        }
    }

    /// This error, reported by the Rust call at `caller` (replacing any call site it had: the
    /// outermost public call that passes it on is the user's).
    pub fn called_at(self, caller: &'static Location<'static>) -> Self {
        DispatchError {
            caller: Some(caller),
            ..self
        }
    }

    /// The kernel concerned, if any.
    pub fn kernel(&self) -> Option<&str> {
        self.kernel.as_deref()
    }

    /// What is wrong.
    pub fn kind(&self) -> &DispatchErrorKind {
        &self.kind
    }

    /// The Rust call that dispatched, recorded or checked the kernel ([`DispatchError::caller`]).
    pub fn caller(&self) -> Option<&'static Location<'static>> {
        self.caller
    }
}

impl PartialEq for DispatchError {
    /// The same kernel and kind: where the error was reported ([`DispatchError::caller`]) is
    /// not compared.
    fn eq(&self, other: &Self) -> bool {
        self.kernel == other.kernel && self.kind == other.kind
    }
}

impl From<DispatchErrorKind> for DispatchError {
    /// An error outside any kernel.
    fn from(kind: DispatchErrorKind) -> Self {
        DispatchError {
            kernel: None,
            kind,
            caller: None,
        }
    }
}

impl From<wgsl_dsl_core::BuildError> for DispatchError {
    fn from(e: wgsl_dsl_core::BuildError) -> Self {
        DispatchErrorKind::Build(Box::new(e)).into()
    }
}

impl From<DeviceError> for DispatchError {
    fn from(e: DeviceError) -> Self {
        DispatchErrorKind::Device(e).into()
    }
}

impl std::fmt::Display for DispatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(kernel) = &self.kernel else {
            std::fmt::Display::fmt(&self.kind, f)?;
            return self.write_caller(f);
        };
        // The kind's message continues the kernel's name: "kernel `k` declares ..",
        // "kernel `k`, binding 1 ..", "kernel `k`: the same buffer ..".
        let joint = match &self.kind {
            DispatchErrorKind::ArgCount { .. }
            | DispatchErrorKind::MissingCapability { .. }
            | DispatchErrorKind::UnsupportedCooperativeShape { .. }
            | DispatchErrorKind::Interface { .. } => " ",
            DispatchErrorKind::Binding { .. }
            | DispatchErrorKind::Resource { .. }
            | DispatchErrorKind::TooSmall { .. } => ", ",
            DispatchErrorKind::ExceedsDevice { .. } => "",
            _ => ": ",
        };
        write!(f, "kernel `{kernel}`{joint}{}", self.kind)?;
        self.write_caller(f)
    }
}

impl DispatchError {
    /// ` (called at file:line:column)` when the caller is known.
    fn write_caller(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.caller {
            Some(at) => write!(f, " (called at {at})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for DispatchError {
    /// The kind's cause (a build or device error's own); the message is the kind's already.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

/// What is wrong, without the kernel concerned: the [`DispatchError::kind`] of a
/// [`DispatchError`], which holds the kernel once (its [`DispatchError::kernel`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchErrorKind {
    /// The number of arguments differs from the number of bindings the kernel declares.
    #[error(
        "declares {expected} binding{}, {found} {} given",
        if *expected == 1 { "" } else { "s" },
        if *found == 1 { "argument was" } else { "arguments were" }
    )]
    ArgCount {
        /// Bindings declared.
        expected: usize,
        /// Arguments given.
        found: usize,
    },
    /// An argument's element type (or host layout) does not match its binding's type.
    #[error(
        "binding {index} `{binding}`: expected a buffer of {expected}, found a buffer of {found}"
    )]
    Binding {
        /// The binding's name.
        binding: String,
        /// The binding's index.
        index: u32,
        /// What the binding takes.
        expected: String,
        /// What was given.
        found: String,
    },
    /// A texture given for a buffer binding, a buffer for a texture binding, or a texture of a
    /// format the texture binding does not take (a storage texture takes its own format, a
    /// `texture_2d<T>` a format of channel type `T`).
    #[error("binding {index} `{binding}`: expected {expected}, found {found}")]
    Resource {
        /// The binding's name.
        binding: String,
        /// The binding's index.
        index: u32,
        /// What the binding takes.
        expected: String,
        /// What was given.
        found: String,
    },
    /// A buffer is shorter than the binding's fixed-size type (array, struct, scalar).
    #[error("binding {index} `{binding}`: needs at least {needed} bytes, the buffer has {found}")]
    TooSmall {
        /// The binding's name.
        binding: String,
        /// The binding's index.
        index: u32,
        /// Bytes the binding's type occupies.
        needed: u64,
        /// Bytes the buffer holds.
        found: u64,
    },
    /// The same buffer is bound twice in one dispatch and one of the bindings is read-write
    /// (WebGPU forbids a writable storage binding aliasing any other binding).
    #[error(
        "the same buffer is bound as binding {first} `{first_name}` and binding {second} `{second_name}`, and one of them is read_write"
    )]
    Aliased {
        /// First binding index.
        first: u32,
        /// First binding name.
        first_name: String,
        /// Second binding index.
        second: u32,
        /// Second binding name.
        second_name: String,
    },
    /// A device limit would be exceeded by a dispatch or a buffer (workgroup count, buffer
    /// size); a kernel's and a binding's needs are [`DispatchErrorKind::ExceedsDevice`].
    #[error("{what}: {value} exceeds the device limit {limit}")]
    Limit {
        /// What was measured (names the kernel and binding where there is one).
        what: String,
        /// The value asked for.
        value: u64,
        /// The device's limit.
        limit: u64,
    },
    /// The kernel needs a capability (subgroups, f16, cooperative matrices) the device was not
    /// opened with.
    #[error(
        "needs {needed:?}, which this device does not support{}",
        wgsl_dsl_core::__private::capability_hint(*needed)
    )]
    MissingCapability {
        /// The capabilities missing.
        needed: Capabilities,
    },
    /// The kernel multiplies cooperative matrices in a configuration (sizes, element types) the
    /// adapter does not offer.
    #[error(
        "multiplies cooperative matrices of {shape}, which the adapter does not offer (it offers: {})",
        if supported.is_empty() { "none".to_string() } else { supported.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("; ") }
    )]
    UnsupportedCooperativeShape {
        /// The configuration it uses.
        shape: CoopShape,
        /// The configurations the adapter offers.
        supported: Vec<CoopShape>,
    },
    /// The kernel needs more of a device limit than the device has: found by
    /// `Gpu::compile` (and the interpreter's `compile`) before any
    /// pipeline is created (see [`check_limits`](crate::check_limits)), or, for a binding's
    /// size, when a buffer longer than the limit is bound (`Gpu::check`).
    #[error(
        "{}: needs {needed} {} but the device's {limit} is {device}",
        binding.as_ref().map(|b| format!(", binding {b}")).unwrap_or_default(),
        limit.unit()
    )]
    ExceedsDevice {
        /// Which limit.
        limit: DeviceLimit,
        /// The binding concerned (its number and name), for the per-binding limits.
        binding: Option<String>,
        /// What the kernel needs.
        needed: u64,
        /// The device's value of the limit.
        device: u64,
    },
    /// A host slice's length differs from the buffer's.
    #[error("{what}: expected {expected} elements, found {found}")]
    Length {
        /// The operation.
        what: &'static str,
        /// The buffer's length.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A buffer lacks the usage a binding (or `GpuBuffer::from_wgpu`)
    /// needs: `STORAGE` for a storage binding, `UNIFORM` for a uniform one. Only a caller's
    /// wgpu buffer can lack them: the runtime's own buffers have both.
    #[error("{what}: the buffer's usages {found} lack {needed}")]
    Usage {
        /// The kernel and binding, or the conversion.
        what: String,
        /// The usage needed (either one, for `from_wgpu`), as wgpu names it
        /// (`wgpu::BufferUsages`' `Debug`).
        needed: String,
        /// The buffer's usages, as wgpu names them.
        found: String,
    },
    /// A caller's wgpu buffer is not a whole number of elements
    /// (`GpuBuffer::from_wgpu`).
    #[error(
        "a wgpu buffer of {bytes} bytes is not a whole number of {elem} ({elem_size} bytes each)"
    )]
    NotWholeElements {
        /// The buffer's size.
        bytes: u64,
        /// The element type.
        elem: &'static str,
        /// Its size.
        elem_size: u64,
    },
    /// A kernel, buffer or recorder made on one `Gpu` was used with another.
    #[error("{0} was created on a different Gpu")]
    WrongDevice(&'static str),
    /// The kernel's module could not be laid out or lacks a declared binding.
    #[error("{message}")]
    Layout {
        /// What is wrong.
        message: String,
    },
    /// A kernel compiled through its typed interface (`Gpu::compile_typed`)
    /// did not build. Boxed: a build error is the largest kind, and every `Result` of a
    /// dispatch carries the room for it.
    #[error(transparent)]
    Build(Box<wgsl_dsl_core::BuildError>),
    /// A kernel's bindings differ from those of its argument struct
    /// (`Gpu::compile_typed`).
    #[error("does not match its argument struct: {message}")]
    Interface {
        /// The first difference.
        message: String,
    },
    /// wgpu reported a validation, out-of-memory or internal error (captured with an error
    /// scope), with its chain of causes.
    #[error("wgpu: {0}")]
    Wgpu(String),
    /// The device failed.
    #[error(transparent)]
    Device(DeviceError),
    /// A bounded loop of a backward pass ran past its `max_iterations` (the gradients of that
    /// pass are wrong): `TypedBackward::dispatch`.
    #[error("{0}")]
    IterationLimit(wgsl_dsl_core::autodiff::IterationLimitExceeded),
}

impl std::fmt::Debug for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl DispatchError {
    /// `Ok` if `found` elements were given where `what` takes `expected`.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`], without a kernel.
    pub fn check_length(what: &'static str, expected: usize, found: usize) -> Result<(), Self> {
        if found == expected {
            Ok(())
        } else {
            Err(DispatchErrorKind::Length {
                what,
                expected,
                found,
            }
            .into())
        }
    }
}

impl std::fmt::Debug for DispatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `e`'s message followed by its causes, separated by `: `.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel is held once, and each message reads as it did when every kind held it
    /// (`TooSmall`'s is pinned where a real dispatch makes it, `tests/runtime_dispatch.rs`).
    #[test]
    fn each_message_names_its_kernel_once() {
        let cases = [
            (
                DispatchError::new(
                    "saxpy",
                    DispatchErrorKind::ArgCount {
                        expected: 3,
                        found: 2,
                    },
                ),
                "kernel `saxpy` declares 3 bindings, 2 arguments were given",
            ),
            (
                DispatchError::new(
                    "k",
                    DispatchErrorKind::ExceedsDevice {
                        limit: DeviceLimit::WorkgroupStorageSize,
                        binding: None,
                        needed: 20000,
                        device: 16384,
                    },
                ),
                "kernel `k`: needs 20000 bytes of workgroup memory but the device's \
                 max_compute_workgroup_storage_size is 16384",
            ),
            (
                DispatchError::new(
                    "k",
                    DispatchErrorKind::Layout {
                        message: "no binding".into(),
                    },
                ),
                "kernel `k`: no binding",
            ),
            (
                DispatchErrorKind::Length {
                    what: "GpuBuffer::write",
                    expected: 3,
                    found: 2,
                }
                .into(),
                "GpuBuffer::write: expected 3 elements, found 2",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
            assert_eq!(format!("{e:?}"), want);
        }
    }
}
