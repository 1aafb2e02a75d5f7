//! Scans (prefix sums with any associative operation) over one workgroup, with or without
//! subgroup operations, and the kernels of a scan over a whole buffer.
//!
//! - [`KernelBuilder::workgroup_scan`]: the inclusive or exclusive scan of one value per
//!   invocation, in `local_invocation_index` order, through workgroup memory
//!   (Hillis and Steele 1986, "Data parallel algorithms": `ceil(log2(N))` rounds, each
//!   combining with the value `2^r` slots below). Portable WGSL.
//! - [`KernelBuilder::workgroup_scan_subgroups`]: the same result with `subgroupInclusiveAdd`
//!   (or `Mul`) inside each subgroup and one subgroup scan of the subgroups' totals, where the
//!   adapter has subgroups; it checks at run time that the subgroups are the contiguous,
//!   aligned runs of `local_invocation_index` it needs, and takes the workgroup-memory path
//!   otherwise.
//! - [`scan_blocks`] and [`add_block_offsets`]: the two kernels of a scan over a buffer of any
//!   length (block scans, a scan of the block totals, offsets added back; Blelloch 1990,
//!   "Prefix sums and their applications", §1.4). `wgsl_dsl::runtime::PrefixScan` runs them.
//!
//! [`ScanOp::scan_host`] is the CPU specification of all of them.

use std::rc::Rc;

use super::stmt::VarInit;
use super::{KernelBuilder, Place, ReadWrite};
use crate::exp::{Exp, IntoExp, Literal, lit};
use crate::site::CallSite;
use crate::types::*;

/// Whether element `i` of a scan includes input `i` (`Inclusive`: `x0 op .. op xi`) or not
/// (`Exclusive`: `x0 op .. op x(i-1)`, the identity for `i = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// `y[i] = x[0] op ... op x[i]`.
    Inclusive,
    /// `y[i] = x[0] op ... op x[i - 1]`, `y[0]` the identity.
    Exclusive,
}

/// Scalars scans take (`f32`, `i32`, `u32`), with the identities of the built-in operations.
pub trait ScanScalar: Scalar + Numeric + Literal + Copy + PartialOrd + std::fmt::Debug {
    /// `0`
    const ZERO: Self;
    /// `1`
    const ONE: Self;
    /// The identity of `max`: the lowest finite value (`f32::MIN` for `f32`: WGSL has no
    /// infinity literal, so an exclusive `max` scan starts at `f32::MIN`).
    const LOWEST: Self;
    /// The identity of `min`: the highest finite value.
    const HIGHEST: Self;
    #[doc(hidden)]
    fn host_add(a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn host_mul(a: Self, b: Self) -> Self;
}
impl ScanScalar for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const LOWEST: Self = f32::MIN;
    const HIGHEST: Self = f32::MAX;
    fn host_add(a: Self, b: Self) -> Self {
        a + b
    }
    fn host_mul(a: Self, b: Self) -> Self {
        a * b
    }
}
impl ScanScalar for i32 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    const LOWEST: Self = i32::MIN;
    const HIGHEST: Self = i32::MAX;
    fn host_add(a: Self, b: Self) -> Self {
        a.wrapping_add(b)
    }
    fn host_mul(a: Self, b: Self) -> Self {
        a.wrapping_mul(b)
    }
}
impl ScanScalar for u32 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    const LOWEST: Self = 0;
    const HIGHEST: Self = u32::MAX;
    fn host_add(a: Self, b: Self) -> Self {
        a.wrapping_add(b)
    }
    fn host_mul(a: Self, b: Self) -> Self {
        a.wrapping_mul(b)
    }
}

/// A combinator of two expressions.
type Combine<T> = Rc<dyn Fn(Exp<T>, Exp<T>) -> Exp<T>>;

/// An associative operation with its identity, on the GPU (an `Exp` combinator) and on the
/// host (its CPU specification, with WGSL's semantics: integers wrap).
#[derive(Clone)]
pub struct ScanOp<T> {
    name: &'static str,
    identity: T,
    combine: Combine<T>,
    host: Rc<dyn Fn(T, T) -> T>,
    subgroup: Option<naga::SubgroupOperation>,
}

impl<T> std::fmt::Debug for ScanOp<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScanOp({})", self.name)
    }
}

