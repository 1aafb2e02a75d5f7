//! Operations on [`V`]: each a DSL operator or built-in called at the Rust type of its operands.

use half::f16;
use wgsl_dsl::exp::Convert;
use wgsl_dsl::exp::decompose::FloatShape;
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{D, Dim, Float, Integer, Numeric, Scalar as DslScalar, ScalarOrVector};

use crate::ast::{Bin, Cmp, Fun, Part, Scalar, Ty, Un};
use crate::value::{Dyn, V};
use crate::{
    with_float, with_float_vec, with_int, with_mat, with_num, with_num_vec, with_scalar,
    with_signed, with_sv, with_ty, with_vec,
};

fn g<T: Dyn>(v: &V) -> Exp<T> {
    T::get(v)
}

/// `lit(v)` of a literal.
pub fn literal(l: crate::ast::Lit) -> V {
    use crate::ast::Lit;
    match l {
        Lit::Bool(b) => V::B1(lit(b)),
        Lit::I32(v) => V::I1(lit(v)),
        Lit::U32(v) => V::U1(lit(v)),
        Lit::F32(v) => V::F1(lit(v)),
        Lit::F16(b) => V::H1(lit(f16::from_bits(b))),
    }
}

/// `Exp::<T>::zero()`.
pub fn zero(ty: Ty) -> V {
    with_ty!(ty, T => T::wrap(Exp::<T>::zero()))
}

/// A unary operator.
pub fn unary(op: Un, a: &V) -> V {
    match op {
        Un::Neg => with_signed!(a.ty(), T => T::wrap(-g::<T>(a))),
        Un::BitNot => match a {
            V::I1(x) => V::I1(!x),
            V::U1(x) => V::U1(!x),
            other => panic!("fuzzer bug: !{:?}", other.ty()),
        },
        Un::Not => V::B1(g::<bool>(a).not()),
    }
}

fn same<T: Numeric + Dyn>(op: Bin, a: &V, b: &V) -> V {
    let (x, y) = (g::<T>(a), g::<T>(b));
    T::wrap(match op {
        Bin::Add => x + y,
        Bin::Sub => x - y,
        Bin::Mul => x * y,
        Bin::Div => x / y,
        Bin::Rem => x % y,
        _ => panic!("fuzzer bug: {op:?} as arithmetic"),
    })
}

fn bits<T: Integer + Dyn>(op: Bin, a: &V, b: &V) -> V
where
    T::Unsigned: Dyn,
{
    let x = g::<T>(a);
    T::wrap(match op {
        Bin::And => x & g::<T>(b),
        Bin::Or => x | g::<T>(b),
        Bin::Xor => x ^ g::<T>(b),
        Bin::Shl => x << g::<T::Unsigned>(b),
        Bin::Shr => x >> g::<T::Unsigned>(b),
        _ => panic!("fuzzer bug: {op:?} as a bit operation"),
    })
}

fn vec_scalar<S: DslScalar + Numeric<Elem = S> + Dyn, const N: usize>(
    op: Bin,
    a: &V,
    b: &V,
    vector_left: bool,
) -> V
where
    D<N>: Dim,
    Vector<S, N>: Dyn,
{
    let (v, s) = if vector_left { (a, b) } else { (b, a) };
    let (v, s) = (g::<Vector<S, N>>(v), g::<S>(s));
    <Vector<S, N>>::wrap(match (op, vector_left) {
        (Bin::Add, true) => v + s,
        (Bin::Add, false) => s + v,
        (Bin::Sub, true) => v - s,
        (Bin::Sub, false) => s - v,
        (Bin::Mul, true) => v * s,
        (Bin::Mul, false) => s * v,
        (Bin::Div, true) => v / s,
        (Bin::Div, false) => s / v,
        (Bin::Rem, true) => v % s,
        (Bin::Rem, false) => s % v,
        _ => panic!("fuzzer bug: {op:?} of a vector and a scalar"),
    })
}

