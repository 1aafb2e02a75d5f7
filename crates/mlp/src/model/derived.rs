//! A backward kernel derived by kernel AD (`wgsl_dsl::autodiff::derive`), compiled, and
//! dispatched by the roles of its bindings: the training step's loss gradient,
//! [`crate::kernels::loss::softmax_cross_entropy_backward`].

use wgsl_dsl::autodiff::{Backward, Role};
use wgsl_dsl::runtime::{BindArg, Gpu, Kernel, Recorder};

use crate::error::MlpError;

/// One derived backward kernel, compiled, with its bindings' names and roles in binding order.
#[derive(Debug)]
pub(super) struct DerivedKernel {
    kernel: Kernel,
    roles: Vec<(String, Role)>,
}

impl DerivedKernel {
    /// The single kernel of `backward`, built for `gpu`'s limits and compiled.
    ///
    /// # Errors
    /// [`MlpError::Build`] or [`MlpError::Dispatch`] from building and compiling it;
    /// [`MlpError::InvalidArgument`] if the pass has more than one kernel.
    pub(super) fn compile(gpu: &Gpu, backward: Backward) -> Result<Self, MlpError> {
        let mut kernels = backward.kernels;
        let (Some(bk), true) = (kernels.pop(), kernels.is_empty()) else {
            return Err(MlpError::InvalidArgument(
                "a derived backward pass of one kernel was expected".into(),
            ));
        };
        let shader = bk.kernel.build_for(&gpu.target_limits())?;
        Ok(DerivedKernel {
            kernel: gpu.compile(&shader)?,
            roles: bk.roles,
        })
    }

    /// Record a dispatch over `workgroups`, each binding given by `arg(name, role)`.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] naming a binding `arg` has no buffer for;
    /// [`MlpError::Dispatch`] from the dispatch's checks.
    pub(super) fn record<'a>(
        &self,
        rec: &mut Recorder<'_>,
        arg: impl Fn(&str, &Role) -> Option<&'a dyn BindArg>,
        workgroups: [u32; 3],
    ) -> Result<(), MlpError> {
        let args = self
            .roles
            .iter()
            .map(|(name, role)| {
                arg(name, role).ok_or_else(|| {
                    MlpError::InvalidArgument(format!(
                        "no buffer for binding `{name}` ({role:?}) of the derived kernel `{}`",
                        self.kernel.name()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rec.dispatch(&self.kernel, &args, workgroups)?)
    }
}
