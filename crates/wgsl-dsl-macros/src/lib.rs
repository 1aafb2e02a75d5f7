//! # wgsl-dsl-macros: kernels in Rust syntax, structs with checked WGSL layout
//!
//! Three macros for [wgsl-dsl](https://docs.rs/wgsl-dsl). Use them through `wgsl-dsl`, which
//! re-exports them (`use wgsl_dsl::prelude::*;`): the generated code names the DSL by the path
//! `::wgsl_dsl`, so the crate using them must depend on `wgsl-dsl` (and on `bytemuck` for
//! `#[derive(WgslStruct)]`).
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! #[kernel(workgroup_size = [64, 1, 1])]
//! fn saxpy(
//!     #[uniform] a: f32,
//!     #[storage(read)] x: &[f32],
//!     #[storage(read_write)] y: &mut [f32],
//!     #[builtin(global_invocation_id)] gid: Vec3<u32>,
//! ) {
//!     let i = gid.x;
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! let shader = saxpy().build()?;
//! assert!(shader.wgsl.contains("y[i] = ((_e8 * _e11) + _e15);"));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! # `#[kernel]`
//! Expands the function into one that *builds* the kernel with `KernelBuilder` calls and
//! returns the builder: `fn saxpy(<plain parameters>) -> ::wgsl_dsl::KernelBuilder`; call
//! `.build()` (or `.build_for(&limits)`) on it. The kernel is exactly what the same builder
//! calls written by hand make (tested: the WGSL is identical).
//!
//! Attribute arguments: `workgroup_size = [x, y, z]` (or `[x, y]`, or `x`; any Rust
//! expressions, e.g. of const generics), `name = "entry_point"` (default: the function name),
//! `grid` and `def` (see [the typed interface](#the-typed-interface)), `helper` (see below).
//!
//! The parameters (bindings, textures, workgroup variables, built-in values, plain Rust values
//! baked into the WGSL), the statements (`debug_print!` included: a print only the CPU
//! interpreter executes), expressions, built-in functions and collective operations a body
//! may use, and the naming rule of entry points are listed in the syntax reference,
//! [`wgsl_dsl::kernel_syntax`](https://docs.rs/wgsl-dsl/latest/wgsl_dsl/kernel_syntax/).
//! Everything else is a compile error at its span; all errors of a kernel are reported
//! together, and the function is replaced by a stub with the same signature so its callers
//! add no errors. Type errors in the body are Rust type errors at the author's expression:
//! `scale + i` with `scale: f32`, `i: u32` says to convert with `as f32`.
//!
//! ## Helper functions
//! `#[kernel(helper)] fn relu(x: f32) -> f32 { x.max(0.0) }` (1 to 6 parameters, a result)
//! becomes `fn relu(k: &mut KernelBuilder) -> Function<(f32,), f32>`, which defines the WGSL
//! function in `k`. A kernel body that calls `relu(v)` defines it once, before the body, and
//! calls it; builder code can use `relu(&mut k)` too.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! #[kernel(helper)]
//! fn relu(x: f32) -> f32 {
//!     x.max(0.0)
//! }
//!
//! #[kernel(workgroup_size = 64)]
//! fn apply(#[storage(read_write)] y: &mut [f32], #[builtin(global_invocation_id)] gid: Vec3<u32>) {
//!     let i = gid.x;
//!     if i < y.len() {
//!         y[i] = relu(y[i]);
//!     }
//! }
//! assert!(apply().build()?.wgsl.contains("fn relu(x: f32) -> f32"));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! ## The typed interface
//! With wgsl-dsl's `runtime` feature (the default), `#[kernel] fn sgd_update(..)` also defines
//! - `SgdUpdate`, the kernel's definition (`wgsl_dsl::runtime::KernelDef`): a struct whose
//!   public fields are the function's plain Rust parameters (a unit struct without them), with
//!   the function's const generics;
//! - `SgdUpdateArgs<'a>`, its arguments (`wgsl_dsl::runtime::KernelArgs`): one public field
//!   per binding parameter, in order, `&'a GpuBuffer<T>` for `#[uniform] p: T` and
//!   `#[storage(read)] x: &[T]`, `&'a mut GpuBuffer<T>` for `#[storage(read_write)]`
//!   (`GpuBuffer<u32>` for `&mut [Atomic<u32>]`); for `#[texture] t: Texture2d<T>`,
//!   `&'a dyn TextureOf<T>` (any `GpuTexture` whose channel type is `T`), for
//!   `#[texture] t: StorageTexture2d<F, A>`, `&'a GpuTexture<F>` (`ReadOnly`) or
//!   `&'a mut GpuTexture<F>` (`WriteOnly`, `ReadWrite`).
//!
//! `gpu.compile_typed(SgdUpdate)?` compiles it; `kernel.dispatch(&gpu, SgdUpdateArgs { .. },
//! size)` and `kernel.record(&mut rec, SgdUpdateArgs { .. }, size)` run it, so a missing,
//! swapped or wrongly typed buffer is a compile error at the field. The problem size `size` is
//! by default `[u32; 3]` invocations, covered by workgroups of the kernel's size;
//! `grid = |len: usize| [x, y, z]` makes it a `usize` (any one typed parameter) and computes the
//! workgroups with the closure's body, where the plain parameters are in scope. `def = Name`
//! renames the definition (and the arguments to `NameArgs`), e.g. when the CamelCase name is
//! taken. Kernels with type or lifetime parameters get no typed interface.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! #[kernel(workgroup_size = 64, grid = |len: usize| [(len as u32).div_ceil(64), 1, 1])]
//! fn scale(
//!     #[storage(read)] x: &[f32],
//!     #[storage(read_write)] y: &mut [f32],
//!     #[builtin(global_invocation_id)] gid: Vec3<u32>,
//!     factor: f32,
//! ) {
//!     let i = gid.x;
//!     if i < y.len() {
//!         y[i] = factor * x[i];
//!     }
//! }
//!
//! # #[cfg(feature = "runtime")]
//! fn run(gpu: &wgsl_dsl::runtime::Gpu) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
//!     use wgsl_dsl::runtime::GpuBuffer;
//!     let kernel = gpu.compile_typed(Scale { factor: 2.0 })?;
//!     let x = GpuBuffer::from_slice(gpu, &[1.0f32, 2.0, 3.0])?;
//!     let mut y = GpuBuffer::<f32>::zeroed(gpu, 3)?;
//!     kernel.dispatch(gpu, ScaleArgs { x: &x, y: &mut y }, 3)?;
//!     Ok(y.read(gpu)?)
//! }
//! ```
//!
//! # `#[derive(Bindings)]`
//! For kernels written with the builder: a struct whose named fields are places
//! (`Buffer<T, A>`, `Place<T, A>`) declares the kernel's bindings once. Each field is a storage
//! binding with the place's access, or a uniform with `#[uniform]` (then `Place<T, ReadOnly>`).
//! A field of type `Texture2d<T>` or `StorageTexture2d<F, A>` marked `#[texture]` is a texture
//! binding (its argument field as in `#[kernel]`).
//! The derive implements `wgsl_dsl::Bindings` (`k.bindings()` declares the fields in order,
//! under their names) and, with the runtime, writes the argument struct `<Name>Args<'a>` (the
//! struct's name without its `Bindings` suffix), as `#[kernel]` does. The kernel's definition
//! implements `KernelDef` by hand; `gpu.compile_typed` checks that the kernel's bindings are
//! those of the argument struct.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! #[derive(Bindings)]
//! struct AxpyBindings {
//!     #[uniform]
//!     a: Place<f32, ReadOnly>,
//!     x: Buffer<f32, ReadOnly>,
//!     y: Buffer<f32, ReadWrite>,
//! }
//!
//! let mut k = KernelBuilder::new("axpy", [64, 1, 1]);
//! let AxpyBindings { a, x, y } = k.bindings();
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(y.len()), |k| k.store(&y.at(&i), a.load() * x.at(&i).load() + y.at(&i).load()));
//! let shader = k.build()?;
//! assert_eq!(shader.signature.bindings[1].name, "x");
//! // With the runtime: `AxpyArgs { a: &GpuBuffer<f32>, x: &GpuBuffer<f32>, y: &mut GpuBuffer<f32> }`.
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! # `#[derive(WgslStruct)]`
//! On a `#[repr(C)]` struct with named fields that also derives `bytemuck::Pod` and
//! `Zeroable` (checked), implements `WgslType`, `Constructible` and `WgslStruct`, and adds a
//! trait `<Name>Fields` with one method per member (not for names starting with `_`, the
//! padding): on an `Exp<Name>` it gives the member's `Exp<F>`, on a `Place<Name, A>` its
//! `Place<F, A>`. In `#[kernel]` bodies `p.field` uses it; import the trait where you write
//! `p.field()` by hand.
//!
//! Host field types and their WGSL types:
//! | Rust field | WGSL member |
//! |---|---|
//! | `f32`, `i32`, `u32` | `f32`, `i32`, `u32` |
//! | `[T; N]` | `array<T, N>` |
//! | `#[wgsl(vec)] [S; 2 \| 3 \| 4]` (`S` scalar) | `vec2<S>`, `vec3<S>`, `vec4<S>` |
//! | `#[wgsl(vec)] [[S; 4]; N]` | `array<vec4<S>, N>` |
//! | `#[wgsl(mat)] [[f32; R]; C]`, `R` = 2 or 4 | `matCxR<f32>` (column-major) |
//! | a struct deriving `WgslStruct` | that struct |
//!
//! `bool` (not host-shareable), 64-bit and 8/16-bit types, `vec3` array elements and `matCx3`
//! (padded to 16 bytes per element / column in WGSL, so no Rust array matches) are errors.
//!
//! **Layout.** Every field's Rust offset must equal its WGSL offset, and the struct's size its
//! WGSL size (WGSL spec §14.4.1: each member at the next multiple of its alignment, `vec3` and
//! `vec4` aligned to 16, `vec2` to 8; the size rounded up to the largest alignment). Where they
//! differ the build fails at the field, naming the padding to add, e.g.
//! "field `direction` is at byte 4 in Rust but at byte 16 in WGSL ...: add
//! `_pad_direction: [u32; 3]` before `direction`". `#[wgsl(uniform)]` also checks the
//! uniform address space rules (§14.4.4): array strides and struct and array members at
//! multiples of 16, nested structs valid in uniform buffers; padding is then suggested as
//! separate `u32` fields.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
//! #[repr(C)]
//! #[wgsl(uniform)]
//! struct Light {
//!     intensity: f32,
//!     _pad0: u32,
//!     _pad1: u32,
//!     _pad2: u32,
//!     #[wgsl(vec)]
//!     direction: [f32; 3],
//!     range: f32, // packs after the vec3, in WGSL as in Rust
//! }
//!
//! let mut k = KernelBuilder::new("k", [1, 1, 1]);
//! let light = k.uniform::<Light>("light");
//! let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
//! k.store(&out.at(0u32), light.range().load() * light.direction().load().x());
//! assert!(k.build()?.wgsl.contains("direction: vec3<f32>,"));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! # Layout of this crate
//! `lib.rs` only dispatches; each macro parses, checks and expands in its module:
//! `derive/` (`ast.rs` host types -> WGSL types, `layout.rs` the WGSL layout as `const`
//! expressions and its checks), `kernel/` (`params.rs` the signature, `stmt.rs` statements,
//! `expr.rs` expressions, `builtins.rs` the names it knows), `bindings.rs` (`#[derive(Bindings)]`)
//! and `interface.rs` (the argument structs both write).

mod bindings;
mod derive;
mod errors;
#[cfg(test)]
mod hygiene;
mod interface;
mod kernel;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Make a `#[repr(C)]` struct a WGSL struct, with its layout checked against WGSL's. See the
/// [crate docs](crate#derivewgslstruct).
#[proc_macro_derive(WgslStruct, attributes(wgsl))]
pub fn derive_wgsl_struct(input: TokenStream) -> TokenStream {
    derive::expand(input.into()).into()
}

/// Declare a kernel's bindings once, as a struct of places: the fields are declared in order
/// (`k.bindings()`), and with the runtime the argument struct `<Name>Args<'a>` is written
/// from them. See the [crate docs](crate#derivebindings).
#[proc_macro_derive(Bindings, attributes(uniform, storage, texture))]
pub fn derive_bindings(input: TokenStream) -> TokenStream {
    bindings::expand(input.into()).into()
}

/// Write a compute kernel (or, with `helper`, a helper function) in Rust syntax. See the
/// [crate docs](crate#kernel) for the accepted syntax.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(attr.into(), item.into()).into()
}
