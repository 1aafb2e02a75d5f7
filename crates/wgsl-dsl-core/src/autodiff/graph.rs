//! The expression DAG as differentiation sees it.
//!
//! A node's *operands* are its subexpressions, and, for a value bound by a statement
//! (`ExprKind::Bound`), what defines it: the value of a `let`, or the result of a helper
//! function call with the call's arguments substituted for the parameters (the function
//! *inlined*, when its body is `let`s and one `return`). A load's operands are the indices of
//! its place. Nodes are identified by their `Rc` (the same `Exp` reached twice is one node), and
//! a bound value by its [`ValueId`] (every use of a `let` is one node).
//!
//! A node *depends* on the variables differentiated if it is one, or if one is reachable from
//! it through operands or through memory: a load of a place (a `var`, a read-write binding,
//! workgroup memory, a storage texture) depends on every value the kernel stores there,
//! anywhere, before or after. Dependence through memory cannot be differentiated as an
//! expression: such a load is an error (kernel AD follows stores; see the module docs).

use naga::{FastHashMap as HashMap, FastHashSet as HashSet};
use std::rc::Rc;

use crate::exp::{ExprKind, Node, NodeRef, PlaceKind, PlaceRef};
use crate::handle::{FunctionHandle, ValueId};
use crate::kernel::KernelBuilder;
use crate::kernel::stmt::Stmt;
use crate::kernel::values::ValueDef;

use crate::exp::place_indices;
use crate::site::CallSite;

/// A node's identity: its `Rc`, or the value it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Node(*const Node),
    Value(ValueId),
}

pub(crate) fn key(n: &NodeRef) -> Key {
    match n.kind {
        ExprKind::Bound(id) => Key::Value(id),
        _ => Key::Node(Rc::as_ptr(n)),
    }
}

/// The memory a place is in: a global (by its index in the builder) or a `var`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Root {
    Global(usize),
    Local(ValueId),
}

/// The memory `place` is part of, if it is this builder's.
pub(crate) fn root(k: &KernelBuilder, place: &PlaceRef) -> Option<Root> {
    let mut p = place;
    loop {
        match &p.kind {
            PlaceKind::Index(base, _) | PlaceKind::Field(base, _) => p = base,
            PlaceKind::Global(g) if g.builder == k.id => return Some(Root::Global(g.index)),
            PlaceKind::Global(_) => return None,
            PlaceKind::Local(id) => return Some(Root::Local(*id)),
        }
    }
}

/// Visit every statement of `stmts`, nested blocks included.
pub(crate) fn for_each_stmt<'s>(
    stmts: &'s [(Stmt, CallSite)],
    f: &mut impl FnMut(&'s Stmt, CallSite),
) {
    for (s, site) in stmts {
        f(s, *site);
        match s {
            Stmt::If { accept, reject, .. } => {
                for_each_stmt(accept, f);
                for_each_stmt(reject, f);
            }
            Stmt::Loop {
                body, continuing, ..
            }
            | Stmt::LoopBreakIf {
                body, continuing, ..
            } => {
                for_each_stmt(body, f);
                for_each_stmt(continuing, f);
            }
            Stmt::Switch { cases, .. } => {
                for arm in cases {
                    for_each_stmt(&arm.body, f);
                }
            }
            _ => {}
        }
    }
}

/// Every value stored into each memory root, in every function of `k` recorded so far.
pub(crate) fn stores(k: &KernelBuilder) -> HashMap<Root, Vec<NodeRef>> {
    let mut out: HashMap<Root, Vec<NodeRef>> = HashMap::default();
    for body in k.recorded_bodies() {
        for_each_stmt(body, &mut |s, _| {
            let (place, values): (&PlaceRef, Vec<&NodeRef>) = match s {
                Stmt::Store { place, value } | Stmt::AtomicAddF32 { place, value } => {
                    (place, vec![value])
                }
                Stmt::Atomic {
                    place,
                    value,
                    compare,
                    ..
                } => (
                    place,
                    std::iter::once(value).chain(compare.iter()).collect(),
                ),
                Stmt::CoopStore { value, place, .. } => (place, vec![value]),
                Stmt::TextureStore { texture, value, .. } => (texture, vec![value]),
                _ => return,
            };
            if let Some(r) = root(k, place) {
                out.entry(r)
                    .or_default()
                    .extend(values.into_iter().cloned());
            }
        });
    }
    out
}

