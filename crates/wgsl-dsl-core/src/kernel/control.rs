//! Control flow beyond `if` and the basic loops: loops over any integer range (inclusive,
//! reversed, stepped: [`KernelBuilder::for_in`]), `switch` ([`KernelBuilder::switch`]) and
//! `if` as a value ([`KernelBuilder::if_value`]). `#[kernel]` lowers Rust's `for` over ranges,
//! `match` and value `if`s to these.

use std::collections::HashSet;
use std::marker::PhantomData;

use super::KernelBuilder;
use super::Var;
use super::stmt::{Stmt, SwitchArm, VarInit};
use crate::exp::{Exp, ExprKind, IntoExp, Lit, Literal, Node};
use crate::site::CallSite;
use crate::types::*;

/// The integer scalars, `i32` and `u32`: what loop counters and `switch` selectors are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot count a loop or select a `switch` case",
    label = "loop counters and `switch` selectors are `i32` or `u32` (WGSL spec §9.4.2, §9.4.4)"
)]
pub trait IntegerScalar: Scalar + Integer + Literal + From<u8> {
    /// The literal `1` of this type.
    #[doc(hidden)]
    fn one() -> Lit {
        Self::from(1u8).lit()
    }
}
impl IntegerScalar for i32 {}
impl IntegerScalar for u32 {}

/// Most case values one `switch` arm may list (a range pattern expands to its values).
pub const MAX_CASE_VALUES: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// `a..b`, `a..=b`, `.step_by(s)` of these.
    Forward,
    /// `.rev()`, then maybe `.step_by(s)`: from the last element down.
    Reverse,
    /// `.step_by(s).rev()`: the stepped sequence, last element first.
    StepThenReverse,
}

/// A range a [`KernelBuilder::for_in`] loop counts over, as Rust writes it:
/// `LoopRange::new(a, b)` is `a..b`, `LoopRange::inclusive(a, b)` is `a..=b`, and
/// [`LoopRange::rev`] and [`LoopRange::step_by`] compose as Rust's iterator adapters do
/// (`(a..b).rev().step_by(2)` counts `b - 1, b - 3, ...`; `(a..b).step_by(2).rev()` counts the
/// elements of `a, a + 2, ...` below `b`, last first). The step must be positive.
///
/// Exact at the type's limits, as Rust is: `LoopRange::inclusive(0u32, u32::MAX)` ends, and a
/// step past the end ends the loop rather than wrapping. The bounds and the step are
/// evaluated once, before the loop (unlike [`KernelBuilder::for_range`]'s `end`).
pub struct LoopRange<T> {
    start: Exp<T>,
    end: Exp<T>,
    inclusive: bool,
    step: Option<Exp<T>>,
    order: Order,
    error: Option<&'static str>,
    site: CallSite,
}

impl<T> std::fmt::Debug for LoopRange<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopRange")
            .field("inclusive", &self.inclusive)
            .field("stepped", &self.step.is_some())
            .field("order", &self.order)
            .field("site", &self.site)
            .finish_non_exhaustive()
    }
}

impl<T: IntegerScalar> LoopRange<T> {
    /// `start..end`.
    #[track_caller]
    pub fn new(start: impl IntoExp<T>, end: impl IntoExp<T>) -> Self {
        Self::make(start.into_exp(), end.into_exp(), false, CallSite::caller())
    }

    /// `start..=end`.
    #[track_caller]
    pub fn inclusive(start: impl IntoExp<T>, end: impl IntoExp<T>) -> Self {
        Self::make(start.into_exp(), end.into_exp(), true, CallSite::caller())
    }

    fn make(start: Exp<T>, end: Exp<T>, inclusive: bool, site: CallSite) -> Self {
        LoopRange {
            start,
            end,
            inclusive,
            step: None,
            order: Order::Forward,
            error: None,
            site,
        }
    }

