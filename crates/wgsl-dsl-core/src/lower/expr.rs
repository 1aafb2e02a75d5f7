//! Lowering expressions and places.

use naga::{Block, Expression, Handle};

use super::stmt::FnLower;
use super::types::coop_size;
use crate::error::BuildError;
use crate::exp::{ExprKind, Lit, NodeRef, PlaceKind, PlaceRef};
use crate::handle::ValueId;
use crate::site::CallSite;
use crate::types::{CoopShape, Ty};

use crate::exp::MAX_DEPTH;

/// How often (in levels) a deep tree is named, to keep naga's writer from recursing deeply.
const BAKE_EVERY: usize = 64;

impl FnLower<'_, '_> {
    /// Append `expr`; expressions naga treats as pre-emitted interrupt the emitter.
    pub fn append(
        &mut self,
        expr: Expression,
        site: CallSite,
        block: &mut Block,
    ) -> Handle<Expression> {
        let span = self.span(site);
        if expr.needs_pre_emit() {
            block.extend(self.emitter.finish(&self.func.expressions));
            let h = self.func.expressions.append(expr, span);
            self.emitter.start(&self.func.expressions);
            h
        } else {
            self.func.expressions.append(expr, span)
        }
    }

    /// `vecN(value)`.
    fn splat(
        &mut self,
        value: Handle<Expression>,
        n: u8,
        site: CallSite,
        block: &mut Block,
    ) -> Handle<Expression> {
        let size = match n {
            2 => naga::VectorSize::Bi,
            3 => naga::VectorSize::Tri,
            _ => naga::VectorSize::Quad,
        };
        self.append(Expression::Splat { size, value }, site, block)
    }

    fn out_of_scope(&self, id: ValueId, declared: CallSite) -> BuildError {
        BuildError::OutOfScope {
            name: self.names.get(&id).cloned().unwrap_or_else(|| {
                "a value from another function or another kernel builder".into()
            }),
            site: self.site,
            declared,
        }
    }

    /// Lower an expression tree. Trees deeper than [`MAX_DEPTH`] are an error (the lowering and
    /// naga's writer recurse); every [`BAKE_EVERY`] levels the value is named, so that naga's
    /// WGSL writer bakes it into a `let` instead of inlining ever deeper.
    pub fn expr(
        &mut self,
        node: &NodeRef,
        block: &mut Block,
    ) -> Result<Handle<Expression>, BuildError> {
        if self.depth >= MAX_DEPTH {
            return Err(BuildError::Invalid {
                message: format!(
                    "expression nested deeper than {MAX_DEPTH} levels; bind parts of it with `let_`"
                ),
                site: node.site,
            });
        }
        self.depth += 1;
        let h = self.expr_inner(node, block);
        self.depth -= 1;
        let h = h?;
        if self.depth > 0
            && self.depth.is_multiple_of(BAKE_EVERY)
            && !self.func.expressions[h].needs_pre_emit()
        {
            self.func
                .named_expressions
                .entry(h)
                .or_insert_with(|| "part".to_string());
        }
        Ok(h)
    }

    /// [`Self::expr`] of an optional operand.
    pub fn opt_expr(
        &mut self,
        node: Option<&NodeRef>,
        block: &mut Block,
    ) -> Result<Option<Handle<Expression>>, BuildError> {
        node.map(|n| self.expr(n, block)).transpose()
    }

    /// Evaluate `node` if it is a const-expression (WGSL spec §8.1.1: WGSL evaluates it when
    /// the shader is created, and what it rejects then is an error at `site`) and keep its
    /// value for the operations using it.
    fn record_const(
        &mut self,
        node: &NodeRef,
        key: *const crate::exp::Node,
        site: CallSite,
    ) -> Result<(), BuildError> {
        let values = &self.const_values;
        let value =
            crate::consteval::eval(node, &mut |n| values.get(&std::rc::Rc::as_ptr(n)).cloned())
                .map_err(|e| e.at(site))?;
        if let Some(value) = value {
            self.const_values.insert(key, value);
        }
        Ok(())
    }

