//! A [`Program`] through the DSL's public builder: [`KernelBuilder`], [`Exp`], [`Place`], the
//! built-in functions. Everything the fuzzer checks is what this builds.
//!
//! Bindings, in order (only those the program uses): `in_f32`, `in_i32`, `in_u32`, `in_f16`
//! (read-only storage), `param` (a uniform `u32`), `out_f32`, `out_i32`, `out_u32`, `out_f16`
//! (read-write storage, one block of slots per invocation), `atom` (`array<atomic<u32>>`: a
//! block per invocation, then the shared slots). Workgroup memory: `wg` (`array<u32, N>`, one
//! element per invocation) and `wg_atomic`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use half::f16;
use wgsl_dsl::kernel::{IntegerScalar, LoopRange};
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{Constructible, Numeric, ScalarOrVector};
use wgsl_dsl::{ConstValue, KernelBuilder};

use crate::analysis::{Analysis, out_buffer};
use crate::ast::*;
use crate::emit_ops as op;
pub use crate::emitted::{Binding, Emitted};
use crate::value::{Dyn, V};
use crate::{with_num, with_scalar, with_ty};

/// The output buffers, in binding order.
pub const OUT_BUFFERS: [Scalar; 4] = [Scalar::F32, Scalar::I32, Scalar::U32, Scalar::F16];

/// The index of an output buffer in [`OUT_BUFFERS`].
pub fn out_index(s: Scalar) -> usize {
    OUT_BUFFERS
        .iter()
        .position(|&b| b == out_buffer(s))
        .unwrap_or(2)
}

/// A typed place or function behind `Any`, with the type to downcast it at.
type Handle = (Ty, Rc<dyn Any>);

struct Em<'p> {
    prog: &'p Program,
    values: RefCell<HashMap<Id, V>>,
    vars: RefCell<HashMap<Id, Handle>>,
    /// Each helper's type and arity, and its `Function` behind `Any`.
    funcs: RefCell<Vec<(Handle, usize)>>,
    inputs: HashMap<Scalar, Rc<dyn Any>>,
    param: Option<Place<u32, ReadOnly>>,
    outs: HashMap<Scalar, Rc<dyn Any>>,
    atom: Option<Buffer<Atomic<u32>, ReadWrite>>,
    wg: Option<Place<SizedArray<u32>, ReadWrite>>,
    wg_atomic: Option<Place<Atomic<u32>, ReadWrite>>,
    gi: RefCell<Option<Exp<u32>>>,
    consts: RefCell<HashMap<(Scalar, u32), ConstValue>>,
    slots: [u32; 4],
    atomics: (u32, u32),
}

/// Build `prog` (analyzed as `an`) through the DSL.
pub fn emit(prog: &Program, an: &Analysis) -> Emitted {
    if let Some(c) = &prog.coop {
        return crate::coop::emit(prog, c);
    }
    if let Some(t) = &prog.texture {
        return crate::texture::emit(prog, t);
    }
    let mut k = KernelBuilder::new(format!("fuzz_{}", prog.seed), prog.workgroup);
    let mut bindings = Vec::new();
    let mut inputs: HashMap<Scalar, Rc<dyn Any>> = HashMap::new();
    for s in [Scalar::F32, Scalar::I32, Scalar::U32, Scalar::F16] {
        if an.uses.inputs.contains(&s) {
            bindings.push(Binding::Input(s));
            let name = format!("in_{}", s.rust());
            let place: Rc<dyn Any> =
                with_scalar!(s, S => Rc::new(k.storage::<RuntimeArray<S>, ReadOnly>(&name)));
            inputs.insert(s, place);
        }
    }
    let param = an.uses.param.then(|| {
        bindings.push(Binding::Param);
        k.uniform::<u32>("param")
    });
    let mut slots = [0u32; 4];
    for &(s, slot) in an.slots.keys() {
        let i = out_index(s);
        slots[i] = slots[i].max(slot + 1);
    }
    let mut outs: HashMap<Scalar, Rc<dyn Any>> = HashMap::new();
    for (i, s) in OUT_BUFFERS.iter().enumerate() {
        if slots[i] > 0 {
            bindings.push(Binding::Out(*s));
            let name = format!("out_{}", s.rust());
            let place: Rc<dyn Any> =
                with_scalar!(*s, S => Rc::new(k.storage::<RuntimeArray<S>, ReadWrite>(&name)));
            outs.insert(*s, place);
        }
    }
    let atom = an.uses.atomics.then(|| {
        bindings.push(Binding::Atomics);
        k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("atom")
    });
    let wg = an
        .uses
        .wg
        .then(|| k.workgroup_array::<u32>("wg", prog.invocations()));
    let wg_atomic = an
        .uses
        .wg_atomic
        .then(|| k.workgroup::<Atomic<u32>>("wg_atomic"));
    let em = Em {
        prog,
        values: RefCell::new(HashMap::new()),
        vars: RefCell::new(HashMap::new()),
        funcs: RefCell::new(Vec::new()),
        inputs,
        param,
        outs,
        atom,
        wg,
        wg_atomic,
        gi: RefCell::new(None),
        consts: RefCell::new(HashMap::new()),
        slots,
        atomics: (an.own_atomics, an.shared_atomics),
    };
    for (n, f) in prog.funcs.iter().enumerate() {
        em.function(&mut k, n, f);
    }
    if slots.iter().any(|&s| s > 0) || an.uses.atomics {
        let wid = workgroup_id();
        let nwg = num_workgroups();
        let linear = (wid.z() * nwg.y() + wid.y()) * nwg.x() + wid.x();
        let gi = k.let_("gi", linear * prog.invocations() + local_invocation_index());
        *em.gi.borrow_mut() = Some(gi);
    }
    em.block(&mut k, &prog.body);
    let consts = em.consts.into_inner();
    Emitted {
        kernel: k,
        bindings,
        slots,
        atomics: (an.own_atomics, an.shared_atomics),
        consts,
    }
}

