//! `HostBuffer::view` (and the runtime's `GpuBuffer::view`, the same checks): a buffer of
//! scalars bound as `array<U>`, each element the bytes of `per` scalars, e.g. `f16` read
//! sixteen bytes at a time as `vec4<u32>` or as `array<vec4<f16>, 2>`.

use half::f16;
use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::prelude::*;

/// `out[i] = f32(x[i])` for the 16 `f16` of `x`, read as two 16-byte elements of `U`.
fn run<U: WgslType>(k: &KernelBuilder, x: &HostBuffer<f16>, per: usize) -> Vec<f32> {
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let out = HostBuffer::from_slice(&[f32::NAN; 16]);
    let view = x.view::<U>(per).unwrap();
    cpu.dispatch(&program, &[&view, &out], [1, 1, 1]).unwrap();
    out.read()
}

fn values() -> (Vec<f16>, Vec<f32>) {
    let want: Vec<f32> = (0..16).map(|i| i as f32 * 0.5 - 3.25).collect();
    (want.iter().map(|&v| f16::from_f32(v)).collect(), want)
}

#[test]
fn f16_read_as_u32_words_unpacks_to_the_same_values() {
    let mut k = KernelBuilder::new("words", [2, 1, 1]);
    let x = k.storage::<RuntimeArray<Vec4<u32>>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", local_invocation_index());
    let w = k.let_("w", x.at(&i).load());
    for (j, part) in [w.x(), w.y(), w.z(), w.w()].into_iter().enumerate() {
        let h = k.let_(&format!("h{j}"), unpack2x16float(part));
        let at = &i * 8u32 + 2 * j as u32;
        k.store(&out.at(at.clone()), h.x());
        k.store(&out.at(at + 1u32), h.y());
    }
    let (xs, want) = values();
    let got = run::<Vec4<u32>>(&k, &HostBuffer::from_slice(&xs), 8);
    assert_eq!(got, want);
}

#[test]
fn f16_read_as_pairs_of_vec4_gives_the_same_values() {
    let mut k = KernelBuilder::new("pairs", [2, 1, 1]);
    let x = k.storage::<RuntimeArray<Array<Vec4<f16>, 2>>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", local_invocation_index());
    let pair = k.let_("pair", x.at(&i).load());
    for h in 0..2u32 {
        let v = k.let_(&format!("v{h}"), pair.index(h).to_f32());
        for (j, c) in [v.x(), v.y(), v.z(), v.w()].into_iter().enumerate() {
            k.store(&out.at(&i * 8u32 + (4 * h + j as u32)), c);
        }
    }
    let (xs, want) = values();
    let got = run::<Array<Vec4<f16>, 2>>(&k, &HostBuffer::from_slice(&xs), 8);
    assert_eq!(got, want);
}

#[test]
fn a_view_needs_whole_elements_and_the_wgsl_stride() {
    let x = HostBuffer::from_slice(&[f16::ONE; 12]);
    let err = x.view::<Vec4<u32>>(8).unwrap_err();
    assert!(err.to_string().contains("HostBuffer::view"), "{err}");
    assert!(x.view::<Vec4<u32>>(0).is_err());
    // 4 f16 are 8 bytes, `vec4<u32>` 16: the dispatch refuses the stride.
    let mut k = KernelBuilder::new("copy_words", [1, 1, 1]);
    let src = k.storage::<RuntimeArray<Vec4<u32>>, ReadOnly>("x");
    let dst = k.storage::<RuntimeArray<Vec4<u32>>, ReadWrite>("y");
    k.store(&dst.at(0u32), src.at(0u32).load());
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let y = HostBuffer::from_slice(&[0u32; 4]);
    let wrong = x.view::<Vec4<u32>>(4).unwrap();
    let err = cpu.dispatch(
        &program,
        &[&wrong, &y.view::<Vec4<u32>>(4).unwrap()],
        [1, 1, 1],
    );
    let err = err.unwrap_err().to_string();
    assert!(err.contains("stride") || err.contains("bytes"), "{err}");
}
