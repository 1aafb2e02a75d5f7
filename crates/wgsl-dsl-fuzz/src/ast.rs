//! The fuzzer's own program representation: what the generator produces, the shrinker
//! reduces, the analysis checks, [`crate::emit`] turns into DSL builder calls and
//! [`crate::print`] writes as Rust source.
//!
//! A [`Program`] is one compute kernel: its inputs (their contents are part of the program),
//! helper functions and body. Values are named by [`Id`]s; every statement that binds one
//! (`let`, a call, an atomic, a subgroup operation, a loop counter) gives a fresh id.

pub use crate::ty::{Scalar, Ty};

/// A value's name.
pub type Id = u32;

/// A scalar literal (an `f16` as its bits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    /// `bool`
    Bool(bool),
    /// `i32`
    I32(i32),
    /// `u32`
    U32(u32),
    /// `f32`
    F32(f32),
    /// `f16`, its bits
    F16(u16),
}

impl Lit {
    /// Its scalar type.
    pub fn scalar(self) -> Scalar {
        match self {
            Lit::Bool(_) => Scalar::Bool,
            Lit::I32(_) => Scalar::I32,
            Lit::U32(_) => Scalar::U32,
            Lit::F32(_) => Scalar::F32,
            Lit::F16(_) => Scalar::F16,
        }
    }
    /// The value as `f64` (floats and integers; `bool` as 0 or 1).
    pub fn as_f64(self) -> f64 {
        match self {
            Lit::Bool(b) => f64::from(u8::from(b)),
            Lit::I32(v) => f64::from(v),
            Lit::U32(v) => f64::from(v),
            Lit::F32(v) => f64::from(v),
            Lit::F16(b) => f64::from(half::f16::from_bits(b).to_f32()),
        }
    }
}

/// The built-in values the entry point reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `global_invocation_id()`
    GlobalId,
    /// `local_invocation_id()`
    LocalId,
    /// `local_invocation_index()`
    LocalIndex,
    /// `workgroup_id()`
    WorkgroupId,
    /// `num_workgroups()`
    NumWorkgroups,
    /// `subgroup_size()`
    SubgroupSize,
    /// `subgroup_invocation_id()`
    SubgroupId,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Un {
    /// `-e`
    Neg,
    /// `!e` on an integer
    BitNot,
    /// `!e` / `e.not()` on a `bool`
    Not,
}

/// Binary arithmetic and bit operators (`std::ops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bin {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// Comparison methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `.lt`
    Lt,
    /// `.le`
    Le,
    /// `.gt`
    Gt,
    /// `.ge`
    Ge,
    /// `.eq`
    Eq,
    /// `.ne`
    Ne,
}

/// The built-in functions of the DSL (`wgsl_dsl::exp::builtins`, `packing`, `decompose`) and
/// the DSL's own compositions (`square`, `powi`, the saturating conversions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Fun {
    // numeric, one operand
    Abs,
    Sign,
    // float, one operand
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    InverseSqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    Saturate,
    Radians,
    Degrees,
    QuantizeToF16,
    // integer, one operand
    CountOneBits,
    CountLeadingZeros,
    CountTrailingZeros,
    FirstLeadingBit,
    FirstTrailingBit,
    ReverseBits,
    // two and three operands
    Min,
    Max,
    Clamp,
    Pow,
    Atan2,
    Step,
    Mix,
    Smoothstep,
    Fma,
    /// `square(e)`
    Square,
    /// `powi(e, n)`: the power is [`Expr::Math`]'s `n` (a Rust constant; see `analysis_math::math`)
    Powi(u32),
    // vectors and matrices
    Dot,
    Cross,
    Length,
    Distance,
    Normalize,
    FaceForward,
    Reflect,
    Refract,
    Transpose,
    Determinant,
    // bits
    ExtractBits,
    InsertBits,
    // packing
    Pack4x8snorm,
    Pack4x8unorm,
    Pack2x16snorm,
    Pack2x16unorm,
    Pack2x16float,
    Pack4xI8,
    Pack4xU8,
    Pack4xI8Clamp,
    Pack4xU8Clamp,
    Unpack4x8snorm,
    Unpack4x8unorm,
    Unpack2x16snorm,
    Unpack2x16unorm,
    Unpack2x16float,
    Unpack4xI8,
    Unpack4xU8,
    Dot4I8Packed,
    Dot4U8Packed,
    // splitting floats
    Ldexp,
}