/// The DAG reachable from some roots, with what depends on the variables `wrt`.
pub(crate) struct Graph<'k> {
    k: &'k KernelBuilder,
    wrt: HashSet<Key>,
    /// The operands of every node explored.
    ops: HashMap<Key, Vec<NodeRef>>,
    /// Nodes reachable from the roots through operands, every node after its operands.
    pub order: Vec<NodeRef>,
    dep: HashSet<Key>,
    /// Loads (and statement results reading memory) that depend on the variables through
    /// what is stored where they read.
    memory_dep: HashSet<Key>,
    /// Calls inlined, by their result.
    inlined: HashMap<ValueId, NodeRef>,
}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("nodes", &self.order.len())
            .field("dependent", &self.dep.len())
            .finish_non_exhaustive()
    }
}

impl<'k> Graph<'k> {
    /// Explore from `roots`; `wrt` are the variables (their definitions are not explored).
    pub(crate) fn new(k: &'k KernelBuilder, roots: &[NodeRef], wrt: &[NodeRef]) -> Self {
        let mut g = Graph {
            k,
            wrt: wrt.iter().map(key).collect(),
            ops: HashMap::default(),
            order: Vec::new(),
            dep: HashSet::default(),
            memory_dep: HashSet::default(),
            inlined: HashMap::default(),
        };
        g.order = g.post_order(roots);
        g.dependence();
        g
    }

    pub(crate) fn is_wrt(&self, n: &NodeRef) -> bool {
        self.wrt.contains(&key(n))
    }

    pub(crate) fn depends(&self, n: &NodeRef) -> bool {
        self.dep.contains(&key(n))
    }

    /// True if `n` reads memory where a value depending on the variables is stored.
    pub(crate) fn depends_through_memory(&self, n: &NodeRef) -> bool {
        self.memory_dep.contains(&key(n))
    }

    /// The operands of an explored node.
    pub(crate) fn operands(&self, n: &NodeRef) -> &[NodeRef] {
        self.ops.get(&key(n)).map_or(&[], Vec::as_slice)
    }