    fn expr_inner(
        &mut self,
        node: &NodeRef,
        block: &mut Block,
    ) -> Result<Handle<Expression>, BuildError> {
        let key = std::rc::Rc::as_ptr(node);
        if let Some(h) = self.cache.get(&key) {
            return Ok(*h);
        }
        let site = node.site;
        // A value of an f16 type puts its type into the module's arena even where no
        // expression names it (a literal, a conversion's result): that records the
        // capability naga's validator checks values against, and naga's WGSL writer writes
        // `enable f16;` for the f16 types it finds there.
        if node.ty.uses_f16() {
            self.cx.ty(&node.ty, site)?;
        }
        let e = match &node.kind {
            ExprKind::Literal(lit) => Expression::Literal(match *lit {
                Lit::Bool(b) => naga::Literal::Bool(b),
                Lit::I32(v) => naga::Literal::I32(v),
                Lit::U32(v) => naga::Literal::U32(v),
                Lit::F32(v) if !v.is_finite() => {
                    return Err(BuildError::NonFiniteLiteral { value: v, site });
                }
                Lit::F32(v) => naga::Literal::F32(v),
                Lit::F16(bits) => {
                    #[cfg(feature = "f16")]
                    {
                        let v = half::f16::from_bits(bits);
                        if !v.is_finite() {
                            return Err(BuildError::NonFiniteLiteral {
                                value: v.to_f32(),
                                site,
                            });
                        }
                        naga::Literal::F16(v)
                    }
                    #[cfg(not(feature = "f16"))]
                    {
                        let _ = bits;
                        return Err(BuildError::Invalid {
                            message: "f16 literal without the `f16` feature".into(),
                            site,
                        });
                    }
                }
            }),
            ExprKind::Binary(
                op @ (naga::BinaryOperator::LogicalAnd | naga::BinaryOperator::LogicalOr),
                a,
                b,
            ) if !crate::exp::is_pure(b) => {
                let and = *op == naga::BinaryOperator::LogicalAnd;
                match self.short_circuit(and, key, a, b, block)? {
                    Ok(h) => {
                        self.cache.insert(key, h);
                        return Ok(h);
                    }
                    Err(load) => load,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let mut left = self.expr(a, block)?;
                // `false && b`, `true || b` with a constant left operand: `b` is not evaluated
                // (WGSL spec §8.1.1: the short-circuiting operators guard the evaluation of
                // their right-hand side), so what it would reject is no error.
                let known = self.const_values.get(&std::rc::Rc::as_ptr(a)).cloned();
                if let naga::BinaryOperator::LogicalAnd | naga::BinaryOperator::LogicalOr = op
                    && let Some(l) = crate::consteval::decides(*op, known)
                {
                    self.const_values.insert(key, l);
                    self.cache.insert(key, left);
                    return Ok(left);
                }
                let mut right = self.expr(b, block)?;
                let (l, r) = (&self.func.expressions[left], &self.func.expressions[right]);
                if let Some(keep) = super::fold::identity(*op, l, r) {
                    let h = match keep {
                        super::fold::Keep::Left => left,
                        super::fold::Keep::Right => right,
                    };
                    // The folded operation is still a const-expression where its operands
                    // are: its value (that of the operand kept) goes on to the operations
                    // using it, which WGSL evaluates, and may reject, at shader creation.
                    self.record_const(node, key, site)?;
                    self.cache.insert(key, h);
                    return Ok(h);
                }
                // WGSL's vector-scalar forms (`v + s`, `s / v`, ..., WGSL spec §8.7) are
                // `v + vecN(s)`; naga's IR takes the scalar-vector mix for `*` only.
                if *op != naga::BinaryOperator::Multiply {
                    use crate::types::Ty;
                    match (&a.ty, &b.ty) {
                        (Ty::Scalar(_), Ty::Vector(n, _)) => {
                            left = self.splat(left, *n, a.site, block);
                        }
                        (Ty::Vector(n, _), Ty::Scalar(_)) => {
                            right = self.splat(right, *n, b.site, block);
                        }
                        _ => {}
                    }
                }
                Expression::Binary {
                    op: *op,
                    left,
                    right,
                }
            }
            ExprKind::Unary(op, a) => Expression::Unary {
                op: *op,
                expr: self.expr(a, block)?,
            },
            ExprKind::Math(fun, args) => {
                if matches!(fun, naga::MathFunction::Modf | naga::MathFunction::Frexp) {
                    // naga resolves their type to the module's predeclared result struct.
                    self.cx.ty(&node.ty, site)?;
                }
                if matches!(
                    fun,
                    naga::MathFunction::QuantizeToF16
                        | naga::MathFunction::Pack2x16float
                        | naga::MathFunction::Unpack2x16float
                ) {
                    // f16 values held in f32s: a downlevel flag every target but WebGL has.
                    self.cx
                        .need(naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32, site);
                }
                let mut hs = Vec::with_capacity(args.len());
                for a in args {
                    hs.push(self.expr(a, block)?);
                }
                Expression::Math {
                    fun: *fun,
                    arg: hs[0],
                    arg1: hs.get(1).copied(),
                    arg2: hs.get(2).copied(),
                    arg3: hs.get(3).copied(),
                }
            }
            ExprKind::Relational(fun, a) => Expression::Relational {
                fun: *fun,
                argument: self.expr(a, block)?,
            },
            ExprKind::Select {
                condition,
                accept,
                reject,
            } => {
                let condition = self.expr(condition, block)?;
                let accept = self.expr(accept, block)?;
                let reject = self.expr(reject, block)?;
                Expression::Select {
                    condition,
                    accept,
                    reject,
                }
            }
            ExprKind::As {
                value,
                kind,
                convert,
            } => Expression::As {
                expr: self.expr(value, block)?,
                kind: *kind,
                convert: *convert,
            },
            ExprKind::Compose(parts) => {
                let ty = self.cx.ty(&node.ty, site)?;
                let mut components = Vec::with_capacity(parts.len());
                for p in parts {
                    components.push(self.expr(p, block)?);
                }
                Expression::Compose { ty, components }
            }
            ExprKind::Splat(size, v) => Expression::Splat {
                size: *size,
                value: self.expr(v, block)?,
            },
            ExprKind::Swizzle(size, pattern, v) => Expression::Swizzle {
                size: *size,
                vector: self.expr(v, block)?,
                pattern: *pattern,
            },
            ExprKind::AccessIndex(base, index) => Expression::AccessIndex {
                base: self.expr(base, block)?,
                index: *index,
            },
            ExprKind::Access(base, index) => {
                let base = self.expr(base, block)?;
                let index = self.expr(index, block)?;
                Expression::Access { base, index }
            }
            ExprKind::Load(place) => Expression::Load {
                pointer: self.place(place, block)?,
            },
            ExprKind::ArrayLength(place) => Expression::ArrayLength(self.place(place, block)?),
            ExprKind::TextureLoad {
                texture,
                coords,
                level,
            } => {
                // A texture global's expression is the texture itself, not a pointer.
                let image = self.place(texture, block)?;
                let coordinate = self.expr(coords, block)?;
                let level = self.opt_expr(level.as_ref(), block)?;
                Expression::ImageLoad {
                    image,
                    coordinate,
                    array_index: None,
                    sample: None,
                    level,
                }
            }
            ExprKind::TextureDimensions { texture, level } => {
                let image = self.place(texture, block)?;
                let level = self.opt_expr(level.as_ref(), block)?;
                Expression::ImageQuery {
                    image,
                    query: naga::ImageQuery::Size { level },
                }
            }
            ExprKind::Builtin(b) => {
                if matches!(
                    b,
                    crate::exp::BuiltinValue::SubgroupSize
                        | crate::exp::BuiltinValue::SubgroupInvocationId
                ) {
                    self.cx.need(naga::valid::Capabilities::SUBGROUP, site);
                }
                let Some(args) = self.builtins.as_mut() else {
                    return Err(BuildError::BuiltinOutsideEntryPoint {
                        name: b.name(),
                        site,
                    });
                };
                let index = match args.get(b) {
                    Some(i) => *i,
                    None => {
                        let index = self.func.arguments.len() as u32;
                        args.insert(*b, index);
                        let ty = self.cx.ty(&super::builtin_ty(*b), site)?;
                        self.func.arguments.push(naga::FunctionArgument {
                            name: Some(b.name().to_string()),
                            ty,
                            binding: Some(naga::Binding::BuiltIn(b.naga())),
                        });
                        index
                    }
                };
                Expression::FunctionArgument(index)
            }
            ExprKind::Bound(id) => {
                return match self.bound.get(id) {
                    Some((h, _)) => {
                        if let Some(v) = self.bound_consts.get(id) {
                            self.const_values.insert(key, v.clone());
                        }
                        Ok(*h)
                    }
                    None => Err(self.out_of_scope(*id, site)),
                };
            }
            ExprKind::Param { function, index } => {
                if self.function != Some(*function) {
                    return Err(BuildError::OutOfScope {
                        name: format!("parameter {index} of another helper function"),
                        site: self.site,
                        declared: site,
                    });
                }
                Expression::FunctionArgument(*index)
            }
            ExprKind::ZeroValue => Expression::ZeroValue(self.cx.ty(&node.ty, site)?),
            ExprKind::CoopLoad {
                place,
                stride,
                row_major,
            } => {
                let Ty::CoopMatrix {
                    rows,
                    columns,
                    role,
                    ..
                } = node.ty
                else {
                    return Err(BuildError::Type {
                        message: format!("coopLoad of {}", node.ty.wgsl_name()),
                        site,
                    });
                };
                // The matrix type goes into the module's arena: naga's WGSL writer writes
                // `enable wgpu_cooperative_matrix;` for the types it finds there.
                self.cx.ty(&node.ty, site)?;
                let pointer = self.place(place, block)?;
                let stride = self.expr(stride, block)?;
                Expression::CooperativeLoad {
                    columns: coop_size(columns),
                    rows: coop_size(rows),
                    role: role.naga(),
                    data: naga::CooperativeData {
                        pointer,
                        stride,
                        row_major: *row_major,
                    },
                }
            }
            ExprKind::CoopMultiplyAdd(a, b, c) => {
                self.cx.ty(&node.ty, site)?;
                self.record_coop_shape(a, c, site)?;
                let a = self.expr(a, block)?;
                let b = self.expr(b, block)?;
                let c = self.expr(c, block)?;
                Expression::CooperativeMultiplyAdd { a, b, c }
            }
            ExprKind::Invalid(message) => {
                return Err(BuildError::Invalid {
                    message: message.clone(),
                    site,
                });
            }
        };
        self.record_const(node, key, site)?;
        let h = self.append(e, site, block);
        self.cache.insert(key, h);
        Ok(h)
    }

    /// `a && b` (`and`) or `a || b` whose right operand `b` is not pure
    /// (`exp::is_pure`: it loads, or indexes a value with a run-time index),
    /// evaluated as Rust evaluates it: `b` only where `a` leaves the result open. As WGSL's
    /// own front end lowers the two operators (naga's `LogicalAnd` and `LogicalOr` evaluate
    /// both operands, and its WGSL writer hoists the load of `b` out of the `&&`):
    ///
    /// ```text
    /// var and: bool;
    /// if a { and = b; } else { and = false; }      // `||`: if !a { or = b; } else { or = true; }
    /// ... and ...                                  // the load, where the `&&` was
    /// ```
    ///
    /// The `if` goes into `block` before the statement being lowered; `b`'s expressions are
    /// emitted in its arm and forgotten after it (they are not in scope there). An `a` that
    /// folds to a constant decides at build time: `false && b` is `false` without `b`,
    /// `true && b` is `b`. Returns the value's handle when there is nothing more to append,
    /// else the load of the `var`.
    fn short_circuit(
        &mut self,
        and: bool,
        key: *const crate::exp::Node,
        a: &NodeRef,
        b: &NodeRef,
        block: &mut Block,
    ) -> Result<Result<Handle<Expression>, Expression>, BuildError> {
        let site = b.site;
        let left = self.expr(a, block)?;
        let known = self.const_values.get(&std::rc::Rc::as_ptr(a)).cloned();
        if let Some(crate::consteval::ConstValue::Bool(l)) = known {
            if l != and {
                // `false && b`, `true || b`: the left operand's value, `b` unevaluated.
                self.const_values
                    .insert(key, crate::consteval::ConstValue::Bool(l));
                return Ok(Ok(left));
            }
            let right = self.expr(b, block)?;
            if let Some(v) = self.const_values.get(&std::rc::Rc::as_ptr(b)).cloned() {
                self.const_values.insert(key, v);
            }
            return Ok(Ok(right));
        }
        let bool_ty = self
            .cx
            .ty(&Ty::Scalar(crate::types::ScalarTy::Bool), site)?;
        let var = self.local_variable(if and { "and" } else { "or" }, bool_ty, site);
        let condition = if and {
            left
        } else {
            let not = Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr: left,
            };
            self.append(not, site, block)
        };
        self.flush(block);
        // The right operand, in the arm that evaluates it; what it emits is not in scope
        // after the arm.
        let cache = self.cache.clone();
        let mut accept = Block::new();
        self.emitter.start(&self.func.expressions);
        let right = self.expr(b, &mut accept);
        self.cache = cache;
        let value = right?;
        let pointer = self.append(Expression::LocalVariable(var), site, &mut accept);
        self.push(&mut accept, naga::Statement::Store { pointer, value }, site);
        let mut reject = Block::new();
        self.emitter.start(&self.func.expressions);
        let pointer = self.append(Expression::LocalVariable(var), site, &mut reject);
        let value = self.append(
            Expression::Literal(naga::Literal::Bool(!and)),
            site,
            &mut reject,
        );
        self.push(&mut reject, naga::Statement::Store { pointer, value }, site);
        let span = self.span(site);
        block.push(
            naga::Statement::If {
                condition,
                accept,
                reject,
            },
            span,
        );
        self.emitter.start(&self.func.expressions);
        let pointer = self.append(Expression::LocalVariable(var), site, block);
        Ok(Err(Expression::Load { pointer }))
    }

