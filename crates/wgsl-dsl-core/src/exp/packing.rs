//! Built-ins on packed data and on vectors and matrices that `builtins.rs` lacks: the
//! `pack*` / `unpack*` family (WGSL spec §17.9 "Data Packing Built-in Functions", §17.10 "Data
//! Unpacking Built-in Functions"), `dot4I8Packed` / `dot4U8Packed`, `quantizeToF16`,
//! `faceForward`, `reflect`, `refract` and `determinant` (§17.5 "Numeric Built-in Functions").
//! Each function names its built-in; the spec's anchor is `#<name>-builtin`
//! (`https://www.w3.org/TR/WGSL/#pack4x8snorm-builtin`).

use super::builtins::{math, math_fns};
use super::{Exp, IntoExp};
use crate::types::*;
use naga::MathFunction as M;

math_fns! {
    /// `pack4x8snorm(e)`: each component `floor(0.5 + 127 * clamp(e[i], -1, 1))` as a signed
    /// byte, component `i` in bits `8i..8i+8` (WGSL spec §17.9).
    fn pack4x8snorm(e: Vec4<f32>) -> u32 = Pack4x8snorm;
    /// `pack4x8unorm(e)`: each component `floor(0.5 + 255 * clamp(e[i], 0, 1))` as a byte
    /// (WGSL spec §17.9).
    fn pack4x8unorm(e: Vec4<f32>) -> u32 = Pack4x8unorm;
    /// `pack2x16snorm(e)`: each component `floor(0.5 + 32767 * clamp(e[i], -1, 1))` as a
    /// signed 16-bit half (WGSL spec §17.9).
    fn pack2x16snorm(e: Vec2<f32>) -> u32 = Pack2x16snorm;
    /// `pack2x16unorm(e)`: each component `floor(0.5 + 65535 * clamp(e[i], 0, 1))` as a 16-bit
    /// half (WGSL spec §17.9).
    fn pack2x16unorm(e: Vec2<f32>) -> u32 = Pack2x16unorm;
    /// `pack2x16float(e)`: each component as an IEEE binary16 (`f16`) in one half (WGSL spec
    /// §17.9; rounding as `f32` to `f16` conversion, §15.7.6). **Undefined** for a component
    /// outside `f16`'s finite range (an indeterminate value, §15.7.6, §8.2; with literal
    /// arguments a build error, as WGSL makes it a shader-creation error); clamp to
    /// `[-65504, 65504]` first for a defined result.
    fn pack2x16float(e: Vec2<f32>) -> u32 = Pack2x16float;
    /// `pack4xI8(e)`: the low 8 bits of each component, component `i` in bits `8i..8i+8`
    /// (WGSL spec §17.9).
    fn pack4x_i8(e: Vec4<i32>) -> u32 = Pack4xI8;
    /// `pack4xU8(e)`: the low 8 bits of each component (WGSL spec §17.9).
    fn pack4x_u8(e: Vec4<u32>) -> u32 = Pack4xU8;
    /// `pack4xI8Clamp(e)`: each component clamped to `[-128, 127]`, then packed as
    /// [`pack4x_i8`] (WGSL spec §17.9).
    fn pack4x_i8_clamp(e: Vec4<i32>) -> u32 = Pack4xI8Clamp;
    /// `pack4xU8Clamp(e)`: each component clamped to `[0, 255]`, then packed (WGSL spec §17.9).
    fn pack4x_u8_clamp(e: Vec4<u32>) -> u32 = Pack4xU8Clamp;
    /// `unpack4x8snorm(e)`: byte `i` as a signed integer `v`, component `i` is
    /// `max(v / 127, -1)` (WGSL spec §17.10).
    fn unpack4x8snorm(e: u32) -> Vec4<f32> = Unpack4x8snorm;
    /// `unpack4x8unorm(e)`: byte `i` over 255 (WGSL spec §17.10).
    fn unpack4x8unorm(e: u32) -> Vec4<f32> = Unpack4x8unorm;
    /// `unpack2x16snorm(e)`: 16-bit half `i` as a signed integer `v`, `max(v / 32767, -1)`
    /// (WGSL spec §17.10).
    fn unpack2x16snorm(e: u32) -> Vec2<f32> = Unpack2x16snorm;
    /// `unpack2x16unorm(e)`: 16-bit half `i` over 65535 (WGSL spec §17.10).
    fn unpack2x16unorm(e: u32) -> Vec2<f32> = Unpack2x16unorm;
    /// `unpack2x16float(e)`: each 16-bit half as an IEEE binary16 value (WGSL spec §17.10).
    fn unpack2x16float(e: u32) -> Vec2<f32> = Unpack2x16float;
    /// `unpack4xI8(e)`: each byte sign-extended (WGSL spec §17.10).
    fn unpack4x_i8(e: u32) -> Vec4<i32> = Unpack4xI8;
    /// `unpack4xU8(e)`: each byte zero-extended (WGSL spec §17.10).
    fn unpack4x_u8(e: u32) -> Vec4<u32> = Unpack4xU8;
    /// `dot4I8Packed(e1, e2)`: the dot product of the four signed bytes of `e1` and of `e2`
    /// (WGSL spec §17.5, `dot4I8Packed`). Exact: at most `4 * 128 * 128` in magnitude.
    fn dot4_i8_packed(e1: u32, e2: u32) -> i32 = Dot4I8Packed;
    /// `dot4U8Packed(e1, e2)`: the dot product of the four unsigned bytes of `e1` and of `e2`
    /// (WGSL spec §17.5, `dot4U8Packed`).
    fn dot4_u8_packed(e1: u32, e2: u32) -> u32 = Dot4U8Packed;
}

