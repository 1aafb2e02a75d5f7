//! Resolving a validated `naga::Module` into the interpreter's [`Compiled`] form, once per
//! shader: types become word counts and memory plans, expressions become register slots,
//! views, constants or [`Op`]s, statements become [`St`]s.

use std::collections::HashMap;

use naga::{Expression as E, Handle, Span, Statement as S, TypeInner as T};

use super::error::InterpError;
use super::mask::MAX_LANES;
use super::program::*;
use super::semantics::Kind;
use wgsl_dsl_core::shader::Shader;

/// Resolve `shader`'s module for the interpreter.
pub(crate) fn compile(
    shader: &Shader,
    prints: &[wgsl_dsl_core::__private::DebugPrintDecl],
) -> Result<Compiled, InterpError> {
    let module = &shader.module;
    let name = shader.signature.name.clone();
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| InterpError::Unsupported {
            kernel: name.clone(),
            what: format!("a type that cannot be laid out ({e})"),
            site: None,
        })?;
    let (ep_index, ep) = module
        .entry_points
        .iter()
        .enumerate()
        .find(|(_, ep)| ep.name == name && ep.stage == naga::ShaderStage::Compute)
        .ok_or_else(|| InterpError::Unsupported {
            kernel: name.clone(),
            what: "a module without its compute entry point".into(),
            site: None,
        })?;
    let lanes = ep
        .workgroup_size
        .iter()
        .map(|&s| s as usize)
        .product::<usize>();
    let cx = Cx {
        shader,
        module,
        layouter,
        lanes: lanes as u32,
        name: name.clone(),
        prints,
    };
    if lanes == 0 || lanes > MAX_LANES {
        return Err(cx.unsupported(
            format!("workgroups of {lanes} invocations (at most {MAX_LANES})"),
            Span::UNDEFINED,
        ));
    }
    let globals = cx.globals()?;
    let mut functions = Vec::with_capacity(module.functions.len() + 1);
    for (h, f) in module.functions.iter() {
        functions.push(FnC::new(&cx, f, &shader.info[h], false)?.compile()?);
    }
    functions.push(
        FnC::new(
            &cx,
            &ep.function,
            shader.info.get_entry_point(ep_index),
            true,
        )?
        .compile()?,
    );
    Ok(Compiled {
        name,
        workgroup_size: ep.workgroup_size,
        lanes,
        globals,
        functions,
        prints: prints
            .iter()
            .map(|p| PrintInfo {
                pieces: p.pieces.clone(),
                site: p.site,
            })
            .collect(),
    })
}

struct Cx<'a> {
    shader: &'a Shader,
    module: &'a naga::Module,
    layouter: naga::proc::Layouter,
    lanes: u32,
    name: String,
    /// The `debug_print`s: calls of their functions are prints.
    prints: &'a [wgsl_dsl_core::__private::DebugPrintDecl],
}