    /// The same elements in reverse order (Rust's `.rev()`).
    pub fn rev(mut self) -> Self {
        self.order = match (self.order, self.step.is_some()) {
            (Order::Forward, false) => Order::Reverse,
            (Order::Reverse, false) => Order::Forward,
            (Order::Forward, true) => Order::StepThenReverse,
            (Order::StepThenReverse, _) => Order::Forward,
            (Order::Reverse, true) => {
                self.error = Some("`.rev().step_by(s).rev()` is not supported");
                Order::Reverse
            }
        };
        self
    }

    /// Every `step`-th element, the first included (Rust's `.step_by(step)`). `step` must be
    /// positive; zero loops forever.
    pub fn step_by(mut self, step: impl IntoExp<T>) -> Self {
        if self.step.is_some() {
            self.error = Some("a range takes one `.step_by(s)`: multiply the steps");
        }
        self.step = Some(step.into_exp());
        self
    }
}

/// The arms of a [`KernelBuilder::switch`], added in order with [`Switch::case`] and
/// [`Switch::default`].
pub struct Switch<'k, T> {
    k: &'k mut KernelBuilder,
    arms: Vec<SwitchArm>,
    seen: HashSet<i64>,
    has_default: bool,
    error: Option<String>,
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Switch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switch")
            .field("arms", &self.arms.len())
            .field("has_default", &self.has_default)
            .finish_non_exhaustive()
    }
}

fn lit_key(l: Lit) -> i64 {
    match l {
        Lit::I32(v) => i64::from(v),
        Lit::U32(v) => i64::from(v),
        _ => i64::MIN,
    }
}

impl<T: IntegerScalar> Switch<'_, T> {
    /// An arm taken when the selector equals one of `values` (`0..=3`, `[1, 5]`,
    /// `std::iter::once(7)`). As in a Rust `match`, the first arm listing a value takes it
    /// (later arms lose it; an arm left with no value is dropped), and arms after
    /// [`Switch::default`] are never taken. At most [`MAX_CASE_VALUES`] values per arm.
    #[track_caller]
    pub fn case(
        &mut self,
        values: impl IntoIterator<Item = T>,
        body: impl FnOnce(&mut KernelBuilder),
    ) {
        let site = CallSite::caller();
        let mut all: Vec<Lit> = values
            .into_iter()
            .take(MAX_CASE_VALUES + 1)
            .map(Literal::lit)
            .collect();
        if all.len() > MAX_CASE_VALUES {
            self.error.get_or_insert_with(|| {
                format!(
                    "a `switch` arm lists more than {MAX_CASE_VALUES} values; test wide ranges \
                     with `if`"
                )
            });
            all.truncate(MAX_CASE_VALUES);
        }
        let body = self.k.block(body);
        if self.has_default {
            return;
        }
        all.retain(|l| self.seen.insert(lit_key(*l)));
        if all.is_empty() {
            return;
        }
        self.arms.push(SwitchArm {
            values: all,
            default: false,
            body,
            site,
        });
    }

    /// The arm taken when no [`Switch::case`] matches (a Rust `_ =>`). Without one, the
    /// `switch` does nothing for the other values.
    #[track_caller]
    pub fn default(&mut self, body: impl FnOnce(&mut KernelBuilder)) {
        let site = CallSite::caller();
        let body = self.k.block(body);
        if self.has_default {
            return;
        }
        self.has_default = true;
        self.arms.push(SwitchArm {
            values: Vec::new(),
            default: true,
            body,
            site,
        });
    }
}

impl KernelBuilder {
    /// `for (var name = start; name < end; name += 1) { body }` (WGSL spec §9.4.4), with a
    /// counter of either integer type (`i32` or `u32`). `end` is evaluated before each
    /// iteration. Inclusive, reversed and stepped ranges: [`KernelBuilder::for_in`].
    #[track_caller]
    pub fn for_range<T: IntegerScalar>(
        &mut self,
        name: &str,
        start: impl IntoExp<T>,
        end: impl IntoExp<T>,
        body: impl FnOnce(&mut Self, Exp<T>),
    ) {
        let site = CallSite::caller();
        self.for_impl(name, start.into_exp(), end.into_exp(), None, body, site);
    }