/// `quantizeToF16(e)`: `e` rounded to `f16` and back (WGSL spec §17.5.47
/// (#quantizeToF16-builtin)).
///
/// **Undefined** outside `f16`'s finite range (`|e|` above 65504 before rounding): an
/// indeterminate value (§17.5.47, §15.7.6, §8.2), not necessarily infinity; with a literal
/// argument, a build error ([`BuildError::ConstExpression`](crate::BuildError::ConstExpression)),
/// as WGSL makes it a shader-creation error. Defined alternative:
/// `quantize_to_f16(clamp(e, -65504.0, 65504.0))`.
#[track_caller]
pub fn quantize_to_f16<T: ScalarOrVector<Elem = f32> + Float>(e: impl IntoExp<T>) -> Exp<T> {
    math(M::QuantizeToF16, vec![e.into_exp().node])
}

math_fns! { float vectors:
    /// `faceForward(e1, e2, e3)`: `e1` if `dot(e2, e3) < 0`, else `-e1` (WGSL spec §17.5,
    /// `faceForward`).
    fn face_forward(e1: Vector<T, N>, e2: Vector<T, N>, e3: Vector<T, N>) -> Vector<T, N>
        = FaceForward;
    /// `reflect(e1, e2)`: the reflection of the incident `e1` at the surface of normal `e2`,
    /// `e1 - 2 dot(e2, e1) e2` (WGSL spec §17.5, `reflect`).
    fn reflect(e1: Vector<T, N>, e2: Vector<T, N>) -> Vector<T, N> = Reflect;
    /// `refract(e1, e2, e3)`: the refraction of the incident `e1` at the surface of normal `e2`
    /// with the ratio of indices `e3`: with `k = 1 - e3^2 (1 - dot(e2, e1)^2)`, the zero vector
    /// if `k < 0`, else `e3 e1 - (e3 dot(e2, e1) + sqrt(k)) e2` (WGSL spec §17.5, `refract`).
    fn refract(e1: Vector<T, N>, e2: Vector<T, N>, e3: T) -> Vector<T, N> = Refract;
}

/// `determinant(m)` of a square matrix (WGSL spec §17.5, `determinant`).
#[track_caller]
pub fn determinant<const N: usize>(m: impl IntoExp<Mat<N, N>>) -> Exp<f32>
where
    D<N>: Dim,
{
    math(M::Determinant, vec![m.into_exp().node])
}
