//! Invalid kernels are `BuildError`s that name the Rust line that built the offending node.

use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, TargetLimits};

mod common;
use common::missing_capability;

#[test]
fn a_literal_index_out_of_bounds_names_the_rust_line_of_the_index() {
    // naga's validator rejects it too; the DSL's const-expression check reports it first.
    let mut k = KernelBuilder::new("constant_index_out_of_bounds", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let values = k.let_("values", array([lit(1.0f32), lit(2.0f32), lit(3.0f32)]));
    let line = line!() + 1;
    let oops = values.index(5u32);
    k.store(&out.at(0u32), oops);
    let err = k.build().unwrap_err();
    let BuildError::ConstExpression { site, reason, .. } = &err else {
        panic!("expected a located const-expression error, got {err:?}");
    };
    assert_eq!((site.file, site.line), (file!(), line), "{err}");
    assert!(
        reason.contains("index 5u is out of bounds for array<f32, 3>"),
        "{reason}"
    );
    assert!(
        err.to_string().contains(&format!("{}:{line}:", file!())),
        "{err}"
    );
}

#[test]
fn naga_validation_errors_name_the_rust_line_of_the_offending_declaration() {
    let mut k = KernelBuilder::new("unsized_workgroup_array", [1, 1, 1]);
    let line = line!() + 1;
    let shared = k.workgroup::<RuntimeArray<f32>>("shared");
    k.store(&shared.at(0u32), 1.0f32);
    let err = k.build().unwrap_err();
    let site = match &err {
        BuildError::Validation {
            site: Some(site), ..
        }
        | BuildError::Type { site, .. } => *site,
        other => panic!("expected a located error, got {other:?}"),
    };
    assert_eq!((site.file, site.line), (file!(), line), "{err}");
    // naga's error stays typed, as the cause.
    let BuildError::Validation { cause, .. } = &err else {
        panic!("expected naga's validation error, got {err:?}");
    };
    let source = std::error::Error::source(&err).expect("naga's error is the source");
    let typed = source
        .downcast_ref::<wgsl_dsl::ValidationCause>()
        .expect("the source is naga's validation error");
    assert_eq!(typed, cause);
    assert!(
        err.to_string().contains(&typed.0.as_inner().to_string()),
        "{err}"
    );
}

#[test]
fn nan_and_infinite_literals_are_rejected_at_their_call_site() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut k = KernelBuilder::new("bad_literal", [1, 1, 1]);
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let line = line!() + 1;
        let value = lit(bad);
        k.store(&out.at(0u32), value * 2.0);
        match k.build() {
            Err(BuildError::NonFiniteLiteral { site, .. }) => {
                assert_eq!((site.file, site.line), (file!(), line));
            }
            other => panic!("{bad}: expected NonFiniteLiteral, got {other:?}"),
        }
    }
}

