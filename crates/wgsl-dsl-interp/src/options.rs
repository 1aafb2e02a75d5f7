//! [`InterpOptions`]: how the interpreter runs kernels, read by the interpreter's front
//! (the crate root) and its executor (`exec`) both.

/// How the interpreter runs kernels.
#[derive(Clone, Debug)]
pub struct InterpOptions {
    /// Invocations per subgroup (`subgroup_size`); subgroups are consecutive local
    /// invocation indices. Default 32.
    pub subgroup_size: u32,
    /// Check for data races and reads of unwritten variables (costs shadow memory of about
    /// 48 bytes per 4-byte word of read-write storage and workgroup memory). Default on.
    pub checks: bool,
    /// Iterations after which one execution of a loop is reported as endless
    /// ([`InterpError::LoopLimit`](super::InterpError::LoopLimit)). Default 2^20: an endless
    /// loop is then reported within seconds in a debug build (2^24 took 122 s); a kernel whose
    /// loops run longer in one invocation raises it.
    pub max_loop_iterations: u64,
    /// Limits [`Interpreter::compile`](super::Interpreter::compile) checks kernels against and the argument checks use
    /// (binding counts and sizes, workgroup counts). Default
    /// [`interpreter_limits`](wgsl_dsl_exec::interpreter_limits) (WebGPU's, without a limit
    /// on the number of bindings); pass a GPU's (the runtime's `Gpu::device_limits`) to check
    /// as it would. The workgroup's own limits (size per dimension, invocations, workgroup memory)
    /// are not taken from here: a kernel is run for the limits it was built for
    /// ([`Shader::target`](wgsl_dsl_core::Shader::target)), which `build_for` has checked, so that a kernel built for a
    /// GPU's limits (`build_for(&gpu.target_limits())`, 1024 invocations) runs here too.
    pub limits: wgsl_dsl_exec::Limits,
    /// Also write each dispatch's [`DebugRecord`](super::DebugRecord)s (from `debug_print`) to
    /// stderr, one line each, when the dispatch ends. Default off: the records are collected
    /// for [`Interpreter::take_debug_output`](super::Interpreter::take_debug_output) either
    /// way, and library code prints nothing unless asked to.
    pub echo_debug_prints: bool,
}

impl Default for InterpOptions {
    fn default() -> Self {
        InterpOptions {
            subgroup_size: 32,
            checks: true,
            max_loop_iterations: 1 << 20,
            limits: wgsl_dsl_exec::interpreter_limits(),
            echo_debug_prints: false,
        }
    }
}
