//! [`V`]: an `Exp<T>` of any type the generator uses, and macros that dispatch on a [`Ty`]
//! to code generic in the Rust type, so that one generic function per operation covers every
//! type WGSL allows it on. Everything here comes from one table: the scalars (with
//! [`__scalar!`](crate::__scalar) their Rust types) and the matrix sizes, crossed with the
//! vector widths 2, 3 and 4 by `values!` and [`__dispatch!`](crate::__dispatch).

use wgsl_dsl::prelude::*;

use crate::ast::{Scalar, Ty};

/// Rust types with a [`V`] variant.
pub trait Dyn: WgslType + Sized {
    /// Wrap.
    fn wrap(e: Exp<Self>) -> V;
    /// Unwrap (the analysis typed the program: a mismatch is a bug of the fuzzer).
    fn get(v: &V) -> Exp<Self>;
}

/// The Rust type of the [`Scalar`] variant named `$sc`.
#[doc(hidden)]
#[macro_export]
macro_rules! __scalar {
    (Bool) => {
        bool
    };
    (I32) => {
        i32
    };
    (U32) => {
        u32
    };
    (F32) => {
        f32
    };
    (F16) => {
        half::f16
    };
}

/// The [`Dyn`] impl of the variant `$var` of [`V`], of Rust type `$rust` and type `$ty`.
macro_rules! impl_dyn {
    ($var:ident, $rust:ty, $ty:expr) => {
        impl Dyn for $rust {
            fn wrap(e: Exp<Self>) -> V {
                V::$var(e)
            }
            fn get(v: &V) -> Exp<Self> {
                match v {
                    V::$var(e) => e.clone(),
                    other => panic!(
                        concat!("fuzzer bug: {:?} where ", stringify!($ty), " was expected"),
                        other.ty()
                    ),
                }
            }
        }
    };
}

/// [`V`], [`V::ty`] and the [`Dyn`] impls from the table: each scalar with its variants
/// (the scalar, then its vectors of 2, 3 and 4), each square matrix with its variant.
macro_rules! values {
    (scalars { $($sc:ident: $s:ident $v2:ident $v3:ident $v4:ident;)* } matrices { $($m:ident: $n:literal;)* }) => {
        /// An expression of any of the generator's types.
        #[derive(Clone, Debug)]
        #[allow(missing_docs)]
        pub enum V {
            $(
                $s(Exp<crate::__scalar!($sc)>),
                $v2(Exp<Vector<crate::__scalar!($sc), 2>>),
                $v3(Exp<Vector<crate::__scalar!($sc), 3>>),
                $v4(Exp<Vector<crate::__scalar!($sc), 4>>),
            )*
            $($m(Exp<Mat<$n, $n>>),)*
        }

        impl V {
            /// Its type.
            pub fn ty(&self) -> Ty {
                match self {
                    $(
                        V::$s(_) => Ty::S(Scalar::$sc),
                        V::$v2(_) => Ty::V(Scalar::$sc, 2),
                        V::$v3(_) => Ty::V(Scalar::$sc, 3),
                        V::$v4(_) => Ty::V(Scalar::$sc, 4),
                    )*
                    $(V::$m(_) => Ty::M($n),)*
                }
            }
        }

        $(
            impl_dyn!($s, crate::__scalar!($sc), Ty::S(Scalar::$sc));
            impl_dyn!($v2, Vector<crate::__scalar!($sc), 2>, Ty::V(Scalar::$sc, 2));
            impl_dyn!($v3, Vector<crate::__scalar!($sc), 3>, Ty::V(Scalar::$sc, 3));
            impl_dyn!($v4, Vector<crate::__scalar!($sc), 4>, Ty::V(Scalar::$sc, 4));
        )*
        $(impl_dyn!($m, Mat<$n, $n>, Ty::M($n));)*
    };
}

values! {
    scalars {
        Bool: B1 B2 B3 B4;
        I32: I1 I2 I3 I4;
        U32: U1 U2 U3 U4;
        F32: F1 F2 F3 F4;
        F16: H1 H2 H3 H4;
    }
    matrices {
        M2: 2;
        M3: 3;
        M4: 4;
    }
}

