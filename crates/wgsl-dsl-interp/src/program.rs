//! The compact form a module is resolved into once, before any dispatch: every naga
//! expression becomes a register slot (or a view of another one, or a constant), every
//! emitted expression an [`Op`], every statement an [`St`].
//!
//! # Registers
//! Each function has one register file of 32-bit words. A value of `w` words that varies per
//! invocation takes `w * lanes` words, structure of arrays: component `c` of lane `l` is at
//! `off + c * lanes + l`. A constant takes `w` words, shared by all lanes. A [`Src`] addresses
//! both with strides, so constants, splats and constant-index accesses cost no copy.
//! A pointer's register holds its offset (bytes into a global, words into a local), its root
//! is static.

use naga::Span;

use super::semantics::Kind;

/// Where an operand's words are: component `c` of lane `l` is at `off + c * cs + l * ls`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Src {
    pub off: u32,
    /// Component stride: `lanes` for per-lane values, 1 for constants, 0 for a broadcast
    /// scalar.
    pub cs: u32,
    /// Lane stride: 1 for per-lane values, 0 for constants.
    pub ls: u32,
}

impl Src {
    /// The same value, with its first component repeated for every component (a scalar
    /// operand of a vector operation, WGSL's implicit splat).
    pub fn broadcast(self) -> Src {
        Src { cs: 0, ..self }
    }

    /// Component `c` onwards.
    pub fn at(self, c: u32) -> Src {
        Src {
            off: self.off + c * self.cs,
            ..self
        }
    }

    #[inline(always)]
    pub fn idx(self, c: u32, l: usize) -> usize {
        (self.off + c * self.cs) as usize + l * self.ls as usize
    }
}

/// How one word of a value is stored in a global's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MemKind {
    /// Four bytes (`f32`, `i32`, `u32`, `bool` in workgroup memory).
    W32,
    /// Two bytes (`f16`).
    H16,
    /// Four bytes of an `atomic<T>`: never part of a data race.
    Atomic,
}

/// The memory layout of a value: one `(byte offset, kind)` per word, in value order.
pub(crate) type Plan = Vec<(u32, MemKind)>;

/// What a pointer points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Root {
    /// Global variable `i` (offsets in bytes).
    Global(usize),
    /// Local variable `i` of the function (offsets in words).
    Local(usize),
}

/// The address space of a global.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Uniform,
    Storage { write: bool },
    Workgroup,
}

#[derive(Debug)]
pub(crate) struct Global {
    /// For messages: ``buffer `x` (binding 1)`` or ``workgroup variable `tile` ``.
    pub what: String,
    pub space: Space,
    /// Index of the dispatch argument bound to it.
    pub arg: Option<usize>,
    /// Bytes (workgroup variables).
    pub size: u32,
    /// Race-check granule: `1 << shift` bytes (2 when the variable holds `f16`s).
    pub shift: u8,
}

#[derive(Debug)]
pub(crate) struct Local {
    pub name: String,
    /// First word of the variable in the function's local file (structure of arrays).
    pub off: u32,
    pub words: u32,
    /// Initial value when declared with one (a constant).
    pub init: Option<Vec<u32>>,
}

/// The length of an array being indexed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Len {
    Fixed(u32),
    /// A runtime-sized array in global `g`: `(bytes of the buffer - offset) / stride`.
    Runtime {
        global: usize,
    },
}

/// Built-in values the entry point receives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Builtin {
    GlobalId,
    LocalId,
    LocalIndex,
    WorkgroupId,
    NumWorkgroups,
    WorkgroupSize,
    SubgroupSize,
    SubgroupInvocationId,
    SubgroupId,
    NumSubgroups,
}