fn matrix<const N: usize>(op: Bin, a: &V, b: &V) -> V
where
    D<N>: Dim,
    Mat<N, N>: Dyn,
    Vector<f32, N>: Dyn,
{
    match (a.ty(), b.ty()) {
        (Ty::M(_), Ty::M(_)) => {
            let (x, y) = (g::<Mat<N, N>>(a), g::<Mat<N, N>>(b));
            <Mat<N, N>>::wrap(match op {
                Bin::Add => x + y,
                Bin::Sub => x - y,
                _ => x * y,
            })
        }
        (Ty::M(_), Ty::V(..)) => <Vector<f32, N>>::wrap(g::<Mat<N, N>>(a) * g::<Vector<f32, N>>(b)),
        (Ty::V(..), Ty::M(_)) => <Vector<f32, N>>::wrap(g::<Vector<f32, N>>(a) * g::<Mat<N, N>>(b)),
        (Ty::M(_), Ty::S(_)) => <Mat<N, N>>::wrap(g::<Mat<N, N>>(a) * g::<f32>(b)),
        _ => <Mat<N, N>>::wrap(g::<f32>(a) * g::<Mat<N, N>>(b)),
    }
}

/// A binary operator (the types were checked by the analysis).
pub fn binary(op: Bin, a: &V, b: &V) -> V {
    let (ta, tb) = (a.ty(), b.ty());
    if let Some(n) = match (ta, tb) {
        (Ty::M(n), _) | (_, Ty::M(n)) => Some(n),
        _ => None,
    } {
        return with_mat!(Ty::M(n), N => matrix::<N>(op, a, b));
    }
    match op {
        Bin::And | Bin::Or | Bin::Xor | Bin::Shl | Bin::Shr => {
            with_int!(ta, T => bits::<T>(op, a, b))
        }
        _ if ta == tb => with_num!(ta, T => same::<T>(op, a, b)),
        _ => match (ta, tb) {
            (Ty::V(..), Ty::S(_)) => with_num_vec!(ta, S, N => vec_scalar::<S, N>(op, a, b, true)),
            _ => with_num_vec!(tb, S, N => vec_scalar::<S, N>(op, a, b, false)),
        },
    }
}

fn compare<T: ScalarOrVector + Dyn>(op: Cmp, a: &V, b: &V) -> V
where
    T::Bool: Dyn,
{
    let (x, y) = (g::<T>(a), g::<T>(b));
    T::Bool::wrap(match op {
        Cmp::Lt => x.lt(y),
        Cmp::Le => x.le(y),
        Cmp::Gt => x.gt(y),
        Cmp::Ge => x.ge(y),
        Cmp::Eq => x.eq(y),
        Cmp::Ne => x.ne(y),
    })
}

/// A comparison.
pub fn comparison(op: Cmp, a: &V, b: &V) -> V {
    with_sv!(a.ty(), T => compare::<T>(op, a, b))
}

/// `a.and(b)` / `a.or(b)`.
pub fn logic(and: bool, a: &V, b: &V) -> V {
    let (x, y) = (g::<bool>(a), g::<bool>(b));
    V::B1(if and { x.and(y) } else { x.or(y) })
}

/// `select(reject, accept, condition)`, or `condition.select(accept, reject)` for a vector
/// condition.
pub fn select_v(c: &V, accept: &V, reject: &V) -> V {
    if let Ty::S(_) = c.ty() {
        return with_sv!(accept.ty(), T => T::wrap(select(g::<T>(reject), g::<T>(accept), g::<bool>(c))));
    }
    with_vec!(accept.ty(), S, N => <Vector<S, N>>::wrap(
        g::<Vector<bool, N>>(c).select(g::<Vector<S, N>>(accept), g::<Vector<S, N>>(reject))
    ))
}

fn convert<T>(to: Scalar, a: &V) -> V
where
    T: Dyn
        + ScalarOrVector
        + Convert<f32>
        + Convert<i32>
        + Convert<u32>
        + Convert<bool>
        + Convert<f16>,
    <T as Convert<f32>>::Output: Dyn,
    <T as Convert<i32>>::Output: Dyn,
    <T as Convert<u32>>::Output: Dyn,
    <T as Convert<bool>>::Output: Dyn,
    <T as Convert<f16>>::Output: Dyn,
{
    let x = g::<T>(a);
    match to {
        Scalar::F32 => Dyn::wrap(x.to_f32()),
        Scalar::I32 => Dyn::wrap(x.to_i32()),
        Scalar::U32 => Dyn::wrap(x.to_u32()),
        Scalar::Bool => Dyn::wrap(x.to_bool()),
        Scalar::F16 => Dyn::wrap(x.to_f16()),
    }
}