impl Cx<'_> {
    fn unsupported(&self, what: impl Into<String>, span: Span) -> InterpError {
        InterpError::Unsupported {
            kernel: self.name.clone(),
            what: what.into(),
            site: self.shader.call_site(span),
        }
    }

    fn inner(&self, ty: Handle<naga::Type>) -> &T {
        &self.module.types[ty].inner
    }

    fn kind(&self, s: naga::Scalar, span: Span) -> Result<Kind, InterpError> {
        use naga::ScalarKind as K;
        Ok(match (s.kind, s.width) {
            (K::Float, 4) => Kind::F32,
            (K::Float, 2) => Kind::F16,
            (K::Sint, 4) => Kind::I32,
            (K::Uint, 4) => Kind::U32,
            (K::Bool, _) => Kind::Bool,
            _ => return Err(self.unsupported(format!("the scalar type {s:?}"), span)),
        })
    }

    /// The scalar type of a scalar, vector, matrix or atomic.
    fn elem_kind(&self, t: &T, span: Span) -> Result<Kind, InterpError> {
        match *t {
            T::Scalar(s)
            | T::Vector { scalar: s, .. }
            | T::Matrix { scalar: s, .. }
            | T::Atomic(s) => self.kind(s, span),
            _ => Err(self.unsupported(format!("arithmetic on {t:?}"), span)),
        }
    }

    /// Components of a scalar (1), vector or matrix.
    fn comps(t: &T) -> u32 {
        match *t {
            T::Vector { size, .. } => size as u32,
            T::Matrix { columns, rows, .. } => columns as u32 * rows as u32,
            _ => 1,
        }
    }

    /// Words of a value of type `t` in registers or local memory.
    fn flat(&self, t: &T, span: Span) -> Result<u32, InterpError> {
        Ok(match *t {
            T::Scalar(_) | T::Atomic(_) | T::Pointer { .. } | T::ValuePointer { .. } => 1,
            T::Vector { size, .. } => size as u32,
            T::Matrix { columns, rows, .. } => columns as u32 * rows as u32,
            // A cooperative matrix: every invocation of the subgroup holds all of it,
            // row-major (element `(r, c)` is word `r * columns + c`).
            T::CooperativeMatrix { columns, rows, .. } => columns as u32 * rows as u32,
            T::Array {
                base,
                size: naga::ArraySize::Constant(n),
                ..
            } => n.get() * self.flat(self.inner(base), span)?,
            T::Struct { ref members, .. } => {
                let mut total = 0;
                for m in members {
                    total += self.flat(self.inner(m.ty), span)?;
                }
                total
            }
            _ => return Err(self.unsupported(format!("values of type {t:?}"), span)),
        })
    }

    /// Word offset of member/element `index` within a value of type `t`.
    fn flat_offset(&self, t: &T, index: u32, span: Span) -> Result<u32, InterpError> {
        Ok(match *t {
            T::Vector { .. } => index,
            T::Matrix { rows, .. } => index * rows as u32,
            T::Array { base, .. } => index * self.flat(self.inner(base), span)?,
            T::Struct { ref members, .. } => {
                let mut off = 0;
                for m in members.iter().take(index as usize) {
                    off += self.flat(self.inner(m.ty), span)?;
                }
                off
            }
            _ => return Err(self.unsupported(format!("indexing into {t:?}"), span)),
        })
    }

    /// The type of member/element `index` of `t`.
    fn member(&self, t: &T, index: u32) -> Option<T> {
        Some(match *t {
            T::Vector { scalar, .. } => T::Scalar(scalar),
            T::Matrix { rows, scalar, .. } => T::Vector { size: rows, scalar },
            T::Array { base, .. } => self.inner(base).clone(),
            T::Struct { ref members, .. } => self.inner(members.get(index as usize)?.ty).clone(),
            _ => return None,
        })
    }

    /// Byte stride between consecutive columns of a matrix in memory (WGSL spec §14.4.1
    /// "Alignment and Size": a column is a `vecR`, aligned to 2 or 4 components).
    fn column_stride(rows: naga::VectorSize, width: u8) -> u32 {
        let n = if rows == naga::VectorSize::Bi { 2 } else { 4 };
        n * u32::from(width)
    }

    /// Byte offset of member/element `index` of `t` in memory.
    fn mem_offset(&self, t: &T, index: u32, span: Span) -> Result<u32, InterpError> {
        Ok(match *t {
            T::Vector { scalar, .. } => index * u32::from(scalar.width),
            T::Matrix { rows, scalar, .. } => index * Self::column_stride(rows, scalar.width),
            T::Array { stride, .. } => index * stride,
            T::Struct { ref members, .. } => match members.get(index as usize) {
                Some(m) => m.offset,
                None => return Err(self.unsupported("a struct member out of range", span)),
            },
            _ => return Err(self.unsupported(format!("indexing into {t:?}"), span)),
        })
    }

    /// Byte (global) or word (local) stride and length of the elements of `t`, for dynamic
    /// indexing.
    fn index_layout(&self, t: &T, root: Root, span: Span) -> Result<(u32, Len), InterpError> {
        let local = matches!(root, Root::Local(_));
        Ok(match *t {
            T::Vector { size, scalar } => (
                if local { 1 } else { u32::from(scalar.width) },
                Len::Fixed(size as u32),
            ),
            T::Matrix {
                columns,
                rows,
                scalar,
            } => (
                if local {
                    rows as u32
                } else {
                    Self::column_stride(rows, scalar.width)
                },
                Len::Fixed(columns as u32),
            ),
            T::Array { base, size, stride } => {
                let stride = if local {
                    self.flat(self.inner(base), span)?
                } else {
                    stride
                };
                let len = match (size, root) {
                    (naga::ArraySize::Constant(n), _) => Len::Fixed(n.get()),
                    (naga::ArraySize::Dynamic, Root::Global(global)) => Len::Runtime { global },
                    _ => return Err(self.unsupported("an array of unknown size", span)),
                };
                (stride, len)
            }
            _ => return Err(self.unsupported(format!("indexing into {t:?}"), span)),
        })
    }

    /// The memory plan of a value of type `t` at byte `base`.
    fn plan(&self, t: &T, base: u32, out: &mut Plan, span: Span) -> Result<(), InterpError> {
        let kind = |s: naga::Scalar| {
            if s.width == 2 {
                MemKind::H16
            } else {
                MemKind::W32
            }
        };
        match *t {
            T::Scalar(s) => out.push((base, kind(s))),
            T::Atomic(_) => out.push((base, MemKind::Atomic)),
            T::Vector { size, scalar } => {
                for i in 0..size as u32 {
                    out.push((base + i * u32::from(scalar.width), kind(scalar)));
                }
            }
            T::Matrix {
                columns,
                rows,
                scalar,
            } => {
                let cs = Self::column_stride(rows, scalar.width);
                for c in 0..columns as u32 {
                    for r in 0..rows as u32 {
                        out.push((base + c * cs + r * u32::from(scalar.width), kind(scalar)));
                    }
                }
            }
            T::Array {
                base: elem,
                size: naga::ArraySize::Constant(n),
                stride,
            } => {
                for i in 0..n.get() {
                    self.plan(self.inner(elem), base + i * stride, out, span)?;
                }
            }
            T::Struct { ref members, .. } => {
                for m in members {
                    self.plan(self.inner(m.ty), base + m.offset, out, span)?;
                }
            }
            _ => return Err(self.unsupported(format!("loading or storing {t:?}"), span)),
        }
        Ok(())
    }

    fn contains_f16(&self, t: &T) -> bool {
        match *t {
            T::Scalar(s) | T::Vector { scalar: s, .. } | T::Matrix { scalar: s, .. } => {
                s.width == 2
            }
            T::Array { base, .. } => self.contains_f16(self.inner(base)),
            T::Struct { ref members, .. } => {
                members.iter().any(|m| self.contains_f16(self.inner(m.ty)))
            }
            _ => false,
        }
    }

    fn literal(&self, l: &naga::Literal, span: Span) -> Result<u32, InterpError> {
        Ok(match *l {
            naga::Literal::F32(v) => v.to_bits(),
            naga::Literal::F16(v) => u32::from(v.to_bits()),
            naga::Literal::U32(v) => v,
            naga::Literal::I32(v) => v as u32,
            naga::Literal::Bool(v) => u32::from(v),
            other => return Err(self.unsupported(format!("the literal {other:?}"), span)),
        })
    }

    /// The words of a module-scope constant expression.
    fn const_words(&self, h: Handle<naga::Expression>) -> Result<Vec<u32>, InterpError> {
        let span = self.module.global_expressions.get_span(h);
        Ok(match self.module.global_expressions[h] {
            E::Literal(ref l) => vec![self.literal(l, span)?],
            E::ZeroValue(ty) => vec![0; self.flat(self.inner(ty), span)? as usize],
            E::Constant(c) => self.const_words(self.module.constants[c].init)?,
            E::Compose { ref components, .. } => {
                let mut v = Vec::new();
                for &c in components {
                    v.extend(self.const_words(c)?);
                }
                v
            }
            E::Splat { size, value } => {
                let one = self.const_words(value)?;
                one.iter().cycle().take(size as usize).copied().collect()
            }
            ref other => {
                return Err(self.unsupported(format!("the constant expression {other:?}"), span));
            }
        })
    }

    fn globals(&self) -> Result<Vec<Global>, InterpError> {
        let sig = &self.shader.signature;
        let mut out = Vec::new();
        for (h, g) in self.module.global_variables.iter() {
            let span = self.module.global_variables.get_span(h);
            let name = g.name.clone().unwrap_or_default();
            let arg = g.binding.as_ref().and_then(|rb| {
                sig.bindings
                    .iter()
                    .position(|b| b.group == rb.group && b.binding == rb.binding)
            });
            let (space, what) = match g.space {
                naga::AddressSpace::Uniform => (
                    Space::Uniform,
                    format!("uniform `{name}` (binding {})", binding_no(g)),
                ),
                naga::AddressSpace::Storage { access } => (
                    Space::Storage {
                        write: access.contains(naga::StorageAccess::STORE),
                    },
                    format!("buffer `{name}` (binding {})", binding_no(g)),
                ),
                naga::AddressSpace::WorkGroup => {
                    (Space::Workgroup, format!("workgroup variable `{name}`"))
                }
                naga::AddressSpace::Handle => {
                    let binding = binding_no(g);
                    let desc = arg.map(|i| &sig.bindings[i]);
                    return Err(InterpError::UnsupportedTexture {
                        kernel: self.name.clone(),
                        name,
                        binding,
                        ty: desc.map_or_else(|| "texture".to_string(), |d| d.ty.wgsl_name()),
                        site: desc.map(|d| d.site),
                    });
                }
                other => {
                    return Err(self.unsupported(format!("variables in {other:?}"), span));
                }
            };
            if g.binding.is_some() && arg.is_none() {
                return Err(self.unsupported(
                    format!("{what}, which the kernel's signature does not declare"),
                    span,
                ));
            }
            out.push(Global {
                what,
                space,
                arg,
                size: self.layouter[g.ty].size,
                shift: if self.contains_f16(self.inner(g.ty)) {
                    1
                } else {
                    2
                },
            });
        }
        Ok(out)
    }
}

