//! [`NotDifferentiable`]: the error every differentiation rule returns, turned into a
//! [`BuildError::NotDifferentiable`] where the derivative was asked for.

use crate::error::BuildError;
use crate::site::CallSite;

/// A node that cannot be differentiated, found while differentiating.
#[derive(Debug, Clone)]
pub(crate) struct NotDifferentiable {
    pub operation: String,
    pub reason: String,
    pub site: CallSite,
}

impl NotDifferentiable {
    pub(crate) fn at(self, differentiated_at: CallSite) -> BuildError {
        BuildError::NotDifferentiable {
            operation: self.operation,
            reason: self.reason,
            site: self.site,
            differentiated_at,
        }
    }
}
