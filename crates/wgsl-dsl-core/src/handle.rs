//! Identities and table indices of the builder, as types (never a bare `usize`): which builder
//! a binding or helper function belongs to, which `let`, `var` or statement result a value
//! names, which helper function a parameter belongs to. Lowering looks them up in its own
//! tables; one from another builder or function is an error there, never another entry.

use std::sync::atomic::{AtomicUsize, Ordering};

/// A counter shared by all identities: unique in the process.
fn fresh() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

macro_rules! identity {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name(usize);
        impl $name {
            /// A new identity, unique in the process.
            pub(crate) fn fresh() -> Self {
                $name(fresh())
            }
        }
    )*};
}

identity! {
    /// One [`KernelBuilder`](crate::KernelBuilder).
    BuilderId;
    /// A value: a `let`, a `var`, or a statement's result (call, atomic, subgroup operation).
    ValueId;
    /// A helper function; its parameters carry it.
    FunctionId;
}

macro_rules! handle {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            /// The builder whose table it indexes.
            pub(crate) builder: BuilderId,
            /// The entry.
            pub(crate) index: usize,
        }
    )*};
}

handle! {
    /// A global variable (binding or workgroup variable) in its builder's table.
    GlobalHandle;
    /// A helper function in its builder's table.
    FunctionHandle;
}
