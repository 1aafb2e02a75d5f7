//! Helper functions with typed parameters and results (WGSL spec §11).

use std::marker::PhantomData;

use crate::exp::{Exp, ExprKind, NodeRef};
use crate::handle::{FunctionHandle, FunctionId};
use crate::site::CallSite;
use crate::types::{Constructible, Ty};

/// A helper function of a kernel, taking `Args` (a tuple of WGSL types) and returning `R`.
/// Made by [`KernelBuilder::function`](crate::KernelBuilder::function), called with
/// [`KernelBuilder::call`](crate::KernelBuilder::call).
pub struct Function<Args, R> {
    pub(crate) handle: FunctionHandle,
    _t: PhantomData<fn(Args) -> R>,
}

impl<Args, R> Function<Args, R> {
    pub(crate) fn new(handle: FunctionHandle) -> Self {
        Function {
            handle,
            _t: PhantomData,
        }
    }
}

impl<Args, R> std::fmt::Debug for Function<Args, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function#{}", self.handle.index)
    }
}

/// Tuples of parameter types of a helper function: `(f32,)`, `(f32, u32)`, ... up to 6.
pub trait FnArgs {
    /// The parameters as expressions: `(Exp<f32>, Exp<u32>)`.
    type Exps;
    /// The parameter names: `[&str; N]`.
    type Names;
    #[doc(hidden)]
    fn params(
        names: Self::Names,
        function: FunctionId,
        site: CallSite,
    ) -> (Vec<(String, Ty)>, Self::Exps);
    #[doc(hidden)]
    fn nodes(exps: Self::Exps) -> Vec<NodeRef>;
}

macro_rules! fn_args {
    ($n:literal; $($t:ident $i:tt),*) => {
        impl<$($t: Constructible),*> FnArgs for ($($t,)*) {
            type Exps = ($(Exp<$t>,)*);
            type Names = [&'static str; $n];
            fn params(names: Self::Names, function: FunctionId, site: CallSite) -> (Vec<(String, Ty)>, Self::Exps) {
                let params = vec![$((names[$i].to_string(), $t::ty())),*];
                let exps = ($(Exp::<$t>::from_kind(ExprKind::Param { function, index: $i }, site),)*);
                (params, exps)
            }
            fn nodes(exps: Self::Exps) -> Vec<NodeRef> {
                vec![$(exps.$i.node),*]
            }
        }
    };
}
fn_args!(1; A 0);
fn_args!(2; A 0, B 1);
fn_args!(3; A 0, B 1, C 2);
fn_args!(4; A 0, B 1, C 2, D 3);
fn_args!(5; A 0, B 1, C 2, D 3, E 4);
fn_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);
