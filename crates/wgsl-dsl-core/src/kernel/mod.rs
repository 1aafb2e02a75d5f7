//! The kernel builder: bindings, statements, control flow and helper functions.
//!
//! [`KernelBuilder`] is the statement monad of the design: each method appends a statement to
//! the block being built, in program order. Blocks of `if`, loops and helper functions are
//! built by closures that receive the builder; the statements they append go into that block.
//!
//! # `let` and `var`
//! - [`KernelBuilder::let_`] evaluates an expression once, at that point, and names the value
//!   (WGSL `let`, spec §7.4). The returned [`Exp`] refers to that value; it cannot be assigned
//!   to. It is in scope in the block that declared it and the blocks nested in it; using it
//!   elsewhere is a [`BuildError::OutOfScope`].
//! - [`KernelBuilder::var`] declares mutable storage (WGSL function-scope `var`, spec §7.3),
//!   a [`Var<T>`] place: [`Place::load`] reads its *current* value wherever the resulting
//!   expression is used, [`KernelBuilder::store`] writes it.
//!
//! # Names
//! The names given to bindings, `let`s, `var`s and functions appear in the WGSL. Names WGSL
//! reserves (`struct`, `target`, `_`, ...) and names declared twice are renamed by naga's namer
//! (a suffix), so the output is always valid WGSL. The same holds for the kernel's name (its
//! entry point): any identifier (ASCII letters, digits, `_`) works, and where naga writes it
//! differently in the WGSL (`layer1` becomes `layer1_`, `target` becomes `target_`)
//! [`KernelSignature::entry_point`] says how. The runtime uses the module's own name.
//!
//! # Scoping
//! A `let` declared inside an `if` or loop closure is not visible after it, exactly as in WGSL.
//! Expressions that do not mention such a `let` may be used anywhere.

pub(crate) mod collective;
mod control;
mod coop;
pub mod debug;
mod function;
mod kinds;
mod place;
pub mod scan;
pub(crate) mod stmt;
mod subgroup;
mod texture;
pub(crate) mod values;

pub use control::{IntegerScalar, LoopRange, MAX_CASE_VALUES, Switch, unroll_step};
pub use debug::{DebugArg, DebugArgs};
pub use function::{FnArgs, Function};
#[doc(hidden)]
pub use kinds::{EXPR_KINDS, STMT_KINDS};
pub use place::{Access, Buffer, Loadable, Place, PlaceParts, ReadOnly, ReadWrite, Target, Var};
pub use scan::{HostBits, ScanKind, ScanOp, ScanScalar, add_block_offsets, scan_blocks};
pub use texture::{
    StorageTexture2d, Texture2d, TextureAccessMode, TextureBinding, TextureReadable,
    TextureWritable, WriteOnly,
};

use crate::error::BuildError;
use crate::exp::{BuiltinValue, Exp, ExprKind, IntoExp, Node, PlaceKind, PlaceRef};
use crate::handle::{BuilderId, FunctionHandle, FunctionId, GlobalHandle, ValueId};
use crate::site::CallSite;
use crate::types::*;
use stmt::{Stmt, VarInit};

/// A struct of binding declarations, implemented by `#[derive(Bindings)]`: its fields are the
/// kernel's bindings, declared in field order (group 0, bindings 0, 1, ...) under the field
/// names. With the runtime, the derive also writes the kernel's argument struct (a
/// `wgsl_dsl::runtime::KernelArgs`), so the binding list is written once.
pub trait Bindings: Sized {
    /// Declare every binding of `Self` in `k`, in field order.
    fn declare(k: &mut KernelBuilder) -> Self;
}

/// Where a global variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `var<storage, read>`
    StorageRead,
    /// `var<storage, read_write>`
    StorageReadWrite,
    /// `var<uniform>`
    Uniform,
    /// A texture (`texture_storage_2d<F, access>` or `texture_2d<T>`: the binding's `ty` is a
    /// [`Ty::Texture`], which says which).
    Texture,
}