/// The dispatch behind the `with_*` macros: a `match` on `$t` with one arm per type of the
/// listed scalars (`@ty`: each scalar and its vectors, then the listed square matrices;
/// `@vec`: the vectors only; `@scalar`: `$t` a [`Scalar`]; `@mat`: the matrices), each
/// arm defining the names the caller gave and running `$body`; any other type is a bug of
/// the fuzzer, reported with the name `$name` of the macro.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch {
    (@ty $name:ident, $t:expr, $T:ident => $body:expr; [$($sc:ident)*] [$($n:literal)*]) => {
        match $t {
            $(
                $crate::ast::Ty::S($crate::ast::Scalar::$sc) => {
                    type $T = $crate::__scalar!($sc);
                    $body
                }
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 2) => {
                    type $T = wgsl_dsl::types::Vector<$crate::__scalar!($sc), 2>;
                    $body
                }
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 3) => {
                    type $T = wgsl_dsl::types::Vector<$crate::__scalar!($sc), 3>;
                    $body
                }
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 4) => {
                    type $T = wgsl_dsl::types::Vector<$crate::__scalar!($sc), 4>;
                    $body
                }
            )*
            $(
                $crate::ast::Ty::M($n) => {
                    type $T = wgsl_dsl::types::Mat<$n, $n>;
                    $body
                }
            )*
            #[allow(unreachable_patterns)]
            other => $crate::__dispatch!(@bug $name, other),
        }
    };
    (@vec $name:ident, $t:expr, $S:ident, $N:ident => $body:expr; [$($sc:ident)*]) => {
        match $t {
            $(
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 2) => {
                    type $S = $crate::__scalar!($sc);
                    const $N: usize = 2;
                    $body
                }
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 3) => {
                    type $S = $crate::__scalar!($sc);
                    const $N: usize = 3;
                    $body
                }
                $crate::ast::Ty::V($crate::ast::Scalar::$sc, 4) => {
                    type $S = $crate::__scalar!($sc);
                    const $N: usize = 4;
                    $body
                }
            )*
            #[allow(unreachable_patterns)]
            other => $crate::__dispatch!(@bug $name, other),
        }
    };
    (@scalar $name:ident, $t:expr, $S:ident => $body:expr; [$($sc:ident)*]) => {
        match $t {
            $(
                $crate::ast::Scalar::$sc => {
                    type $S = $crate::__scalar!($sc);
                    $body
                }
            )*
            #[allow(unreachable_patterns)]
            other => $crate::__dispatch!(@bug $name, other),
        }
    };
    (@mat $name:ident, $t:expr, $N:ident => $body:expr; [$($n:literal)*]) => {
        match $t {
            $(
                $crate::ast::Ty::M($n) => {
                    const $N: usize = $n;
                    $body
                }
            )*
            #[allow(unreachable_patterns)]
            other => $crate::__dispatch!(@bug $name, other),
        }
    };
    (@bug $name:ident, $other:expr) => {
        panic!(
            "fuzzer bug: no {} dispatch for {:?}",
            stringify!($name),
            $other
        )
    };
}

/// Run `$body` with `T` the Rust type of `$t` (every type).
#[doc(hidden)]
#[macro_export]
macro_rules! with_ty {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_ty, $t, $T => $body; [Bool I32 U32 F32 F16] [2 3 4])
    };
}
/// Run `$body` with `T` the Rust type of `$t`, a scalar or vector.
#[doc(hidden)]
#[macro_export]
macro_rules! with_sv {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_sv, $t, $T => $body; [Bool I32 U32 F32 F16] [])
    };
}
/// Run `$body` with `T` the numeric scalar or vector type of `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_num {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_num, $t, $T => $body; [I32 U32 F32 F16] [])
    };
}
/// Run `$body` with `T` the float scalar or vector type of `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_float {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_float, $t, $T => $body; [F32 F16] [])
    };
}
/// Run `$body` with `T` the integer scalar or vector type of `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_int {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_int, $t, $T => $body; [I32 U32] [])
    };
}
/// Run `$body` with `T` the signed scalar or vector type of `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_signed {
    ($t:expr, $T:ident => $body:expr) => {
        $crate::__dispatch!(@ty with_signed, $t, $T => $body; [I32 F32 F16] [])
    };
}
/// Run `$body` with `S`, `N` the scalar and width of the vector type `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_vec {
    ($t:expr, $S:ident, $N:ident => $body:expr) => {
        $crate::__dispatch!(@vec with_vec, $t, $S, $N => $body; [Bool I32 U32 F32 F16])
    };
}
/// Run `$body` with `S`, `N` of the numeric vector type `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_num_vec {
    ($t:expr, $S:ident, $N:ident => $body:expr) => {
        $crate::__dispatch!(@vec with_num_vec, $t, $S, $N => $body; [I32 U32 F32 F16])
    };
}
/// Run `$body` with `S`, `N` of the float vector type `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_float_vec {
    ($t:expr, $S:ident, $N:ident => $body:expr) => {
        $crate::__dispatch!(@vec with_float_vec, $t, $S, $N => $body; [F32 F16])
    };
}
/// Run `$body` with `S` the Rust type of the scalar `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_scalar {
    ($t:expr, $S:ident => $body:expr) => {
        $crate::__dispatch!(@scalar with_scalar, $t, $S => $body; [Bool I32 U32 F32 F16])
    };
}
/// Run `$body` with `N` the size of the square matrix type `$t`.
#[doc(hidden)]
#[macro_export]
macro_rules! with_mat {
    ($t:expr, $N:ident => $body:expr) => {
        $crate::__dispatch!(@mat with_mat, $t, $N => $body; [2 3 4])
    };
}
