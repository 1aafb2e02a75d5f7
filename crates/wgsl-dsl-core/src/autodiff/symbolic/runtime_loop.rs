//! A loop bounded by its author ([`crate::KernelBuilder::max_iterations`]), executed
//! symbolically once: its loop-carried `var`s become values at the start of an iteration
//! (`phi`s), its body items in terms of them ([`super::super::loops`] emits and reverses it).

use std::collections::HashSet;
use std::rc::Rc;

use super::{Flow, Symbolic, refuse};
use crate::autodiff::error::NotDifferentiable;
use crate::autodiff::make::node;
use crate::autodiff::program::{Carried, Item, Loop};
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceNode};
use crate::handle::ValueId;
use crate::kernel::stmt::Stmt;
use crate::kernel::values::ValueDef;
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

type Block = [(Stmt, CallSite)];

/// The `var`s stored into (whole) and those declared in `stmts`, nested blocks included.
fn scan(stmts: &Block, stored: &mut HashSet<ValueId>, declared: &mut HashSet<ValueId>) {
    for (stmt, _) in stmts {
        match stmt {
            Stmt::Store { place, .. } => {
                if let PlaceKind::Local(id) = &place.kind {
                    stored.insert(*id);
                }
            }
            Stmt::Var { id, .. } => {
                declared.insert(*id);
            }
            Stmt::If { accept, reject, .. } => {
                scan(accept, stored, declared);
                scan(reject, stored, declared);
            }
            Stmt::Loop {
                body, continuing, ..
            }
            | Stmt::LoopBreakIf {
                body, continuing, ..
            } => {
                scan(body, stored, declared);
                scan(continuing, stored, declared);
            }
            Stmt::Switch { cases, .. } => {
                for arm in cases {
                    scan(&arm.body, stored, declared);
                }
            }
            _ => {}
        }
    }
}

fn shape_error(site: CallSite) -> NotDifferentiable {
    refuse(
        "a bounded loop of this shape",
        "kernel AD derives a loop whose trip count is known only at run time when its first \
         statement is its exit test, `if c { break; }` (the shape of `for_range`, `for_step`, a \
         forward `for_in` and `while_`), with no other `break` and no `return` in it",
        site,
    )
}

impl Symbolic<'_> {
    /// A loop with the bound `max_iterations`: one [`Item::Loop`].
    pub(super) fn runtime_loop(
        &mut self,
        body: &Block,
        continuing: &Block,
        break_if: Option<&NodeRef>,
        max_iterations: u32,
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> Result<Flow, NotDifferentiable> {
        if break_if.is_some() {
            return Err(shape_error(site));
        }
        let Some((
            (
                Stmt::If {
                    condition,
                    accept,
                    reject,
                },
                test_site,
            ),
            rest,
        )) = body.split_first()
        else {
            return Err(shape_error(site));
        };
        if !matches!(accept.as_slice(), [(Stmt::Break, _)]) || !reject.is_empty() {
            return Err(shape_error(site));
        }
        // The carried values: `var`s declared before the loop that it stores into.
        let mut stored = HashSet::new();
        let mut declared = HashSet::new();
        scan(rest, &mut stored, &mut declared);
        scan(continuing, &mut stored, &mut declared);
        let ids: Vec<ValueId> = self
            .var_order
            .iter()
            .copied()
            .filter(|id| stored.contains(id) && !declared.contains(id) && self.env.contains_key(id))
            .collect();
        let mut carried = Vec::new();
        let mut sources = Vec::new();
        for id in ids {
            let (name, ty) = self.vars[&id].clone();
            let c = Carried {
                name: name.clone(),
                ty: ty.clone(),
                var: ValueId::fresh(),
                tape: ValueId::fresh(),
                phi: ValueId::fresh(),
                exit: ValueId::fresh(),
                init: self.env[&id].clone(),
                next: node(ExprKind::ZeroValue, ty.clone(), site),
            };
            let var_load = node(
                ExprKind::Load(Rc::new(PlaceNode {
                    kind: PlaceKind::Local(c.var),
                    ty: ty.clone(),
                    site,
                })),
                ty.clone(),
                site,
            );
            for v in [c.phi, c.exit] {
                self.defs.insert(
                    v,
                    ValueDef::Let {
                        name: name.clone(),
                        value: var_load.clone(),
                    },
                );
            }
            self.env
                .insert(id, node(ExprKind::Bound(c.phi), ty.clone(), site));
            carried.push(c);
            sources.push(id);
        }
        self.site = *test_site;
        self.memo.clear();
        self.places.clear();
        let exit = self.expr(condition)?;

        self.frame().loops += 1;
        self.bounded_loops += 1;
        let result = (|| {
            let (mut body_items, flow) = self.block(rest)?;
            if !matches!(flow, Flow::Normal | Flow::Continue) {
                return Err(shape_error(site));
            }
            let (more, flow) = self.block(continuing)?;
            if flow != Flow::Normal {
                return Err(refuse(
                    "control flow in a loop's `continuing` block",
                    "it is not supported by kernel AD",
                    site,
                ));
            }
            body_items.extend(more);
            Ok(body_items)
        })();
        self.frame().loops -= 1;
        self.bounded_loops -= 1;
        let body_items = result?;

        for (c, id) in carried.iter_mut().zip(&sources) {
            c.next = self.env[id].clone();
            self.env
                .insert(*id, node(ExprKind::Bound(c.exit), c.ty.clone(), site));
        }
        let counter = ValueId::fresh();
        let count = ValueId::fresh();
        self.defs.insert(
            count,
            ValueDef::Let {
                name: "iterations".into(),
                value: node(
                    ExprKind::Load(Rc::new(PlaceNode {
                        kind: PlaceKind::Local(counter),
                        ty: Ty::Scalar(ScalarTy::U32),
                        site,
                    })),
                    Ty::Scalar(ScalarTy::U32),
                    site,
                ),
            },
        );
        items.push(Item::Loop(Box::new(Loop {
            carried,
            exit,
            body: body_items,
            max_iterations,
            counter,
            count,
            number: 0,
            flag: None,
            site,
        })));
        Ok(Flow::Normal)
    }
}