/// One resource binding of a kernel, in declaration order. The runtime builds the bind group
/// layout from these and checks each dispatch argument against them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingDesc {
    /// The author's name for it.
    pub name: String,
    /// `@group`
    pub group: u32,
    /// `@binding`
    pub binding: u32,
    /// Storage or uniform, and access.
    pub kind: BindingKind,
    /// The store type (`array<f32>` for a buffer of `f32`).
    pub ty: Ty,
    /// Where it was declared.
    pub site: CallSite,
}

/// The ABI of a kernel: what the runtime needs to run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSignature {
    /// The kernel's name, as given to [`KernelBuilder::new`] (and the entry point's name in
    /// the `naga::Module`, which the runtime uses).
    pub name: String,
    /// The entry point's name in the emitted WGSL: `name`, unless naga's namer had to change it
    /// (`_` appended to a name ending in a digit or reserved by WGSL: `layer1` is written
    /// `layer1_`, `target` is `target_`). Use it to look the entry point up in the WGSL text.
    pub entry_point: String,
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// The bindings in declaration order (all in group 0, bindings 0, 1, ...).
    pub bindings: Vec<BindingDesc>,
    /// Bytes of workgroup memory the kernel declares.
    pub workgroup_memory: u32,
    /// Capabilities beyond portable WGSL the kernel needs (subgroups, f16, cooperative
    /// matrices).
    pub capabilities: naga::valid::Capabilities,
    /// The cooperative-matrix multiply-add configurations the kernel uses, each once; the
    /// runtime checks them against the adapter's.
    pub cooperative_shapes: Vec<CoopShape>,
}

#[derive(Debug)]
pub(crate) enum GlobalKind {
    Binding(BindingKind, u32),
    Workgroup,
}

#[derive(Debug)]
pub(crate) struct GlobalDecl {
    pub name: String,
    pub ty: Ty,
    pub kind: GlobalKind,
    pub site: CallSite,
}

#[derive(Clone, Debug)]
pub(crate) struct FunctionDecl {
    /// Carried by the function's parameters.
    pub id: FunctionId,
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub result: Option<Ty>,
    pub body: Vec<(Stmt, CallSite)>,
    pub site: CallSite,
}

/// One function being built: a stack of open blocks.
#[derive(Debug, Default)]
struct FnCtx {
    blocks: Vec<Vec<(Stmt, CallSite)>>,
}

fn contains_atomic(ty: &Ty) -> bool {
    match ty {
        Ty::Atomic(_) => true,
        Ty::Array { elem, .. } => contains_atomic(elem),
        Ty::Struct { members, .. } => members.iter().any(|(_, t)| contains_atomic(t)),
        _ => false,
    }
}

/// Builds one compute kernel: its bindings, its body, its helper functions.
///
/// ```
/// # use wgsl_dsl_core as wgsl_dsl;
/// use wgsl_dsl::prelude::*;
///
/// let mut k = KernelBuilder::new("double", [64, 1, 1]);
/// let data = k.storage::<RuntimeArray<f32>, ReadWrite>("data");
/// let i = k.let_("i", global_invocation_id().x());
/// k.if_(i.ge(data.len()), |k| k.return_());
/// k.store(&data.at(&i), data.at(&i).load() * 2.0);
/// let shader = k.build()?;
/// assert!(shader.wgsl.contains("@workgroup_size(64, 1, 1)"));
/// # Ok::<(), wgsl_dsl::BuildError>(())
/// ```
#[derive(Debug)]
pub struct KernelBuilder {
    pub(crate) name: String,
    pub(crate) site: CallSite,
    pub(crate) workgroup_size: [u32; 3],
    pub(crate) globals: Vec<GlobalDecl>,
    pub(crate) functions: Vec<FunctionDecl>,
    pub(crate) capabilities: naga::valid::Capabilities,
    /// Tells this builder's bindings and functions from others'.
    pub(crate) id: BuilderId,
    /// Mistakes found while building, in program order; [`KernelBuilder::build`] returns them.
    pub(crate) errors: Vec<BuildError>,
    /// Whether `build` runs the uniformity check (see `skip_uniformity_check`).
    pub(crate) check_uniformity: bool,
    next_binding: u32,
    stack: Vec<FnCtx>,
    /// How many [`KernelBuilder::if_value`] arms are being recorded (their selects nest).
    value_arms: usize,
    /// What each statement result (`let`, call, atomic, ...) is: what differentiation follows.
    pub(crate) value_defs: std::collections::HashMap<ValueId, values::ValueDef>,
    /// Memory that derivatives assumed constant, re-checked by `build`.
    pub(crate) memory_checks: Vec<values::MemoryCheck>,
    /// How many `debug_print` statements were recorded: with any, `build` also lowers the
    /// interpreter's module with them.
    pub(crate) debug_prints: usize,
    /// A bound stated for the next loop, not yet taken by it.
    pub(crate) next_loop_bound: Option<(u32, CallSite)>,
}