/// One evaluation of an emitted expression for the active lanes. `dst` is a per-lane slot.
#[derive(Debug)]
pub(crate) enum Op {
    Unary {
        op: naga::UnaryOperator,
        kind: Kind,
        n: u8,
        a: Src,
        dst: u32,
    },
    /// Componentwise binary operator; `kind` is the operands' scalar type.
    Binary {
        op: naga::BinaryOperator,
        kind: Kind,
        n: u8,
        a: Src,
        b: Src,
        dst: u32,
    },
    /// `(r x k) * (k x c)` matrix product, column-major (vectors are `k x 1` or `1 x k`).
    MatMul {
        kind: Kind,
        r: u8,
        k: u8,
        c: u8,
        a: Src,
        b: Src,
        dst: u32,
    },
    /// Componentwise math function of up to 4 arguments.
    Math {
        fun: naga::MathFunction,
        kind: Kind,
        n: u8,
        args: [Src; 4],
        dst: u32,
    },
    /// Math functions over whole vectors (`dot`, `length`, `cross`, ...). `n` is the
    /// operands' component count.
    VectorMath {
        fun: naga::MathFunction,
        kind: Kind,
        n: u8,
        args: [Src; 3],
        dst: u32,
    },
    /// `transpose` of a `c x r` (columns x rows) matrix.
    Transpose {
        c: u8,
        r: u8,
        a: Src,
        dst: u32,
    },
    Determinant {
        kind: Kind,
        n: u8,
        a: Src,
        dst: u32,
    },
    /// `modf`, `frexp` of an `n`-component float: `2n` words, the struct's members in order
    /// (`fract` then `whole` or `exp`).
    Decompose {
        fun: naga::MathFunction,
        kind: Kind,
        n: u8,
        a: Src,
        dst: u32,
    },
    /// The packing built-ins (`pack*`, `unpack*`, `dot4I8Packed`, `dot4U8Packed`): `a` has
    /// `n` components, `b` is `dot4*8Packed`'s second word.
    Packing {
        fun: naga::MathFunction,
        n: u8,
        a: Src,
        b: Src,
        dst: u32,
    },
    /// `any`, `all` (`n` components to one bool), `isNan`, `isInf` (componentwise).
    Relational {
        fun: naga::RelationalFunction,
        kind: Kind,
        n: u8,
        a: Src,
        dst: u32,
    },
    Select {
        n: u8,
        cond: Src,
        accept: Src,
        reject: Src,
        dst: u32,
    },
    Convert {
        from: Kind,
        to: Kind,
        n: u8,
        a: Src,
        dst: u32,
    },
    Swizzle {
        n: u8,
        pattern: [u8; 4],
        a: Src,
        dst: u32,
    },
    Compose {
        parts: Vec<(Src, u32)>,
        dst: u32,
    },
    /// Dynamic index into a value (array, vector or matrix in registers).
    ValueIndex {
        base: Src,
        index: Src,
        signed: bool,
        elem: u32,
        len: u32,
        dst: u32,
        span: Span,
    },
    /// Dynamic index into memory through a pointer: `dst = base + index * stride`.
    PtrIndex {
        base: Src,
        index: Src,
        signed: bool,
        stride: u32,
        len: Len,
        root: Root,
        dst: u32,
        span: Span,
    },
    /// Constant offset from a pointer that varies per lane.
    PtrAdd {
        base: Src,
        add: u32,
        dst: u32,
    },
    Load {
        root: Root,
        ptr: Src,
        /// Global: index into [`Func::plans`]; local: the word count.
        plan: u32,
        n: u32,
        dst: u32,
        span: Span,
    },
    ArrayLength {
        global: usize,
        ptr: Src,
        stride: u32,
        dst: u32,
    },
    /// `coopLoad`/`coopLoadT`: a cooperative matrix from memory, by each subgroup.
    CoopLoad {
        mem: CoopMem,
        dst: u32,
        span: Span,
    },
    /// `coopMultiplyAdd(a, b, c)`: `a` is `m x k`, `b` `k x n`, `c` and the result `m x n`.
    CoopMulAdd {
        a: Src,
        b: Src,
        c: Src,
        m: u8,
        n: u8,
        k: u8,
        input: Kind,
        acc: Kind,
        dst: u32,
        span: Span,
    },
}

/// Where a cooperative matrix is loaded from or stored to (naga's `CooperativeData`): element
/// `(r, c)` of the `rows x cols` matrix is scalar `r * stride * vec + c` (row-major) or
/// `c * stride * vec + r` (column-major) after the pointer's, where `vec` is the number of
/// scalars of the pointed-to type (the stride counts that type).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoopMem {
    pub global: usize,
    pub ptr: Src,
    pub stride: Src,
    pub rows: u8,
    pub cols: u8,
    pub row_major: bool,
    pub vec: u8,
    /// The scalars' memory kind (`W32` or `H16`).
    pub kind: MemKind,
}

/// How a subgroup operation combines or picks values.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SubgroupKind {
    Collective(naga::SubgroupOperation, naga::CollectiveOperation),
    /// `index` is the lane, delta or mask of the gather mode, if it takes one.
    Gather(GatherMode, Option<Src>),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum GatherMode {
    BroadcastFirst,
    Broadcast,
    Shuffle,
    ShuffleDown,
    ShuffleUp,
    ShuffleXor,
    QuadBroadcast,
    QuadSwap(naga::Direction),
}