impl<T: ScanScalar> ScanOp<T> {
    /// `a + b`, identity 0 (WGSL spec §8.7; integers wrap).
    pub fn add() -> Self {
        ScanOp {
            name: "add",
            identity: T::ZERO,
            combine: Rc::new(|a, b| a + b),
            host: Rc::new(T::host_add),
            subgroup: Some(naga::SubgroupOperation::Add),
        }
    }

    /// `a * b`, identity 1.
    pub fn mul() -> Self {
        ScanOp {
            name: "mul",
            identity: T::ONE,
            combine: Rc::new(|a, b| a * b),
            host: Rc::new(T::host_mul),
            subgroup: Some(naga::SubgroupOperation::Mul),
        }
    }

    /// `min(a, b)` (WGSL spec §17.5.41), identity [`ScanScalar::HIGHEST`].
    pub fn min() -> Self {
        ScanOp {
            name: "min",
            identity: T::HIGHEST,
            combine: Rc::new(crate::exp::builtins::min),
            host: Rc::new(|a, b| if b < a { b } else { a }),
            subgroup: None,
        }
    }

    /// `max(a, b)` (WGSL spec §17.5.40), identity [`ScanScalar::LOWEST`].
    pub fn max() -> Self {
        ScanOp {
            name: "max",
            identity: T::LOWEST,
            combine: Rc::new(crate::exp::builtins::max),
            host: Rc::new(|a, b| if b > a { b } else { a }),
            subgroup: None,
        }
    }

    /// Any associative `combine` with its `identity` (`combine(identity, x) == x ==
    /// combine(x, identity)`: a monoid) and its host version (the specification the tests compare with). `name` appears in kernel
    /// names. The scans apply `combine(earlier, later)`, so it need not be commutative.
    pub fn custom(
        name: &'static str,
        identity: T,
        combine: impl Fn(Exp<T>, Exp<T>) -> Exp<T> + 'static,
        host: impl Fn(T, T) -> T + 'static,
    ) -> Self {
        ScanOp {
            name,
            identity,
            combine: Rc::new(combine),
            host: Rc::new(host),
            subgroup: None,
        }
    }

    /// The operation's name (`add`, `max`, ...).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The identity.
    pub fn identity(&self) -> T {
        self.identity
    }

    /// `combine(a, b)` as an expression.
    pub fn apply(&self, a: Exp<T>, b: Exp<T>) -> Exp<T> {
        (self.combine)(a, b)
    }

    /// `combine(a, b)` on the host.
    pub fn apply_host(&self, a: T, b: T) -> T {
        (self.host)(a, b)
    }

    /// The CPU specification: the `kind` scan of `values`, combined left to right.
    pub fn scan_host(&self, values: &[T], kind: ScanKind) -> Vec<T> {
        let mut acc = self.identity;
        values
            .iter()
            .map(|&v| {
                let before = acc;
                acc = self.apply_host(acc, v);
                match kind {
                    ScanKind::Inclusive => acc,
                    ScanKind::Exclusive => before,
                }
            })
            .collect()
    }
}

impl<T: ScanScalar + Integer + HostBits> ScanOp<T> {
    /// `a & b`, identity all ones (WGSL spec §8.9).
    pub fn and() -> Self {
        Self::custom(
            "and",
            T::ZERO.bitwise_not_host(),
            |a, b| a & b,
            |a: T, b: T| a.bitwise_and_host(b),
        )
    }

    /// `a | b`, identity 0.
    pub fn or() -> Self {
        Self::custom(
            "or",
            T::ZERO,
            |a, b| a | b,
            |a: T, b: T| a.bitwise_or_host(b),
        )
    }

    /// `a ^ b`, identity 0.
    pub fn xor() -> Self {
        Self::custom(
            "xor",
            T::ZERO,
            |a, b| a ^ b,
            |a: T, b: T| a.bitwise_xor_host(b),
        )
    }
}

/// Host bit operations of the integer scan scalars.
#[doc(hidden)]
pub trait HostBits: Sized {
    fn bitwise_not_host(self) -> Self;
    fn bitwise_and_host(self, b: Self) -> Self;
    fn bitwise_or_host(self, b: Self) -> Self;
    fn bitwise_xor_host(self, b: Self) -> Self;
}
macro_rules! host_bits {
    ($($t:ty),*) => {$(
        impl HostBits for $t {
            fn bitwise_not_host(self) -> Self { !self }
            fn bitwise_and_host(self, b: Self) -> Self { self & b }
            fn bitwise_or_host(self, b: Self) -> Self { self | b }
            fn bitwise_xor_host(self, b: Self) -> Self { self ^ b }
        }
    )*};
}
host_bits!(i32, u32);