impl Fun {
    /// The DSL function's name.
    pub fn name(self) -> &'static str {
        use Fun::*;
        match self {
            Abs => "abs",
            Sign => "sign",
            Exp => "exp",
            Exp2 => "exp2",
            Log => "log",
            Log2 => "log2",
            Sqrt => "sqrt",
            InverseSqrt => "inverse_sqrt",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Fract => "fract",
            Saturate => "saturate",
            Radians => "radians",
            Degrees => "degrees",
            QuantizeToF16 => "quantize_to_f16",
            CountOneBits => "count_one_bits",
            CountLeadingZeros => "count_leading_zeros",
            CountTrailingZeros => "count_trailing_zeros",
            FirstLeadingBit => "first_leading_bit",
            FirstTrailingBit => "first_trailing_bit",
            ReverseBits => "reverse_bits",
            Min => "min",
            Max => "max",
            Clamp => "clamp",
            Pow => "pow",
            Atan2 => "atan2",
            Step => "step",
            Mix => "mix",
            Smoothstep => "smoothstep",
            Fma => "fma",
            Square => "square",
            Powi(_) => "powi",
            Dot => "dot",
            Cross => "cross",
            Length => "length",
            Distance => "distance",
            Normalize => "normalize",
            FaceForward => "face_forward",
            Reflect => "reflect",
            Refract => "refract",
            Transpose => "transpose",
            Determinant => "determinant",
            ExtractBits => "extract_bits",
            InsertBits => "insert_bits",
            Pack4x8snorm => "pack4x8snorm",
            Pack4x8unorm => "pack4x8unorm",
            Pack2x16snorm => "pack2x16snorm",
            Pack2x16unorm => "pack2x16unorm",
            Pack2x16float => "pack2x16float",
            Pack4xI8 => "pack4x_i8",
            Pack4xU8 => "pack4x_u8",
            Pack4xI8Clamp => "pack4x_i8_clamp",
            Pack4xU8Clamp => "pack4x_u8_clamp",
            Unpack4x8snorm => "unpack4x8snorm",
            Unpack4x8unorm => "unpack4x8unorm",
            Unpack2x16snorm => "unpack2x16snorm",
            Unpack2x16unorm => "unpack2x16unorm",
            Unpack2x16float => "unpack2x16float",
            Unpack4xI8 => "unpack4x_i8",
            Unpack4xU8 => "unpack4x_u8",
            Dot4I8Packed => "dot4_i8_packed",
            Dot4U8Packed => "dot4_u8_packed",
            Ldexp => "ldexp",
        }
    }
}

/// Conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Conv {
    /// `.to_f32()`, `.to_i32()`, ... (`convert` to the scalar)
    To(Scalar),
    /// `.bitcast::<T>()`: the result's type, a scalar or a vector of its operand's width
    /// (the printer writes it whole, `.bitcast::<Vec3<u32>>()`).
    Bitcast(Ty),
    /// `.to_i32_saturating()` / `.to_u32_saturating()`
    Saturating(Scalar),
}

/// The parts of `modf` and `frexp` results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// `modf(e).fract()`
    ModfFract,
    /// `modf(e).whole()`
    ModfWhole,
    /// `frexp(e).fract()`
    FrexpFract,
    /// `frexp(e).exp()`
    FrexpExp,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// `lit(v)`
    Lit(Lit),
    /// `Exp::<T>::zero()`
    Zero(Ty),
    /// `in_<s>.at(index % in_<s>.len()).load()`: an element of the read-only input buffer of
    /// scalar `s` (the index is reduced in range: WGSL's robust access is not relied on).
    Input(Scalar, Box<Expr>),
    /// The uniform `u32` parameter: `param.load()`.
    Param,
    /// A built-in value.
    Builtin(Builtin),
    /// A `let`, a statement's result, a loop counter or a helper function's parameter.
    Value(Id),
    /// `var.load()`
    Var(Id),
    /// `wg.at(index).load()`: the workgroup array (`u32`, one element per invocation).
    Wg(Box<Expr>),
    /// The workgroup atomic: `wg_atomic.load()` (`atomicLoad`).
    WgAtomic,
    /// A unary operator.
    Un(Un, Box<Expr>),
    /// A binary operator.
    Bin(Bin, Box<Expr>, Box<Expr>),
    /// A comparison.
    Cmp(Cmp, Box<Expr>, Box<Expr>),
    /// `a.and(b)` (`true`) or `a.or(b)` (`false`).
    Logic(bool, Box<Expr>, Box<Expr>),
    /// A built-in function.
    Math(Fun, Vec<Expr>),
    /// `select(reject, accept, condition)` (scalar condition) or `condition.select(accept,
    /// reject)` (`true`: a vector condition): `[condition, accept, reject]`.
    Select(bool, Box<[Expr; 3]>),
    /// A conversion.
    Conv(Conv, Box<Expr>),
    /// `Exp::<vecN<S>>::splat(e)`
    Splat(u8, Box<Expr>),
    /// `vec2(..)`, `vec3(..)`, `vec4(..)`, or `mat([..])` from column vectors.
    Compose(Vec<Expr>),
    /// `.xy()` (2) or `.xyz()` (3).
    Swizzle(u8, Box<Expr>),
    /// `.x()`, `.y()`, `.z()`, `.w()`.
    Component(u8, Box<Expr>),
    /// `v.index(i)`: a dynamic index into a vector value (`i` reduced in range).
    Index(Box<Expr>, Box<Expr>),
    /// `array([e0, e1, e2, e3]).index(i)` (`i` reduced in range).
    ArrayPick(Vec<Expr>, Box<Expr>),
    /// `v.any()` (`true`) or `v.all()` (`false`).
    AnyAll(bool, Box<Expr>),
    /// A part of `modf(e)` or `frexp(e)`.
    Split(Part, Box<Expr>),
}