    /// `for (var name = start; name < end; name += step) { body }` (WGSL spec §9.4.4).
    /// `end` and `step` are evaluated at each iteration; a zero step loops forever, and
    /// `name += step` wraps as WGSL's does, so `end` must not be within `step` of the
    /// counter type's maximum. [`KernelBuilder::for_in`] has no such limit.
    #[track_caller]
    pub fn for_step<T: IntegerScalar>(
        &mut self,
        name: &str,
        start: impl IntoExp<T>,
        end: impl IntoExp<T>,
        step: impl IntoExp<T>,
        body: impl FnOnce(&mut Self, Exp<T>),
    ) {
        let site = CallSite::caller();
        let step = step.into_exp();
        self.for_impl(
            name,
            start.into_exp(),
            end.into_exp(),
            Some(step),
            body,
            site,
        );
    }

    fn for_impl<T: IntegerScalar>(
        &mut self,
        name: &str,
        start: Exp<T>,
        end: Exp<T>,
        step: Option<Exp<T>>,
        body: impl FnOnce(&mut Self, Exp<T>),
        site: CallSite,
    ) {
        let bound = self.take_loop_bound();
        let counter: Var<T> = self.var_impl(name, VarInit::Value(start.node), site);
        let i = Exp::<T>::from_kind(ExprKind::Load(counter.node.clone()), site);
        let body = self.block(|k| {
            let done: Exp<bool> = binary(naga::BinaryOperator::GreaterEqual, &i, &end, site);
            k.push(
                Stmt::If {
                    condition: done.node,
                    accept: vec![(Stmt::Break, site)],
                    reject: Vec::new(),
                },
                site,
            );
            body(k, i.clone());
        });
        let step = step.unwrap_or_else(|| Exp::from_kind(ExprKind::Literal(T::one()), site));
        let next: Exp<T> = binary(naga::BinaryOperator::Add, &i, &step, site);
        self.push(
            Stmt::Loop {
                body,
                continuing: vec![(
                    Stmt::Store {
                        place: counter.node.clone(),
                        value: next.node,
                    },
                    site,
                )],
                bound,
            },
            site,
        );
    }

