//! The static uniformity check of `build()` (WGSL spec §15.2): barriers and subgroup
//! operations in non-uniform control flow are rejected with the Rust call sites of the
//! operation, of the branch and of the non-uniform value; uniform kernels build.

use wgsl_dsl_core::prelude::*;
use wgsl_dsl_core::{BuildError, NonUniformControlFlow};

fn rejected(k: &KernelBuilder) -> Box<NonUniformControlFlow> {
    match k.build() {
        Err(BuildError::NonUniformControlFlow(e)) => e,
        Err(other) => panic!("expected a uniformity error, got {other}"),
        Ok(_) => panic!("kernel `{}` built", k.name()),
    }
}

fn line(site: Option<wgsl_dsl_core::CallSite>) -> u32 {
    let s = site.expect("a call site");
    assert_eq!(s.file, file!());
    s.line
}

#[test]
fn uniform_loops_and_branches_around_barriers_build() {
    let mut k = KernelBuilder::new("uniform_flow", [64, 1, 1]);
    let n = k.uniform::<u32>("n");
    let data = k.storage::<RuntimeArray<f32>, ReadWrite>("data");
    let tile = k.workgroup::<Array<f32, 64>>("tile");
    let l = k.let_("l", local_invocation_index());
    let g = k.let_("g", global_invocation_id().x());
    // A loop whose bound comes from a uniform buffer, counter stepped uniformly.
    k.for_range("t", 0u32, n.load(), |k, _| {
        // Non-uniform branches that close before the barrier are fine.
        k.if_(g.lt(data.len()), |k| {
            k.store(&tile.at(&l), data.at(&g).load())
        });
        k.workgroup_barrier();
        k.if_(workgroup_id().x().eq(0u32), |k| k.storage_barrier());
    });
    let stride = k.var("stride", 32u32);
    k.while_(stride.load().gt(0u32), |k| {
        k.workgroup_barrier();
        k.update(&stride, |s| s / 2u32);
    });
    k.build().unwrap();
}