fn binding_no(g: &naga::GlobalVariable) -> u32 {
    g.binding.as_ref().map_or(0, |b| b.binding)
}

/// Lowering state of one function.
struct FnC<'a> {
    cx: &'a Cx<'a>,
    f: &'a naga::Function,
    info: &'a naga::valid::FunctionInfo,
    lanes: u32,
    next: u32,
    consts: Vec<(u32, u32)>,
    src: Vec<Src>,
    /// Root and, when known at compile time, offset of pointer expressions.
    ptr: Vec<Option<(Root, Option<u32>)>>,
    /// Values known at compile time.
    konst: Vec<Option<Vec<u32>>>,
    /// The op of each expression, placed when its `Emit` is reached.
    pending: Vec<Option<Op>>,
    ops: Vec<Op>,
    plans: Vec<Plan>,
    plan_ids: HashMap<Plan, u32>,
    args: Vec<(u32, u32)>,
    builtins: Vec<(u32, Builtin)>,
}

const NO_SRC: Src = Src {
    off: u32::MAX,
    cs: 0,
    ls: 0,
};

impl<'a> FnC<'a> {
    fn new(
        cx: &'a Cx<'a>,
        f: &'a naga::Function,
        info: &'a naga::valid::FunctionInfo,
        entry: bool,
    ) -> Result<Self, InterpError> {
        let n = f.expressions.len();
        let mut c = FnC {
            cx,
            f,
            info,
            lanes: cx.lanes,
            next: 0,
            consts: Vec::new(),
            src: vec![NO_SRC; n],
            ptr: vec![None; n],
            konst: vec![None; n],
            pending: (0..n).map(|_| None).collect(),
            ops: Vec::new(),
            plans: Vec::new(),
            plan_ids: HashMap::new(),
            args: Vec::new(),
            builtins: Vec::new(),
        };
        for a in &f.arguments {
            let w = cx.flat(cx.inner(a.ty), Span::UNDEFINED)?;
            let off = c.slot(w);
            c.args.push((off, w));
            if entry {
                let b = match a.binding {
                    Some(naga::Binding::BuiltIn(b)) => b,
                    _ => {
                        return Err(cx.unsupported(
                            "entry point arguments other than built-in values",
                            Span::UNDEFINED,
                        ));
                    }
                };
                use naga::BuiltIn as B;
                let builtin = match b {
                    B::GlobalInvocationId => Builtin::GlobalId,
                    B::LocalInvocationId => Builtin::LocalId,
                    B::LocalInvocationIndex => Builtin::LocalIndex,
                    B::WorkGroupId => Builtin::WorkgroupId,
                    B::NumWorkGroups => Builtin::NumWorkgroups,
                    B::WorkGroupSize => Builtin::WorkgroupSize,
                    B::SubgroupSize => Builtin::SubgroupSize,
                    B::SubgroupInvocationId => Builtin::SubgroupInvocationId,
                    B::SubgroupId => Builtin::SubgroupId,
                    B::NumSubgroups => Builtin::NumSubgroups,
                    other => {
                        return Err(
                            cx.unsupported(format!("the built-in {other:?}"), Span::UNDEFINED)
                        );
                    }
                };
                c.builtins.push((off, builtin));
            }
        }
        Ok(c)
    }

    fn slot(&mut self, words: u32) -> u32 {
        let off = self.next;
        self.next += words * self.lanes;
        off
    }

    fn lane(&self, off: u32) -> Src {
        Src {
            off,
            cs: self.lanes,
            ls: 1,
        }
    }

