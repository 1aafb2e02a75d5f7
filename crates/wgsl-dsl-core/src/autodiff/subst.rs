//! Substitution: rebuilding an expression with some of its nodes replaced, every node keeping
//! its call site. Inlining a helper function (its parameters replaced by a call's arguments)
//! is one; kernel AD's symbolic execution (a `var`'s loads replaced by the value last stored)
//! is another.

use std::collections::HashMap;
use std::rc::Rc;

use crate::exp::{ExprKind, Node, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{FunctionHandle, FunctionId, ValueId};
use crate::kernel::KernelBuilder;
use crate::kernel::stmt::Stmt;

/// A substitution: what each node becomes. [`rebuild`] gives the default, the node with its
/// operands substituted.
pub(crate) trait Rewrite {
    type Error;
    fn expr(&mut self, n: &NodeRef) -> Result<NodeRef, Self::Error>;
    fn place(&mut self, p: &PlaceRef) -> Result<PlaceRef, Self::Error> {
        rebuild_place(self, p)
    }
}

/// `n` with `r` applied to its operands; `n` itself where none changed.
pub(crate) fn rebuild<R: Rewrite + ?Sized>(r: &mut R, n: &NodeRef) -> Result<NodeRef, R::Error> {
    let changed = std::cell::Cell::new(false);
    let e = |c: &NodeRef, r: &mut R| -> Result<NodeRef, R::Error> {
        let m = r.expr(c)?;
        changed.set(changed.get() | !Rc::ptr_eq(&m, c));
        Ok(m)
    };
    let moved = |q: &PlaceRef, p: &PlaceRef| changed.set(changed.get() | !Rc::ptr_eq(q, p));
    let kind = match &n.kind {
        ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, e(a, r)?, e(b, r)?),
        ExprKind::Unary(op, a) => ExprKind::Unary(*op, e(a, r)?),
        ExprKind::Math(f, args) => {
            let mut v = Vec::with_capacity(args.len());
            for a in args {
                v.push(e(a, r)?);
            }
            ExprKind::Math(*f, v)
        }
        ExprKind::Relational(f, a) => ExprKind::Relational(*f, e(a, r)?),
        ExprKind::Select {
            condition,
            accept,
            reject,
        } => ExprKind::Select {
            condition: e(condition, r)?,
            accept: e(accept, r)?,
            reject: e(reject, r)?,
        },
        ExprKind::As {
            value,
            kind,
            convert,
        } => ExprKind::As {
            value: e(value, r)?,
            kind: *kind,
            convert: *convert,
        },
        ExprKind::Compose(parts) => {
            let mut v = Vec::with_capacity(parts.len());
            for a in parts {
                v.push(e(a, r)?);
            }
            ExprKind::Compose(v)
        }
        ExprKind::Splat(s, a) => ExprKind::Splat(*s, e(a, r)?),
        ExprKind::Swizzle(s, p, a) => ExprKind::Swizzle(*s, *p, e(a, r)?),
        ExprKind::AccessIndex(a, i) => ExprKind::AccessIndex(e(a, r)?, *i),
        ExprKind::Access(a, i) => ExprKind::Access(e(a, r)?, e(i, r)?),
        ExprKind::Load(p) => {
            let q = r.place(p)?;
            moved(&q, p);
            ExprKind::Load(q)
        }
        ExprKind::ArrayLength(p) => {
            let q = r.place(p)?;
            moved(&q, p);
            ExprKind::ArrayLength(q)
        }
        ExprKind::CoopLoad {
            place,
            stride,
            row_major,
        } => {
            let q = r.place(place)?;
            moved(&q, place);
            ExprKind::CoopLoad {
                place: q,
                stride: e(stride, r)?,
                row_major: *row_major,
            }
        }
        ExprKind::CoopMultiplyAdd(a, b, c) => {
            ExprKind::CoopMultiplyAdd(e(a, r)?, e(b, r)?, e(c, r)?)
        }
        ExprKind::TextureLoad {
            texture,
            coords,
            level,
        } => {
            let q = r.place(texture)?;
            moved(&q, texture);
            ExprKind::TextureLoad {
                texture: q,
                coords: e(coords, r)?,
                level: match level {
                    Some(l) => Some(e(l, r)?),
                    None => None,
                },
            }
        }
        ExprKind::TextureDimensions { texture, level } => {
            let q = r.place(texture)?;
            moved(&q, texture);
            ExprKind::TextureDimensions {
                texture: q,
                level: match level {
                    Some(l) => Some(e(l, r)?),
                    None => None,
                },
            }
        }
        ExprKind::Literal(_)
        | ExprKind::Builtin(_)
        | ExprKind::Bound(_)
        | ExprKind::Param { .. }
        | ExprKind::ZeroValue
        | ExprKind::Invalid(_) => return Ok(n.clone()),
    };
    if !changed.get() {
        return Ok(n.clone());
    }
    Ok(Rc::new(Node {
        kind,
        ty: n.ty.clone(),
        site: n.site,
    }))
}