    /// A loop over `range` (WGSL spec §9.4.3 `loop`), the counter named `name` and of the
    /// range's integer type, any of Rust's range forms: `for_in("i", LoopRange::inclusive(a,
    /// b).rev(), |k, i| ..)` is `for i in (a..=b).rev()`. `break` and `continue` work as in
    /// Rust.
    ///
    /// `a..b` and `(a..b).step_by(s)` lower to [`KernelBuilder::for_range`] and
    /// [`KernelBuilder::for_step`]'s WGSL `for` shape. The other forms check for an empty
    /// range once, then count with a `loop` whose `continuing` block ends in
    /// `break if last`, where `last` is computed before the counter moves, so no form
    /// overflows the counter.
    #[track_caller]
    pub fn for_in<T: IntegerScalar>(
        &mut self,
        name: &str,
        range: LoopRange<T>,
        body: impl FnOnce(&mut Self, Exp<T>),
    ) {
        let site = range.site;
        if let Some(e) = range.error {
            self.push(Stmt::Invalid(e.to_string()), site);
            return;
        }
        let LoopRange {
            start,
            end,
            inclusive,
            step,
            order,
            ..
        } = range;
        if order == Order::Forward && !inclusive {
            self.for_impl(name, start, end, step, body, site);
            return;
        }
        let start = self.once(&format!("{name}_start"), start, site);
        let end = self.once(&format!("{name}_end"), end, site);
        let step = step.map(|s| self.once(&format!("{name}_step"), s, site));
        let bin = |op, a: &Exp<T>, b: &Exp<T>| -> Exp<T> { binary(op, a, b, site) };
        let cmp = |op, a: &Exp<T>, b: &Exp<T>| -> Exp<bool> { binary(op, a, b, site) };
        use naga::BinaryOperator as B;
        let one = Exp::<T>::from_kind(ExprKind::Literal(T::one()), site);
        let nonempty = if inclusive {
            cmp(B::LessEqual, &start, &end)
        } else {
            cmp(B::Less, &start, &end)
        };
        // The first element and the one the counter stops at; the direction.
        let (first, limit, down) = match order {
            Order::Forward => (start.clone(), end.clone(), false),
            Order::Reverse if inclusive => (end.clone(), start.clone(), true),
            Order::Reverse => (bin(B::Subtract, &end, &one), start.clone(), true),
            Order::StepThenReverse => {
                // first = start + ((last - start) / s) * s, in u32 (exact for i32 too).
                let last = if inclusive {
                    end.clone()
                } else {
                    bin(B::Subtract, &end, &one)
                };
                let s = bitcast::<u32, T>(step.as_ref().unwrap_or(&one), site);
                let span = unsigned_distance(&last, &start, site);
                let steps: Exp<u32> = binary(B::Divide, &span, &s, site);
                let whole: Exp<u32> = binary(B::Multiply, &steps, &s, site);
                (
                    bin(B::Add, &start, &bitcast::<T, u32>(&whole, site)),
                    start.clone(),
                    true,
                )
            }
        };
        let step_value = step.clone().unwrap_or_else(|| one.clone());
        let bound = self.take_loop_bound();
        self.if_(nonempty, |k| {
            let counter: super::Var<T> = k.var_impl(name, VarInit::Value(first.node), site);
            let i = Exp::<T>::from_kind(ExprKind::Load(counter.node.clone()), site);
            let body = k.block(|k| body(k, i.clone()));
            let last_id = crate::handle::ValueId::fresh();
            let last = match &step {
                None => cmp(B::Equal, &i, &limit),
                Some(s) => {
                    let distance = if down {
                        unsigned_distance(&i, &limit, site)
                    } else {
                        unsigned_distance(&limit, &i, site)
                    };
                    binary(B::Less, &distance, &bitcast::<u32, T>(s, site), site)
                }
            };
            let next = bin(if down { B::Subtract } else { B::Add }, &i, &step_value);
            let continuing = vec![
                (
                    Stmt::Let {
                        id: last_id,
                        name: "last".into(),
                        value: last.node,
                    },
                    site,
                ),
                (
                    Stmt::Store {
                        place: counter.node.clone(),
                        value: next.node,
                    },
                    site,
                ),
            ];
            let break_if = Exp::<bool>::from_node(Node {
                kind: ExprKind::Bound(last_id),
                ty: bool::ty(),
                site,
            });
            k.push(
                Stmt::LoopBreakIf {
                    body,
                    continuing,
                    break_if: break_if.node,
                    bound,
                },
                site,
            );
        });
    }

    /// States that the next loop this builder makes ([`KernelBuilder::for_range`],
    /// [`KernelBuilder::for_step`], [`KernelBuilder::for_in`], [`KernelBuilder::while_`],
    /// [`KernelBuilder::loop_`]) runs at most `n` iterations per invocation, as Slang's
    /// `[MaxIters(n)]`. The kernel itself is unchanged; kernel AD
    /// ([`crate::autodiff::derive`]) then derives the loop even when its trip count is known
    /// only at run time (a uniform, a buffer's length, a `while` condition), with a tape of
    /// `n` entries per invocation. In the backward kernel a loop that reaches iteration `n`
    /// raises the backward pass's iteration-limit flag (the binding of role
    /// [`crate::autodiff::Role::IterationLimit`]) and that invocation adds no gradient: the
    /// gradient is then wrong, and whoever runs the pass must read the flag (the gradient
    /// checker returns it as an error).
    ///
    /// `n == 0` records a [`BuildError::Invalid`](crate::BuildError::Invalid) here.
    #[track_caller]
    pub fn max_iterations(&mut self, n: u32) -> &mut Self {
        let site = CallSite::caller();
        if n == 0 {
            self.errors.push(crate::BuildError::Invalid {
                message: "max_iterations(0): a loop's bound must be at least 1".into(),
                site,
            });
        } else {
            self.next_loop_bound = Some((n, site));
        }
        self
    }

    /// The bound stated for the loop being made (taken before its body, whose loops are not
    /// bounded by it).
    pub(crate) fn take_loop_bound(&mut self) -> Option<u32> {
        self.next_loop_bound.take().map(|(n, _)| n)
    }

