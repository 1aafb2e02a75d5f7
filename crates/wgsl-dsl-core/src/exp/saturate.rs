//! The saturating float-to-integer conversions ([`Exp::to_i32_saturating`],
//! [`Exp::to_u32_saturating`]): built from [`select`], so they sit above both `exp` and
//! `exp::builtins`.

use super::Exp;
use super::builtins::select;

impl Exp<f32> {
    /// Convert to `i32` as Rust's `x as i32` does, for every input: rounded toward zero, NaN
    /// gives 0, and anything at or beyond 2^31 in magnitude (infinities included) gives
    /// `i32::MAX` or `i32::MIN`. The defined counterpart of [`Exp::to_i32`], whose result for
    /// NaN is undefined (WGSL spec §15.7.6 "Floating Point Conversion"
    /// (#floating-point-conversion)) and whose clamp stops at 2147483520.
    ///
    /// NaN and the range are told from the bits (`bitcast<u32>(e)`, §17.2.1), not by float
    /// comparisons, which an implementation may evaluate assuming no NaN or infinity (Finite
    /// Math Assumption, §15.7.2); values in range use `i32(e)`, exact there (§15.7.6).
    #[track_caller]
    pub fn to_i32_saturating(&self) -> Exp<i32> {
        let bits = self.bitcast::<u32>();
        let magnitude = &bits & 0x7fff_ffffu32;
        // |e| < 2^31: the bits of 2^31 are 0x4f000000.
        let in_range = magnitude.lt(0x4f00_0000u32);
        let nan = magnitude.gt(0x7f80_0000u32);
        let negative = bits.ge(0x8000_0000u32);
        let beyond = select(i32::MAX, i32::MIN, negative);
        let special = select(beyond, 0i32, nan);
        select(special, self.to_i32(), in_range)
    }

    /// Convert to `u32` as Rust's `x as u32` does, for every input: rounded toward zero,
    /// negative values (`-0.0` and -infinity included) and NaN give 0, and anything at or
    /// beyond 2^32 (+infinity included) gives `u32::MAX`. The defined counterpart of
    /// [`Exp::to_u32`], whose result for NaN is undefined (WGSL spec §15.7.6) and whose clamp
    /// stops at 4294967040; computed from the bits as [`Exp::to_i32_saturating`] is.
    #[track_caller]
    pub fn to_u32_saturating(&self) -> Exp<u32> {
        let bits = self.bitcast::<u32>();
        let magnitude = &bits & 0x7fff_ffffu32;
        // 0 <= e < 2^32: the sign bit clear, below the bits of 2^32 (0x4f800000).
        let negative = bits.ge(0x8000_0000u32);
        let in_range = magnitude.lt(0x4f80_0000u32).and(negative.not());
        let zero = negative.or(magnitude.gt(0x7f80_0000u32));
        let special = select(u32::MAX, 0u32, zero);
        select(special, self.to_u32(), in_range)
    }
}