/// True if a node of `n`'s DAG (`n` included, through [`operands`](crate::exp::operands), each node once)
/// satisfies `pred`.
pub(crate) fn any_node(n: &NodeRef, mut pred: impl FnMut(&NodeRef) -> bool) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![n.clone()];
    while let Some(n) = stack.pop() {
        if !seen.insert(Rc::as_ptr(&n)) {
            continue;
        }
        if pred(&n) {
            return true;
        }
        stack.extend(crate::exp::operands(&n));
    }
    false
}

/// `p` with `r` applied to its indices; `p` itself where none changed.
pub(crate) fn rebuild_place<R: Rewrite + ?Sized>(
    r: &mut R,
    p: &PlaceRef,
) -> Result<PlaceRef, R::Error> {
    let kind = match &p.kind {
        PlaceKind::Index(base, index) => {
            let b = r.place(base)?;
            let i = r.expr(index)?;
            if Rc::ptr_eq(&b, base) && Rc::ptr_eq(&i, index) {
                return Ok(p.clone());
            }
            PlaceKind::Index(b, i)
        }
        PlaceKind::Field(base, f) => {
            let b = r.place(base)?;
            if Rc::ptr_eq(&b, base) {
                return Ok(p.clone());
            }
            PlaceKind::Field(b, *f)
        }
        PlaceKind::Global(_) | PlaceKind::Local(_) => return Ok(p.clone()),
    };
    Ok(Rc::new(PlaceNode {
        kind,
        ty: p.ty.clone(),
        site: p.site,
    }))
}

/// Inlining one call: parameters become arguments, the function's `let`s their values.
struct Inline<'k> {
    k: &'k KernelBuilder,
    function: FunctionId,
    args: Vec<NodeRef>,
    lets: HashMap<ValueId, NodeRef>,
    calls: HashMap<ValueId, (FunctionHandle, Vec<NodeRef>)>,
    memo: HashMap<*const Node, NodeRef>,
    bound: HashMap<ValueId, NodeRef>,
}

/// Why a call is not inlined (it is then a value differentiation does not see into).
struct NotInlinable;

impl Rewrite for Inline<'_> {
    type Error = NotInlinable;
    fn expr(&mut self, n: &NodeRef) -> Result<NodeRef, NotInlinable> {
        let ptr = Rc::as_ptr(n);
        if let Some(m) = self.memo.get(&ptr) {
            return Ok(m.clone());
        }
        let m = match &n.kind {
            ExprKind::Param { function, index } if *function == self.function => self
                .args
                .get(*index as usize)
                .cloned()
                .ok_or(NotInlinable)?,
            ExprKind::Bound(id) => {
                if let Some(b) = self.bound.get(id) {
                    b.clone()
                } else if let Some(value) = self.lets.get(id).cloned() {
                    let b = self.expr(&value)?;
                    self.bound.insert(*id, b.clone());
                    b
                } else if let Some((f, args)) = self.calls.get(id).cloned() {
                    let mut sub = Vec::with_capacity(args.len());
                    for a in &args {
                        sub.push(self.expr(a)?);
                    }
                    let b = inline_call(self.k, f, &sub).ok_or(NotInlinable)?;
                    self.bound.insert(*id, b.clone());
                    b
                } else {
                    // A value of the caller (a function cannot see one) or of another
                    // function: left as it is, lowering reports it.
                    n.clone()
                }
            }
            _ => rebuild(self, n)?,
        };
        self.memo.insert(ptr, m.clone());
        Ok(m)
    }
}

/// The result of calling `function` with `args`, as an expression of the arguments: the
/// function inlined, when its body is `let`s, calls of such functions, and one
/// `return value;`. `None` when it is not (it has `var`s, stores, control flow).
pub(crate) fn inline_call(
    k: &KernelBuilder,
    function: FunctionHandle,
    args: &[NodeRef],
) -> Option<NodeRef> {
    if function.builder != k.id {
        return None;
    }
    let decl = k.functions.get(function.index)?;
    let mut lets = HashMap::new();
    let mut calls = HashMap::new();
    let mut result = None;
    for (s, _) in &decl.body {
        match s {
            Stmt::Let { id, value, .. } => {
                lets.insert(*id, value.clone());
            }
            Stmt::Call {
                result,
                function,
                args,
            } => {
                calls.insert(*result, (*function, args.clone()));
            }
            Stmt::Return(Some(v)) => {
                result = Some(v.clone());
                break;
            }
            _ => return None,
        }
    }
    let result = result?;
    let mut inline = Inline {
        k,
        function: decl.id,
        args: args.to_vec(),
        lets,
        calls,
        memo: HashMap::new(),
        bound: HashMap::new(),
    };
    inline.expr(&result).ok()
}
