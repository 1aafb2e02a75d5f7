//! The built-ins added for issue 13, written in `#[kernel]` syntax: `modf` and `frexp` with
//! their struct results read as fields (`m.fract`, `f.exp`, as in WGSL), `ldexp`, a pack and
//! an unpack, `dot4U8Packed`, `reflect`; checked on the GPU against the same arithmetic in
//! Rust. (Each built-in's own GPU-vs-CPU test is in the example registry: `packing`,
//! `float_parts`, `reflection`.)

#[path = "common/slots.rs"]
mod slots;

use rand::{Rng, SeedableRng};
use slots::{assert_slots_eq, dispatch_poisoned};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

const SLOTS: usize = 8;

#[kernel(workgroup_size = 64)]
fn parts(
    #[storage(read)] x: &[f32],
    #[storage(read_write)] out: &mut [u32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < x.len() {
        let v = x[i];
        let m = modf(v);
        let f = frexp(v);
        let o = i * 8;
        out[o] = m.fract.bitcast::<u32>();
        out[o + 1] = m.whole.bitcast::<u32>();
        out[o + 2] = f.fract.bitcast::<u32>();
        out[o + 3] = f.exp.bitcast::<u32>();
        out[o + 4] = ldexp(f.fract, f.exp + 1).bitcast::<u32>();
        let p = pack4x8unorm(vec4(m.fract.abs(), 0.5, 1.0, 0.0));
        out[o + 5] = p;
        out[o + 6] = dot4_u8_packed(p, p) + unpack4x8unorm(p).x.to_u32();
        out[o + 7] = reflect(vec2(v, 1.0), vec2(0.0, 1.0)).y.bitcast::<u32>();
    }
}

fn reference(x: &[f32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(x.len() * SLOTS);
    for &v in x {
        let fract = (v - v.trunc()).copysign(v);
        let (f, e) = if v == 0.0 {
            (v, 0)
        } else {
            let bits = v.to_bits();
            (
                f32::from_bits((bits & 0x807f_ffff) | (126 << 23)),
                ((bits >> 23) & 0xff) as i32 - 126,
            )
        };
        // fract is a multiple of 1/8: 255 * fract is exact, and 127.5 rounds to 128 both by
        // floor(0.5 + x) (the spec) and to even.
        let b0 = (0.5 + 255.0 * fract.abs()).floor() as u32;
        let p = b0 | (128 << 8) | (255 << 16);
        let dot = b0 * b0 + 128 * 128 + 255 * 255;
        out.extend([
            fract.to_bits(),
            v.trunc().to_bits(),
            f.to_bits(),
            e as u32,
            (v * 2.0).to_bits(),
            p,
            dot + (b0 as f32 / 255.0) as u32,
            // reflect((v, 1), (0, 1)) = (v, 1) - 2 * 1 * (0, 1).
            (-1.0f32).to_bits(),
        ]);
    }
    out
}

#[test]
fn new_builtins_in_kernel_syntax_match_rust_on_the_gpu() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe)");
    let kernel = gpu.compile_typed(Parts).expect("compiles");
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    for n in [1usize, 37, 129] {
        // Multiples of 1/8 of either sign, zero among them.
        let mut x: Vec<f32> = (0..n)
            .map(|_| rng.random_range(-400i32..400) as f32 / 8.0)
            .collect();
        x[0] = if n == 1 { -7.0 } else { 0.0 };
        let xb = GpuBuffer::from_slice(&gpu, &x).expect("upload");
        let got = dispatch_poisoned(&gpu, n * SLOTS, 0xdead_beefu32, |out| {
            kernel.dispatch(&gpu, PartsArgs { x: &xb, out }, [n as u32, 1, 1])
        });
        let want = reference(&x);
        assert_slots_eq(&got, &want, SLOTS, |inv| format!("n = {n}, x = {}", x[inv]));
    }
}
