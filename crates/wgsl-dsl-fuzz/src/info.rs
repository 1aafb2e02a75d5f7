//! What the analysis knows of a value ([`Info`], its [`Num`]bers) and what a `var` or a
//! parameter may hold ([`Contract`]): below the program representation ([`crate::ast`], whose
//! `var`s and functions carry contracts) and the analysis itself ([`crate::analysis`], which
//! re-exports them).

use crate::accuracy::F;
use crate::ty::{Scalar, Ty};

/// What a value may be on any conforming implementation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// A `bool` (or a vector of them): the same everywhere.
    Bool,
    /// Integers (every component) in `[lo, hi]`, the same everywhere.
    Int {
        /// Least value.
        lo: i64,
        /// Greatest value.
        hi: i64,
    },
    /// Floats (every component, matrices too).
    Float(F),
}

/// The analysis of one expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Info {
    /// Its type.
    pub ty: Ty,
    /// Its values.
    pub num: Num,
    /// A WGSL const-expression (every leaf a literal or zero value; over-approximated: the
    /// DSL evaluates at most these).
    pub konst: bool,
    /// The same in every invocation of a workgroup (WGSL's uniformity, §15.2).
    pub uniform: bool,
}

/// What a `var` or a helper function's parameter may hold: every store (argument) must fit.
pub type Contract = Info;

impl Info {
    pub(crate) fn new(ty: Ty, num: Num) -> Info {
        Info {
            ty,
            num,
            konst: false,
            uniform: true,
        }
    }
    /// The float description, if a float.
    pub fn float(&self) -> Option<F> {
        match self.num {
            Num::Float(f) => Some(f),
            _ => None,
        }
    }
    /// The integer range, if an integer.
    pub fn range(&self) -> Option<(i64, i64)> {
        match self.num {
            Num::Int { lo, hi } => Some((lo, hi)),
            _ => None,
        }
    }
    /// Exact on every conforming implementation (integers, `bool`s, exact floats).
    pub fn is_exact(&self) -> bool {
        self.float().is_none_or(|f| f.is_exact())
    }
    /// Whether a value described by `self` may be stored where `contract` is required.
    pub fn fits(&self, contract: &Contract) -> bool {
        if self.ty != contract.ty || (contract.uniform && !self.uniform) {
            return false;
        }
        match (self.num, contract.num) {
            (Num::Bool, Num::Bool) => true,
            (Num::Int { lo, hi }, Num::Int { lo: cl, hi: ch }) => lo >= cl && hi <= ch,
            (Num::Float(f), Num::Float(c)) => f.fits(c),
            _ => false,
        }
    }
    /// The join of two paths' values.
    pub fn join(&self, b: &Info) -> Info {
        let num = match (self.num, b.num) {
            (Num::Int { lo, hi }, Num::Int { lo: l2, hi: h2 }) => Num::Int {
                lo: lo.min(l2),
                hi: hi.max(h2),
            },
            (Num::Float(x), Num::Float(y)) => Num::Float(x.join(y)),
            (n, _) => n,
        };
        Info {
            ty: self.ty,
            num,
            konst: self.konst && b.konst,
            uniform: self.uniform && b.uniform,
        }
    }
}

/// The range of an integer scalar type.
pub fn full(s: Scalar) -> Num {
    match s {
        Scalar::I32 => Num::Int {
            lo: i64::from(i32::MIN),
            hi: i64::from(i32::MAX),
        },
        _ => Num::Int {
            lo: 0,
            hi: i64::from(u32::MAX),
        },
    }
}

/// `lo..=hi` where the integer scalar type `s` holds it, else the whole range of `s` (a value
/// converted or bitcast to `s`).
pub fn ints_within(lo: i64, hi: i64, s: Scalar) -> Num {
    let Num::Int { lo: fl, hi: fh } = full(s) else {
        unreachable!()
    };
    if lo >= fl && hi <= fh {
        Num::Int { lo, hi }
    } else {
        full(s)
    }
}