impl KernelBuilder {
    /// Start a kernel named `name` (its entry point) with `@workgroup_size(x, y, z)`.
    /// The size is checked against the target's limits by [`KernelBuilder::build`].
    #[track_caller]
    pub fn new(name: impl Into<String>, workgroup_size: [u32; 3]) -> Self {
        KernelBuilder {
            name: name.into(),
            site: CallSite::caller(),
            workgroup_size,
            globals: Vec::new(),
            functions: Vec::new(),
            capabilities: naga::valid::Capabilities::empty(),
            id: BuilderId::fresh(),
            errors: Vec::new(),
            check_uniformity: true,
            next_binding: 0,
            value_arms: 0,
            value_defs: std::collections::HashMap::new(),
            memory_checks: Vec::new(),
            debug_prints: 0,
            next_loop_bound: None,
            stack: vec![FnCtx {
                blocks: vec![Vec::new()],
            }],
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Declare that the kernel needs a capability beyond portable WGSL.
    pub fn require(&mut self, caps: naga::valid::Capabilities) {
        self.capabilities |= caps;
    }

    /// Record a mistake; [`KernelBuilder::build`] reports it (with the others) before
    /// lowering, so it is never lost when the value it concerns is not used.
    pub(crate) fn error(&mut self, message: impl Into<String>, site: CallSite) {
        self.errors.push(BuildError::Invalid {
            message: message.into(),
            site,
        });
    }

    /// Record a mistake and return a placeholder for the value it spoils. The placeholder is
    /// never lowered: [`KernelBuilder::build`] stops at the recorded mistakes first.
    pub(crate) fn invalid<T: WgslType>(
        &mut self,
        message: impl Into<String>,
        site: CallSite,
    ) -> Exp<T> {
        let message = message.into();
        self.error(message.clone(), site);
        Exp::from_kind(ExprKind::Invalid(message), site)
    }

    /// Push the statement `make(id)`, whose result is the value `id`, and return that value:
    /// evaluated once, here, and referred to afterwards like a `let` (calls, atomics,
    /// subgroup operations, `let` itself).
    pub(crate) fn bind<T: WgslType>(
        &mut self,
        site: CallSite,
        make: impl FnOnce(ValueId) -> Stmt,
    ) -> Exp<T> {
        let id = ValueId::fresh();
        self.push(make(id), site);
        Exp::from_node(Node {
            kind: ExprKind::Bound(id),
            ty: T::ty(),
            site,
        })
    }

    /// Record an error if `place` is a binding or workgroup variable of another builder.
    pub(crate) fn check_place(&mut self, place: &PlaceRef, site: CallSite) {
        let mut p = place;
        loop {
            match &p.kind {
                PlaceKind::Index(base, _) | PlaceKind::Field(base, _) => p = base,
                PlaceKind::Global(g) if g.builder != self.id => {
                    let name = self.name.clone();
                    self.error(
                        format!("a binding of another KernelBuilder is used in kernel `{name}`"),
                        site,
                    );
                    return;
                }
                _ => return,
            }
        }
    }

    pub(crate) fn push(&mut self, stmt: Stmt, site: CallSite) {
        if let Some((id, def)) = values::ValueDef::of(&stmt) {
            self.value_defs.insert(id, def);
        }
        let ctx = self
            .stack
            .last_mut()
            .expect("function stack is never empty");
        ctx.blocks
            .last_mut()
            .expect("block stack is never empty")
            .push((stmt, site));
    }

    fn block(&mut self, f: impl FnOnce(&mut Self)) -> Vec<(Stmt, CallSite)> {
        self.stack
            .last_mut()
            .expect("function stack is never empty")
            .blocks
            .push(Vec::new());
        f(self);
        self.stack
            .last_mut()
            .expect("function stack is never empty")
            .blocks
            .pop()
            .expect("pushed above")
    }

    // ---- bindings ----

    /// Declare the next binding, of type `ty` (for kernels made from other kernels:
    /// [`crate::autodiff::derive`]).
    pub(crate) fn declare_binding(
        &mut self,
        name: &str,
        ty: Ty,
        kind: BindingKind,
        site: CallSite,
    ) -> GlobalHandle {
        let binding = self.next_binding;
        self.next_binding += 1;
        self.capabilities |= ty.capabilities();
        self.check_unique_global(name, site);
        self.globals.push(GlobalDecl {
            name: name.to_string(),
            ty,
            kind: GlobalKind::Binding(kind, binding),
            site,
        });
        GlobalHandle {
            builder: self.id,
            index: self.globals.len() - 1,
        }
    }

    /// [`BuildError::DuplicateName`] (reported by `build`) if a global named `name` exists.
    fn check_unique_global(&mut self, name: &str, site: CallSite) {
        if let Some(first) = self.globals.iter().find(|g| g.name == name) {
            self.errors.push(BuildError::DuplicateName {
                name: name.to_string(),
                site,
                first: first.site,
            });
        }
    }

    fn global<T: WgslType, A: Access>(
        &mut self,
        name: &str,
        kind: GlobalKind,
        site: CallSite,
    ) -> Place<T, A> {
        self.capabilities |= T::ty().capabilities();
        self.check_unique_global(name, site);
        self.globals.push(GlobalDecl {
            name: name.to_string(),
            ty: T::ty(),
            kind,
            site,
        });
        Place::new(
            PlaceKind::Global(GlobalHandle {
                builder: self.id,
                index: self.globals.len() - 1,
            }),
            site,
        )
    }

    /// Declare the next storage buffer binding, `var<storage, A> name: T`
    /// (WGSL spec §7.2 "var Declarations", §13.3.2 "Resource Interface").
    /// `T` is typically [`RuntimeArray<E>`] (a buffer of `E`s) or a struct. Bindings are
    /// numbered in declaration order in group 0.
    #[track_caller]
    pub fn storage<T: WgslType, A: Access>(&mut self, name: &str) -> Place<T, A> {
        let kind = if A::WRITABLE {
            BindingKind::StorageReadWrite
        } else {
            BindingKind::StorageRead
        };
        let binding = self.next_binding;
        self.next_binding += 1;
        let site = CallSite::caller();
        let place = self.global(name, GlobalKind::Binding(kind, binding), site);
        if !A::WRITABLE && contains_atomic(&T::ty()) {
            // WGSL allows atomics only in read_write storage (WGSL spec §6.2.8); naga does not
            // check it.
            self.errors.push(BuildError::Type {
                message: format!(
                    "binding `{name}`: atomics are allowed only in `ReadWrite` storage"
                ),
                site,
            });
        }
        place
    }

    /// Declare the next uniform buffer binding, `var<uniform> name: T` (WGSL spec §7.2).
    /// Uniform buffers are read-only.
    #[track_caller]
    pub fn uniform<T: Constructible>(&mut self, name: &str) -> Place<T, ReadOnly> {
        let binding = self.next_binding;
        self.next_binding += 1;
        self.global(
            name,
            GlobalKind::Binding(BindingKind::Uniform, binding),
            CallSite::caller(),
        )
    }

    /// Declare a workgroup variable, `var<workgroup> name: T`, shared by the invocations of one
    /// workgroup (WGSL spec §7.2). Synchronise with [`KernelBuilder::workgroup_barrier`].
    #[track_caller]
    pub fn workgroup<T: WgslType>(&mut self, name: &str) -> Place<T, ReadWrite> {
        self.global(name, GlobalKind::Workgroup, CallSite::caller())
    }

    /// Declare the bindings of a `#[derive(Bindings)]` struct, in field order:
    /// `let SgdBindings { hp, grads, params } = k.bindings();`.
    pub fn bindings<B: Bindings>(&mut self) -> B {
        B::declare(self)
    }

    /// Declare a workgroup array of `len` elements, `var<workgroup> name: array<T, len>`, whose
    /// length is chosen when the kernel is built (e.g. a tile size picked for a problem shape).
    /// A length of zero is a [`BuildError::Type`].
    #[track_caller]
    pub fn workgroup_array<T: Constructible>(
        &mut self,
        name: &str,
        len: u32,
    ) -> Place<SizedArray<T>, ReadWrite> {
        let site = CallSite::caller();
        let ty = Ty::Array {
            elem: Box::new(T::ty()),
            len: Some(len),
        };
        self.capabilities |= ty.capabilities();
        self.globals.push(GlobalDecl {
            name: name.to_string(),
            ty: ty.clone(),
            kind: GlobalKind::Workgroup,
            site,
        });
        Place::with_ty(
            PlaceKind::Global(GlobalHandle {
                builder: self.id,
                index: self.globals.len() - 1,
            }),
            ty,
            site,
        )
    }

    // ---- let, var, store ----

    /// `let name = value;`: evaluate once, here, and name the value (WGSL spec §7.4).
    #[track_caller]
    pub fn let_<T: Constructible>(&mut self, name: &str, value: impl IntoExp<T>) -> Exp<T> {
        let value = value.into_exp();
        self.bind(CallSite::caller(), |id| Stmt::Let {
            id,
            name: name.to_string(),
            value: value.node,
        })
    }

    /// `var name: T = init;`: mutable function-scope storage (WGSL spec §7.3).
    #[track_caller]
    pub fn var<T: Constructible>(&mut self, name: &str, init: impl IntoExp<T>) -> Var<T> {
        let site = CallSite::caller();
        let init = init.into_exp();
        self.var_impl(name, VarInit::Value(init.node), site)
    }

    /// `var name: T;`: a `var` initialised to the zero value.
    #[track_caller]
    pub fn var_zeroed<T: Constructible>(&mut self, name: &str) -> Var<T> {
        self.var_impl::<T>(name, VarInit::Zero, CallSite::caller())
    }

    fn var_impl<T: Constructible>(&mut self, name: &str, init: VarInit, site: CallSite) -> Var<T> {
        let id = ValueId::fresh();
        self.push(
            Stmt::Var {
                id,
                name: name.to_string(),
                ty: T::ty(),
                init,
            },
            site,
        );
        Place::new(PlaceKind::Local(id), site)
    }

    /// `target = value;` (WGSL spec §9.2 "Assignment Statement"): write a `var`, a read-write
    /// buffer element or a workgroup variable.
    #[track_caller]
    pub fn store<T: Constructible>(&mut self, target: &impl Target<T>, value: impl IntoExp<T>) {
        let site = CallSite::caller();
        let value = value.into_exp();
        let place = target.place_node();
        self.check_place(&place, site);
        self.push(
            Stmt::Store {
                place,
                value: value.node,
            },
            site,
        );
    }

    /// `target += value;`, and the other compound assignments through `op` (WGSL spec §9.2.3):
    /// `k.update(&acc, |old| old + x)`.
    #[track_caller]
    pub fn update<T: Constructible, A: Access>(
        &mut self,
        target: &Place<T, A>,
        op: impl FnOnce(Exp<T>) -> Exp<T>,
    ) where
        Place<T, A>: Target<T>,
    {
        let site = CallSite::caller();
        self.check_place(&target.node, site);
        let old = Exp::<T>::from_kind(ExprKind::Load(target.node.clone()), site);
        let value = op(old);
        self.push(
            Stmt::Store {
                place: target.place_node(),
                value: value.node,
            },
            site,
        );
    }

    // ---- control flow ----

    /// `if condition { then }` (WGSL spec §9.4.1).
    #[track_caller]
    pub fn if_(&mut self, condition: impl IntoExp<bool>, then: impl FnOnce(&mut Self)) {
        self.if_else(condition, then, |_| {});
    }

    /// `if condition { then } else { otherwise }` (WGSL spec §9.4.1).
    #[track_caller]
    pub fn if_else(
        &mut self,
        condition: impl IntoExp<bool>,
        then: impl FnOnce(&mut Self),
        otherwise: impl FnOnce(&mut Self),
    ) {
        let site = CallSite::caller();
        let condition = condition.into_exp().node;
        let accept = self.block(then);
        let reject = self.block(otherwise);
        self.push(
            Stmt::If {
                condition,
                accept,
                reject,
            },
            site,
        );
    }

    /// `loop { body }` (WGSL spec §9.4.3); leave it with [`KernelBuilder::break_`].
    #[track_caller]
    pub fn loop_(&mut self, body: impl FnOnce(&mut Self)) {
        let site = CallSite::caller();
        let bound = self.take_loop_bound();
        let body = self.block(body);
        self.push(
            Stmt::Loop {
                body,
                continuing: Vec::new(),
                bound,
            },
            site,
        );
    }

    /// `while condition { body }` (WGSL spec §9.4.5). `condition` is evaluated before each
    /// iteration.
    #[track_caller]
    pub fn while_(&mut self, condition: impl IntoExp<bool>, body: impl FnOnce(&mut Self)) {
        // Every statement made here is the caller's (closures do not pass `track_caller` on):
        // a message about the loop names the author's line.
        let site = CallSite::caller();
        let condition = condition.into_exp();
        let stop = Exp::<bool>::from_kind(
            ExprKind::Unary(naga::UnaryOperator::LogicalNot, condition.node),
            site,
        );
        // The bound stated with `max_iterations` is this loop's, not its body's loops'.
        let bound = self.take_loop_bound();
        let mut stmts = vec![(
            Stmt::If {
                condition: stop.node,
                accept: vec![(Stmt::Break, site)],
                reject: Vec::new(),
            },
            site,
        )];
        stmts.extend(self.block(body));
        self.push(
            Stmt::Loop {
                body: stmts,
                continuing: Vec::new(),
                bound,
            },
            site,
        );
    }

    /// `break;` (WGSL spec §9.4.6).
    #[track_caller]
    pub fn break_(&mut self) {
        self.push(Stmt::Break, CallSite::caller());
    }

    /// `continue;` (WGSL spec §9.4.8).
    #[track_caller]
    pub fn continue_(&mut self) {
        self.push(Stmt::Continue, CallSite::caller());
    }

    /// `return;` from the kernel or a helper function without result (WGSL spec §9.5).
    #[track_caller]
    pub fn return_(&mut self) {
        self.push(Stmt::Return(None), CallSite::caller());
    }

    /// `return value;` from a helper function (WGSL spec §9.5).
    #[track_caller]
    pub fn return_value<T: Constructible>(&mut self, value: impl IntoExp<T>) {
        let value = value.into_exp();
        self.push(Stmt::Return(Some(value.node)), CallSite::caller());
    }

    /// `workgroupBarrier()` (WGSL spec §17.11.3). Must be reached in uniform control flow.
    #[track_caller]
    pub fn workgroup_barrier(&mut self) {
        self.push(Stmt::Barrier(naga::Barrier::WORK_GROUP), CallSite::caller());
    }

    /// `storageBarrier()` (WGSL spec §17.11.2). Must be reached in uniform control flow.
    #[track_caller]
    pub fn storage_barrier(&mut self) {
        self.push(Stmt::Barrier(naga::Barrier::STORAGE), CallSite::caller());
    }

    // ---- helper functions ----

    /// Define a helper function `name(params...) -> R` (WGSL spec §11 "Functions"). `body`
    /// receives the parameters as expressions and returns the result; it may also use
    /// [`KernelBuilder::return_value`] for early returns. Call it with [`KernelBuilder::call`].
    ///
    /// ```
    /// # use wgsl_dsl_core as wgsl_dsl;
    /// use wgsl_dsl::prelude::*;
    /// let mut k = KernelBuilder::new("k", [1, 1, 1]);
    /// let relu = k.function::<(f32,), f32>("relu", ["x"], |_k, (x,)| max(x, 0.0));
    /// let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    /// let y = k.call(&relu, (lit(-1.0f32),));
    /// k.store(&out.at(0u32), y);
    /// assert!(k.build()?.wgsl.contains("fn relu(x: f32) -> f32"));
    /// # Ok::<(), wgsl_dsl::BuildError>(())
    /// ```
    #[track_caller]
    pub fn function<Args: FnArgs, R: Constructible>(
        &mut self,
        name: &str,
        param_names: Args::Names,
        body: impl FnOnce(&mut Self, Args::Exps) -> Exp<R>,
    ) -> Function<Args, R> {
        let site = CallSite::caller();
        let function_id = FunctionId::fresh();
        let (params, exps) = Args::params(param_names, function_id, site);
        self.stack.push(FnCtx {
            blocks: vec![Vec::new()],
        });
        let result = body(self, exps);
        self.push(Stmt::Return(Some(result.node)), site);
        let mut ctx = self.stack.pop().expect("pushed above");
        let body = ctx.blocks.pop().expect("one block");
        self.functions.push(FunctionDecl {
            id: function_id,
            name: name.to_string(),
            params,
            result: Some(R::ty()),
            body,
            site,
        });
        Function::new(FunctionHandle {
            builder: self.id,
            index: self.functions.len() - 1,
        })
    }

    /// Call a helper function; the result is evaluated here, once (a WGSL function call
    /// statement, spec §9.6, bound like a `let`).
    #[track_caller]
    pub fn call<Args: FnArgs, R: Constructible>(
        &mut self,
        function: &Function<Args, R>,
        args: Args::Exps,
    ) -> Exp<R> {
        let site = CallSite::caller();
        if function.handle.builder != self.id {
            return self.invalid("a helper function of another KernelBuilder is called", site);
        }
        let args = Args::nodes(args);
        self.bind(site, |result| Stmt::Call {
            result,
            function: function.handle,
            args,
        })
    }

    pub(crate) fn entry_body(&self) -> &[(Stmt, CallSite)] {
        &self.stack[0].blocks[0]
    }

    /// Every statement recorded so far: the helper functions' bodies and the blocks being
    /// built (the entry point's and those of functions and blocks still open).
    pub(crate) fn recorded_bodies(&self) -> impl Iterator<Item = &[(Stmt, CallSite)]> {
        self.functions.iter().map(|f| f.body.as_slice()).chain(
            self.stack
                .iter()
                .flat_map(|ctx| ctx.blocks.iter().map(Vec::as_slice)),
        )
    }
}

// ---- built-in values (WGSL spec §13.3.1.1), valid in the kernel's entry point ----

#[track_caller]
fn builtin<T: WgslType>(b: BuiltinValue) -> Exp<T> {
    Exp::from_node(Node {
        kind: ExprKind::Builtin(b),
        ty: T::ty(),
        site: CallSite::caller(),
    })
}

/// `@builtin(global_invocation_id)`: this invocation's position in the whole dispatch.
#[track_caller]
pub fn global_invocation_id() -> Exp<Vec3<u32>> {
    builtin(BuiltinValue::GlobalInvocationId)
}
/// `@builtin(local_invocation_id)`: this invocation's position in its workgroup.
#[track_caller]
pub fn local_invocation_id() -> Exp<Vec3<u32>> {
    builtin(BuiltinValue::LocalInvocationId)
}
/// `@builtin(local_invocation_index)`: the linearised local invocation id.
#[track_caller]
pub fn local_invocation_index() -> Exp<u32> {
    builtin(BuiltinValue::LocalInvocationIndex)
}
/// `@builtin(workgroup_id)`: this workgroup's position in the dispatch grid.
#[track_caller]
pub fn workgroup_id() -> Exp<Vec3<u32>> {
    builtin(BuiltinValue::WorkgroupId)
}
/// `@builtin(num_workgroups)`: the dispatch grid size.
#[track_caller]
pub fn num_workgroups() -> Exp<Vec3<u32>> {
    builtin(BuiltinValue::NumWorkgroups)
}
/// `@builtin(subgroup_size)` (needs the subgroup capability).
#[track_caller]
pub fn subgroup_size() -> Exp<u32> {
    builtin(BuiltinValue::SubgroupSize)
}
/// `@builtin(subgroup_invocation_id)` (needs the subgroup capability).
#[track_caller]
pub fn subgroup_invocation_id() -> Exp<u32> {
    builtin(BuiltinValue::SubgroupInvocationId)
}