#[test]
fn a_barrier_after_a_non_uniform_return_is_rejected() {
    let mut k = KernelBuilder::new("early_return", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
    let value = line!() + 1;
    let i = k.let_("i", global_invocation_id().x());
    let branch = line!() + 1;
    k.if_(i.ge(x.len()), |k| k.return_());
    let barrier = line!() + 1;
    k.workgroup_barrier();
    let e = rejected(&k);
    assert_eq!(e.operation, "workgroupBarrier");
    assert_eq!(line(e.site), barrier);
    assert_eq!(line(e.branch), branch);
    assert_eq!(line(e.value), value);
    assert_eq!(e.value_kind, "global_invocation_id");
    let msg = BuildError::NonUniformControlFlow(e).to_string();
    assert!(
        msg.contains(&format!("workgroupBarrier at {}:{barrier}:", file!())),
        "{msg}"
    );
}

#[test]
fn a_loop_with_a_per_invocation_trip_count_is_rejected() {
    let mut k = KernelBuilder::new("ragged_loop", [64, 1, 1]);
    let l = k.let_("l", local_invocation_index());
    let barrier = line!() + 2;
    k.for_range("j", 0u32, &l, |k, _| {
        k.workgroup_barrier();
    });
    let e = rejected(&k);
    assert_eq!(line(e.site), barrier);
    assert_eq!(e.value_kind, "local_invocation_index");
}

#[test]
fn a_var_assigned_under_a_non_uniform_branch_is_non_uniform() {
    let mut k = KernelBuilder::new("tainted_var", [64, 1, 1]);
    let l = k.let_("l", local_invocation_index());
    let flag = k.var("flag", 0u32);
    k.if_(l.eq(3u32), |k| k.store(&flag, 1u32));
    k.if_(flag.load().eq(1u32), |k| k.workgroup_barrier());
    rejected(&k);

    // A var only ever assigned uniform values, in uniform flow, stays uniform.
    let mut k = KernelBuilder::new("clean_var", [64, 1, 1]);
    let n = k.uniform::<u32>("n");
    let flag = k.var("flag", 0u32);
    k.if_(n.load().eq(1u32), |k| k.store(&flag, 1u32));
    k.if_(flag.load().eq(1u32), |k| k.workgroup_barrier());
    k.build().unwrap();
}

#[test]
fn loads_of_workgroup_memory_and_atomics_are_non_uniform() {
    let mut k = KernelBuilder::new("branch_on_shared", [64, 1, 1]);
    let shared = k.workgroup::<Array<u32, 1>>("shared");
    k.if_(shared.at(0u32).load().eq(0u32), |k| k.workgroup_barrier());
    let e = rejected(&k);
    assert_eq!(e.value_kind, "a load from workgroup memory");

    let mut k = KernelBuilder::new("branch_on_atomic", [64, 1, 1]);
    let c = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("c");
    let old = k.atomic_add(&c.at(0u32), 1u32);
    k.if_(old.eq(0u32), |k| k.storage_barrier());
    let e = rejected(&k);
    assert_eq!(e.operation, "storageBarrier");
    assert_eq!(e.value_kind, "the result of an atomic operation");

    // Read-only storage and uniforms are uniform.
    let mut k = KernelBuilder::new("branch_on_read_only", [64, 1, 1]);
    let ro = k.storage::<RuntimeArray<u32>, ReadOnly>("ro");
    k.if_(ro.at(0u32).load().eq(0u32), |k| k.workgroup_barrier());
    k.build().unwrap();
}

#[test]
fn a_helper_with_a_barrier_called_in_a_non_uniform_branch_is_rejected() {
    let mut k = KernelBuilder::new("barrier_in_helper", [64, 1, 1]);
    let barrier = line!() + 2;
    let sync = k.function::<(u32,), u32>("sync", ["x"], |k, (x,)| {
        k.workgroup_barrier();
        x
    });
    let l = k.let_("l", local_invocation_index());
    let call = line!() + 1;
    k.if_(l.lt(8u32), |k| {
        let _ = k.call(&sync, (lit(1u32),));
    });
    let e = rejected(&k);
    assert_eq!(line(e.site), barrier);
    assert_eq!(line(e.branch), call);

    // Called in uniform flow it builds.
    let mut k = KernelBuilder::new("barrier_in_helper_ok", [64, 1, 1]);
    let sync = k.function::<(u32,), u32>("sync", ["x"], |k, (x,)| {
        k.workgroup_barrier();
        x
    });
    let l = k.let_("l", local_invocation_index());
    let _ = k.call(&sync, (l,));
    k.build().unwrap();
}

#[test]
fn a_helper_branching_on_a_parameter_needs_a_uniform_argument() {
    let build = |uniform_arg: bool| {
        let mut k = KernelBuilder::new("param_branch", [64, 1, 1]);
        let n = k.uniform::<u32>("n");
        let maybe_sync = k.function::<(u32,), u32>("maybe_sync", ["x"], |k, (x,)| {
            k.if_(x.gt(0u32), |k| k.workgroup_barrier());
            x
        });
        let arg = if uniform_arg {
            n.load()
        } else {
            local_invocation_index()
        };
        let _ = k.call(&maybe_sync, (arg,));
        k.build()
    };
    assert!(build(true).is_ok());
    match build(false) {
        Err(BuildError::NonUniformControlFlow(e)) => {
            assert_eq!(e.value_kind, "local_invocation_index")
        }
        other => panic!("expected a uniformity error, got {other:?}"),
    }
}

#[test]
fn a_subgroup_operation_in_non_uniform_flow_is_rejected() {
    let mut k = KernelBuilder::new("subgroup_in_branch", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(x.len()), |k| {
        let s = k.subgroup_add(x.at(&i).load());
        k.store(&x.at(&i), s);
    });
    let e = rejected(&k);
    assert_eq!(e.operation, "subgroupAdd");
}

#[test]
fn a_non_uniform_break_makes_the_rest_of_the_loop_non_uniform() {
    let mut k = KernelBuilder::new("break_then_barrier", [64, 1, 1]);
    let l = k.let_("l", local_invocation_index());
    k.loop_(|k| {
        k.if_(l.gt(5u32), |k| k.break_());
        k.workgroup_barrier();
    });
    rejected(&k);
}