/// `.to_f32()`, `.to_i32()`, `.to_u32()`, `.to_bool()`, `.to_f16()`.
pub fn to(to: Scalar, a: &V) -> V {
    with_sv!(a.ty(), T => convert::<T>(to, a))
}

/// `.bitcast::<S>()` between `i32`, `u32` and `f32` scalars or vectors of one width.
pub fn bitcast(to: Scalar, a: &V) -> V {
    fn one<S>(to: Scalar, x: Exp<S>) -> V
    where
        S: ScalarOrVector
            + wgsl_dsl::exp::Bitcast<f32>
            + wgsl_dsl::exp::Bitcast<i32>
            + wgsl_dsl::exp::Bitcast<u32>,
    {
        match to {
            Scalar::F32 => Dyn::wrap(x.bitcast::<f32>()),
            Scalar::I32 => Dyn::wrap(x.bitcast::<i32>()),
            _ => Dyn::wrap(x.bitcast::<u32>()),
        }
    }
    match a {
        V::F1(x) => one(to, x.clone()),
        V::I1(x) => one(to, x.clone()),
        V::U1(x) => one(to, x.clone()),
        _ => vector_bitcast(to, a),
    }
}

fn vector_bitcast(to: Scalar, a: &V) -> V {
    fn go<S: DslScalar + Dyn, const N: usize>(to: Scalar, x: Exp<Vector<S, N>>) -> V
    where
        D<N>: Dim,
        Vector<S, N>: wgsl_dsl::exp::Bitcast<Vector<f32, N>>
            + wgsl_dsl::exp::Bitcast<Vector<i32, N>>
            + wgsl_dsl::exp::Bitcast<Vector<u32, N>>,
        Vector<f32, N>: Dyn + ScalarOrVector,
        Vector<i32, N>: Dyn + ScalarOrVector,
        Vector<u32, N>: Dyn + ScalarOrVector,
    {
        match to {
            Scalar::F32 => Dyn::wrap(x.bitcast::<Vector<f32, N>>()),
            Scalar::I32 => Dyn::wrap(x.bitcast::<Vector<i32, N>>()),
            _ => Dyn::wrap(x.bitcast::<Vector<u32, N>>()),
        }
    }
    match a {
        V::F2(x) => go(to, x.clone()),
        V::F3(x) => go(to, x.clone()),
        V::F4(x) => go(to, x.clone()),
        V::I2(x) => go(to, x.clone()),
        V::I3(x) => go(to, x.clone()),
        V::I4(x) => go(to, x.clone()),
        V::U2(x) => go(to, x.clone()),
        V::U3(x) => go(to, x.clone()),
        V::U4(x) => go(to, x.clone()),
        other => panic!("fuzzer bug: bitcast of {:?}", other.ty()),
    }
}

/// `.to_i32_saturating()` / `.to_u32_saturating()`.
pub fn saturating(to: Scalar, a: &V) -> V {
    let x = g::<f32>(a);
    match to {
        Scalar::I32 => V::I1(x.to_i32_saturating()),
        _ => V::U1(x.to_u32_saturating()),
    }
}

/// `Exp::<vecN<S>>::splat(a)`.
pub fn splat(n: u8, a: &V) -> V {
    let Ty::S(s) = a.ty() else {
        panic!("fuzzer bug: splat of {:?}", a.ty())
    };
    with_vec!(Ty::V(s, n), S, N => <Vector<S, N>>::wrap(Exp::<Vector<S, N>>::splat(g::<S>(a))))
}

/// `vecN(parts..)` or `mat([columns..])`.
pub fn compose(parts: &[V]) -> V {
    let first = parts[0].ty();
    if let Ty::V(_, n) = first {
        return with_mat!(Ty::M(n), N => {
            let cols: [Exp<Vector<f32, N>>; N] = std::array::from_fn(|i| g::<Vector<f32, N>>(&parts[i]));
            <Mat<N, N>>::wrap(mat(cols))
        });
    }
    let Ty::S(s) = first else { unreachable!() };
    with_scalar!(s, S => match parts.len() {
        2 => <Vector<S, 2>>::wrap(vec2(g::<S>(&parts[0]), g::<S>(&parts[1]))),
        3 => <Vector<S, 3>>::wrap(vec3(g::<S>(&parts[0]), g::<S>(&parts[1]), g::<S>(&parts[2]))),
        _ => <Vector<S, 4>>::wrap(vec4(
            g::<S>(&parts[0]),
            g::<S>(&parts[1]),
            g::<S>(&parts[2]),
            g::<S>(&parts[3]),
        )),
    })
}

