//! Places: memory locations a kernel reads and writes (WGSL's references, spec §6.4.3).

use std::marker::PhantomData;
use std::rc::Rc;

use crate::exp::{Exp, ExprKind, IntoExp, PlaceKind, PlaceNode, PlaceRef};
use crate::site::CallSite;
use crate::types::*;

/// Access mode marker: the place can only be read (`var<storage, read>`, `var<uniform>`).
#[derive(Debug)]
pub struct ReadOnly;
/// Access mode marker: the place can be read and written (`var<storage, read_write>`,
/// `var<workgroup>`, function `var`s).
#[derive(Debug)]
pub struct ReadWrite;

/// A storage access mode: [`ReadOnly`] or [`ReadWrite`].
pub trait Access: 'static {
    /// The naga storage access flags.
    fn storage_access() -> naga::StorageAccess;
    /// True for read-write.
    const WRITABLE: bool;
}
impl Access for ReadOnly {
    fn storage_access() -> naga::StorageAccess {
        naga::StorageAccess::LOAD
    }
    const WRITABLE: bool = false;
}
impl Access for ReadWrite {
    fn storage_access() -> naga::StorageAccess {
        naga::StorageAccess::LOAD | naga::StorageAccess::STORE
    }
    const WRITABLE: bool = true;
}

/// A memory location holding a `T`, with access mode `A`: a binding, a workgroup variable, a
/// function `var`, or an element or member of one.
///
/// Reading it ([`Place::load`]) gives an [`Exp<T>`] evaluated where it is used; writing it
/// ([`KernelBuilder::store`](crate::KernelBuilder::store)) needs `A = ReadWrite`.
#[must_use = "a place does nothing until it is loaded or stored to"]
pub struct Place<T, A = ReadWrite> {
    pub(crate) node: PlaceRef,
    _t: PhantomData<fn() -> (T, A)>,
}

/// The store type and access mode of a place type, for code generated from binding
/// declarations (`#[derive(Bindings)]`).
#[doc(hidden)]
pub trait PlaceParts {
    /// `T` of `Place<T, A>`.
    type Store: WgslType;
    /// `A` of `Place<T, A>`.
    type Access: Access;
}
impl<T: WgslType, A: Access> PlaceParts for Place<T, A> {
    type Store = T;
    type Access = A;
}

/// A buffer of `T`s: a storage binding whose store type is `array<T>`.
pub type Buffer<T, A> = Place<RuntimeArray<T>, A>;

/// A function-scope `var` (WGSL spec §7.3): mutable, read with [`Place::load`] or [`Var::get`],
/// written with [`KernelBuilder::store`](crate::KernelBuilder::store).
pub type Var<T> = Place<T, ReadWrite>;

impl<T, A> Clone for Place<T, A> {
    fn clone(&self) -> Self {
        Place {
            node: self.node.clone(),
            _t: PhantomData,
        }
    }
}

impl<T, A> std::fmt::Debug for Place<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Place<{}> @ {}",
            self.node.ty.wgsl_name(),
            self.node.site
        )
    }
}

impl<T: WgslType, A: Access> Place<T, A> {
    pub(crate) fn new(kind: PlaceKind, site: CallSite) -> Self {
        Self::with_ty(kind, T::ty(), site)
    }

    /// A place whose WGSL type is `ty` (for [`SizedArray`], whose marker knows no length).
    pub(crate) fn with_ty(kind: PlaceKind, ty: Ty, site: CallSite) -> Self {
        Place {
            node: Rc::new(PlaceNode { kind, ty, site }),
            _t: PhantomData,
        }
    }

    /// Read the value (WGSL's load rule, spec §6.4.4). Evaluated at each use of the result.
    /// For an `Atomic<T>` this is `atomicLoad` (WGSL spec §17.8.1).
    #[track_caller]
    pub fn load(&self) -> Exp<<T as Loadable>::Value>
    where
        T: Loadable,
    {
        Exp::from_kind(ExprKind::Load(self.node.clone()), CallSite::caller())
    }

    /// Same as [`Place::load`].
    #[track_caller]
    pub fn get(&self) -> Exp<<T as Loadable>::Value>
    where
        T: Loadable,
    {
        Exp::from_kind(ExprKind::Load(self.node.clone()), CallSite::caller())
    }

    /// The element `index` of an array or vector place (`&p[index]`, WGSL spec §8.5).
    /// Out-of-bounds reads and writes of storage buffers are made safe by the implementation
    /// (WGSL spec §14.5 robust buffer access) but their value is unspecified.
    #[track_caller]
    pub fn at<I: IndexScalar>(&self, index: impl IntoExp<I>) -> Place<T::Elem, A>
    where
        T: Indexable,
    {
        Place::new(
            PlaceKind::Index(self.node.clone(), index.into_exp().node),
            CallSite::caller(),
        )
    }

    /// Member `index` of a struct place, typed `F`. Used by `#[derive(WgslStruct)]`.
    #[doc(hidden)]
    #[track_caller]
    pub fn member<F: WgslType>(&self, index: u32) -> Place<F, A>
    where
        T: WgslStruct,
    {
        Place::new(
            PlaceKind::Field(self.node.clone(), index),
            CallSite::caller(),
        )
    }
}

