//! [`Gpu`] as an [`Executor`]: the contract code written for both executors runs on.

use bytemuck::Pod;

use super::buffer::GpuBuffer;
use super::gpu::Gpu;
use super::pipeline::Kernel;
use wgsl_dsl_core::TargetLimits;
use wgsl_dsl_core::kernel::KernelSignature;
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_core::types::WgslType;
use wgsl_dsl_exec::{DispatchError, Executor};

impl Executor for Gpu {
    type Kernel = Kernel;
    type Error = DispatchError;

    fn name(&self) -> &'static str {
        "the GPU"
    }

    fn target_limits(&self) -> TargetLimits {
        Gpu::target_limits(self)
    }

    fn compile(&self, shader: &Shader) -> Result<Kernel, DispatchError> {
        Gpu::compile(self, shader)
    }

    fn signature(kernel: &Kernel) -> &KernelSignature {
        kernel.signature()
    }

    fn upload<T: Pod + WgslType>(&self, data: &[T]) -> Result<GpuBuffer<T>, DispatchError> {
        GpuBuffer::from_slice(self, data)
    }

    /// [`Gpu::dispatch`]: submitted, not waited for (a read waits for it).
    fn dispatch(
        &self,
        kernel: &Kernel,
        args: &[&dyn super::BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        Gpu::dispatch(self, kernel, args, workgroups)
    }

    fn read<T: Pod + WgslType>(&self, buffer: &GpuBuffer<T>) -> Result<Vec<T>, DispatchError> {
        Ok(buffer.read(self)?)
    }
}