impl KernelBuilder {
    /// The workgroup's invocations: the product of its size.
    pub(super) fn invocations(&self) -> usize {
        self.workgroup_size
            .iter()
            .fold(1usize, |n, &s| n.saturating_mul(s as usize))
    }

    /// The `kind` scan with `op` of `value` over the workgroup's invocations, in
    /// `local_index` order (`local_invocation_index`): invocation `i` gets
    /// `value(0) op ... op value(i)` (inclusive) or the same without `value(i)` (exclusive).
    /// `scratch` holds one element per invocation (`N` = the workgroup's invocations, any
    /// `N`, else a [`BuildError::Invalid`](crate::BuildError::Invalid)); it is overwritten,
    /// so call [`KernelBuilder::workgroup_barrier`] before writing it again. Every invocation
    /// must reach the call (it has barriers: uniform control flow, WGSL spec §15.2).
    ///
    /// Lowering: Hillis and Steele's scan, `ceil(log2(N))` rounds of two barriers each; the
    /// result is a `let`.
    #[track_caller]
    pub fn workgroup_scan<T: ScanScalar, const N: usize>(
        &mut self,
        scratch: &Place<Array<T, N>, ReadWrite>,
        local_index: &Exp<u32>,
        value: impl IntoExp<T>,
        op: &ScanOp<T>,
        kind: ScanKind,
    ) -> Exp<T> {
        let site = CallSite::caller();
        if let Some(invalid) = self.scan_shape_invalid::<T, N>("workgroup_scan", site) {
            return invalid;
        }
        self.hillis_steele_scan(scratch, local_index, value.into_exp(), op, kind, site)
    }

    /// As [`KernelBuilder::workgroup_scan`], with subgroup operations where they apply: for
    /// `add` and `mul` ([`ScanOp::add`], [`ScanOp::mul`]; the others take the
    /// workgroup-memory path), when every subgroup is an aligned run of `local_index`
    /// (`subgroup_invocation_id == local_index % subgroup_size`, full but for the last) and
    /// the workgroup has at most `subgroup_size` subgroups, each subgroup scans its values
    /// (`subgroupInclusiveAdd`), the first subgroup scans the subgroups' totals
    /// (`subgroupExclusiveAdd`; every subgroup computes it, so that the subgroup operations
    /// are in uniform control flow) and each invocation adds its subgroup's offset: three
    /// barriers instead of `2 ceil(log2(N))`. The layout check runs first (two barriers and a
    /// `workgroupUniformLoad`); where it fails the scan takes the workgroup-memory path, so
    /// the result is the same on every adapter with subgroups. Needs the subgroup capability.
    #[track_caller]
    pub fn workgroup_scan_subgroups<T: ScanScalar, const N: usize>(
        &mut self,
        scratch: &Place<Array<T, N>, ReadWrite>,
        local_index: &Exp<u32>,
        value: impl IntoExp<T>,
        op: &ScanOp<T>,
        kind: ScanKind,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let Some(sub_op) = op.subgroup else {
            return self.workgroup_scan(scratch, local_index, value, op, kind);
        };
        if let Some(invalid) = self.scan_shape_invalid::<T, N>("workgroup_scan_subgroups", site) {
            return invalid;
        }
        let value = self.let_("scan_value", value.into_exp());
        let n = N as u32;
        let li = local_index;
        let sid = self.let_("lane", super::subgroup_invocation_id());
        let size = self.let_("lanes", super::subgroup_size());
        // Is this subgroup the aligned run `base .. base + lanes` of local indices?
        let base = self.let_("run_base", li - &sid);
        let lowest = self.subgroup_min(base.clone());
        let highest = self.subgroup_max(base.clone());
        let active = self.subgroup_add(lit(1u32));
        let expected = crate::exp::builtins::min(size.clone(), lit(n) - &base);
        let chunks = (lit(n) + &size - 1u32) / &size;
        let ok = lowest
            .eq(highest)
            .and((&base % &size).eq(0u32))
            .and(active.eq(expected))
            .and(chunks.le(size.clone()));
        let all = self.subgroup_all(ok);
        let bad = self.workgroup::<Atomic<u32>>("scan_layout_bad");
        self.if_(all.not(), |k| {
            let _ = k.atomic_or(&bad, 1u32);
        });
        self.workgroup_barrier();
        let path = self.workgroup::<u32>("scan_layout");
        self.if_(li.eq(0u32), |k| k.store(&path, bad.load()));
        let fallback = self.workgroup_uniform_load(&path);
        let result = self.var_declared::<T>("scan");
        let identity = lit(op.identity);
        self.if_else(
            fallback.eq(0u32),
            |k| {
                use super::stmt::SubgroupOp::Collective;
                use naga::CollectiveOperation as C;
                let inclusive = k.subgroup_op(
                    Collective(sub_op, C::InclusiveScan),
                    value.clone(),
                    None,
                    value.site(),
                );
                let own = match kind {
                    ScanKind::Inclusive => inclusive.clone(),
                    ScanKind::Exclusive => k.subgroup_op(
                        Collective(sub_op, C::ExclusiveScan),
                        value.clone(),
                        None,
                        value.site(),
                    ),
                };
                let chunk = k.let_("run", li / &size);
                let last = sid.eq(&size - 1u32).or(li.eq(n - 1));
                k.if_(last, |k| k.store(&scratch.at(&chunk), inclusive.clone()));
                k.workgroup_barrier();
                // Every subgroup scans the runs' totals (subgroup operations in uniform
                // control flow, WGSL spec §15.2); the first one writes the offsets back, after
                // a barrier that ends every read of the totals.
                let total = k.let_(
                    "run_total",
                    sid.lt(chunks.clone()).select(
                        scratch
                            .at(crate::exp::builtins::min(sid.clone(), lit(n - 1)))
                            .load(),
                        identity.clone(),
                    ),
                );
                k.workgroup_barrier();
                let offset = k.subgroup_op(
                    Collective(sub_op, C::ExclusiveScan),
                    total.clone(),
                    None,
                    total.site(),
                );
                k.if_(li.lt(chunks.clone()), |k| k.store(&scratch.at(li), offset));
                k.workgroup_barrier();
                k.store(&result, op.apply(scratch.at(&chunk).load(), own));
            },
            |k| {
                let r = k.hillis_steele_scan(scratch, li, value.clone(), op, kind, site);
                k.store(&result, r);
            },
        );
        self.let_("scan", result.load())
    }