/// `.xy()` / `.xyz()`.
pub fn swizzle(n: u8, a: &V) -> V {
    if n == 2 {
        return with_vec!(a.ty(), S, N => <Vector<S, 2>>::wrap(g::<Vector<S, N>>(a).xy()));
    }
    let Ty::V(s, _) = a.ty() else { unreachable!() };
    with_scalar!(s, S => <Vector<S, 3>>::wrap(g::<Vector<S, 4>>(a).xyz()))
}

/// `.x()` .. `.w()`.
pub fn component(i: u8, a: &V) -> V {
    with_vec!(a.ty(), S, N => {
        let x = g::<Vector<S, N>>(a);
        match i {
            0 => S::wrap(x.x()),
            1 => S::wrap(x.y()),
            2 if N == 3 => S::wrap(g::<Vector<S, 3>>(a).z()),
            2 => S::wrap(g::<Vector<S, 4>>(a).z()),
            _ => S::wrap(g::<Vector<S, 4>>(a).w()),
        }
    })
}

/// `v.index(i)`.
pub fn index(v: &V, i: &V) -> V {
    with_vec!(v.ty(), S, N => {
        let x = g::<Vector<S, N>>(v);
        match i {
            V::I1(i) => S::wrap(x.index(i)),
            _ => S::wrap(x.index(g::<u32>(i))),
        }
    })
}

/// `array([..]).index(i)`.
pub fn array_pick(elems: &[V], i: &V) -> V {
    with_sv!(elems[0].ty(), T => {
        let arr = array::<T, 4>(std::array::from_fn(|k| g::<T>(&elems[k])));
        match i {
            V::I1(i) => T::wrap(arr.index(i)),
            _ => T::wrap(arr.index(g::<u32>(i))),
        }
    })
}

/// `.any()` / `.all()`.
pub fn any_all(any: bool, v: &V) -> V {
    V::B1(match v {
        V::B2(x) => {
            if any {
                x.any()
            } else {
                x.all()
            }
        }
        V::B3(x) => {
            if any {
                x.any()
            } else {
                x.all()
            }
        }
        V::B4(x) => {
            if any {
                x.any()
            } else {
                x.all()
            }
        }
        other => panic!("fuzzer bug: any/all of {:?}", other.ty()),
    })
}

fn split_of<T: FloatShape + Dyn>(part: Part, a: &V) -> V
where
    T::Int: Dyn,
{
    let x = g::<T>(a);
    match part {
        Part::ModfFract => T::wrap(modf(x).fract()),
        Part::ModfWhole => T::wrap(modf(x).whole()),
        Part::FrexpFract => T::wrap(frexp(x).fract()),
        Part::FrexpExp => <T::Int>::wrap(frexp(x).exp()),
    }
}

/// A part of `modf` or `frexp`.
pub fn split(part: Part, a: &V) -> V {
    with_float!(a.ty(), T => split_of::<T>(part, a))
}

fn float1<T: Float + Dyn>(fun: Fun, a: &V) -> V {
    let x = g::<T>(a);
    T::wrap(match fun {
        Fun::Exp => exp(x),
        Fun::Exp2 => exp2(x),
        Fun::Log => log(x),
        Fun::Log2 => log2(x),
        Fun::Sqrt => sqrt(x),
        Fun::InverseSqrt => inverse_sqrt(x),
        Fun::Sin => sin(x),
        Fun::Cos => cos(x),
        Fun::Tan => tan(x),
        Fun::Asin => asin(x),
        Fun::Acos => acos(x),
        Fun::Atan => atan(x),
        Fun::Sinh => sinh(x),
        Fun::Cosh => cosh(x),
        Fun::Tanh => tanh(x),
        Fun::Asinh => asinh(x),
        Fun::Acosh => acosh(x),
        Fun::Atanh => atanh(x),
        Fun::Floor => floor(x),
        Fun::Ceil => ceil(x),
        Fun::Round => round(x),
        Fun::Trunc => trunc(x),
        Fun::Fract => fract(x),
        Fun::Saturate => saturate(x),
        Fun::Radians => radians(x),
        Fun::Degrees => degrees(x),
        _ => panic!("fuzzer bug: {fun:?} as a float function"),
    })
}

