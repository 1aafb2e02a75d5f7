//! `debug_print`: printing values from a kernel, a debugging aid that only the CPU interpreter
//! executes.
//!
//! [`KernelBuilder::debug_print`] (`debug_print!` in `#[kernel]`) records a format string and
//! its arguments, scalars or vectors, at the Rust line of the call. WGSL has no `printf`, so
//! the kernel the GPU runs is built **without** the prints: `Shader::wgsl` and `Shader::module`
//! are exactly those of the same kernel with the `debug_print` calls removed (an argument is
//! not even evaluated). [`KernelBuilder::build`] also lowers a second module in which each
//! print is a call of an empty WGSL function taking its arguments; that module is validated
//! like the first, and it is the one the interpreter (`wgsl_dsl::interp`) runs, turning each call
//! into a `wgsl_dsl::interp::DebugRecord`: the invocation (global and workgroup
//! id), the Rust `file:line:col`, the values.
//!
//! The format string takes `{}` for each argument, in order, and `{{` / `}}` for literal
//! braces; anything else in braces (`{x}`, `{:?}`) and a count of `{}` other than the number
//! of arguments are a [`BuildError::DebugFormat`] at the call.
//!
//! ```
//! # use wgsl_dsl_core as wgsl_dsl;
//! use wgsl_dsl::prelude::*;
//!
//! let mut k = KernelBuilder::new("show", [4, 1, 1]);
//! let data = k.storage::<RuntimeArray<f32>, ReadWrite>("data");
//! let i = k.let_("i", global_invocation_id().x());
//! let x = k.let_("x", data.at(&i).load());
//! k.debug_print("i = {}, x = {}", (&i, &x));
//! k.store(&data.at(&i), x * 2.0);
//! let shader = k.build()?;
//! assert!(!shader.wgsl.contains("debug")); // the GPU's kernel has no trace of it
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```

use super::KernelBuilder;
use super::stmt::Stmt;
use crate::exp::{Exp, NodeRef};
use crate::shader::BuildError;
use crate::site::CallSite;
use crate::types::ScalarOrVector;

/// The arguments of one [`KernelBuilder::debug_print`]: `()`, one value (`Exp<T>` or
/// `&Exp<T>`), or a tuple of up to 8 of them, each of a scalar or vector type (`f32`, `i32`,
/// `u32`, `bool`, `f16` and their vectors).
pub trait DebugArgs {
    /// The values, in order.
    #[doc(hidden)]
    fn debug_nodes(self) -> Vec<NodeRef>;
}

/// One argument of [`KernelBuilder::debug_print`]: an `Exp<T>` or `&Exp<T>` of a scalar or
/// vector type.
pub trait DebugArg {
    /// The value.
    #[doc(hidden)]
    fn debug_node(self) -> NodeRef;
}

impl<T: ScalarOrVector> DebugArg for Exp<T> {
    fn debug_node(self) -> NodeRef {
        self.node
    }
}

impl<T: ScalarOrVector> DebugArg for &Exp<T> {
    fn debug_node(self) -> NodeRef {
        self.node.clone()
    }
}

impl DebugArgs for () {
    fn debug_nodes(self) -> Vec<NodeRef> {
        Vec::new()
    }
}

impl<T: ScalarOrVector> DebugArgs for Exp<T> {
    fn debug_nodes(self) -> Vec<NodeRef> {
        vec![self.node]
    }
}

impl<T: ScalarOrVector> DebugArgs for &Exp<T> {
    fn debug_nodes(self) -> Vec<NodeRef> {
        vec![self.node.clone()]
    }
}

macro_rules! tuples {
    ($(($($a:ident),+))*) => {$(
        impl<$($a: DebugArg),+> DebugArgs for ($($a,)+) {
            #[allow(non_snake_case)]
            fn debug_nodes(self) -> Vec<NodeRef> {
                let ($($a,)+) = self;
                vec![$($a.debug_node()),+]
            }
        }
    )*};
}

tuples! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
    (A, B, C, D, E, F, G)
    (A, B, C, D, E, F, G, H)
}

/// The literal pieces of a `debug_print` format string around its `{}` placeholders (one
/// more piece than placeholders), or what is wrong with it.
///
/// `{}` is a placeholder, `{{` and `}}` are literal braces; any other brace is an error.
pub(crate) fn parse_debug_format(format: &str) -> Result<Vec<String>, String> {
    let mut pieces = vec![String::new()];
    let mut chars = format.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' => match chars.peek() {
                Some((_, '{')) => {
                    chars.next();
                    pieces.last_mut().expect("never empty").push('{');
                }
                Some((_, '}')) => {
                    chars.next();
                    pieces.push(String::new());
                }
                _ => {
                    return Err(format!(
                        "byte {at}: only `{{}}` placeholders are supported (no names, positions \
                         or format specs); write `{{{{` for a literal `{{`"
                    ));
                }
            },
            '}' => match chars.peek() {
                Some((_, '}')) => {
                    chars.next();
                    pieces.last_mut().expect("never empty").push('}');
                }
                _ => {
                    return Err(format!(
                        "byte {at}: unmatched `}}`; write `}}}}` for a literal `}}`"
                    ));
                }
            },
            c => pieces.last_mut().expect("never empty").push(c),
        }
    }
    Ok(pieces)
}

impl KernelBuilder {
    /// Print `args` from every invocation that reaches this statement, when the kernel runs on
    /// the CPU interpreter (`wgsl_dsl::interp`) (a debugging aid; see [the module
    /// docs](crate::kernel::debug)): `format` takes one `{}` per argument (`{{` and `}}` are
    /// braces), `args` is `()`, one `Exp` of a scalar or vector type, or a tuple of up to 8.
    ///
    /// The interpreter records each print with the invocation's global and workgroup ids and
    /// this call's Rust `file:line:col`
    /// (`wgsl_dsl::interp::Interpreter::take_debug_output`).
    /// The GPU build drops it: WGSL has no `printf`, and the WGSL is the same as without the
    /// call.
    ///
    /// A format string whose placeholders do not match the arguments is recorded as a
    /// [`BuildError::DebugFormat`] at this call, which [`KernelBuilder::build`] returns.
    #[track_caller]
    pub fn debug_print(&mut self, format: &str, args: impl DebugArgs) {
        let site = CallSite::caller();
        let args = args.debug_nodes();
        match parse_debug_format(format) {
            Ok(pieces) if pieces.len() == args.len() + 1 => {
                self.debug_prints += 1;
                self.push(Stmt::DebugPrint { pieces, args }, site);
            }
            Ok(pieces) => self.errors.push(BuildError::DebugFormat {
                message: format!(
                    "the format string {format:?} has {} `{{}}` placeholder{} but {} argument{} {} given",
                    pieces.len() - 1,
                    if pieces.len() == 2 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "" } else { "s" },
                    if args.len() == 1 { "is" } else { "are" },
                ),
                placeholders: pieces.len() - 1,
                arguments: args.len(),
                site,
            }),
            Err(reason) => {
                let placeholders = format.matches("{}").count();
                self.errors.push(BuildError::DebugFormat {
                    message: format!("the format string {format:?}: {reason}"),
                    placeholders,
                    arguments: args.len(),
                    site,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_debug_format;

    #[test]
    fn format_strings_split_at_their_placeholders() {
        assert_eq!(parse_debug_format("x").unwrap(), vec!["x"]);
        assert_eq!(
            parse_debug_format("x = {}, y = {}!").unwrap(),
            vec!["x = ", ", y = ", "!"]
        );
        assert_eq!(
            parse_debug_format("{{{}}}").unwrap(),
            vec!["{".to_string(), "}".to_string()]
        );
        assert!(parse_debug_format("{x}").is_err());
        assert!(parse_debug_format("{:?}").is_err());
        assert!(parse_debug_format("a } b").is_err());
        assert!(parse_debug_format("{").is_err());
    }
}