    /// `workgroupUniformLoad(&place)` (WGSL spec §17.11): the value of a workgroup variable,
    /// the same in every invocation, after a workgroup barrier; usable where uniform control
    /// flow is needed (a loop bound around barriers). `place` must be in workgroup memory
    /// (naga reports another address space at this call).
    #[track_caller]
    pub fn workgroup_uniform_load<T: Constructible>(
        &mut self,
        place: &Place<T, ReadWrite>,
    ) -> Exp<T> {
        self.bind(CallSite::caller(), |result| {
            super::stmt::Stmt::WorkgroupUniformLoad {
                result,
                place: place.node.clone(),
            }
        })
    }

    /// `None` where the scratch array has one element per invocation; else the mistake,
    /// recorded at `site`, and a placeholder for the scan's result.
    fn scan_shape_invalid<T: ScanScalar, const N: usize>(
        &mut self,
        what: &str,
        site: CallSite,
    ) -> Option<Exp<T>> {
        let invocations = self.invocations();
        if N == invocations {
            return None;
        }
        let message = format!(
            "{what} needs a scratch array of one element per invocation: {N} elements for \
             {invocations} invocations"
        );
        self.push(super::stmt::Stmt::Invalid(message), site);
        Some(Exp::zero())
    }

    /// The `kind` scan of `value` through `scratch`: Hillis and Steele's rounds, after which
    /// `acc` and `scratch[li]` hold the inclusive scan, then the result from them.
    fn hillis_steele_scan<T: ScanScalar, const N: usize>(
        &mut self,
        scratch: &Place<Array<T, N>, ReadWrite>,
        li: &Exp<u32>,
        value: Exp<T>,
        op: &ScanOp<T>,
        kind: ScanKind,
        site: CallSite,
    ) -> Exp<T> {
        let acc = &self.var_impl::<T>("scan_acc", VarInit::Value(value.node), site);
        self.store(&scratch.at(li), acc.load());
        self.workgroup_barrier();
        let mut offset = 1usize;
        while offset < N {
            let o = offset as u32;
            self.if_(li.ge(o), |k| {
                k.store(acc, op.apply(scratch.at(li - o).load(), acc.load()));
            });
            self.workgroup_barrier();
            self.store(&scratch.at(li), acc.load());
            self.workgroup_barrier();
            offset *= 2;
        }
        match kind {
            ScanKind::Inclusive => self.let_("scan", acc.load()),
            ScanKind::Exclusive => {
                let before =
                    self.var_impl::<T>("scan", VarInit::Value(lit(op.identity).node), site);
                self.if_(li.gt(0u32), |k| {
                    k.store(&before, scratch.at(li - 1u32).load());
                });
                self.let_("scan", before.load())
            }
        }
    }
}