fn float2<T: Float + Dyn>(fun: Fun, a: &[V]) -> V {
    let (x, y) = (g::<T>(&a[0]), g::<T>(&a[1]));
    T::wrap(match fun {
        Fun::Pow => pow(x, y),
        Fun::Atan2 => atan2(x, y),
        Fun::Step => step(x, y),
        _ => {
            let z = g::<T>(&a[2]);
            match fun {
                Fun::Mix => mix(x, y, z),
                Fun::Smoothstep => smoothstep(x, y, z),
                _ => fma(x, y, z),
            }
        }
    })
}

fn num<T: Numeric + Dyn>(fun: Fun, a: &[V]) -> V {
    let x = g::<T>(&a[0]);
    T::wrap(match fun {
        Fun::Abs => abs(x),
        Fun::Min => min(x, g::<T>(&a[1])),
        Fun::Max => max(x, g::<T>(&a[1])),
        Fun::Clamp => clamp(x, g::<T>(&a[1]), g::<T>(&a[2])),
        Fun::Square => square(x),
        Fun::Powi(n) => powi(x, n),
        _ => panic!("fuzzer bug: {fun:?} as a numeric function"),
    })
}

fn int1<T: Integer + Dyn>(fun: Fun, a: &[V]) -> V {
    let x = g::<T>(&a[0]);
    T::wrap(match fun {
        Fun::CountOneBits => count_one_bits(x),
        Fun::CountLeadingZeros => count_leading_zeros(x),
        Fun::CountTrailingZeros => count_trailing_zeros(x),
        Fun::FirstLeadingBit => first_leading_bit(x),
        Fun::FirstTrailingBit => first_trailing_bit(x),
        Fun::ReverseBits => reverse_bits(x),
        Fun::ExtractBits => extract_bits(x, g::<u32>(&a[1]), g::<u32>(&a[2])),
        _ => insert_bits(x, g::<T>(&a[1]), g::<u32>(&a[2]), g::<u32>(&a[3])),
    })
}

fn length_of<T: Float + Dyn>(fun: Fun, a: &[V]) -> V
where
    <T as Numeric>::Elem: Dyn,
{
    let x = g::<T>(&a[0]);
    <T as Numeric>::Elem::wrap(match fun {
        Fun::Length => length(x),
        _ => distance(x, g::<T>(&a[1])),
    })
}

fn float_vec<S: DslScalar + Float + Numeric<Elem = S> + Dyn, const N: usize>(fun: Fun, a: &[V]) -> V
where
    D<N>: Dim,
    Vector<S, N>: Dyn,
{
    let x = g::<Vector<S, N>>(&a[0]);
    <Vector<S, N>>::wrap(match fun {
        Fun::Normalize => normalize(x),
        Fun::FaceForward => face_forward(x, g::<Vector<S, N>>(&a[1]), g::<Vector<S, N>>(&a[2])),
        Fun::Reflect => reflect(x, g::<Vector<S, N>>(&a[1])),
        _ => refract(x, g::<Vector<S, N>>(&a[1]), g::<S>(&a[2])),
    })
}

fn dot_of<S: DslScalar + Numeric<Elem = S> + Dyn, const N: usize>(a: &[V]) -> V
where
    D<N>: Dim,
    Vector<S, N>: Dyn,
{
    S::wrap(dot(g::<Vector<S, N>>(&a[0]), g::<Vector<S, N>>(&a[1])))
}

