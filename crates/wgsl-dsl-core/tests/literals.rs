//! Literals survive emission bit-exactly: every finite `f32` (subnormals, `-0.0`, `f32::MAX`),
//! every `i32` (`i32::MIN` included) and every `u32` is written by naga's WGSL backend in a form
//! that naga's WGSL front end reads back to the same bits.

use proptest::prelude::*;
use wgsl_dsl_core::prelude::*;

/// Build a kernel storing `value` and return the literal values the re-parsed WGSL contains.
fn roundtrip<T: wgsl_dsl_core::exp::Literal>(value: T) -> Vec<naga::Literal> {
    let mut k = KernelBuilder::new("literal", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<T>, ReadWrite>("out");
    k.store(&out.at(0u32), lit(value));
    let shader = k.build().expect("finite literals build");
    let module = naga::front::wgsl::parse_str(&shader.wgsl).unwrap_or_else(|e| {
        panic!(
            "re-parse failed:\n{}\n{}",
            shader.wgsl,
            e.emit_to_string(&shader.wgsl)
        )
    });
    let f = &module.entry_points[0].function;
    f.expressions
        .iter()
        .filter_map(|(_, e)| match e {
            naga::Expression::Literal(l) => Some(*l),
            _ => None,
        })
        .collect()
}

fn f32_roundtrips(v: f32) {
    let lits = roundtrip(v);
    assert!(
        lits.iter()
            .any(|l| matches!(l, naga::Literal::F32(x) if x.to_bits() == v.to_bits())),
        "{v:e} (bits {:#010x}) came back as {lits:?}",
        v.to_bits()
    );
}

fn i32_roundtrips(v: i32) {
    let lits = roundtrip(v);
    assert!(
        lits.contains(&naga::Literal::I32(v)),
        "{v} came back as {lits:?}"
    );
}

#[test]
fn edge_f32_values_roundtrip() {
    for v in [
        0.0,
        -0.0,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),           // smallest subnormal
        f32::from_bits(0x007f_ffff), // largest subnormal
        -f32::from_bits(1),
        f32::EPSILON,
        1.0 / 3.0,
        0.1,
        16_777_217.0,
    ] {
        f32_roundtrips(v);
    }
}

#[test]
fn edge_i32_and_u32_values_roundtrip() {
    for v in [0, 1, -1, i32::MAX, i32::MIN, i32::MIN + 1] {
        i32_roundtrips(v);
    }
    for v in [0u32, 1, u32::MAX, 1 << 31] {
        assert!(roundtrip(v).contains(&naga::Literal::U32(v)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_finite_f32_roundtrips(bits in any::<u32>()) {
        let v = f32::from_bits(bits);
        prop_assume!(v.is_finite());
        f32_roundtrips(v);
    }

    #[test]
    fn every_i32_roundtrips(v in any::<i32>()) {
        i32_roundtrips(v);
    }
}