    /// Note the configuration of a multiply-add of `a` (`M x K`) into `c` (`M x N`) in the
    /// kernel's signature.
    fn record_coop_shape(
        &mut self,
        a: &NodeRef,
        c: &NodeRef,
        site: CallSite,
    ) -> Result<(), BuildError> {
        let (
            Ty::CoopMatrix {
                rows: m,
                columns: k,
                scalar: input,
                ..
            },
            Ty::CoopMatrix {
                columns: n,
                scalar: accumulator,
                ..
            },
        ) = (&a.ty, &c.ty)
        else {
            return Err(BuildError::Type {
                message: format!(
                    "coopMultiplyAdd of {} into {}",
                    a.ty.wgsl_name(),
                    c.ty.wgsl_name()
                ),
                site,
            });
        };
        let shape = CoopShape {
            m: *m,
            n: *n,
            k: *k,
            input: *input,
            accumulator: *accumulator,
        };
        if !self.cx.cooperative_shapes.contains(&shape) {
            self.cx.cooperative_shapes.push(shape);
        }
        Ok(())
    }

    /// Lower a place to a pointer expression.
    pub fn place(
        &mut self,
        place: &PlaceRef,
        block: &mut Block,
    ) -> Result<Handle<Expression>, BuildError> {
        let site = place.site;
        let e = match &place.kind {
            PlaceKind::Global(g) => match self.cx.globals.get(g.index) {
                Some(h) if g.builder == self.cx.kernel.id => Expression::GlobalVariable(*h),
                _ => {
                    return Err(BuildError::Invalid {
                        message: format!(
                            "a binding of another KernelBuilder is used in kernel `{}`",
                            self.cx.kernel.name
                        ),
                        site,
                    });
                }
            },
            PlaceKind::Local(id) => match self.locals.get(id) {
                Some((var, _)) => Expression::LocalVariable(*var),
                None => return Err(self.out_of_scope(*id, site)),
            },
            PlaceKind::Index(base_place, index_node) => {
                let base = self.place(base_place, block)?;
                let index = self.expr(index_node, block)?;
                // A literal index out of bounds of a fixed-size array, a vector or a matrix,
                // or a negative one into a runtime-sized array (WGSL spec §8.5).
                if let (Some(i), Some(len)) = (
                    self.const_values.get(&std::rc::Rc::as_ptr(index_node)),
                    crate::consteval::index_len(&base_place.ty),
                ) {
                    crate::consteval::check_index(i, len, &base_place.ty.wgsl_name())
                        .map_err(|e| e.at(site))?;
                }
                Expression::Access { base, index }
            }
            PlaceKind::Field(base, index) => Expression::AccessIndex {
                base: self.place(base, block)?,
                index: *index,
            },
        };
        Ok(self.append(e, site, block))
    }
}
