//! The subgroup and quad operations on the GPU against a CPU specification over the active
//! invocations of each subgroup: one kernel records, per invocation, its subgroup id, a key
//! of its subgroup (`subgroupBroadcastFirst` of the global index) and every operation's
//! result; the reference groups the invocations by key and computes each operation from the
//! definitions of WGSL spec §17.13-§17.14. 101 of 128 invocations are active, so the last
//! subgroups are partial (lavapipe's subgroups have 8 invocations). Gathers are checked
//! where their source invocation is active (elsewhere WGSL leaves them undefined).

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use wgsl_dsl::runtime::{Gpu, GpuBuffer, wgpu};

use wgsl_dsl_workspace_tests::blocks::{SUBGROUP_SLOTS as SLOTS, subgroup_ops};

/// Expected slot values of invocation `me` among its subgroup's active invocations `group`
/// (`(subgroup id, global index)`, sorted by id); `None` where WGSL leaves it undefined.
fn expected(group: &[(u32, usize)], me: usize, x: &[u32]) -> Vec<Option<u32>> {
    let sid = group.iter().find(|(_, i)| *i == me).expect("member").0;
    let value = |lane: u32| group.iter().find(|(s, _)| *s == lane).map(|(_, i)| x[*i]);
    let small = |i: usize| x[i] % 3 + 1;
    let upto: Vec<usize> = group
        .iter()
        .filter(|(s, _)| *s <= sid)
        .map(|g| g.1)
        .collect();
    let below: Vec<usize> = group
        .iter()
        .filter(|(s, _)| *s < sid)
        .map(|g| g.1)
        .collect();
    let all: Vec<usize> = group.iter().map(|g| g.1).collect();
    let product = |is: &[usize]| is.iter().fold(1u32, |p, &i| p.wrapping_mul(small(i)));
    let mut ballot = [0u32; 4];
    for (s, i) in group {
        if x[*i] & 1 == 1 {
            ballot[(*s / 32) as usize] |= 1 << (s % 32);
        }
    }
    let quad = sid & !3;
    vec![
        Some(sid),
        Some(group[0].1 as u32),
        Some(upto.iter().fold(0u32, |s, &i| s.wrapping_add(x[i]))),
        Some(product(&upto)),
        Some(product(&below)),
        Some(product(&all)),
        Some(all.iter().fold(u32::MAX, |a, &i| a & x[i])),
        Some(all.iter().fold(0, |a, &i| a | x[i])),
        Some(all.iter().fold(0, |a, &i| a ^ x[i])),
        Some(u32::from(all.iter().all(|&i| x[i] > 50))),
        Some(u32::from(all.iter().any(|&i| x[i] > 95))),
        Some(ballot[0]),
        Some(ballot[1]),
        Some(ballot[2]),
        Some(ballot[3]),
        Some(u32::from(sid == group[0].0)),
        value(0),
        value(sid ^ 1),
        sid.checked_sub(1).and_then(value),
        value(sid + 1),
        value(quad | 1),
        value(sid ^ 1),
        value(sid ^ 2),
        value(sid ^ 3),
    ]
}

#[test]
fn subgroup_and_quad_operations_match_their_definitions() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe)");
    let shader = subgroup_ops()
        .build()
        .expect("builds for the default target");
    assert!(shader.wgsl.contains("subgroupBallot("), "{}", shader.wgsl);
    assert!(shader.wgsl.contains("quadSwapDiagonal("), "{}", shader.wgsl);
    if !gpu.features().contains(wgpu::Features::SUBGROUP) {
        eprintln!("adapter has no subgroups: build-only check");
        return;
    }
    let kernel = gpu
        .compile(
            &subgroup_ops()
                .build_for(&gpu.target_limits())
                .expect("builds"),
        )
        .expect("compiles");
    let n = 101usize;
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..100)).collect();
    let nb = GpuBuffer::from_value(&gpu, n as u32).expect("upload");
    let xb = GpuBuffer::from_slice(&gpu, &x).expect("upload");
    let out =
        GpuBuffer::from_slice(&gpu, &vec![0xDEAD_BEEFu32; 128 * SLOTS as usize]).expect("poisoned");
    gpu.dispatch(&kernel, &[&nb, &xb, &out], [2, 1, 1])
        .expect("dispatch");
    let got = out.read(&gpu).expect("read back");
    let slot = |i: usize, s: usize| got[i * SLOTS as usize + s];
    // Group the active invocations by subgroup (their key), ordered by subgroup id.
    let mut groups: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
    for i in 0..n {
        groups.entry(slot(i, 1)).or_default().push((slot(i, 0), i));
    }
    let mut checked = 0;
    for group in groups.values_mut() {
        group.sort_unstable();
        for &(_, i) in group.iter() {
            for (s, want) in expected(group, i, &x).into_iter().enumerate() {
                if let Some(want) = want {
                    assert_eq!(
                        slot(i, s),
                        want,
                        "invocation {i}, slot {s}, group {group:?}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > n * 20, "only {checked} values were defined");
}
