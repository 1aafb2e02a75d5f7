//! Kernels written with `#[kernel]` produce exactly the WGSL (and the signature) of the same
//! kernels written with `KernelBuilder` calls.

use wgsl_dsl::prelude::*;

fn assert_same(from_macro: KernelBuilder, from_builder: KernelBuilder) {
    let a = from_macro.build().expect("#[kernel] version builds");
    let b = from_builder.build().expect("builder version builds");
    assert_eq!(a.wgsl, b.wgsl, "WGSL differs");
    let (sa, sb) = (&a.signature, &b.signature);
    assert_eq!(sa.name, sb.name);
    assert_eq!(sa.workgroup_size, sb.workgroup_size);
    assert_eq!(sa.workgroup_memory, sb.workgroup_memory);
    // Bindings agree in everything but their call sites (the Rust lines that declared them).
    let strip = |s: &wgsl_dsl::KernelSignature| {
        s.bindings
            .iter()
            .map(|b| (b.name.clone(), b.group, b.binding, b.kind, b.ty.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(sa), strip(sb));
    assert!(!sa.bindings.is_empty());
}

// ---- 1. axpy: uniform scalar, storage buffers, built-in, `if` ----

// The kernel of the typed_* UI cases of `wgsl-dsl`.
include!("../../wgsl-dsl/tests/ui/compile_fail/support/axpy.rs");

fn axpy_builder() -> KernelBuilder {
    let mut k = KernelBuilder::new("axpy", [64, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let gid = global_invocation_id();
    let i = k.let_("i", gid.x());
    k.if_(i.lt(y.len()), |k| {
        k.store(&y.at(&i), a.load() * x.at(&i).load() + y.at(&i).load());
    });
    k
}

#[test]
fn axpy_matches_builder() {
    assert_same(axpy(), axpy_builder());
}

// ---- 2. Adam update: a derived uniform struct, early return, compound assignment ----

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Adam {
    lr: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    len: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// `def`: the generated definition would otherwise be named `Adam`, like the uniform struct.
#[kernel(workgroup_size = 64, def = AdamKernel)]
fn adam(
    #[uniform] hp: Adam,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[storage(read_write)] m: &mut [f32],
    #[storage(read_write)] v: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i >= hp.len {
        return;
    }
    let g = grads[i];
    let m1 = hp.beta1 * m[i] + (1.0 - hp.beta1) * g;
    let v1 = hp.beta2 * v[i] + (1.0 - hp.beta2) * g * g;
    m[i] = m1;
    v[i] = v1;
    params[i] -= hp.lr * m1 / (v1.sqrt() + hp.epsilon);
}

fn adam_builder() -> KernelBuilder {
    let mut k = KernelBuilder::new("adam", [64, 1, 1]);
    let hp = k.uniform::<Adam>("hp");
    let grads = k.storage::<RuntimeArray<f32>, ReadOnly>("grads");
    let params = k.storage::<RuntimeArray<f32>, ReadWrite>("params");
    let m = k.storage::<RuntimeArray<f32>, ReadWrite>("m");
    let v = k.storage::<RuntimeArray<f32>, ReadWrite>("v");
    let gid = global_invocation_id();
    let i = k.let_("i", gid.x());
    k.if_(i.ge(hp.len().load()), |k| k.return_());
    let g = k.let_("g", grads.at(&i).load());
    let m1 = k.let_(
        "m1",
        hp.beta1().load() * m.at(&i).load() + (1.0 - hp.beta1().load()) * &g,
    );
    let v1 = k.let_(
        "v1",
        hp.beta2().load() * v.at(&i).load() + (1.0 - hp.beta2().load()) * &g * &g,
    );
    k.store(&m.at(&i), m1.clone());
    k.store(&v.at(&i), v1.clone());
    k.update(&params.at(&i), |old| {
        old - hp.lr().load() * &m1 / (sqrt(v1.clone()) + hp.epsilon().load())
    });
    k
}

#[test]
fn adam_matches_builder() {
    assert_same(adam(), adam_builder());
}

// ---- 3. Workgroup reduction: workgroup memory, barriers, strided loops, `let mut`, while ----

#[kernel(workgroup_size = [WG as u32, 1, 1])]
fn block_sum<const WG: usize>(
    #[storage(read)] input: &[f32],
    #[storage(read_write)] sums: &mut [f32],
    #[workgroup] partial: &mut [f32; WG],
    #[builtin(local_invocation_id)] lid: Vec3<u32>,
    #[builtin(workgroup_id)] wid: Vec3<u32>,
    #[builtin(num_workgroups)] groups: Vec3<u32>,
) {
    let t = lid.x;
    let mut acc = 0.0;
    for j in (wid.x * WG as u32 + t..input.len()).step_by(groups.x * WG as u32) {
        acc += input[j];
    }
    partial[t] = acc;
    workgroup_barrier();
    let mut half = WG as u32 / 2;
    while half > 0 {
        if t < half {
            partial[t] += partial[t + half];
        }
        workgroup_barrier();
        half >>= 1u32;
    }
    if t == 0 {
        sums[wid.x] = partial[0u32];
    }
}

fn block_sum_builder<const WG: usize>() -> KernelBuilder {
    let wg = WG as u32;
    let mut k = KernelBuilder::new("block_sum", [wg, 1, 1]);
    let input = k.storage::<RuntimeArray<f32>, ReadOnly>("input");
    let sums = k.storage::<RuntimeArray<f32>, ReadWrite>("sums");
    let partial = k.workgroup::<Array<f32, WG>>("partial");
    let (lid, wid, groups) = (local_invocation_id(), workgroup_id(), num_workgroups());
    let t = k.let_("t", lid.x());
    let acc = k.var("acc", 0.0f32);
    k.for_step(
        "j",
        wid.x() * wg + &t,
        input.len(),
        groups.x() * wg,
        |k, j| k.update(&acc, |old| old + input.at(&j).load()),
    );
    k.store(&partial.at(&t), acc.load());
    k.workgroup_barrier();
    let half = k.var("half", wg / 2);
    k.while_(half.load().gt(0u32), |k| {
        k.if_(t.lt(half.load()), |k| {
            k.update(&partial.at(&t), |old| {
                old + partial.at(&t + half.load()).load()
            })
        });
        k.workgroup_barrier();
        k.update(&half, |old| old >> 1u32);
    });
    k.if_(t.eq(0u32), |k| {
        k.store(&sums.at(wid.x()), partial.at(0u32).load())
    });
    k
}

#[test]
fn block_sum_matches_builder() {
    assert_same(block_sum::<64>(), block_sum_builder::<64>());
    assert_same(block_sum::<128>(), block_sum_builder::<128>());
}

// ---- 4. Row softmax: helper function, casts, nested loops, a baked Rust parameter ----

#[kernel(helper)]
fn scaled_exp(x: f32, shift: f32, scale: f32) -> f32 {
    exp((x - shift) * scale)
}

#[kernel(workgroup_size = 32)]
fn softmax(
    #[storage(read)] logits: &[f32],
    #[storage(read_write)] probs: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
    cols: u32,
    temperature: f32,
) {
    let row = gid.x;
    if row * cols >= logits.len() {
        return;
    }
    let base = row * cols;
    let mut hi = logits[base];
    for c in 1..cols {
        hi = max(hi, logits[base + c]);
    }
    let mut total = 0.0;
    for c in 0..cols {
        let e = scaled_exp(logits[base + c], hi, 1.0 / temperature);
        probs[base + c] = e;
        total += e;
    }
    for c in 0..cols {
        probs[base + c] /= total * (cols as f32 / 2.0);
    }
}

fn softmax_builder(cols: u32, temperature: f32) -> KernelBuilder {
    let mut k = KernelBuilder::new("softmax", [32, 1, 1]);
    let f = k.function::<(f32, f32, f32), f32>(
        "scaled_exp",
        ["x", "shift", "scale"],
        |_k, (x, shift, scale)| exp((x - shift) * scale),
    );
    let logits = k.storage::<RuntimeArray<f32>, ReadOnly>("logits");
    let probs = k.storage::<RuntimeArray<f32>, ReadWrite>("probs");
    let gid = global_invocation_id();
    let row = k.let_("row", gid.x());
    k.if_((&row * cols).ge(logits.len()), |k| k.return_());
    let base = k.let_("base", &row * cols);
    let hi = k.var("hi", logits.at(&base).load());
    k.for_range("c", 1u32, cols, |k, c| {
        k.store(&hi, max(hi.load(), logits.at(&base + &c).load()));
    });
    let total = k.var("total", 0.0f32);
    k.for_range("c", 0u32, cols, |k, c| {
        let r = k.call(
            &f,
            (
                logits.at(&base + &c).load(),
                hi.load(),
                lit(1.0f32 / temperature),
            ),
        );
        let e = k.let_("e", r);
        k.store(&probs.at(&base + &c), e.clone());
        k.update(&total, |old| old + e);
    });
    k.for_range("c", 0u32, cols, |k, c| {
        k.update(&probs.at(&base + &c), |old| {
            old / (total.load() * (cols as f32 / 2.0))
        });
    });
    k
}

#[test]
fn softmax_matches_builder() {
    assert_same(softmax(10, 0.5), softmax_builder(10, 0.5));
}

#[test]
fn helper_is_a_reusable_builder_function() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let f = scaled_exp(&mut k);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let r = k.call(&f, (lit(1.0f32), lit(0.5f32), lit(2.0f32)));
    k.store(&out.at(0u32), r);
    let wgsl = k.build().expect("builds").wgsl;
    assert!(
        wgsl.contains("fn scaled_exp(x: f32, shift: f32, scale: f32) -> f32"),
        "{wgsl}"
    );
}

// ---- 5. Subgroup and quad operations, workgroupUniformLoad ----

#[kernel(workgroup_size = 64)]
fn subgroup_mix(
    #[storage(read)] input: &[u32],
    #[storage(read_write)] out: &mut [u32],
    #[workgroup] count: &mut [u32; 1],
    #[builtin(local_invocation_index)] lid: u32,
) {
    let v = input[lid];
    if lid == 0 {
        count[0u32] = v;
    }
    let n = workgroup_uniform_load(count[0u32]);
    let ballot = subgroup_ballot(v > n);
    let all = subgroup_all(v > 0);
    let any = subgroup_any(v == n);
    let first = subgroup_elect();
    let scan = subgroup_inclusive_add(v) + subgroup_exclusive_mul(v) + subgroup_inclusive_mul(v);
    let bits = subgroup_and(v) ^ subgroup_or(v) ^ subgroup_xor(v) ^ subgroup_mul(v);
    let moved = subgroup_broadcast(v, 3u32)
        + subgroup_shuffle_xor(v, 1u32)
        + subgroup_shuffle_up(v, 1u32)
        + subgroup_shuffle_down(v, 2u32);
    let quad = quad_broadcast(v, 1u32) + quad_swap_x(v) + quad_swap_y(v) + quad_swap_diagonal(v);
    out[lid] = ballot.x
        + scan
        + bits
        + moved
        + quad
        + all.select(1u32, 0u32)
        + any.select(2u32, 0u32)
        + first.select(4u32, 0u32);
}

fn subgroup_mix_builder() -> KernelBuilder {
    let mut k = KernelBuilder::new("subgroup_mix", [64, 1, 1]);
    let input = k.storage::<RuntimeArray<u32>, ReadOnly>("input");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let count = k.workgroup::<Array<u32, 1>>("count");
    let lid = local_invocation_index();
    let v = k.let_("v", input.at(&lid).load());
    k.if_(lid.eq(0u32), |k| k.store(&count.at(0u32), v.clone()));
    let n = k.workgroup_uniform_load(&count.at(0u32));
    let n = k.let_("n", n);
    let ballot = k.subgroup_ballot(v.gt(&n));
    let ballot = k.let_("ballot", ballot);
    let all = k.subgroup_all(v.gt(0u32));
    let all = k.let_("all", all);
    let any = k.subgroup_any(v.eq(&n));
    let any = k.let_("any", any);
    let first = k.subgroup_elect();
    let first = k.let_("first", first);
    let (a, b, c) = (
        k.subgroup_inclusive_add(&v),
        k.subgroup_exclusive_mul(&v),
        k.subgroup_inclusive_mul(&v),
    );
    let scan = k.let_("scan", a + b + c);
    let (a, b, c, d) = (
        k.subgroup_and(&v),
        k.subgroup_or(&v),
        k.subgroup_xor(&v),
        k.subgroup_mul(&v),
    );
    let bits = k.let_("bits", a ^ b ^ c ^ d);
    let (a, b, c, d) = (
        k.subgroup_broadcast(&v, 3u32),
        k.subgroup_shuffle_xor(&v, 1u32),
        k.subgroup_shuffle_up(&v, 1u32),
        k.subgroup_shuffle_down(&v, 2u32),
    );
    let moved = k.let_("moved", a + b + c + d);
    let (a, b, c, d) = (
        k.quad_broadcast(&v, 1u32),
        k.quad_swap_x(&v),
        k.quad_swap_y(&v),
        k.quad_swap_diagonal(&v),
    );
    let quad = k.let_("quad", a + b + c + d);
    k.store(
        &out.at(&lid),
        ballot.x()
            + scan
            + bits
            + moved
            + quad
            + all.select(1u32, 0u32)
            + any.select(2u32, 0u32)
            + first.select(4u32, 0u32),
    );
    k
}

#[test]
fn subgroup_operations_match_builder() {
    assert_same(subgroup_mix(), subgroup_mix_builder());
}
