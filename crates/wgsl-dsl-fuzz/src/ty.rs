//! The WGSL types the generator uses ([`Scalar`], [`Ty`]): below the program representation
//! ([`crate::ast`], which re-exports them), the float model ([`crate::accuracy`]) and the
//! analysis's descriptions of values ([`crate::info`]).

/// A WGSL scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `f32`
    F32,
    /// `f16`
    F16,
}

impl Scalar {
    /// Every scalar.
    pub const ALL: [Scalar; 5] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::U32,
        Scalar::F32,
        Scalar::F16,
    ];
    /// `f32` or `f16`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F16)
    }
    /// `i32` or `u32`.
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32)
    }
    /// Its Rust name in the printed DSL code.
    pub fn rust(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::F32 => "f32",
            Scalar::F16 => "f16",
        }
    }
}

/// A WGSL type the generator uses: a scalar, a vector of 2 to 4 scalars, or a square `f32`
/// matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    /// A scalar.
    S(Scalar),
    /// `vecN<S>`, N in 2..=4.
    V(Scalar, u8),
    /// `matNxN<f32>`, N in 2..=4.
    M(u8),
}

impl Ty {
    /// The scalar of the type (`f32` for matrices).
    pub fn scalar(self) -> Scalar {
        match self {
            Ty::S(s) | Ty::V(s, _) => s,
            Ty::M(_) => Scalar::F32,
        }
    }
    /// 1 for scalars, N for vectors and matrices.
    pub fn width(self) -> u8 {
        match self {
            Ty::S(_) => 1,
            Ty::V(_, n) | Ty::M(n) => n,
        }
    }
    /// The same shape with another scalar (matrices stay matrices).
    pub fn with_scalar(self, s: Scalar) -> Ty {
        match self {
            Ty::S(_) => Ty::S(s),
            Ty::V(_, n) => Ty::V(s, n),
            Ty::M(n) => Ty::M(n),
        }
    }
    /// A scalar (width 1) or vector of `s`.
    pub fn sv(s: Scalar, n: u8) -> Ty {
        if n == 1 { Ty::S(s) } else { Ty::V(s, n) }
    }
    /// A scalar or vector (not a matrix).
    pub fn is_sv(self) -> bool {
        !matches!(self, Ty::M(_))
    }
    /// Its Rust type in the printed DSL code.
    pub fn rust(self) -> String {
        match self {
            Ty::S(s) => s.rust().to_string(),
            Ty::V(s, n) => format!("Vec{n}<{}>", s.rust()),
            Ty::M(n) => format!("Mat{n}x{n}"),
        }
    }
}