impl Em<'_> {
    fn value(&self, id: Id) -> V {
        self.values
            .borrow()
            .get(&id)
            .cloned()
            .unwrap_or_else(|| panic!("fuzzer bug: v{id} was not emitted"))
    }

    fn set(&self, id: Id, v: V) {
        self.values.borrow_mut().insert(id, v);
    }

    /// An expression (pure: no statement is recorded).
    fn expr(&self, e: &Expr) -> V {
        match e {
            Expr::Lit(l) => op::literal(*l),
            Expr::Zero(t) => op::zero(*t),
            Expr::Input(s, index) => {
                let i = self.expr(index);
                let place = self
                    .inputs
                    .get(s)
                    .expect("fuzzer bug: an input not declared");
                with_scalar!(*s, S => {
                    let buf = place
                        .downcast_ref::<Buffer<S, ReadOnly>>()
                        .expect("fuzzer bug: input type");
                    let i = <u32>::get(&i);
                    S::wrap(buf.at(i % buf.len()).load())
                })
            }
            Expr::Param => V::U1(
                self.param
                    .as_ref()
                    .expect("fuzzer bug: param not declared")
                    .load(),
            ),
            Expr::Builtin(b) => match b {
                Builtin::GlobalId => V::U3(global_invocation_id()),
                Builtin::LocalId => V::U3(local_invocation_id()),
                Builtin::LocalIndex => V::U1(local_invocation_index()),
                Builtin::WorkgroupId => V::U3(workgroup_id()),
                Builtin::NumWorkgroups => V::U3(num_workgroups()),
                Builtin::SubgroupSize => V::U1(subgroup_size()),
                Builtin::SubgroupId => V::U1(subgroup_invocation_id()),
            },
            Expr::Value(id) => self.value(*id),
            Expr::Var(id) => {
                let (ty, place) = self
                    .vars
                    .borrow()
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| panic!("fuzzer bug: x{id} was not emitted"));
                with_ty!(ty, T => T::wrap(
                    place.downcast_ref::<Var<T>>().expect("fuzzer bug: var type").load()
                ))
            }
            Expr::Wg(index) => {
                let i = <u32>::get(&self.expr(index));
                V::U1(self.wg.as_ref().expect("fuzzer bug: wg").at(i).load())
            }
            Expr::WgAtomic => V::U1(
                self.wg_atomic
                    .as_ref()
                    .expect("fuzzer bug: wg_atomic")
                    .load(),
            ),
            Expr::Un(o, a) => op::unary(*o, &self.expr(a)),
            Expr::Bin(o, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                op::binary(*o, &x, &y)
            }
            Expr::Cmp(o, a, b) => op::comparison(*o, &self.expr(a), &self.expr(b)),
            Expr::Logic(and, a, b) => op::logic(*and, &self.expr(a), &self.expr(b)),
            Expr::Math(f, args) => {
                let v: Vec<V> = args.iter().map(|a| self.expr(a)).collect();
                op::math(*f, &v)
            }
            Expr::Select(_, p) => {
                let [c, a, r] = &**p;
                op::select_v(&self.expr(c), &self.expr(a), &self.expr(r))
            }
            Expr::Conv(c, a) => {
                let a = self.expr(a);
                match c {
                    Conv::To(s) => op::to(*s, &a),
                    Conv::Bitcast(t) => op::bitcast(t.scalar(), &a),
                    Conv::Saturating(s) => op::saturating(*s, &a),
                }
            }
            Expr::Splat(n, a) => op::splat(*n, &self.expr(a)),
            Expr::Compose(parts) => {
                let v: Vec<V> = parts.iter().map(|a| self.expr(a)).collect();
                op::compose(&v)
            }
            Expr::Swizzle(n, a) => op::swizzle(*n, &self.expr(a)),
            Expr::Component(i, a) => op::component(*i, &self.expr(a)),
            Expr::Index(v, i) => op::index(&self.expr(v), &self.expr(i)),
            Expr::ArrayPick(elems, i) => {
                let v: Vec<V> = elems.iter().map(|a| self.expr(a)).collect();
                op::array_pick(&v, &self.expr(i))
            }
            Expr::AnyAll(any, v) => op::any_all(*any, &self.expr(v)),
            Expr::Split(p, a) => op::split(*p, &self.expr(a)),
        }
    }

    fn gi(&self) -> Exp<u32> {
        self.gi
            .borrow()
            .clone()
            .expect("fuzzer bug: gi not emitted")
    }

    fn block(&self, k: &mut KernelBuilder, body: &[Stmt]) {
        for s in body {
            self.stmt(k, s);
        }
    }

    fn function(&self, k: &mut KernelBuilder, n: usize, f: &Func) {
        let name = format!("f{n}");
        let arity = f.params.len();
        let handle: Rc<dyn Any> = with_ty!(f.ty, T => {
            match arity {
                1 => Rc::new(k.function::<(T,), T>(&name, ["a"], |k, (a,)| {
                    self.set(f.params[0], T::wrap(a));
                    self.block(k, &f.body);
                    T::get(&self.expr(&f.result))
                })) as Rc<dyn Any>,
                2 => Rc::new(k.function::<(T, T), T>(&name, ["a", "b"], |k, (a, b)| {
                    self.set(f.params[0], T::wrap(a));
                    self.set(f.params[1], T::wrap(b));
                    self.block(k, &f.body);
                    T::get(&self.expr(&f.result))
                })),
                _ => Rc::new(k.function::<(T, T, T), T>(&name, ["a", "b", "c"], |k, (a, b, c)| {
                    self.set(f.params[0], T::wrap(a));
                    self.set(f.params[1], T::wrap(b));
                    self.set(f.params[2], T::wrap(c));
                    self.block(k, &f.body);
                    T::get(&self.expr(&f.result))
                })),
            }
        });
        self.funcs.borrow_mut().push(((f.ty, handle), arity));
    }

    fn call(&self, k: &mut KernelBuilder, f: usize, args: &[V]) -> V {
        let ((ty, handle), arity) = self.funcs.borrow()[f].clone();
        with_ty!(ty, T => match arity {
            1 => {
                let h = handle.downcast_ref::<Function<(T,), T>>().expect("fuzzer bug: f");
                T::wrap(k.call(h, (T::get(&args[0]),)))
            }
            2 => {
                let h = handle.downcast_ref::<Function<(T, T), T>>().expect("fuzzer bug: f");
                T::wrap(k.call(h, (T::get(&args[0]), T::get(&args[1]))))
            }
            _ => {
                let h = handle.downcast_ref::<Function<(T, T, T), T>>().expect("fuzzer bug: f");
                T::wrap(k.call(h, (T::get(&args[0]), T::get(&args[1]), T::get(&args[2]))))
            }
        })
    }

    fn out(&self, k: &mut KernelBuilder, slot: u32, v: &V) {
        let s = out_buffer(v.ty().scalar());
        let place = self.outs.get(&s).expect("fuzzer bug: out not declared");
        let stride = self.slots[out_index(s)];
        let index = self.gi() * stride + slot;
        if let Ok(Some(c)) = op::eval_const(v) {
            self.consts.borrow_mut().insert((s, slot), c);
        }
        match v {
            V::B1(b) => {
                let buf = place.downcast_ref::<Buffer<u32, ReadWrite>>().expect("out");
                k.store(&buf.at(index), select(0u32, 1u32, b));
            }
            _ => with_scalar!(s, S => {
                let buf = place.downcast_ref::<Buffer<S, ReadWrite>>().expect("fuzzer bug: out");
                k.store(&buf.at(index), S::get(v));
            }),
        }
    }

    fn atomic_place(&self, target: AtomicTarget) -> Place<Atomic<u32>, ReadWrite> {
        match target {
            AtomicTarget::Own(slot) => {
                let atom = self.atom.as_ref().expect("fuzzer bug: atom");
                atom.at(self.gi() * self.atomics.0 + slot)
            }
            AtomicTarget::Shared(slot) => {
                let atom = self.atom.as_ref().expect("fuzzer bug: atom");
                atom.at(lit(self.prog.total_invocations() * self.atomics.0 + slot))
            }
            AtomicTarget::Workgroup => self.wg_atomic.clone().expect("fuzzer bug: wg_atomic"),
        }
    }

    fn stmt(&self, k: &mut KernelBuilder, s: &Stmt) {
        match s {
            Stmt::Let(id, e) => {
                let v = self.expr(e);
                let name = format!("v{id}");
                let bound = with_ty!(v.ty(), T => T::wrap(k.let_(&name, T::get(&v))));
                self.set(*id, bound);
            }
            Stmt::Var(id, contract, init) => {
                let name = format!("x{id}");
                let ty = contract.ty;
                let place: Rc<dyn Any> = with_ty!(ty, T => Rc::new(match init {
                    VarInit::Value(e) => {
                        let v = self.expr(e);
                        k.var::<T>(&name, T::get(&v))
                    }
                    VarInit::Zero => k.var_zeroed::<T>(&name),
                    VarInit::Declared => k.var_declared::<T>(&name),
                }));
                self.vars.borrow_mut().insert(*id, (ty, place));
            }
            Stmt::Assign(id, e) => {
                let v = self.expr(e);
                let (ty, place) = self.vars.borrow()[id].clone();
                with_ty!(ty, T => k.store(place.downcast_ref::<Var<T>>().expect("var"), T::get(&v)));
            }
            Stmt::Update(id, o, e) => {
                let v = self.expr(e);
                let (ty, place) = self.vars.borrow()[id].clone();
                with_ty!(ty, T => k.update(
                    place.downcast_ref::<Var<T>>().expect("var"),
                    |old| T::get(&op::binary(*o, &T::wrap(old), &v)),
                ));
            }
            Stmt::Out(_, slot, e) => {
                let v = self.expr(e);
                self.out(k, *slot, &v);
            }
            Stmt::If(c, a, b) => {
                let c = <bool>::get(&self.expr(c));
                if b.is_empty() {
                    k.if_(c, |k| self.block(k, a));
                } else {
                    k.if_else(c, |k| self.block(k, a), |k| self.block(k, b));
                }
            }
            Stmt::IfValue(id, ty, c, (a, va), (b, vb)) => {
                let c = <bool>::get(&self.expr(c));
                let name = format!("v{id}");
                let v = with_ty!(*ty, T => T::wrap(k.if_value::<T>(
                    &name,
                    c,
                    |k| {
                        self.block(k, a);
                        T::get(&self.expr(va))
                    },
                    |k| {
                        self.block(k, b);
                        T::get(&self.expr(vb))
                    },
                )));
                self.set(*id, v);
            }
            Stmt::Loop(l) => match l.scalar {
                Scalar::I32 => self.counted::<i32>(k, l),
                _ => self.counted::<u32>(k, l),
            },
            Stmt::Break => k.break_(),
            Stmt::Continue => k.continue_(),
            Stmt::Switch(sel, arms, default) => {
                let sel = self.expr(sel);
                match sel {
                    V::I1(e) => self.switch::<i32>(k, e, arms, default.as_deref(), |v| v),
                    _ => self
                        .switch::<u32>(k, <u32>::get(&sel), arms, default.as_deref(), |v| v as u32),
                }
            }
            Stmt::Barrier(true) => k.workgroup_barrier(),
            Stmt::Barrier(false) => k.storage_barrier(),
            Stmt::WgStore(e) => {
                let v = <u32>::get(&self.expr(e));
                let wg = self.wg.as_ref().expect("fuzzer bug: wg");
                k.store(&wg.at(local_invocation_index()), v);
            }
            Stmt::WgUniformLoad(id, index) => {
                let wg = self.wg.as_ref().expect("fuzzer bug: wg");
                let v = k.workgroup_uniform_load(&wg.at(lit(*index)));
                self.set(*id, V::U1(v));
            }
            Stmt::Call(id, f, args) => {
                let args: Vec<V> = args.iter().map(|a| self.expr(a)).collect();
                let v = self.call(k, *f, &args);
                self.set(*id, v);
            }
            Stmt::Atomic(id, target, o, value, cmp) => {
                let p = self.atomic_place(*target);
                let v = <u32>::get(&self.expr(value));
                let r = match o {
                    AtomicOp::Add => Some(k.atomic_add(&p, v)),
                    AtomicOp::Sub => Some(k.atomic_sub(&p, v)),
                    AtomicOp::Min => Some(k.atomic_min(&p, v)),
                    AtomicOp::Max => Some(k.atomic_max(&p, v)),
                    AtomicOp::And => Some(k.atomic_and(&p, v)),
                    AtomicOp::Or => Some(k.atomic_or(&p, v)),
                    AtomicOp::Xor => Some(k.atomic_xor(&p, v)),
                    AtomicOp::Exchange => Some(k.atomic_exchange(&p, v)),
                    AtomicOp::CompareExchange => {
                        let c = <u32>::get(&self.expr(cmp.as_ref().expect("comparand")));
                        let (old, _exchanged) = k.atomic_compare_exchange_weak(&p, c, v);
                        Some(old)
                    }
                    AtomicOp::Store => {
                        k.atomic_store(&p, v);
                        None
                    }
                    AtomicOp::AddF32 => {
                        k.atomic_add_f32(&p, ((v & 1023u32) | 1u32).to_f32());
                        None
                    }
                };
                if let (Some(id), Some(r)) = (id, r) {
                    self.set(*id, V::U1(r));
                }
            }
            Stmt::Subgroup(id, o, arg, extra) => {
                let v = self.subgroup(k, *o, arg, extra.as_ref());
                self.set(*id, v);
            }
            Stmt::Return(e) => {
                let v = self.expr(e);
                with_ty!(v.ty(), T => k.return_value(T::get(&v)));
            }
            Stmt::Mistake(m) => match m {
                Mistake::RevStepRev => {
                    k.for_in(
                        "bad",
                        LoopRange::new(0u32, 4u32).rev().step_by(2u32).rev(),
                        |_, _| {},
                    );
                }
                Mistake::ForeignCall => {
                    let mut other = KernelBuilder::new("other", [1, 1, 1]);
                    let f = other.function::<(u32,), u32>("g", ["x"], |_, (x,)| x);
                    let r = k.call(&f, (lit(1u32),));
                    let _ = k.let_("foreign", r);
                }
            },
        }
    }

    fn counted<S>(&self, k: &mut KernelBuilder, l: &CountedLoop)
    where
        S: IntegerScalar + Dyn + Numeric + ScalarOrVector<Bool = bool> + Constructible,
        S: TryFrom<i32> + From<u8>,
        <S as TryFrom<i32>>::Error: std::fmt::Debug,
    {
        let counter = l.counter;
        let name = format!("i{counter}");
        let start = lit(S::try_from(l.start).expect("fuzzer bug: start"));
        let end_v = S::get(&self.expr(&l.end));
        let body_fn = |k: &mut KernelBuilder, i: Exp<S>| {
            self.set(counter, S::wrap(i));
            self.block(k, &l.body);
        };
        match &l.form {
            LoopForm::Range => k.for_range(&name, start, end_v, body_fn),
            LoopForm::Step(s) => {
                let step = lit(S::try_from(*s as i32).expect("step"));
                k.for_step(&name, start, end_v, step, body_fn)
            }
            LoopForm::InclusiveIn { rev, step } => {
                let one = lit(S::from(1u8));
                let mut r = LoopRange::inclusive(start, end_v - one);
                if let Some(s) = step {
                    r = r.step_by(lit(S::try_from(*s as i32).expect("step")));
                }
                if *rev {
                    r = r.rev();
                }
                k.for_in(&name, r, body_fn)
            }
            LoopForm::RevIn => k.for_in(&name, LoopRange::new(start, end_v).rev(), body_fn),
            LoopForm::While => {
                let c = k.var::<S>(&format!("c{counter}"), &start);
                let cond = c.load().lt(&end_v);
                k.while_(cond, |k| {
                    let i = k.let_(&name, c.load());
                    k.store(&c, &i + lit(S::from(1u8)));
                    body_fn(k, i);
                });
            }
            LoopForm::Loop => {
                let c = k.var::<S>(&format!("c{counter}"), &start);
                k.loop_(|k| {
                    k.if_(c.load().ge(&end_v), |k| k.break_());
                    let i = k.let_(&name, c.load());
                    k.store(&c, &i + lit(S::from(1u8)));
                    body_fn(k, i);
                });
            }
        }
    }

    fn switch<S: IntegerScalar + Copy>(
        &self,
        k: &mut KernelBuilder,
        sel: Exp<S>,
        arms: &[(Vec<i32>, Vec<Stmt>)],
        default: Option<&[Stmt]>,
        conv: fn(i32) -> S,
    ) {
        k.switch(sel, |sw| {
            for (values, body) in arms {
                sw.case(values.iter().map(|&v| conv(v)), |k| self.block(k, body));
            }
            if let Some(d) = default {
                sw.default(|k| self.block(k, d));
            }
        });
    }

    fn subgroup(
        &self,
        k: &mut KernelBuilder,
        o: SubgroupOp,
        arg: &Expr,
        extra: Option<&Expr>,
    ) -> V {
        use SubgroupOp as O;
        if o == O::Elect {
            return V::B1(k.subgroup_elect());
        }
        let a = self.expr(arg);
        let constant = || match extra {
            Some(Expr::Lit(Lit::U32(v))) => *v,
            _ => panic!("fuzzer bug: a subgroup constant"),
        };
        match o {
            O::Add
            | O::Mul
            | O::Min
            | O::Max
            | O::InclusiveAdd
            | O::ExclusiveAdd
            | O::InclusiveMul
            | O::ExclusiveMul => with_num!(a.ty(), T => {
                let x = T::get(&a);
                T::wrap(match o {
                    O::Add => k.subgroup_add(x),
                    O::Mul => k.subgroup_mul(x),
                    O::Min => k.subgroup_min(x),
                    O::Max => k.subgroup_max(x),
                    O::InclusiveAdd => k.subgroup_inclusive_add(x),
                    O::ExclusiveAdd => k.subgroup_exclusive_add(x),
                    O::InclusiveMul => k.subgroup_inclusive_mul(x),
                    _ => k.subgroup_exclusive_mul(x),
                })
            }),
            O::And | O::Or | O::Xor => crate::with_int!(a.ty(), T => {
                let x = T::get(&a);
                T::wrap(match o {
                    O::And => k.subgroup_and(x),
                    O::Or => k.subgroup_or(x),
                    _ => k.subgroup_xor(x),
                })
            }),
            O::All => V::B1(k.subgroup_all(<bool>::get(&a))),
            O::Any => V::B1(k.subgroup_any(<bool>::get(&a))),
            O::Ballot => V::U4(k.subgroup_ballot(<bool>::get(&a))),
            _ => with_num!(a.ty(), T => {
                let x = T::get(&a);
                T::wrap(match o {
                    O::BroadcastFirst => k.subgroup_broadcast_first(x),
                    O::Broadcast => k.subgroup_broadcast(x, constant()),
                    O::Shuffle => {
                        let lane = <u32>::get(&self.expr(extra.expect("lane")));
                        k.subgroup_shuffle(x, lane)
                    }
                    O::ShuffleXor => k.subgroup_shuffle_xor(x, lit(constant())),
                    O::ShuffleUp => {
                        // Lanes without a source get their own value (WGSL leaves theirs
                        // undefined).
                        let d = constant();
                        let s = k.subgroup_shuffle_up(&x, lit(d));
                        select(s, x, subgroup_invocation_id().lt(d))
                    }
                    O::ShuffleDown => {
                        let d = constant();
                        let s = k.subgroup_shuffle_down(&x, lit(d));
                        select(s, x, (subgroup_invocation_id() + d).ge(subgroup_size()))
                    }
                    O::QuadSwapX => k.quad_swap_x(x),
                    O::QuadSwapY => k.quad_swap_y(x),
                    O::QuadSwapDiagonal => k.quad_swap_diagonal(x),
                    _ => k.quad_broadcast(x, constant()),
                })
            }),
        }
    }
}

/// `f16` from its bits (for the printed code and the inputs).
pub fn f16_bits(b: u16) -> f16 {
    f16::from_bits(b)
}