impl<T: WgslType, A: Access> Place<RuntimeArray<T>, A> {
    /// `arrayLength(&buffer)`: the number of elements of a runtime-sized array
    /// (WGSL spec §17.4.1).
    #[track_caller]
    pub fn len(&self) -> Exp<u32> {
        Exp::from_kind(ExprKind::ArrayLength(self.node.clone()), CallSite::caller())
    }
}

/// Types that can be loaded from a place. An `Atomic<T>` loads as a `T`.
pub trait Loadable: WgslType {
    /// The loaded value's type.
    type Value: WgslType;
}
impl<T: Constructible> Loadable for T {
    type Value = T;
}
impl<T: AtomicScalar> Loadable for Atomic<T> {
    type Value = T;
}

/// What [`KernelBuilder::store`](crate::KernelBuilder::store) can write to: places with
/// [`ReadWrite`] access. A `let` (an [`Exp`]) and a read-only binding are not targets.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored to",
    label = "not a writable place: a `let` value or a read-only binding",
    note = "store into a `var` (`k.var(..)`), a `ReadWrite` storage binding, or a workgroup variable"
)]
pub trait Target<T> {
    #[doc(hidden)]
    fn place_node(&self) -> PlaceRef;
}
impl<T: Constructible> Target<T> for Place<T, ReadWrite> {
    fn place_node(&self) -> PlaceRef {
        self.node.clone()
    }
}

// ---- a place where a value belongs: a compile error that names `.load()` ----

mod sealed {
    /// Implemented by nothing: [`super::ReadWithLoad`] cannot be implemented.
    pub trait Sealed {}
}

/// Implemented by no type: the bound of the operators and comparisons below, which exist so
/// that a [`Place`] used as an operand (`x.at(&i) * 2.0`, `2.0 * x.at(&i)`,
/// `x.at(&i).lt(n)`) is an error that names the fix, [`Place::load`], rather than a bare
/// "cannot multiply" (the trait's name is in that message). A place where an
/// [`IntoExp`] belongs (`k.store(&y, x.at(&i))`) is [`IntoExp`]'s error, which names it too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a place (a memory location), not a value: read it with `.load()`",
    label = "a place where a value is needed: add `.load()`",
    note = "a `Place` (a binding, a `var`, a workgroup variable, or an element or member of one) \
            is read with `.load()`, e.g. `x.at(&i).load() * 2.0`; in `#[kernel]` code places are \
            read where they are used"
)]
#[doc(hidden)]
pub trait ReadWithLoad: sealed::Sealed {
    /// Never called: no type implements the trait.
    fn never<O>(&self) -> O;
}

/// `Place op R`, `&Place op R` and `literal op Place` for every binary operator, and `-p`,
/// `!p`: all bounded by [`ReadWithLoad`].
macro_rules! place_operators {
    ($($Op:ident $method:ident),*) => {$(
        impl<T, A, R> std::ops::$Op<R> for Place<T, A>
        where
            Self: ReadWithLoad,
        {
            type Output = Exp<T>;
            fn $method(self, _: R) -> Exp<T> {
                self.never()
            }
        }
        impl<T, A, R> std::ops::$Op<R> for &Place<T, A>
        where
            Place<T, A>: ReadWithLoad,
        {
            type Output = Exp<T>;
            fn $method(self, _: R) -> Exp<T> {
                self.never()
            }
        }
        place_operators!(@left $Op $method; f32, i32, u32);
    )*};
    (@left $Op:ident $method:ident; $($s:ty),*) => {$(
        impl<T, A> std::ops::$Op<Place<T, A>> for $s
        where
            Place<T, A>: ReadWithLoad,
        {
            type Output = Exp<T>;
            fn $method(self, p: Place<T, A>) -> Exp<T> {
                p.never()
            }
        }
        impl<T, A> std::ops::$Op<&Place<T, A>> for $s
        where
            Place<T, A>: ReadWithLoad,
        {
            type Output = Exp<T>;
            fn $method(self, p: &Place<T, A>) -> Exp<T> {
                p.never()
            }
        }
    )*};
}
place_operators!(
    Add add, Sub sub, Mul mul, Div div, Rem rem, BitAnd bitand, BitOr bitor, BitXor bitxor,
    Shl shl, Shr shr
);

impl<T, A> std::ops::Neg for Place<T, A>
where
    Self: ReadWithLoad,
{
    type Output = Exp<T>;
    fn neg(self) -> Exp<T> {
        self.never()
    }
}
impl<T, A> std::ops::Not for Place<T, A>
where
    Self: ReadWithLoad,
{
    type Output = Exp<T>;
    fn not(self) -> Exp<T> {
        self.never()
    }
}

/// The comparison methods of [`Exp`] on a place: bounded by [`ReadWithLoad`], so that
/// `x.at(&i).lt(n)` names `.load()`.
macro_rules! place_comparisons {
    ($($name:ident),*) => {
        impl<T, A> Place<T, A> {$(
            #[doc(hidden)]
            pub fn $name<R>(&self, _: R) -> Exp<bool>
            where
                Self: ReadWithLoad,
            {
                self.never()
            }
        )*}
    };
}
place_comparisons!(lt, le, gt, ge, eq, ne);