    /// What a bound value is.
    pub(crate) fn value_def(&self, id: ValueId) -> Option<&'k ValueDef> {
        self.k.value_defs.get(&id)
    }

    /// The name of the `let` a node is, if it is one.
    pub(crate) fn let_name(&self, n: &NodeRef) -> Option<&'k str> {
        match n.kind {
            ExprKind::Bound(id) => match self.value_def(id)? {
                ValueDef::Let { name, .. } => Some(name),
                _ => None,
            },
            _ => None,
        }
    }

    /// The name of the binding or `var` a load reads, for names and messages.
    pub(crate) fn place_name(&self, place: &PlaceRef) -> Option<String> {
        match root(self.k, place)? {
            Root::Global(i) => self.k.globals.get(i).map(|g| g.name.clone()),
            Root::Local(id) => {
                let mut found = None;
                for body in self.k.recorded_bodies() {
                    for_each_stmt(body, &mut |s, _| {
                        if let Stmt::Var { id: v, name, .. } = s
                            && *v == id
                        {
                            found = Some(name.clone());
                        }
                    });
                }
                found
            }
        }
    }

    /// True if the call `id` is differentiated as its inlined body.
    pub(crate) fn is_inlined(&self, id: ValueId) -> bool {
        self.inlined.contains_key(&id)
    }

    /// The nodes reachable from the roots that read memory the kernel can write (a `var`,
    /// read-write storage, workgroup memory, a texture), other than the variables.
    pub(crate) fn memory_reads(&self) -> Vec<NodeRef> {
        use crate::kernel::{BindingKind, GlobalKind};
        self.order
            .iter()
            .filter(|n| !self.is_wrt(n))
            .filter(|n| {
                let Some(place) = self.memory_read(n) else {
                    return false;
                };
                match root(self.k, &place) {
                    Some(Root::Local(_)) => true,
                    Some(Root::Global(i)) => self.k.globals.get(i).is_some_and(|g| {
                        !matches!(
                            g.kind,
                            GlobalKind::Binding(BindingKind::StorageRead | BindingKind::Uniform, _)
                        )
                    }),
                    None => false,
                }
            })
            .cloned()
            .collect()
    }

    fn compute_operands(&mut self, n: &NodeRef) -> Vec<NodeRef> {
        if self.wrt.contains(&key(n)) {
            return Vec::new();
        }
        match &n.kind {
            ExprKind::Binary(_, a, b) => vec![a.clone(), b.clone()],
            ExprKind::Unary(_, a)
            | ExprKind::Relational(_, a)
            | ExprKind::As { value: a, .. }
            | ExprKind::Splat(_, a)
            | ExprKind::Swizzle(_, _, a)
            | ExprKind::AccessIndex(a, _) => vec![a.clone()],
            ExprKind::Math(_, args) | ExprKind::Compose(args) => args.clone(),
            ExprKind::Select {
                condition,
                accept,
                reject,
            } => vec![condition.clone(), accept.clone(), reject.clone()],
            ExprKind::Access(a, i) => vec![a.clone(), i.clone()],
            ExprKind::Load(place) | ExprKind::ArrayLength(place) => {
                let mut v = Vec::new();
                place_indices(place, &mut v);
                v
            }
            ExprKind::CoopLoad { place, stride, .. } => {
                let mut v = vec![stride.clone()];
                place_indices(place, &mut v);
                v
            }
            ExprKind::CoopMultiplyAdd(a, b, c) => vec![a.clone(), b.clone(), c.clone()],
            ExprKind::TextureLoad { coords, level, .. } => std::iter::once(coords.clone())
                .chain(level.clone())
                .collect(),
            ExprKind::TextureDimensions { level, .. } => level.iter().cloned().collect(),
            ExprKind::Bound(id) => match self.k.value_defs.get(id) {
                Some(ValueDef::Let { value, .. }) => vec![value.clone()],
                Some(ValueDef::Call { function, args }) => {
                    match self.inline(*id, *function, args) {
                        Some(result) => vec![result],
                        None => args.clone(),
                    }
                }
                Some(ValueDef::Opaque {
                    operands, place, ..
                }) => {
                    let mut v = operands.clone();
                    if let Some(p) = place {
                        place_indices(p, &mut v);
                    }
                    v
                }
                None => Vec::new(),
            },
            ExprKind::Literal(_)
            | ExprKind::Builtin(_)
            | ExprKind::Param { .. }
            | ExprKind::ZeroValue
            | ExprKind::Invalid(_) => Vec::new(),
        }
    }

    /// Post-order over operands from `roots` (iterative: trees may be deep).
    fn post_order(&mut self, roots: &[NodeRef]) -> Vec<NodeRef> {
        let mut order = Vec::new();
        let mut done: HashSet<Key> = HashSet::default();
        let mut stack: Vec<(NodeRef, usize)> = Vec::new();
        for r in roots {
            if done.contains(&key(r)) {
                continue;
            }
            stack.push((r.clone(), 0));
            while let Some((n, next)) = stack.pop() {
                let k = key(&n);
                if next == 0 && !self.ops.contains_key(&k) {
                    let ops = self.compute_operands(&n);
                    self.ops.insert(k, ops);
                }
                let child = self.ops[&k].get(next).cloned();
                match child {
                    Some(c) => {
                        stack.push((n, next + 1));
                        if !done.contains(&key(&c)) {
                            stack.push((c, 0));
                        }
                    }
                    None => {
                        if done.insert(k) {
                            order.push(n);
                        }
                    }
                }
            }
        }
        order
    }

    /// Dependence on `wrt`: everything explored from the roots, plus what is stored where
    /// explored loads read (and so on), reversed from the variables.
    fn dependence(&mut self) {
        let mut stores: Option<HashMap<Root, Vec<NodeRef>>> = None;
        let mut users: HashMap<Key, Vec<Key>> = HashMap::default();
        let mut memory_users: HashMap<Key, Vec<Key>> = HashMap::default();
        let mut seen: HashSet<Key> = HashSet::default();
        let mut work: Vec<NodeRef> = self.order.clone();
        while let Some(n) = work.pop() {
            let k = key(&n);
            if !seen.insert(k) {
                continue;
            }
            if !self.ops.contains_key(&k) {
                let ops = self.compute_operands(&n);
                self.ops.insert(k, ops);
            }
            for c in &self.ops[&k] {
                users.entry(key(c)).or_default().push(k);
                work.push(c.clone());
            }
            if self.wrt.contains(&k) {
                continue;
            }
            if let Some(place) = self.memory_read(&n) {
                let stores = stores.get_or_insert_with(|| self::stores(self.k));
                if let Some(values) = root(self.k, &place).and_then(|r| stores.get(&r)) {
                    for v in values {
                        memory_users.entry(key(v)).or_default().push(k);
                        work.push(v.clone());
                    }
                }
            }
        }
        let mut queue: Vec<Key> = self.wrt.iter().copied().collect();
        while let Some(k) = queue.pop() {
            if !self.dep.insert(k) {
                continue;
            }
            for u in users.get(&k).into_iter().flatten() {
                queue.push(*u);
            }
            for u in memory_users.get(&k).into_iter().flatten() {
                self.memory_dep.insert(*u);
                queue.push(*u);
            }
        }
    }

    /// The place a node reads memory from, if it does.
    fn memory_read(&self, n: &NodeRef) -> Option<PlaceRef> {
        match &n.kind {
            ExprKind::Load(p) | ExprKind::CoopLoad { place: p, .. } => Some(p.clone()),
            ExprKind::TextureLoad { texture, .. } => Some(texture.clone()),
            ExprKind::Bound(id) => match self.k.value_defs.get(id)? {
                ValueDef::Opaque { place, .. } => place.clone(),
                _ => None,
            },
            _ => None,
        }
    }

    /// The result of the call `id` with its arguments substituted into the function's body,
    /// when the body is `let`s (and calls) and one `return`; `None` otherwise.
    fn inline(
        &mut self,
        id: ValueId,
        function: FunctionHandle,
        args: &[NodeRef],
    ) -> Option<NodeRef> {
        if let Some(r) = self.inlined.get(&id) {
            return Some(r.clone());
        }
        let r = super::subst::inline_call(self.k, function, args)?;
        self.inlined.insert(id, r.clone());
        Some(r)
    }
}

/// The name of a node's adjoint: `d_<let>` for a `let`, else after its operation
/// (`d_sin`, `d_product`).
pub(crate) fn adjoint_name(g: &Graph<'_>, n: &NodeRef) -> String {
    use naga::BinaryOperator as B;
    if let Some(name) = g.let_name(n) {
        return format!("d_{name}");
    }
    let op = match &n.kind {
        ExprKind::Math(fun, _) => crate::consteval::math_name(*fun),
        ExprKind::Binary(B::Multiply, ..) => "product",
        ExprKind::Binary(B::Add, ..) => "sum",
        ExprKind::Binary(B::Subtract, ..) => "difference",
        ExprKind::Binary(B::Divide, ..) => "quotient",
        ExprKind::Select { .. } => "select",
        _ => "value",
    };
    format!("d_{op}")
}
