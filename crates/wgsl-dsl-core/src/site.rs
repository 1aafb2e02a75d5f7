//! Rust call sites: where in the author's code a node of a kernel was built.

use std::fmt;
use std::panic::Location;

/// The Rust source location of the DSL call that built an expression or a statement.
///
/// Recorded with `#[track_caller]` on every public constructor, and reported in
/// [`BuildError`](crate::BuildError)s as `file:line:column`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallSite {
    /// Source file, as `file!()` gives it.
    pub file: &'static str,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
}

impl CallSite {
    /// The location of the caller of the `#[track_caller]` function calling this.
    #[track_caller]
    pub fn caller() -> Self {
        Location::caller().into()
    }
}

impl From<&'static Location<'static>> for CallSite {
    fn from(l: &'static Location<'static>) -> Self {
        CallSite {
            file: l.file(),
            line: l.line(),
            column: l.column(),
        }
    }
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// An optional call site, for messages.
pub(crate) struct OptSite(pub Option<CallSite>);

impl fmt::Display for OptSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, "{s}"),
            None => f.write_str("<unknown Rust location>"),
        }
    }
}
