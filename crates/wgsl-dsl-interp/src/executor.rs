//! [`Interpreter`] as an [`Executor`]: the contract code written for both executors runs on.

use bytemuck::Pod;

use super::{HostArg, HostBuffer, InterpError, Interpreter, Program};
use wgsl_dsl_core::TargetLimits;
use wgsl_dsl_core::kernel::KernelSignature;
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_core::types::WgslType;
use wgsl_dsl_exec::Executor;

impl Executor for Interpreter {
    type Kernel = Program;
    type Error = InterpError;

    fn name(&self) -> &'static str {
        "the interpreter"
    }

    /// Every access is checked for bounds and data races, and a dispatch fails on the first
    /// (and, through [`InterpError::Warning`], on the first warning but a padding access).
    fn checks_accesses(&self) -> bool {
        true
    }

    /// WebGPU's defaults ([`TargetLimits::default`]), which every device has.
    fn target_limits(&self) -> TargetLimits {
        TargetLimits::default()
    }

    fn compile(&self, shader: &Shader) -> Result<Program, InterpError> {
        Interpreter::compile(self, shader)
    }

    fn signature(kernel: &Program) -> &KernelSignature {
        kernel.signature()
    }

    fn upload<T: Pod + WgslType>(&self, data: &[T]) -> Result<HostBuffer<T>, InterpError> {
        Ok(HostBuffer::from_slice(data))
    }

    /// [`Interpreter::dispatch`], its first warning an error ([`InterpError::Warning`]), but
    /// for [`Warning::PaddingAccess`](crate::Warning::PaddingAccess): `arrayLength` counts a
    /// buffer's padding on the GPU too, so a kernel guarded by it (`if i < arrayLength(&y)`)
    /// reaches the padding of buffers under 16 bytes without a bug.
    fn dispatch(
        &self,
        kernel: &Program,
        args: &[&dyn HostArg],
        workgroups: [u32; 3],
    ) -> Result<(), InterpError> {
        let report = Interpreter::dispatch(self, kernel, args, workgroups)?;
        let fatal = |w: &crate::Warning| !matches!(w, crate::Warning::PaddingAccess { .. });
        match report.warnings.into_iter().find(fatal) {
            Some(w) => Err(InterpError::Warning(Box::new(w))),
            None => Ok(()),
        }
    }

    fn read<T: Pod + WgslType>(&self, buffer: &HostBuffer<T>) -> Result<Vec<T>, InterpError> {
        Ok(buffer.read())
    }
}