/// A store of the `n` words of `value` through `ptr` (into `root`), laid out by `plan`.
#[derive(Debug)]
pub(crate) struct StoreSt {
    pub root: Root,
    pub ptr: Src,
    pub plan: u32,
    pub n: u32,
    pub value: Src,
    pub span: Span,
}

/// The subgroup operation `op` of the `n` components (of kind `kind`) of `arg`, into `dst`.
#[derive(Debug)]
pub(crate) struct SubgroupSt {
    pub op: SubgroupKind,
    pub kind: Kind,
    pub n: u8,
    pub arg: Src,
    pub dst: u32,
    pub span: Span,
}

/// An atomic read-modify-write of the word `ptr` of global `global` (WGSL spec §17.8).
#[derive(Debug)]
pub(crate) struct AtomicSt {
    pub global: usize,
    pub ptr: Src,
    pub fun: naga::AtomicFunction,
    /// `i32` (for `min` and `max`).
    pub signed: bool,
    pub value: Src,
    /// The `cmp` of `atomicCompareExchangeWeak`.
    pub compare: Option<Src>,
    /// Where the old value (and the `exchanged` flag after it) goes.
    pub result: Option<u32>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) enum St {
    /// Evaluate `ops[range]` in order.
    Ops(std::ops::Range<usize>),
    If {
        cond: Src,
        accept: Vec<St>,
        reject: Vec<St>,
        span: Span,
    },
    Switch {
        selector: Src,
        cases: Vec<(Option<u32>, Vec<St>, bool)>,
        span: Span,
    },
    Loop {
        body: Vec<St>,
        continuing: Vec<St>,
        break_if: Option<Src>,
        span: Span,
    },
    Break(Span),
    Continue(Span),
    Return {
        value: Option<(Src, u32)>,
        span: Span,
    },
    Store(StoreSt),
    Call {
        function: usize,
        args: Vec<(Src, u32)>,
        result: Option<u32>,
        span: Span,
    },
    Atomic(AtomicSt),
    Barrier {
        flags: naga::Barrier,
        span: Span,
    },
    WorkgroupUniformLoad {
        global: usize,
        ptr: Src,
        plan: u32,
        n: u32,
        dst: u32,
        span: Span,
    },
    Subgroup(SubgroupSt),
    Ballot {
        predicate: Option<Src>,
        dst: u32,
    },
    /// `coopStore`/`coopStoreT` of the matrix `value`, by each subgroup.
    CoopStore {
        mem: CoopMem,
        value: Src,
        span: Span,
    },
    /// `debug_print` number `print` of [`Compiled::prints`]: each argument's value, scalar
    /// kind and component count.
    DebugPrint {
        print: usize,
        args: Vec<(Src, Kind, u32)>,
    },
}

/// A `debug_print` of the module: the format string's pieces and the Rust call.
#[derive(Debug)]
pub(crate) struct PrintInfo {
    pub pieces: Vec<String>,
    pub site: wgsl_dsl_core::CallSite,
}

/// One function, resolved.
#[derive(Debug)]
pub(crate) struct Func {
    /// Words of the register file (constants and per-lane slots).
    pub regs: usize,
    /// `(offset, word)` of every constant word, written once per dispatch.
    pub consts: Vec<(u32, u32)>,
    pub locals: Vec<Local>,
    /// Words of local variables per lane.
    pub local_words: u32,
    /// Per-lane slots of the arguments, with their word counts.
    pub args: Vec<(u32, u32)>,
    /// Entry point: the slot each built-in argument goes to.
    pub builtins: Vec<(u32, Builtin)>,
    /// Per-lane slot of the return value, with its word count.
    pub ret: Option<(u32, u32)>,
    pub plans: Vec<Plan>,
    pub ops: Vec<Op>,
    pub body: Vec<St>,
}

/// A module resolved for the interpreter.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub name: String,
    pub workgroup_size: [u32; 3],
    pub lanes: usize,
    pub globals: Vec<Global>,
    /// The module's functions in order, then the entry point.
    pub functions: Vec<Func>,
    /// The module's `debug_print`s.
    pub prints: Vec<PrintInfo>,
}

impl Compiled {
    pub fn entry(&self) -> usize {
        self.functions.len() - 1
    }
}