    fn constant(&mut self, words: &[u32]) -> Src {
        let off = self.next;
        for (i, &w) in words.iter().enumerate() {
            self.consts.push((off + i as u32, w));
        }
        self.next += words.len().max(1) as u32;
        Src { off, cs: 1, ls: 0 }
    }

    fn ty(&self, h: Handle<naga::Expression>) -> &'a T {
        self.info[h].ty.inner_with(&self.cx.module.types)
    }

    fn span(&self, h: Handle<naga::Expression>) -> Span {
        self.f.expressions.get_span(h)
    }

    /// The pointed-to type of a pointer expression.
    fn pointee(&self, h: Handle<naga::Expression>) -> Result<T, InterpError> {
        match *self.ty(h) {
            T::Pointer { base, .. } => Ok(self.cx.inner(base).clone()),
            T::ValuePointer { size, scalar, .. } => Ok(match size {
                Some(size) => T::Vector { size, scalar },
                None => T::Scalar(scalar),
            }),
            ref other => Err(self
                .cx
                .unsupported(format!("a pointer of type {other:?}"), self.span(h))),
        }
    }

    fn plan_id(&mut self, t: &T, span: Span) -> Result<u32, InterpError> {
        let mut plan = Plan::new();
        self.cx.plan(t, 0, &mut plan, span)?;
        if let Some(&id) = self.plan_ids.get(&plan) {
            return Ok(id);
        }
        let id = self.plans.len() as u32;
        self.plans.push(plan.clone());
        self.plan_ids.insert(plan, id);
        Ok(id)
    }

    /// The operand `h` of a componentwise operation: its element kind, its component count
    /// and where it is.
    fn componentwise(
        &self,
        h: Handle<naga::Expression>,
        span: Span,
    ) -> Result<(Kind, u32, Src), InterpError> {
        let t = self.ty(h);
        Ok((
            self.cx.elem_kind(t, span)?,
            Cx::comps(t),
            self.src[h.index()],
        ))
    }

    /// A load or store through `pointer`: its root, its word count and its plan (the layout
    /// plan of a global's type; a local's word count).
    fn access(
        &mut self,
        pointer: Handle<naga::Expression>,
        span: Span,
    ) -> Result<(Root, u32, u32), InterpError> {
        let (root, _) = self.root(pointer)?;
        let t = self.pointee(pointer)?;
        let n = self.cx.flat(&t, span)?;
        let plan = match root {
            Root::Global(_) => self.plan_id(&t, span)?,
            Root::Local(_) => n,
        };
        Ok((root, n, plan))
    }

    /// The subgroup operation `op` of `argument` into `result`.
    fn subgroup(
        &self,
        op: SubgroupKind,
        argument: Handle<naga::Expression>,
        result: Handle<naga::Expression>,
        span: Span,
    ) -> Result<St, InterpError> {
        let (kind, n, arg) = self.componentwise(argument, span)?;
        Ok(St::Subgroup(SubgroupSt {
            op,
            kind,
            n: n as u8,
            arg,
            dst: self.src[result.index()].off,
            span,
        }))
    }

    /// The root of a pointer expression.
    fn root(&self, h: Handle<naga::Expression>) -> Result<(Root, Option<u32>), InterpError> {
        self.ptr[h.index()].ok_or_else(|| {
            self.cx
                .unsupported("a pointer whose variable is not known", self.span(h))
        })
    }

    /// The operand `h` for an operation over `n` components: broadcast if it is a scalar.
    fn operand(&self, h: Handle<naga::Expression>, n: u32) -> Src {
        let s = self.src[h.index()];
        if n > 1 && Cx::comps(self.ty(h)) == 1 {
            s.broadcast()
        } else {
            s
        }
    }

    /// The memory operand of a cooperative load or store of a `rows x columns` matrix.
    fn coop_mem(
        &self,
        data: &naga::CooperativeData,
        rows: naga::CooperativeSize,
        columns: naga::CooperativeSize,
        span: Span,
    ) -> Result<CoopMem, InterpError> {
        let cx = self.cx;
        let (root, _) = self.root(data.pointer)?;
        let Root::Global(global) = root else {
            return Err(cx.unsupported(
                "cooperative matrices loaded from or stored to function variables",
                span,
            ));
        };
        let (vec, scalar) = match self.pointee(data.pointer)? {
            T::Scalar(s) => (1, s),
            T::Vector { size, scalar } => (size as u8, scalar),
            other => {
                return Err(
                    cx.unsupported(format!("a cooperative matrix in memory of {other:?}"), span)
                );
            }
        };
        if cx.kind(scalar, span)?.is_float() {
            Ok(CoopMem {
                global,
                ptr: self.src[data.pointer.index()],
                stride: self.src[data.stride.index()],
                rows: rows as u8,
                cols: columns as u8,
                row_major: data.row_major,
                vec,
                kind: if scalar.width == 2 {
                    MemKind::H16
                } else {
                    MemKind::W32
                },
            })
        } else {
            Err(cx.unsupported("cooperative matrices of integers", span))
        }
    }

    fn compile(mut self) -> Result<Func, InterpError> {
        for (h, e) in self.f.expressions.iter() {
            self.expression(h, e)?;
        }
        let mut locals = Vec::new();
        let mut local_words = 0;
        for (h, v) in self.f.local_variables.iter() {
            let span = self.f.local_variables.get_span(h);
            let words = self.cx.flat(self.cx.inner(v.ty), span)?;
            let init = match v.init {
                Some(e) => Some(self.konst[e.index()].clone().ok_or_else(|| {
                    self.cx
                        .unsupported("a local variable initialised at run time", span)
                })?),
                None => None,
            };
            locals.push(Local {
                name: v.name.clone().unwrap_or_default(),
                off: local_words,
                words,
                init,
            });
            local_words += words;
        }
        let ret = match &self.f.result {
            Some(r) => {
                let w = self.cx.flat(self.cx.inner(r.ty), Span::UNDEFINED)?;
                Some((self.slot(w), w))
            }
            None => None,
        };
        let body = self.block(&self.f.body)?;
        Ok(Func {
            regs: self.next as usize,
            consts: self.consts,
            locals,
            local_words,
            args: self.args,
            builtins: self.builtins,
            ret,
            plans: self.plans,
            ops: self.ops,
            body,
        })
    }

    fn set_const(&mut self, h: Handle<naga::Expression>, words: Vec<u32>) {
        self.src[h.index()] = self.constant(&words);
        self.konst[h.index()] = Some(words);
    }

    fn set_op(&mut self, h: Handle<naga::Expression>, words: u32, op: impl FnOnce(u32) -> Op) {
        let dst = self.slot(words);
        self.src[h.index()] = self.lane(dst);
        self.pending[h.index()] = Some(op(dst));
    }

    fn expression(&mut self, h: Handle<naga::Expression>, e: &E) -> Result<(), InterpError> {
        let span = self.span(h);
        let cx = self.cx;
        let i = h.index();
        match *e {
            E::Literal(ref l) => {
                let w = cx.literal(l, span)?;
                self.set_const(h, vec![w]);
            }
            E::Constant(c) => {
                let words = cx.const_words(cx.module.constants[c].init)?;
                self.set_const(h, words);
            }
            E::ZeroValue(ty) => {
                let n = cx.flat(cx.inner(ty), span)?;
                self.set_const(h, vec![0; n as usize]);
            }
            E::Compose { ref components, .. } => {
                if components.iter().all(|c| self.konst[c.index()].is_some()) {
                    let words = components
                        .iter()
                        .flat_map(|c| self.konst[c.index()].clone().unwrap_or_default())
                        .collect();
                    self.set_const(h, words);
                } else {
                    let mut parts = Vec::with_capacity(components.len());
                    for &c in components {
                        parts.push((self.src[c.index()], cx.flat(self.ty(c), span)?));
                    }
                    let w = cx.flat(self.ty(h), span)?;
                    self.set_op(h, w, |dst| Op::Compose { parts, dst });
                }
            }
            E::Splat { size, value } => {
                if let Some(k) = self.konst[value.index()].clone() {
                    self.set_const(h, vec![k[0]; size as usize]);
                } else {
                    self.src[i] = self.src[value.index()].broadcast();
                }
            }
            E::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let p = pattern.map(|c| c as u8);
                if let Some(k) = self.konst[vector.index()].clone() {
                    let words = (0..size as usize).map(|j| k[p[j] as usize]).collect();
                    self.set_const(h, words);
                } else {
                    let a = self.src[vector.index()];
                    self.set_op(h, size as u32, |dst| Op::Swizzle {
                        n: size as u8,
                        pattern: p,
                        a,
                        dst,
                    });
                }
            }
            E::AccessIndex { base, index } => {
                if self.ptr[base.index()].is_some() {
                    let (root, known) = self.root(base)?;
                    let t = self.pointee(base)?;
                    let add = match root {
                        Root::Global(_) => cx.mem_offset(&t, index, span)?,
                        Root::Local(_) => cx.flat_offset(&t, index, span)?,
                    };
                    match known {
                        Some(off) => {
                            self.src[i] = self.constant(&[off + add]);
                            self.ptr[i] = Some((root, Some(off + add)));
                        }
                        None => {
                            let b = self.src[base.index()];
                            self.ptr[i] = Some((root, None));
                            self.set_op(h, 1, |dst| Op::PtrAdd { base: b, add, dst });
                        }
                    }
                } else {
                    let t = self.ty(base);
                    let start = cx.flat_offset(t, index, span)?;
                    let w = cx.flat(self.ty(h), span)?;
                    if let Some(k) = &self.konst[base.index()] {
                        let words = k[start as usize..(start + w) as usize].to_vec();
                        self.set_const(h, words);
                    } else {
                        self.src[i] = self.src[base.index()].at(start);
                    }
                }
            }
            E::Access { base, index } => {
                let signed = matches!(
                    *self.ty(index),
                    T::Scalar(naga::Scalar {
                        kind: naga::ScalarKind::Sint,
                        ..
                    })
                );
                let idx = self.src[index.index()];
                if self.ptr[base.index()].is_some() {
                    let (root, _) = self.root(base)?;
                    let t = self.pointee(base)?;
                    let (stride, len) = cx.index_layout(&t, root, span)?;
                    let b = self.src[base.index()];
                    self.ptr[i] = Some((root, None));
                    self.set_op(h, 1, |dst| Op::PtrIndex {
                        base: b,
                        index: idx,
                        signed,
                        stride,
                        len,
                        root,
                        dst,
                        span,
                    });
                } else {
                    let t = self.ty(base);
                    let elem = match cx.member(t, 0) {
                        Some(m) => cx.flat(&m, span)?,
                        None => return Err(cx.unsupported(format!("indexing {t:?}"), span)),
                    };
                    let len = cx.flat(t, span)? / elem.max(1);
                    let b = self.src[base.index()];
                    self.set_op(h, elem, |dst| Op::ValueIndex {
                        base: b,
                        index: idx,
                        signed,
                        elem,
                        len,
                        dst,
                        span,
                    });
                }
            }
            E::FunctionArgument(a) => match self.args.get(a as usize) {
                Some(&(off, _)) => self.src[i] = self.lane(off),
                None => return Err(cx.unsupported("a missing function argument", span)),
            },
            E::GlobalVariable(g) => {
                self.src[i] = self.constant(&[0]);
                self.ptr[i] = Some((Root::Global(g.index()), Some(0)));
            }
            E::LocalVariable(v) => {
                self.src[i] = self.constant(&[0]);
                self.ptr[i] = Some((Root::Local(v.index()), Some(0)));
            }
            E::Load { pointer } => {
                let (root, n, plan) = self.access(pointer, span)?;
                let ptr = self.src[pointer.index()];
                self.set_op(h, n, |dst| Op::Load {
                    root,
                    ptr,
                    plan,
                    n,
                    dst,
                    span,
                });
            }
            E::Unary { op, expr } => {
                let (kind, n, a) = self.componentwise(expr, span)?;
                self.set_op(h, n, |dst| Op::Unary {
                    op,
                    kind,
                    n: n as u8,
                    a,
                    dst,
                });
            }
            E::Binary { op, left, right } => self.binary(h, op, left, right, span)?,
            E::Select {
                condition,
                accept,
                reject,
            } => {
                if let T::CooperativeMatrix { .. } = *self.ty(accept) {
                    return Err(cx.unsupported("select of cooperative matrices", span));
                }
                let n = Cx::comps(self.ty(accept));
                let cond = self.operand(condition, n);
                let (a, r) = (self.src[accept.index()], self.src[reject.index()]);
                self.set_op(h, n, |dst| Op::Select {
                    n: n as u8,
                    cond,
                    accept: a,
                    reject: r,
                    dst,
                });
            }
            E::Relational { fun, argument } => {
                let (kind, n, a) = self.componentwise(argument, span)?;
                let out = match fun {
                    naga::RelationalFunction::All | naga::RelationalFunction::Any => 1,
                    _ => n,
                };
                self.set_op(h, out, |dst| Op::Relational {
                    fun,
                    kind,
                    n: n as u8,
                    a,
                    dst,
                });
            }
            E::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => self.math(h, fun, [Some(arg), arg1, arg2, arg3], span)?,
            E::As {
                expr,
                kind,
                convert,
            } => {
                let (from, n, a) = self.componentwise(expr, span)?;
                match convert {
                    Some(width) => {
                        let to = cx.kind(naga::Scalar { kind, width }, span)?;
                        self.set_op(h, n, |dst| Op::Convert {
                            from,
                            to,
                            n: n as u8,
                            a,
                            dst,
                        });
                    }
                    None => {
                        let to = cx.elem_kind(self.ty(h), span)?;
                        if (from == Kind::F16) != (to == Kind::F16) {
                            return Err(
                                cx.unsupported("bitcasts between f16 and 32-bit types", span)
                            );
                        }
                        // Same width: the same bits.
                        self.src[i] = a;
                        self.konst[i] = self.konst[expr.index()].clone();
                    }
                }
            }
            E::CallResult(_)
            | E::AtomicResult { .. }
            | E::SubgroupOperationResult { .. }
            | E::WorkGroupUniformLoadResult { .. } => {
                let w = cx.flat(self.ty(h), span)?;
                let dst = self.slot(w);
                self.src[i] = self.lane(dst);
            }
            E::SubgroupBallotResult => {
                let dst = self.slot(4);
                self.src[i] = self.lane(dst);
            }
            E::ArrayLength(pointer) => {
                let (root, _) = self.root(pointer)?;
                let t = self.pointee(pointer)?;
                let (global, stride) = match (root, t) {
                    (Root::Global(g), T::Array { stride, .. }) => (g, stride),
                    _ => return Err(cx.unsupported("arrayLength of this pointer", span)),
                };
                let ptr = self.src[pointer.index()];
                self.set_op(h, 1, |dst| Op::ArrayLength {
                    global,
                    ptr,
                    stride,
                    dst,
                });
            }
            E::CooperativeLoad {
                columns,
                rows,
                ref data,
                ..
            } => {
                let mem = self.coop_mem(data, rows, columns, span)?;
                let w = rows as u32 * columns as u32;
                self.set_op(h, w, |dst| Op::CoopLoad { mem, dst, span });
            }
            E::CooperativeMultiplyAdd { a, b, c } => {
                let dims = |t: &T| match *t {
                    T::CooperativeMatrix {
                        columns,
                        rows,
                        scalar,
                        ..
                    } => Some((rows as u8, columns as u8, scalar)),
                    _ => None,
                };
                let (Some((m, k, sa)), Some((_, n, _)), Some((_, _, sc))) =
                    (dims(self.ty(a)), dims(self.ty(b)), dims(self.ty(c)))
                else {
                    return Err(cx.unsupported("coopMultiplyAdd of non-matrices", span));
                };
                let (input, acc) = (cx.kind(sa, span)?, cx.kind(sc, span)?);
                let (a, b, c) = (
                    self.src[a.index()],
                    self.src[b.index()],
                    self.src[c.index()],
                );
                let w = u32::from(m) * u32::from(n);
                self.set_op(h, w, |dst| Op::CoopMulAdd {
                    a,
                    b,
                    c,
                    m,
                    n,
                    k,
                    input,
                    acc,
                    dst,
                    span,
                });
            }
            ref other => {
                return Err(cx.unsupported(format!("the expression {other:?}"), span));
            }
        }
        Ok(())
    }

    fn binary(
        &mut self,
        h: Handle<naga::Expression>,
        op: naga::BinaryOperator,
        left: Handle<naga::Expression>,
        right: Handle<naga::Expression>,
        span: Span,
    ) -> Result<(), InterpError> {
        let cx = self.cx;
        let (lt, rt) = (self.ty(left), self.ty(right));
        if matches!(*lt, T::CooperativeMatrix { .. }) || matches!(*rt, T::CooperativeMatrix { .. })
        {
            return Err(cx.unsupported(
                "arithmetic on cooperative matrices other than coopMultiplyAdd",
                span,
            ));
        }
        let kind = cx.elem_kind(lt, span)?;
        let (a, b) = (self.src[left.index()], self.src[right.index()]);
        if op == naga::BinaryOperator::Multiply {
            let dims = match (lt, rt) {
                (
                    &T::Matrix {
                        columns: c1,
                        rows: r1,
                        ..
                    },
                    &T::Matrix { columns: c2, .. },
                ) => Some((r1 as u8, c1 as u8, c2 as u8)),
                (&T::Matrix { columns, rows, .. }, &T::Vector { .. }) => {
                    Some((rows as u8, columns as u8, 1))
                }
                (&T::Vector { .. }, &T::Matrix { columns, rows, .. }) => {
                    Some((1, rows as u8, columns as u8))
                }
                _ => None,
            };
            if let Some((r, k, c)) = dims {
                let w = u32::from(r) * u32::from(c);
                self.set_op(h, w, |dst| Op::MatMul {
                    kind,
                    r,
                    k,
                    c,
                    a,
                    b,
                    dst,
                });
                return Ok(());
            }
        }
        let n = Cx::comps(lt).max(Cx::comps(rt));
        let (a, b) = (self.operand(left, n), self.operand(right, n));
        self.set_op(h, n, |dst| Op::Binary {
            op,
            kind,
            n: n as u8,
            a,
            b,
            dst,
        });
        Ok(())
    }

    fn math(
        &mut self,
        h: Handle<naga::Expression>,
        fun: naga::MathFunction,
        args: [Option<Handle<naga::Expression>>; 4],
        span: Span,
    ) -> Result<(), InterpError> {
        use naga::MathFunction as M;
        let cx = self.cx;
        let Some(arg0) = args[0] else {
            return Err(cx.unsupported("a math function without arguments", span));
        };
        let t0 = self.ty(arg0);
        let kind = cx.elem_kind(t0, span)?;
        let n = Cx::comps(t0);
        match fun {
            M::Dot
            | M::Cross
            | M::Length
            | M::Distance
            | M::Normalize
            | M::FaceForward
            | M::Reflect
            | M::Refract => {
                let mut srcs = [self.src[arg0.index()]; 3];
                for (s, a) in srcs.iter_mut().zip(&args).skip(1) {
                    if let Some(a) = a {
                        *s = self.src[a.index()];
                    }
                }
                let w = cx.flat(self.ty(h), span)?;
                self.set_op(h, w, |dst| Op::VectorMath {
                    fun,
                    kind,
                    n: n as u8,
                    args: srcs,
                    dst,
                });
            }
            M::Transpose => {
                let T::Matrix { columns, rows, .. } = *t0 else {
                    return Err(cx.unsupported("transpose of a non-matrix", span));
                };
                let a = self.src[arg0.index()];
                self.set_op(h, n, |dst| Op::Transpose {
                    c: columns as u8,
                    r: rows as u8,
                    a,
                    dst,
                });
            }
            M::Determinant => {
                let T::Matrix { columns, .. } = *t0 else {
                    return Err(cx.unsupported("determinant of a non-matrix", span));
                };
                let a = self.src[arg0.index()];
                self.set_op(h, 1, |dst| Op::Determinant {
                    kind,
                    n: columns as u8,
                    a,
                    dst,
                });
            }
            M::Modf | M::Frexp => {
                let a = self.src[arg0.index()];
                self.set_op(h, 2 * n, |dst| Op::Decompose {
                    fun,
                    kind,
                    n: n as u8,
                    a,
                    dst,
                });
            }
            M::Dot4I8Packed
            | M::Dot4U8Packed
            | M::Pack4x8snorm
            | M::Pack4x8unorm
            | M::Pack2x16snorm
            | M::Pack2x16unorm
            | M::Pack2x16float
            | M::Pack4xI8
            | M::Pack4xU8
            | M::Pack4xI8Clamp
            | M::Pack4xU8Clamp
            | M::Unpack4x8snorm
            | M::Unpack4x8unorm
            | M::Unpack2x16snorm
            | M::Unpack2x16unorm
            | M::Unpack2x16float
            | M::Unpack4xI8
            | M::Unpack4xU8 => {
                let a = self.src[arg0.index()];
                let b = args[1].map_or(a, |b| self.src[b.index()]);
                let w = cx.flat(self.ty(h), span)?;
                self.set_op(h, w, |dst| Op::Packing {
                    fun,
                    n: n as u8,
                    a,
                    b,
                    dst,
                });
            }
            M::Outer | M::Inverse => {
                return Err(cx.unsupported(format!("the built-in function {fun:?}"), span));
            }
            _ => {
                let mut srcs = [self.src[arg0.index()]; 4];
                for (s, a) in srcs.iter_mut().zip(&args) {
                    if let Some(a) = a {
                        *s = self.operand(*a, n);
                    }
                }
                self.set_op(h, n, |dst| Op::Math {
                    fun,
                    kind,
                    n: n as u8,
                    args: srcs,
                    dst,
                });
            }
        }
        Ok(())
    }

    fn block(&mut self, block: &naga::Block) -> Result<Vec<St>, InterpError> {
        let mut out = Vec::new();
        for (stmt, &span) in block.span_iter() {
            self.statement(stmt, span, &mut out)?;
        }
        Ok(out)
    }

    fn value(&self, h: Handle<naga::Expression>, span: Span) -> Result<(Src, u32), InterpError> {
        Ok((self.src[h.index()], self.cx.flat(self.ty(h), span)?))
    }

    fn statement(&mut self, stmt: &S, span: Span, out: &mut Vec<St>) -> Result<(), InterpError> {
        let cx = self.cx;
        match *stmt {
            S::Emit(ref range) => {
                let start = self.ops.len();
                for h in range.clone() {
                    if let Some(op) = self.pending[h.index()].take() {
                        self.ops.push(op);
                    }
                }
                if self.ops.len() > start {
                    out.push(St::Ops(start..self.ops.len()));
                }
            }
            S::Block(ref b) => {
                for (s, &sp) in b.span_iter() {
                    self.statement(s, sp, out)?;
                }
            }
            S::If {
                condition,
                ref accept,
                ref reject,
            } => {
                let accept = self.block(accept)?;
                let reject = self.block(reject)?;
                out.push(St::If {
                    cond: self.src[condition.index()],
                    accept,
                    reject,
                    span,
                });
            }
            S::Switch {
                selector,
                ref cases,
            } => {
                let mut cs = Vec::with_capacity(cases.len());
                for case in cases {
                    let value = match case.value {
                        naga::SwitchValue::I32(v) => Some(v as u32),
                        naga::SwitchValue::U32(v) => Some(v),
                        naga::SwitchValue::Default => None,
                    };
                    cs.push((value, self.block(&case.body)?, case.fall_through));
                }
                out.push(St::Switch {
                    selector: self.src[selector.index()],
                    cases: cs,
                    span,
                });
            }
            S::Loop {
                ref body,
                ref continuing,
                break_if,
            } => {
                let body = self.block(body)?;
                let continuing = self.block(continuing)?;
                out.push(St::Loop {
                    body,
                    continuing,
                    break_if: break_if.map(|b| self.src[b.index()]),
                    span,
                });
            }
            S::Break => out.push(St::Break(span)),
            S::Continue => out.push(St::Continue(span)),
            S::Return { value } => {
                let value = match value {
                    Some(v) => Some(self.value(v, span)?),
                    None => None,
                };
                out.push(St::Return { value, span });
            }
            S::ControlBarrier(flags) => out.push(St::Barrier { flags, span }),
            // A memory barrier alone orders this invocation's own accesses, which the
            // interpreter executes in order anyway.
            S::MemoryBarrier(_) => {}
            S::Store { pointer, value } => {
                let (root, n, plan) = self.access(pointer, span)?;
                out.push(St::Store(StoreSt {
                    root,
                    ptr: self.src[pointer.index()],
                    plan,
                    n,
                    value: self.src[value.index()],
                    span,
                }));
            }
            S::Call {
                function,
                ref arguments,
                result: None,
            } if cx.prints.iter().any(|p| p.function == function) => {
                let print = cx.prints.iter().position(|p| p.function == function);
                let print = print.unwrap_or_default();
                let mut args = Vec::with_capacity(arguments.len());
                for &a in arguments {
                    let (kind, comps) = match *self.ty(a) {
                        T::Scalar(s) => (cx.kind(s, span)?, 1),
                        T::Vector { size, scalar } => (cx.kind(scalar, span)?, size as u32),
                        ref other => {
                            return Err(cx.unsupported(format!("debug_print of {other:?}"), span));
                        }
                    };
                    args.push((self.src[a.index()], kind, comps));
                }
                out.push(St::DebugPrint { print, args });
            }
            S::Call {
                function,
                ref arguments,
                result,
            } => {
                let mut args = Vec::with_capacity(arguments.len());
                for &a in arguments {
                    args.push(self.value(a, span)?);
                }
                out.push(St::Call {
                    function: function.index(),
                    args,
                    result: result.map(|r| self.src[r.index()].off),
                    span,
                });
            }
            S::Atomic {
                pointer,
                ref fun,
                value,
                result,
            } => {
                let (root, _) = self.root(pointer)?;
                let Root::Global(global) = root else {
                    return Err(cx.unsupported("atomics on local variables", span));
                };
                let signed = cx.elem_kind(self.ty(value), span)? == Kind::I32;
                let compare = match *fun {
                    naga::AtomicFunction::Exchange { compare: Some(c) } => {
                        Some(self.src[c.index()])
                    }
                    _ => None,
                };
                if !matches!(cx.elem_kind(self.ty(value), span)?, Kind::I32 | Kind::U32) {
                    return Err(cx.unsupported("atomics on types other than i32 and u32", span));
                }
                out.push(St::Atomic(AtomicSt {
                    global,
                    ptr: self.src[pointer.index()],
                    fun: *fun,
                    signed,
                    value: self.src[value.index()],
                    compare,
                    result: result.map(|r| self.src[r.index()].off),
                    span,
                }));
            }
            S::WorkGroupUniformLoad { pointer, result } => {
                let (root, _) = self.root(pointer)?;
                let Root::Global(global) = root else {
                    return Err(cx.unsupported("workgroupUniformLoad of a local", span));
                };
                let t = self.pointee(pointer)?;
                let n = cx.flat(&t, span)?;
                let plan = self.plan_id(&t, span)?;
                out.push(St::WorkgroupUniformLoad {
                    global,
                    ptr: self.src[pointer.index()],
                    plan,
                    n,
                    dst: self.src[result.index()].off,
                    span,
                });
            }
            S::SubgroupBallot { result, predicate } => out.push(St::Ballot {
                predicate: predicate.map(|p| self.src[p.index()]),
                dst: self.src[result.index()].off,
            }),
            S::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => {
                let op = SubgroupKind::Collective(op, collective_op);
                out.push(self.subgroup(op, argument, result, span)?);
            }
            S::SubgroupGather {
                mode,
                argument,
                result,
            } => {
                use naga::GatherMode as G;
                let src = |h: Handle<naga::Expression>| Some(self.src[h.index()]);
                let (mode, index) = match mode {
                    G::BroadcastFirst => (GatherMode::BroadcastFirst, None),
                    G::Broadcast(i) => (GatherMode::Broadcast, src(i)),
                    G::Shuffle(i) => (GatherMode::Shuffle, src(i)),
                    G::ShuffleDown(i) => (GatherMode::ShuffleDown, src(i)),
                    G::ShuffleUp(i) => (GatherMode::ShuffleUp, src(i)),
                    G::ShuffleXor(i) => (GatherMode::ShuffleXor, src(i)),
                    G::QuadBroadcast(i) => (GatherMode::QuadBroadcast, src(i)),
                    G::QuadSwap(d) => (GatherMode::QuadSwap(d), None),
                };
                out.push(self.subgroup(
                    SubgroupKind::Gather(mode, index),
                    argument,
                    result,
                    span,
                )?);
            }
            S::CooperativeStore { target, ref data } => {
                let T::CooperativeMatrix { columns, rows, .. } = *self.ty(target) else {
                    return Err(cx.unsupported("coopStore of a non-matrix", span));
                };
                let mem = self.coop_mem(data, rows, columns, span)?;
                out.push(St::CoopStore {
                    mem,
                    value: self.src[target.index()],
                    span,
                });
            }
            ref other => {
                return Err(cx.unsupported(format!("the statement {other:?}"), span));
            }
        }
        Ok(())
    }
}