/// A built-in function.
pub fn math(fun: Fun, a: &[V]) -> V {
    use Fun::*;
    let t = a[0].ty();
    match fun {
        Abs | Min | Max | Clamp | Square | Powi(_) => with_num!(t, T => num::<T>(fun, a)),
        Sign => with_signed!(t, T => T::wrap(sign(g::<T>(&a[0])))),
        Exp | Exp2 | Log | Log2 | Sqrt | InverseSqrt | Sin | Cos | Tan | Asin | Acos | Atan
        | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Floor | Ceil | Round | Trunc | Fract
        | Saturate | Radians | Degrees => with_float!(t, T => float1::<T>(fun, &a[0])),
        Pow | Atan2 | Step | Mix | Smoothstep | Fma => with_float!(t, T => float2::<T>(fun, a)),
        QuantizeToF16 => match &a[0] {
            V::F1(x) => V::F1(quantize_to_f16(x)),
            V::F2(x) => V::F2(quantize_to_f16(x)),
            V::F3(x) => V::F3(quantize_to_f16(x)),
            V::F4(x) => V::F4(quantize_to_f16(x)),
            other => panic!("fuzzer bug: quantizeToF16 of {:?}", other.ty()),
        },
        CountOneBits | CountLeadingZeros | CountTrailingZeros | FirstLeadingBit
        | FirstTrailingBit | ReverseBits | ExtractBits | InsertBits => {
            with_int!(t, T => int1::<T>(fun, a))
        }
        Dot => with_num_vec!(t, S, N => dot_of::<S, N>(a)),
        Cross => V::F3(cross(g::<Vec3<f32>>(&a[0]), g::<Vec3<f32>>(&a[1]))),
        Length | Distance => with_float!(t, T => length_of::<T>(fun, a)),
        Normalize | FaceForward | Reflect | Refract => {
            with_float_vec!(t, S, N => float_vec::<S, N>(fun, a))
        }
        Transpose => with_mat!(t, N => <Mat<N, N>>::wrap(transpose(g::<Mat<N, N>>(&a[0])))),
        Determinant => with_mat!(t, N => V::F1(determinant(g::<Mat<N, N>>(&a[0])))),
        Pack4x8snorm => V::U1(pack4x8snorm(g::<Vec4<f32>>(&a[0]))),
        Pack4x8unorm => V::U1(pack4x8unorm(g::<Vec4<f32>>(&a[0]))),
        Pack2x16snorm => V::U1(pack2x16snorm(g::<Vec2<f32>>(&a[0]))),
        Pack2x16unorm => V::U1(pack2x16unorm(g::<Vec2<f32>>(&a[0]))),
        Pack2x16float => V::U1(pack2x16float(g::<Vec2<f32>>(&a[0]))),
        Pack4xI8 => V::U1(pack4x_i8(g::<Vec4<i32>>(&a[0]))),
        Pack4xU8 => V::U1(pack4x_u8(g::<Vec4<u32>>(&a[0]))),
        Pack4xI8Clamp => V::U1(pack4x_i8_clamp(g::<Vec4<i32>>(&a[0]))),
        Pack4xU8Clamp => V::U1(pack4x_u8_clamp(g::<Vec4<u32>>(&a[0]))),
        Unpack4x8snorm => V::F4(unpack4x8snorm(g::<u32>(&a[0]))),
        Unpack4x8unorm => V::F4(unpack4x8unorm(g::<u32>(&a[0]))),
        Unpack2x16snorm => V::F2(unpack2x16snorm(g::<u32>(&a[0]))),
        Unpack2x16unorm => V::F2(unpack2x16unorm(g::<u32>(&a[0]))),
        Unpack2x16float => V::F2(unpack2x16float(g::<u32>(&a[0]))),
        Unpack4xI8 => V::I4(unpack4x_i8(g::<u32>(&a[0]))),
        Unpack4xU8 => V::U4(unpack4x_u8(g::<u32>(&a[0]))),
        Dot4I8Packed => V::I1(dot4_i8_packed(g::<u32>(&a[0]), g::<u32>(&a[1]))),
        Dot4U8Packed => V::U1(dot4_u8_packed(g::<u32>(&a[0]), g::<u32>(&a[1]))),
        Ldexp => with_float!(t, T => ldexp_of::<T>(a)),
    }
}

fn ldexp_of<T: FloatShape + Dyn>(a: &[V]) -> V
where
    T::Int: Dyn,
{
    T::wrap(ldexp(g::<T>(&a[0]), g::<T::Int>(&a[1])))
}

/// The constant value of `v` if the DSL folds it (oracle (d)).
pub fn eval_const(v: &V) -> Result<Option<wgsl_dsl::ConstValue>, BuildError> {
    with_ty!(v.ty(), T => g::<T>(v).eval_const())
}