/// [`Expr::for_each_child`] and [`Expr::for_each_child_mut`] from one `match` (`$m`: `mut`
/// or nothing).
macro_rules! for_each_child {
    ($(#[$doc:meta])* $name:ident $($m:tt)?) => {
        $(#[$doc])*
        pub fn $name(&$($m)? self, f: &mut dyn FnMut(&$($m)? Expr)) {
            match self {
                Expr::Lit(_)
                | Expr::Zero(_)
                | Expr::Param
                | Expr::Builtin(_)
                | Expr::Value(_)
                | Expr::Var(_)
                | Expr::WgAtomic => {}
                Expr::Input(_, a)
                | Expr::Wg(a)
                | Expr::Un(_, a)
                | Expr::Conv(_, a)
                | Expr::Splat(_, a)
                | Expr::Swizzle(_, a)
                | Expr::Component(_, a)
                | Expr::AnyAll(_, a)
                | Expr::Split(_, a) => f(&$($m)? **a),
                Expr::Bin(_, a, b)
                | Expr::Cmp(_, a, b)
                | Expr::Logic(_, a, b)
                | Expr::Index(a, b) => {
                    f(&$($m)? **a);
                    f(&$($m)? **b);
                }
                Expr::Math(_, args) | Expr::Compose(args) => {
                    for a in &$($m)? *args {
                        f(a);
                    }
                }
                Expr::Select(_, p) => {
                    for a in &$($m)? **p {
                        f(a);
                    }
                }
                Expr::ArrayPick(elems, i) => {
                    for a in &$($m)? *elems {
                        f(a);
                    }
                    f(&$($m)? **i);
                }
            }
        }
    };
}

impl Expr {
    for_each_child! {
        /// Apply `f` to each operand (not to their operands), in order.
        for_each_child
    }
    for_each_child! {
        /// Apply `f` to each operand (not to their operands), in order. mutably.
        for_each_child_mut mut
    }
}

/// How a `var` is declared.
#[derive(Clone, Debug, PartialEq)]
pub enum VarInit {
    /// `k.var(name, init)`
    Value(Expr),
    /// `k.var_zeroed::<T>(name)`
    Zero,
    /// `k.var_declared::<T>(name)` (every path assigns before reading: the generator assigns
    /// right after)
    Declared,
}

/// The loop forms of the builder.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopForm {
    /// `k.for_range(name, start, end, ..)`
    Range,
    /// `k.for_step(name, start, end, step, ..)`
    Step(u32),
    /// `k.for_in(name, LoopRange::inclusive(start, end - 1)[.rev()][.step_by(s)], ..)`
    InclusiveIn { rev: bool, step: Option<u32> },
    /// `k.for_in(name, LoopRange::new(start, end).rev(), ..)`
    RevIn,
    /// `k.while_(c.lt(end), ..)` over a `var` counter stepped first thing in the body
    While,
    /// `k.loop_(..)` with `if c >= end { break }` and the step first thing in the body
    Loop,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exchange,
    CompareExchange,
    Store,
    /// `atomic_add_f32` of `f32((value & 1023) | 1)` (a whole number in 1..=1023) into the
    /// invocation's own slot [`crate::analysis::F32_SLOT`].
    AddF32,
}

/// Which atomic an atomic statement touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicTarget {
    /// `atom[gi * A + slot]` (`array<atomic<u32>>`): this invocation's own atomic; its old
    /// values are deterministic.
    Own(u32),
    /// `atom[total * A + slot]`, shared by every invocation of the dispatch; each shared slot
    /// takes one commutative operation only (`slot % 6`), so its final value is
    /// deterministic; the old values are not used.
    Shared(u32),
    /// The workgroup atomic, `atomicAdd` only while it is written (read in the next phase).
    Workgroup,
}