/// The block-scan kernel of a scan over a buffer: workgroup `w` scans
/// `x[w * BLOCK .. (w + 1) * BLOCK]` (elements at or past `n` count as the identity) into
/// `y` with `kind`, and writes the block's total (`x` of the block combined) to
/// `totals[w]`. Bindings: `n: u32` (uniform), `x: array<T>`, `y: array<T>` (read-write),
/// `totals: array<T>` (read-write). `BLOCK` is the workgroup size (a power of two is not
/// needed). With `subgroups`, the block scan is [`KernelBuilder::workgroup_scan_subgroups`].
/// Named `scan_blocks_<op>_<kind>_<BLOCK>[_subgroups]`.
pub fn scan_blocks<T: ScanScalar, const BLOCK: usize>(
    op: &ScanOp<T>,
    kind: ScanKind,
    subgroups: bool,
) -> KernelBuilder {
    let name = format!(
        "scan_blocks_{}_{}_{BLOCK}{}",
        op.name(),
        match kind {
            ScanKind::Inclusive => "inclusive",
            ScanKind::Exclusive => "exclusive",
        },
        if subgroups { "_subgroups" } else { "" }
    );
    let mut k = KernelBuilder::new(name, [BLOCK as u32, 1, 1]);
    let n = k.uniform::<u32>("n");
    let x = k.storage::<RuntimeArray<T>, super::ReadOnly>("x");
    let y = k.storage::<RuntimeArray<T>, ReadWrite>("y");
    let totals = k.storage::<RuntimeArray<T>, ReadWrite>("totals");
    let scratch = k.workgroup::<Array<T, BLOCK>>("scratch");
    let li = k.let_("li", super::local_invocation_index());
    let block = k.let_("block", super::workgroup_id().x());
    let i = k.let_("i", &block * BLOCK as u32 + &li);
    let inside = k.let_("inside", i.lt(n.load()));
    let value = k.let_("value", inside.select(x.at(&i).load(), lit(op.identity())));
    let scanned = if subgroups {
        k.workgroup_scan_subgroups(&scratch, &li, value.clone(), op, kind)
    } else {
        k.workgroup_scan(&scratch, &li, value.clone(), op, kind)
    };
    k.if_(inside.clone(), |k| k.store(&y.at(&i), scanned.clone()));
    let total = match kind {
        ScanKind::Inclusive => scanned,
        ScanKind::Exclusive => op.apply(scanned, value),
    };
    k.if_(li.eq(BLOCK as u32 - 1), |k| {
        k.store(&totals.at(&block), total)
    });
    k
}

/// The offset kernel of a scan over a buffer: `y[i] = offsets[i / BLOCK] op y[i]` for
/// `i < n`, where `offsets` is the exclusive scan of the block totals [`scan_blocks`] wrote.
/// Bindings: `n: u32` (uniform), `offsets: array<T>`, `y: array<T>` (read-write). Named
/// `add_block_offsets_<op>_<BLOCK>`.
pub fn add_block_offsets<T: ScanScalar, const BLOCK: usize>(op: &ScanOp<T>) -> KernelBuilder {
    let mut k = KernelBuilder::new(
        format!("add_block_offsets_{}_{BLOCK}", op.name()),
        [BLOCK as u32, 1, 1],
    );
    let n = k.uniform::<u32>("n");
    let offsets = k.storage::<RuntimeArray<T>, super::ReadOnly>("offsets");
    let y = k.storage::<RuntimeArray<T>, ReadWrite>("y");
    let i = k.let_("i", super::global_invocation_id().x());
    k.if_(i.lt(n.load()), |k| {
        let offset = offsets.at(super::workgroup_id().x()).load();
        k.store(&y.at(&i), op.apply(offset, y.at(&i).load()));
    });
    k
}