#[test]
fn a_let_used_outside_its_block_is_out_of_scope() {
    let mut k = KernelBuilder::new("escaping_let", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let mut escaped = None;
    let decl_line = line!() + 2;
    k.if_(lit(true), |k| {
        escaped = Some(k.let_("inner", lit(1.0f32)));
    });
    let use_line = line!() + 1;
    k.store(&out.at(0u32), escaped.expect("set in the closure"));
    match k.build() {
        Err(BuildError::OutOfScope {
            name,
            site,
            declared,
        }) => {
            assert_eq!(name, "inner");
            assert_eq!(site.line, use_line);
            assert_eq!(declared.line, decl_line);
        }
        other => panic!("expected OutOfScope, got {other:?}"),
    }
}

#[test]
fn a_global_declared_twice_names_both_lines() {
    // Found by a newcomer's trial (2026-12-04): WGSL renamed the second `x` to `x_1`, the
    // signature kept `x` twice, and the derived backward pass had two `d_x` bindings.
    let mut k = KernelBuilder::new("twice", [1, 1, 1]);
    let first_line = line!() + 1;
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let second_line = line!() + 1;
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
    k.store(&out.at(0u32), x.at(0u32).load());
    match k.build() {
        Err(err @ BuildError::DuplicateName { .. }) => {
            let BuildError::DuplicateName { name, site, first } = &err else {
                unreachable!()
            };
            assert_eq!(name, "x");
            assert_eq!((site.file, site.line), (file!(), second_line));
            assert_eq!((first.file, first.line), (file!(), first_line));
            assert!(
                err.to_string()
                    .contains("`x` is declared twice in this kernel"),
                "{err}"
            );
        }
        other => panic!("expected DuplicateName, got {other:?}"),
    }
    // A workgroup variable is a global too.
    let mut k = KernelBuilder::new("twice_shared", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("tile");
    let tile = k.workgroup::<Array<f32, 4>>("tile");
    k.store(&out.at(0u32), tile.at(0u32).load());
    assert!(
        matches!(k.build(), Err(BuildError::DuplicateName { .. })),
        "a workgroup variable named as a binding"
    );
}

#[test]
fn builtins_are_rejected_in_helper_functions() {
    let mut k = KernelBuilder::new("builtin_in_helper", [1, 1, 1]);
    let line = line!() + 1;
    let f = k.function::<(u32,), u32>("f", ["x"], |_, (x,)| x + global_invocation_id().x());
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let r = k.call(&f, (lit(1u32),));
    k.store(&out.at(0u32), r);
    match k.build() {
        Err(BuildError::BuiltinOutsideEntryPoint { site, .. }) => assert_eq!(site.line, line),
        other => panic!("expected BuiltinOutsideEntryPoint, got {other:?}"),
    }
}

#[test]
fn workgroup_size_is_checked_against_the_target() {
    let line = line!() + 1;
    let k = KernelBuilder::new("too_big", [32, 16, 1]);
    match k.build() {
        Err(BuildError::WorkgroupSize { site, size, .. }) => {
            assert_eq!(size, [32, 16, 1]);
            assert_eq!(site.line, line);
        }
        other => panic!("expected WorkgroupSize, got {other:?}"),
    }
    let big = TargetLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size: [1024, 1024, 64],
        ..TargetLimits::default()
    };
    assert!(k.build_for(&big).is_ok());
    assert!(matches!(
        KernelBuilder::new("zero", [0, 1, 1]).build(),
        Err(BuildError::WorkgroupSize { .. })
    ));
}

#[test]
fn workgroup_memory_is_checked_against_the_target() {
    let mut k = KernelBuilder::new("big_tile", [1, 1, 1]);
    let small = k.workgroup::<Array<f32, 1024>>("small");
    let line = line!() + 1;
    let tile = k.workgroup::<Array<f32, 8192>>("tile");
    k.store(&tile.at(0u32), 1.0f32);
    k.store(&small.at(0u32), 1.0f32);
    match k.build() {
        Err(
            e @ BuildError::WorkgroupMemory {
                bytes, limit, site, ..
            },
        ) => {
            assert_eq!((bytes, limit), (36864, 16384));
            // The declaration that crosses the limit, not the kernel's creation.
            assert_eq!((site.file, site.line), (file!(), line));
            assert!(
                e.to_string().starts_with(&format!("{}:{line}:", file!())),
                "{e}"
            );
        }
        other => panic!("expected WorkgroupMemory, got {other:?}"),
    }
}

#[test]
fn invalid_kernel_names_are_rejected() {
    for name in ["", "1abc", "with space", "_", "caf\u{e9}", "a-b"] {
        assert!(
            matches!(
                KernelBuilder::new(name, [1, 1, 1]).build(),
                Err(BuildError::InvalidName { .. })
            ),
            "{name:?} accepted"
        );
    }
}

/// Identifiers WGSL reserves or that end in a digit are written with naga's `_` suffix; the
/// signature carries the name in the WGSL, the module keeps the kernel's.
#[test]
fn any_identifier_names_a_kernel() {
    for (name, emitted) in [
        ("layer1", "layer1_"),
        ("blur3x3", "blur3x3_"),
        ("struct", "struct_"),
        ("target", "target_"),
        ("fn", "fn_"),
        ("max", "max_"),
        ("__x", "_x"),
        ("saxpy", "saxpy"),
    ] {
        let mut k = KernelBuilder::new(name, [1, 1, 1]);
        let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
        k.store(&out.at(0u32), 1u32);
        let shader = k.build().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(shader.signature.name, name);
        assert_eq!(shader.signature.entry_point, emitted, "{name}");
        assert_eq!(shader.module.entry_points[0].name, name);
        assert!(
            shader.wgsl.contains(&format!("fn {emitted}(")),
            "{}",
            shader.wgsl
        );
        let reparsed = naga::front::wgsl::parse_str(&shader.wgsl).expect("parses");
        assert_eq!(reparsed.entry_points[0].name, emitted);
    }
}

/// `fn main() -> Result<(), BuildError>` prints `Debug`: it is the message, not a dump.
#[test]
fn build_errors_debug_as_their_message() {
    let e = KernelBuilder::new("with space", [1, 1, 1])
        .build()
        .expect_err("invalid name");
    assert_eq!(format!("{e:?}"), e.to_string());
    assert!(format!("{e:?}").contains("errors.rs:"), "{e:?}");
}

#[test]
fn reserved_and_repeated_names_are_renamed_into_valid_wgsl() {
    let mut k = KernelBuilder::new("names", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("storage");
    let a = k.let_("struct", lit(1.0f32) + lit(2.0f32));
    let b = k.let_("target", &a * 2.0);
    let c = k.let_("_", &b + 1.0);
    let d = k.let_("x", &c * &c);
    let e = k.let_("x", &d + 1.0);
    let f = k.var("input", &e);
    k.store(&out.at(0u32), f.load());
    let shader = k.build().expect("renamed, not rejected");
    naga::front::wgsl::parse_str(&shader.wgsl).expect("the renamed WGSL parses");
    assert!(shader.wgsl.contains("let x = "), "{}", shader.wgsl);
    assert!(shader.wgsl.contains("let x_1 = "), "{}", shader.wgsl);
}

#[test]
fn build_errors_stay_small() {
    // Errors travel through `Result`s; keep them cheap to move.
    assert!(
        std::mem::size_of::<BuildError>() <= 96,
        "{}",
        std::mem::size_of::<BuildError>()
    );
}

#[test]
fn workgroup_reduce_needs_one_power_of_two_slot_per_invocation() {
    let mut k = KernelBuilder::new("bad_reduce", [48, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let scratch = k.workgroup::<Array<f32, 48>>("scratch");
    let lid = k.let_("lid", local_invocation_index());
    let line = line!() + 1;
    let total = k.workgroup_reduce(&scratch, &lid, lit(1.0f32), |a, b| a + b);
    k.store(&out.at(0u32), total);
    match k.build() {
        Err(BuildError::Invalid { site, message }) => {
            assert_eq!(site.line, line);
            assert!(
                message.contains("48 elements for 48 invocations"),
                "{message}"
            );
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn a_parameter_of_one_helper_is_out_of_scope_in_another() {
    let mut k = KernelBuilder::new("leaked_parameter", [1, 1, 1]);
    let mut saved = None;
    let _f = k.function::<(f32,), f32>("f", ["x"], |_, (x,)| {
        saved = Some(x.clone());
        x
    });
    let x = saved.expect("set in the closure");
    let g = k.function::<(f32,), f32>("g", ["y"], move |_, (_y,)| x + 100.0);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let r = k.call(&g, (lit(1.0f32),));
    k.store(&out.at(0u32), r);
    assert!(matches!(k.build(), Err(BuildError::OutOfScope { .. })));
}

#[test]
fn values_places_and_functions_of_another_builder_are_errors_not_aliases() {
    let mut k1 = KernelBuilder::new("first", [1, 1, 1]);
    let foreign_binding = k1.storage::<RuntimeArray<f32>, ReadWrite>("foreign");
    let foreign_var = k1.var("v", lit(1.0f32));
    let foreign_let = k1.let_("l", lit(2.0f32) + lit(3.0f32));
    let foreign_fn = k1.function::<(f32,), f32>("double", ["x"], |_, (x,)| &x * 2.0);

    let build = |f: &dyn Fn(&mut KernelBuilder)| {
        let mut k2 = KernelBuilder::new("second", [1, 1, 1]);
        let _own = k2.storage::<RuntimeArray<f32>, ReadWrite>("own");
        let _own_var = k2.var("w", lit(5.0f32));
        let _own_let = k2.let_("m", lit(7.0f32) + lit(1.0f32));
        let _own_fn = k2.function::<(f32,), f32>("negate", ["x"], |_, (x,)| -x);
        f(&mut k2);
        k2.build()
    };
    let out_of_scope_or_invalid = |r: Result<Shader, BuildError>| {
        matches!(
            r,
            Err(BuildError::OutOfScope { .. } | BuildError::Invalid { .. })
        )
    };
    assert!(out_of_scope_or_invalid(build(
        &|k| k.store(&foreign_var, 3.0f32)
    )));
    assert!(out_of_scope_or_invalid(build(
        &|k| k.store(&foreign_binding.at(0u32), 3.0f32)
    )));
    assert!(out_of_scope_or_invalid(build(&|k| {
        let own = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        k.store(&own.at(0u32), foreign_let.clone());
    })));
    assert!(out_of_scope_or_invalid(build(&|k| {
        let own = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let r = k.call(&foreign_fn, (lit(1.0f32),));
        k.store(&own.at(0u32), r);
    })));
}

#[test]
fn deep_expressions_are_baked_into_lets_or_rejected_never_overflow_the_stack() {
    let deep = |depth: usize| {
        let mut k = KernelBuilder::new("deep", [1, 1, 1]);
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let mut e = out.at(1u32).load();
        for _ in 0..depth {
            e = e + 1.0f32;
        }
        k.store(&out.at(0u32), e);
        k.build()
    };
    let shader = deep(1500).expect("1500 levels build");
    assert!(
        shader.wgsl.contains("let part"),
        "deep trees are cut into lets"
    );
    naga::front::wgsl::parse_str(&shader.wgsl).expect("and the WGSL parses back");
    assert!(matches!(deep(5000), Err(BuildError::Invalid { .. })));
}

#[test]
fn atomics_in_read_only_storage_are_rejected() {
    let mut k = KernelBuilder::new("read_only_atomics", [1, 1, 1]);
    let line = line!() + 1;
    let counters = k.storage::<RuntimeArray<Atomic<u32>>, ReadOnly>("counters");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.store(&out.at(0u32), counters.at(0u32).load());
    match k.build() {
        Err(BuildError::Type { site, message }) => {
            assert_eq!(site.line, line);
            assert!(message.contains("ReadWrite"), "{message}");
        }
        other => panic!("expected a Type error, got {other:?}"),
    }
}

#[test]
fn a_mistake_is_reported_even_when_its_result_is_not_used() {
    let mut k = KernelBuilder::new("unused_reduce", [48, 1, 1]);
    let scratch = k.workgroup::<Array<f32, 48>>("scratch");
    let lid = k.let_("lid", local_invocation_index());
    let line = line!() + 1;
    let _ = k.workgroup_reduce(&scratch, &lid, lit(1.0f32), |a, b| a + b);
    match k.build() {
        Err(BuildError::Invalid { site, .. }) => assert_eq!(site.line, line),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn several_mistakes_are_reported_together_with_their_call_sites() {
    let mut other = KernelBuilder::new("other", [1, 1, 1]);
    let foreign_fn = other.function::<(f32,), f32>("double", ["x"], |_, (x,)| &x * 2.0);
    let foreign_binding = other.storage::<RuntimeArray<f32>, ReadWrite>("foreign");

    let mut k = KernelBuilder::new("several", [48, 1, 1]);
    let first = line!() + 1;
    let _counters = k.storage::<RuntimeArray<Atomic<u32>>, ReadOnly>("counters");
    let scratch = k.workgroup::<Array<f32, 48>>("scratch");
    let lid = k.let_("lid", local_invocation_index());
    let second = line!() + 1;
    let _ = k.workgroup_reduce(&scratch, &lid, lit(1.0f32), |a, b| a + b);
    let third = line!() + 1;
    let _ = k.call(&foreign_fn, (lit(1.0f32),));
    let fourth = line!() + 1;
    k.store(&foreign_binding.at(0u32), 1.0f32);
    let err = k.build().unwrap_err();
    let BuildError::Several(errors) = &err else {
        panic!("expected Several, got {err:?}")
    };
    let lines: Vec<u32> = errors
        .iter()
        .map(|e| match e {
            BuildError::Type { site, .. } | BuildError::Invalid { site, .. } => site.line,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(lines, [first, second, third, fourth]);
    let text = err.to_string();
    assert!(text.starts_with("4 errors:"), "{text}");
    assert!(text.contains("another KernelBuilder is called"), "{text}");
}

/// A missing capability names the first node that needs it.
#[test]
fn missing_capabilities_name_the_node_that_needs_them() {
    let mut k = KernelBuilder::new("needs_subgroups", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let line = line!() + 1;
    let sum = k.subgroup_add(i.clone());
    k.store(&out.at(&i), sum);
    let (site, needed) = missing_capability(&k);
    assert!(needed.contains(naga::valid::Capabilities::SUBGROUP));
    assert_eq!((site.file, site.line), (file!(), line));
}

/// `pack2x16float`, `unpack2x16float` and `quantizeToF16` hold `f16` values in `f32`s: a
/// target without that capability (WebGL) refuses them at the call that built the first one.
#[test]
fn f16_in_f32_builtins_need_their_capability() {
    let mut k = KernelBuilder::new("packs_halves", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let line = line!() + 1;
    let packed = pack2x16float(vec2(x.at(&i).load(), 1.0f32));
    k.store(&out.at(&i), packed);
    assert!(k.build().is_ok(), "the default target has the capability");
    let (site, needed) = missing_capability(&k);
    assert_eq!(needed, naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32);
    assert_eq!((site.file, site.line), (file!(), line));
}