    /// `e` bound to a `let` named `name`, unless it is a literal or already a named value.
    fn once<T: Constructible>(&mut self, name: &str, e: Exp<T>, site: CallSite) -> Exp<T> {
        match e.node.kind {
            ExprKind::Literal(_)
            | ExprKind::Bound(_)
            | ExprKind::Param { .. }
            | ExprKind::Builtin(_) => e,
            _ => self.bind(site, |id| Stmt::Let {
                id,
                name: name.to_string(),
                value: e.node,
            }),
        }
    }

    /// `switch selector { .. }` (WGSL spec §9.4.2) with the arms `arms` adds, in order:
    ///
    /// ```
    /// # use wgsl_dsl_core as wgsl_dsl;
    /// use wgsl_dsl::prelude::*;
    /// let mut k = KernelBuilder::new("classify", [64, 1, 1]);
    /// let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    /// let i = k.let_("i", global_invocation_id().x());
    /// k.switch(&i % 8u32, |s| {
    ///     s.case([0], |k| k.store(&out.at(&i), 10u32));
    ///     s.case(1..=3, |k| k.store(&out.at(&i), 20u32));
    ///     s.default(|k| k.store(&out.at(&i), 30u32));
    /// });
    /// assert!(k.build()?.wgsl.contains("case 1u, 2u, 3u: {"));
    /// # Ok::<(), wgsl_dsl::BuildError>(())
    /// ```
    ///
    /// WGSL cases do not fall through. A [`KernelBuilder::break_`] in an arm leaves the
    /// enclosing *loop*, as Rust's `break` in a `match` arm does (WGSL's own `break` would leave
    /// the `switch`: the lowering sets a flag, leaves the `switch` and breaks after it);
    /// [`KernelBuilder::continue_`] continues the enclosing loop.
    #[track_caller]
    pub fn switch<T: IntegerScalar>(
        &mut self,
        selector: impl IntoExp<T>,
        arms: impl FnOnce(&mut Switch<'_, T>),
    ) {
        let site = CallSite::caller();
        let selector = selector.into_exp();
        let mut s = Switch {
            k: self,
            arms: Vec::new(),
            seen: HashSet::new(),
            has_default: false,
            error: None,
            _t: PhantomData,
        };
        arms(&mut s);
        let Switch { arms, error, .. } = s;
        if let Some(e) = error {
            self.push(Stmt::Invalid(e), site);
        }
        self.push(
            Stmt::Switch {
                selector: selector.node,
                cases: arms,
            },
            site,
        );
    }

    /// `if condition { then } else { otherwise }` as a value (Rust's `if` expression): only
    /// the arm the condition picks is evaluated, as in Rust.
    ///
    /// - When neither arm records a statement, both values are pure (no load, no index of a
    ///   value by an `Exp`) and `T` is a scalar or vector, the
    ///   value is `select(otherwise, then, condition)` (WGSL spec §17.3.2), which evaluates both
    ///   arms, unobservably for pure values. It is bound to a `let name` unless this `if` is
    ///   itself an arm of an enclosing `if_value` (then the selects nest).
    /// - Otherwise (an arm loads, as in `if i < n { x[i] } else { 0.0 }`, calls a helper
    ///   function, runs an atomic), it is a `var name: T` that each arm of a WGSL `if` assigns
    ///   after its statements, read where the result is used: the arm not taken reads nothing
    ///   (the interpreter reports an out-of-bounds read even when its value is discarded, so
    ///   a `select` of `x[i]` past the end of `x` is an error there).
    /// - A condition that is a constant (`lit(true)`, a tree of literals) picks its arm when
    ///   the kernel is built: the other arm's statements and value are dropped.
    ///
    /// The closures run in any case (they are Rust), so mistakes the builder records in either
    /// arm are reported by [`KernelBuilder::build`].
    #[track_caller]
    pub fn if_value<T: Constructible>(
        &mut self,
        name: &str,
        condition: impl IntoExp<bool>,
        then: impl FnOnce(&mut Self) -> Exp<T>,
        otherwise: impl FnOnce(&mut Self) -> Exp<T>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let condition = condition.into_exp();
        self.value_arms += 1;
        let mut accept = None;
        let mut then_block = self.block(|k| accept = Some(then(k)));
        let mut reject = None;
        let mut else_block = self.block(|k| reject = Some(otherwise(k)));
        self.value_arms -= 1;
        let (Some(accept), Some(reject)) = (accept, reject) else {
            unreachable!("both closures ran")
        };
        let statements = !then_block.is_empty() || !else_block.is_empty();
        // A constant condition with statement-free arms: the arm it picks. (With statements,
        // the `if` below is lowered with the picked arm only.)
        if !statements && let Ok(Some(crate::ConstValue::Bool(taken))) = condition.eval_const() {
            let value = if taken { accept } else { reject };
            if self.value_arms > 0 {
                return value;
            }
            return self.once(name, value, site);
        }
        let selectable = matches!(T::ty(), Ty::Scalar(_) | Ty::Vector(..));
        if selectable
            && !statements
            && crate::exp::is_pure(&accept.node)
            && crate::exp::is_pure(&reject.node)
        {
            let select = Exp::<T>::from_kind(
                ExprKind::Select {
                    condition: condition.node,
                    accept: accept.node,
                    reject: reject.node,
                },
                site,
            );
            if self.value_arms > 0 {
                return select;
            }
            return self.once(name, select, site);
        }
        let var: super::Var<T> = self.var_impl(name, VarInit::Declared, site);
        then_block.push((
            Stmt::Store {
                place: var.node.clone(),
                value: accept.node,
            },
            site,
        ));
        else_block.push((
            Stmt::Store {
                place: var.node.clone(),
                value: reject.node,
            },
            site,
        ));
        self.push(
            Stmt::If {
                condition: condition.node,
                accept: then_block,
                reject: else_block,
            },
            site,
        );
        Exp::from_kind(ExprKind::Load(var.node), site)
    }

    /// `var name: T;` (zero-initialised, WGSL spec §7.3) without a store: for values every
    /// path assigns before reading, such as the result of a `match` used as a value.
    #[track_caller]
    pub fn var_declared<T: Constructible>(&mut self, name: &str) -> super::Var<T> {
        self.var_impl(name, VarInit::Declared, CallSite::caller())
    }
}

/// `a op b` at `site`: of the operands' type `T` (arithmetic) or `bool` (a comparison).
pub(super) fn binary<T, O: WgslType>(
    op: naga::BinaryOperator,
    a: &Exp<T>,
    b: &Exp<T>,
    site: CallSite,
) -> Exp<O> {
    Exp::from_kind(ExprKind::Binary(op, a.node.clone(), b.node.clone()), site)
}

/// The integer `e` as the integer type `U`: itself where the types are the same, else
/// `bitcast<U>(e)` (`i32` to `u32` or back).
fn bitcast<U: IntegerScalar, T: IntegerScalar>(e: &Exp<T>, site: CallSite) -> Exp<U> {
    if T::SCALAR == U::SCALAR {
        return e.retype();
    }
    Exp::from_kind(
        ExprKind::As {
            value: e.node.clone(),
            kind: U::SCALAR.naga().kind,
            convert: None,
        },
        site,
    )
}

/// `hi - lo` as `u32`, exact when `hi >= lo` (the wrapping `i32` difference reinterpreted).
fn unsigned_distance<T: IntegerScalar>(hi: &Exp<T>, lo: &Exp<T>, site: CallSite) -> Exp<u32> {
    let d: Exp<T> = binary(naga::BinaryOperator::Subtract, hi, lo, site);
    bitcast(&d, site)
}

/// The step of an `#[unroll]` loop's `.step_by(s)` as Rust's `step_by` takes it. A negative
/// step becomes 0, which Rust's `step_by` rejects (as it rejects 0), when the kernel is built.
#[doc(hidden)]
pub fn unroll_step<T: TryInto<usize>>(step: T) -> usize {
    step.try_into().unwrap_or(0)
}