/// Subgroup operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SubgroupOp {
    Add,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
    InclusiveAdd,
    ExclusiveAdd,
    InclusiveMul,
    ExclusiveMul,
    All,
    Any,
    Ballot,
    BroadcastFirst,
    /// `subgroup_broadcast(value, lane)`: lane is the constant operand
    Broadcast,
    /// `subgroup_shuffle(value, lane % subgroup_size())`
    Shuffle,
    /// `subgroup_shuffle_xor(value, mask)`: mask a constant below the subgroup size
    ShuffleXor,
    /// `subgroup_shuffle_up(value, delta)`, the lanes without a source replaced by `value`
    ShuffleUp,
    /// `subgroup_shuffle_down(value, delta)`, likewise
    ShuffleDown,
    QuadSwapX,
    QuadSwapY,
    QuadSwapDiagonal,
    /// `quad_broadcast(value, id)`
    QuadBroadcast,
    /// `subgroup_elect()` (no operand)
    Elect,
}

/// A deliberate mistake: the build must fail with an error located at it (oracle (a)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mistake {
    /// `LoopRange::new(0, 4).rev().step_by(2).rev()`: a range form the builder refuses.
    RevStepRev,
    /// Calling a helper function of another `KernelBuilder`.
    ForeignCall,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let v = k.let_("v", e);`
    Let(Id, Expr),
    /// `let v = k.var(..)`: what it may hold (every store must fit), and its declaration.
    Var(Id, crate::info::Contract, VarInit),
    /// `k.store(&v, e)`
    Assign(Id, Expr),
    /// `k.update(&v, |old| old op e)`
    Update(Id, Bin, Expr),
    /// `k.store(&out_<s>.at(gi * S + slot), e)`: this invocation's own output slot of the
    /// output buffer of `e`'s scalar type `s` (`bool` goes to `out_u32` as 0 or 1).
    Out(Scalar, u32, Expr),
    /// `k.if_else(c, ..)` (or `k.if_` when `else` is empty)
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `let v = k.if_value("v", c, |k| {..; a}, |k| {..; b});`, of type `Ty`
    IfValue(Id, Ty, Expr, (Vec<Stmt>, Expr), (Vec<Stmt>, Expr)),
    /// A counted loop ([`CountedLoop`]).
    Loop(CountedLoop),
    /// `k.break_()`
    Break,
    /// `k.continue_()`
    Continue,
    /// `k.switch(sel, |s| { s.case([..], ..); .. s.default(..) })`
    Switch(Expr, Vec<(Vec<i32>, Vec<Stmt>)>, Option<Vec<Stmt>>),
    /// `k.workgroup_barrier()` (`true`) or `k.storage_barrier()` (`false`)
    Barrier(bool),
    /// `k.store(&wg.at(local_invocation_index()), e)`: this invocation's own element.
    WgStore(Expr),
    /// `let v = k.workgroup_uniform_load(&wg.at(index));` (index a constant)
    WgUniformLoad(Id, u32),
    /// `let v = k.call(&fN, (args..))`
    Call(Id, usize, Vec<Expr>),
    /// An atomic operation: its result (unless `Store`), the atomic, the operation, the
    /// value and (compare-exchange) the comparand.
    Atomic(Option<Id>, AtomicTarget, AtomicOp, Expr, Option<Expr>),
    /// A subgroup operation: its result, the operation, the operand and a constant (lane,
    /// mask, delta, quad index) or the shuffle's lane expression.
    Subgroup(Id, SubgroupOp, Expr, Option<Expr>),
    /// `k.return_value(e)` (helper functions only)
    Return(Expr),
    /// A deliberate mistake.
    Mistake(Mistake),
}

/// A counted loop: `counter` from `start` while below `end` (an expression, at most
/// `max_trips` iterations by construction), with `body`.
#[derive(Clone, Debug, PartialEq)]
pub struct CountedLoop {
    /// The counter's id (its value inside the body).
    pub counter: Id,
    /// `i32` or `u32`.
    pub scalar: Scalar,
    /// The first value.
    pub start: i32,
    /// The bound (exclusive), an expression of the counter's type.
    pub end: Expr,
    /// The form.
    pub form: LoopForm,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A helper function `fN(p0: T, ..) -> T`: parameters and result of one type (the DSL's
/// functions are typed by Rust tuples; one type keeps the dispatch small).
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// The parameters' and result's type.
    pub ty: Ty,
    /// The parameters' ids, 1 to 3 of them.
    pub params: Vec<Id>,
    /// What each parameter may hold (the calls clamp their arguments into it).
    pub contract: crate::info::Contract,
    /// The body (lets, `if`s with early returns).
    pub body: Vec<Stmt>,
    /// The value returned at the end.
    pub result: Expr,
}

/// The contents of the input buffers (read-only storage), and the uniform parameter.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Inputs {
    /// `in_f32`: multiples of 1/16 in [-8, 8].
    pub f32: Vec<f32>,
    /// `in_i32`: any bits.
    pub i32: Vec<i32>,
    /// `in_u32`: any bits.
    pub u32: Vec<u32>,
    /// `in_f16` (bits): multiples of 1/16 in [-8, 8].
    pub f16: Vec<u16>,
    /// `param`: the uniform.
    pub param: u32,
}

/// A cooperative-matrix product `d = a * b + c` of 16x16 tiles (f16 inputs, f32 accumulator),
/// checked on the interpreter against an `f64` reference within the bound of `f32`
/// accumulation (and on GPUs that have cooperative matrices).
#[derive(Clone, Debug, PartialEq)]
pub struct Coop {
    /// Row-major `a`, `b` (f16 bits) and `c` (f32), 16x16 each.
    pub a: Vec<u16>,
    /// See `a`.
    pub b: Vec<u16>,
    /// See `a`.
    pub c: Vec<f32>,
    /// Whether `a` is loaded column-major (`coopLoad` rather than `coopLoadT`).
    pub a_col_major: bool,
    /// Whether the accumulator starts from `c` (else zero).
    pub load_c: bool,
}

/// A texture kernel's data (`crate::texture`).
#[derive(Clone, Debug, PartialEq)]
pub struct TextureCase {
    /// `[width, height]`.
    pub size: [u32; 2],
    /// The source texels, row by row.
    pub texels: Vec<u32>,
    /// The factor `m`.
    pub factor: u32,
}

/// One generated kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The seed it was generated from.
    pub seed: u64,
    /// `@workgroup_size`.
    pub workgroup: [u32; 3],
    /// The dispatch grid (workgroups).
    pub grid: [u32; 3],
    /// Whether it may use subgroup operations (1-D workgroups of whole subgroups).
    pub subgroups: bool,
    /// The input buffers.
    pub inputs: Inputs,
    /// Helper functions.
    pub funcs: Vec<Func>,
    /// The entry point's body.
    pub body: Vec<Stmt>,
    /// A cooperative-matrix product, instead of a body (a kernel of its own).
    pub coop: Option<Coop>,
    /// A texture kernel, instead of a body.
    pub texture: Option<TextureCase>,
}

impl Program {
    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        self.workgroup.iter().product()
    }
    /// Invocations of the whole dispatch.
    pub fn total_invocations(&self) -> u32 {
        self.invocations() * self.grid.iter().product::<u32>()
    }
}

/// Visit every statement list of `body`, nested ones included (`f` may edit them).
pub fn for_each_block(body: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Vec<Stmt>)) {
    f(body);
    for s in body.iter_mut() {
        match s {
            Stmt::If(_, a, b) => {
                for_each_block(a, f);
                for_each_block(b, f);
            }
            Stmt::IfValue(_, _, _, (a, _), (b, _)) => {
                for_each_block(a, f);
                for_each_block(b, f);
            }
            Stmt::Loop(l) => for_each_block(&mut l.body, f),
            Stmt::Switch(_, arms, default) => {
                for (_, b) in arms {
                    for_each_block(b, f);
                }
                if let Some(d) = default {
                    for_each_block(d, f);
                }
            }
            _ => {}
        }
    }
}
