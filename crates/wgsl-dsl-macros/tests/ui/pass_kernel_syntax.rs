//! Every statement and expression form `#[kernel]` accepts, built and validated by naga. The
//! expansion triggers no lint (`deny(warnings)`), parentheses included.
#![deny(warnings)]
use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Params {
    scale: f32,
    n: u32,
    shift: i32,
    _pad: u32,
    #[wgsl(vec)]
    offset: [f32; 4],
}

const LIMIT: u32 = 7;

#[kernel(helper)]
fn smooth(x: f32, k: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    let y = x * k;
    y / (1.0 + y.abs())
}

#[kernel(workgroup_size = [8, 8], name = "everything")]
fn all_forms<const TILE: usize>(
    #[uniform] p: Params,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[storage(read_write)] counts: &mut [Atomic<u32>],
    #[workgroup] tile: &mut [f32; TILE],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
    #[builtin(local_invocation_index)] lidx: u32,
    bias: f32,
) {
    let i = gid.x + gid.y * 8u32;
    // The barrier comes before the early return: every invocation reaches it (uniform
    // control flow, checked by `build`).
    tile[lidx % TILE as u32] = bias;
    workgroup_barrier();
    if i >= y.len() || !(i < p.n) {
        return;
    }
    let v = x[i];
    let mut acc: f32 = 0.0;
    for j in 0..LIMIT {
        if j == 3 {
            continue;
        } else if j > 5 && v > 0.5 {
            break;
        } else {
            acc += smooth(v, j as f32);
        }
    }
    for j in (1..9u32).step_by(2) {
        acc -= (j as f32).sqrt() * 0.25;
    }
    let mut bits = i ^ 0x5555u32;
    bits <<= 1u32;
    bits |= i & 3;
    let mut steps = 0u32;
    while steps < 4 {
        steps += 1;
    }
    loop {
        steps -= 1;
        if steps == 0 {
            break;
        }
    }
    let signed = (i as i32 - p.shift).abs();
    let w = vec4(v, acc, bias, 1.0);
    let old = counts[i % 4].atomic_add(1u32);
    let m = max(acc.clamp(-1.0, 1.0), -(v * p.scale).exp()).mul_add(2.0, bias);
    y[i] = m + dot(w, p.offset) + w.x + signed as f32 + old as f32 + (bits % 3) as f32
        + select(0.0, 1.0, v > 0.0);
}

#[kernel(helper)]
fn sign_of(x: i32) -> i32 {
    if x > 0 { 1 } else if x < 0 { -1 } else { 0 }
}

/// The forms of issue 13: ranges of any integer type, `match`, `if` values, `#[unroll]`.
#[kernel(workgroup_size = 64)]
fn layer1(
    #[storage(read)] x: &[i32],
    #[storage(read_write)] y: &mut [i32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    let a = x[i];
    let mut acc = 0;
    for d in -1..=1 {
        acc += (a + d - 1).clamp(-5, 5);
    }
    for j in (a..a + 4).rev().step_by(2) {
        acc += j;
    }
    for j in (0u32..i).step_by(3).rev() {
        acc += j as i32;
    }
    #[unroll]
    for t in 0..3 {
        acc += x[(i + t) % x.len()];
    }
    let kind = match a {
        0 => 1,
        -4..=-1 | 7 => 2,
        _ => 3,
    };
    match kind {
        1 => acc *= 2,
        _ => {}
    }
    let v = if acc > 3 { acc } else { kind };
    y[i] = v + sign_of(a) + (if a > 0 { a } else { -a });
}

fn main() {
    let shader = layer1().build().expect("validates");
    assert_eq!(shader.signature.entry_point, "layer1_");
    let shader = all_forms::<64>(0.5).build().expect("validates");
    // `smooth` is reserved in WGSL: naga renames it.
    assert!(shader.wgsl.contains("fn smooth_(x: f32, k: f32) -> f32"), "{}", shader.wgsl);
    assert!(shader.wgsl.contains("fn everything("), "{}", shader.wgsl);
    assert_eq!(shader.signature.bindings.len(), 4);
    assert_eq!(shader.signature.workgroup_size, [8, 8, 1]);
}
