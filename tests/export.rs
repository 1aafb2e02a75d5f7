//! `wgsl_dsl::export` of every MLP kernel (`mlp::kernels::all()`), and of the example
//! kernels: the manifests written to disk are read back and checked against naga's
//! reflection of the WGSL written beside them (parsed again with naga's WGSL front end,
//! validated, laid out by naga's `Layouter`): the entry point and its workgroup size, every
//! global variable with a binding (none missing, none extra), its group and binding, name,
//! address space and access, type, size, alignment, array strides and lengths, struct members
//! and offsets, the minimum binding size, and the workgroup memory the entry point uses. The
//! JavaScript module is checked by Node's parser (`node --check`) when Node is installed (it
//! runs in a browser in `crates/mlp/tests/mnist_web.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use naga::common::wgsl::TypeContext;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use wgsl_dsl::Shader;
use wgsl_dsl::export::{self, Access, Manifest, Resource, TypeLayout};

/// The module the WGSL text describes, validated, with its layouts.
struct Reflected {
    module: naga::Module,
    info: naga::valid::ModuleInfo,
    layouter: naga::proc::Layouter,
}

fn reflect(name: &str, wgsl: &str) -> Reflected {
    let module = naga::front::wgsl::parse_str(wgsl)
        .unwrap_or_else(|e| panic!("{name}: WGSL does not parse: {}", e.emit_to_string(wgsl)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: WGSL does not validate: {e:?}"));
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    Reflected {
        module,
        info,
        layouter,
    }
}

/// `ty` of the re-parsed module equals the manifest's `layout`, recursively.
fn check_type(r: &Reflected, ty: naga::Handle<naga::Type>, layout: &TypeLayout, at: &str) {
    let mut wgsl = String::new();
    r.module
        .types
        .write_type(ty, &mut wgsl)
        .expect("write type");
    assert_eq!(layout.wgsl(), wgsl, "{at}: WGSL type");
    let l = r.layouter[ty];
    let (size, align) = (l.size, l.alignment.round_up(1));
    match (&r.module.types[ty].inner, layout) {
        (
            naga::TypeInner::Scalar(_),
            TypeLayout::Scalar {
                size: s, align: a, ..
            },
        )
        | (
            naga::TypeInner::Atomic(_),
            TypeLayout::Atomic {
                size: s, align: a, ..
            },
        ) => {
            assert_eq!((*s, *a), (size, align), "{at}: size, align");
        }
        (
            naga::TypeInner::Vector { size: n, .. },
            TypeLayout::Vector {
                size: s,
                align: a,
                components,
                ..
            },
        ) => {
            assert_eq!((*s, *a, *components), (size, align, *n as u32), "{at}");
        }
        (
            naga::TypeInner::Matrix { columns, rows, .. },
            TypeLayout::Matrix {
                size: s,
                align: a,
                columns: c,
                rows: rw,
                ..
            },
        ) => {
            assert_eq!(
                (*s, *a, *c, *rw),
                (size, align, *columns as u32, *rows as u32),
                "{at}"
            );
        }
        (
            naga::TypeInner::Array {
                base,
                size: n,
                stride,
            },
            TypeLayout::Array {
                size: s,
                align: a,
                length,
                stride: st,
                element,
                ..
            },
        ) => {
            let reflected_length = match n {
                naga::ArraySize::Constant(c) => Some(c.get()),
                _ => None,
            };
            assert_eq!(*length, reflected_length, "{at}: length");
            assert_eq!(*st, *stride, "{at}: stride");
            assert_eq!(*a, align, "{at}: align");
            assert_eq!(*s, reflected_length.map(|_| size), "{at}: size");
            check_type(r, *base, element, &format!("{at}[]"));
        }
        (
            naga::TypeInner::Struct { members, span },
            TypeLayout::Struct {
                size: s,
                align: a,
                members: ms,
                ..
            },
        ) => {
            assert_eq!((*s, *a), (*span, align), "{at}: size, align");
            assert_eq!(ms.len(), members.len(), "{at}: members");
            for (m, e) in members.iter().zip(ms) {
                assert_eq!(
                    m.name.as_deref(),
                    Some(e.name.as_str()),
                    "{at}: member name"
                );
                assert_eq!(m.offset, e.offset, "{at}.{}: offset", e.name);
                check_type(r, m.ty, &e.ty, &format!("{at}.{}", e.name));
            }
        }
        (
            naga::TypeInner::Image {
                class: naga::ImageClass::Storage { format, .. },
                ..
            },
            TypeLayout::StorageTexture { format: f, .. },
        ) => {
            use naga::common::wgsl::ToWgsl;
            assert_eq!(f, format.to_wgsl(), "{at}: format");
        }
        (
            naga::TypeInner::Image {
                class: naga::ImageClass::Sampled { .. },
                ..
            },
            TypeLayout::Texture { .. },
        ) => {}
        (inner, layout) => panic!("{at}: the WGSL has {inner:?}, the manifest {layout:?}"),
    }
}

/// The manifest `m` agrees with naga's reflection of the WGSL `wgsl`.
fn check_manifest(m: &Manifest, wgsl: &str) {
    assert_eq!(m.format_version, export::FORMAT_VERSION);
    let r = reflect(&m.kernel, wgsl);
    let (index, entry) = r
        .module
        .entry_points
        .iter()
        .enumerate()
        .find(|(_, e)| e.name == m.entry_point)
        .unwrap_or_else(|| {
            panic!(
                "{}: no entry point `{}` in the WGSL",
                m.kernel, m.entry_point
            )
        });
    assert_eq!(entry.stage, naga::ShaderStage::Compute);
    assert_eq!(entry.workgroup_size, m.workgroup_size, "{}", m.kernel);

    let bound: BTreeMap<(u32, u32), (naga::Handle<naga::GlobalVariable>, &naga::GlobalVariable)> =
        r.module
            .global_variables
            .iter()
            .filter_map(|(h, v)| v.binding.as_ref().map(|b| ((b.group, b.binding), (h, v))))
            .collect();
    let listed: Vec<(u32, u32)> = m.bindings.iter().map(|b| (b.group, b.binding)).collect();
    assert_eq!(
        bound.keys().copied().collect::<Vec<_>>(),
        listed,
        "{}: the WGSL's bound globals and the manifest's bindings, in order",
        m.kernel
    );
    for b in &m.bindings {
        let at = format!("{} binding {} `{}`", m.kernel, b.binding, b.name);
        let (_, var) = bound[&(b.group, b.binding)];
        assert_eq!(
            var.name.as_deref(),
            Some(b.wgsl_name.as_str()),
            "{at}: name"
        );
        let (resource, access) = match var.space {
            naga::AddressSpace::Uniform => (Resource::Uniform, Access::Read),
            naga::AddressSpace::Storage { access }
                if access.contains(naga::StorageAccess::STORE) =>
            {
                (Resource::Storage, Access::ReadWrite)
            }
            naga::AddressSpace::Storage { .. } => (Resource::ReadOnlyStorage, Access::Read),
            naga::AddressSpace::Handle => match &r.module.types[var.ty].inner {
                naga::TypeInner::Image {
                    class: naga::ImageClass::Storage { access, .. },
                    ..
                } => (
                    Resource::StorageTexture,
                    match (
                        access.contains(naga::StorageAccess::LOAD),
                        access.contains(naga::StorageAccess::STORE),
                    ) {
                        (true, true) => Access::ReadWrite,
                        (false, true) => Access::Write,
                        _ => Access::Read,
                    },
                ),
                _ => (Resource::Texture, Access::Read),
            },
            other => panic!("{at}: address space {other:?}"),
        };
        assert_eq!((b.resource, b.access), (resource, access), "{at}");
        let min = match resource {
            Resource::Texture | Resource::StorageTexture => 0,
            _ => u64::from(r.layouter[var.ty].size),
        };
        assert_eq!(b.min_binding_size, min, "{at}: minimum binding size");
        check_type(&r, var.ty, &b.ty, &at);
    }

    // Limits: as WebGPU counts them, from the re-parsed module.
    let used = r.info.get_entry_point(index);
    let workgroup: u64 = r
        .module
        .global_variables
        .iter()
        .filter(|(h, v)| v.space == naga::AddressSpace::WorkGroup && !used[*h].is_empty())
        .map(|(_, v)| u64::from(r.layouter[v.ty].size).next_multiple_of(16))
        .sum();
    let storage = m
        .bindings
        .iter()
        .filter(|b| matches!(b.resource, Resource::Storage | Resource::ReadOnlyStorage))
        .count() as u64;
    let limit = |name: &str| m.limits.get(name).copied();
    assert_eq!(
        limit("maxComputeWorkgroupStorageSize"),
        Some(workgroup),
        "{}",
        m.kernel
    );
    assert_eq!(
        limit("maxStorageBuffersPerShaderStage"),
        Some(storage),
        "{}",
        m.kernel
    );
    let [x, y, z] = entry.workgroup_size;
    assert_eq!(
        limit("maxComputeInvocationsPerWorkgroup"),
        Some(u64::from(x * y * z)),
        "{}",
        m.kernel
    );
}

/// Export `shaders` into a temporary directory and check every file written.
fn export_and_check(shaders: &[Shader]) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let refs: Vec<&Shader> = shaders.iter().collect();
    let written = export::write(dir.path(), &refs).expect("export");
    assert_eq!(written.manifests().len(), shaders.len());
    for shader in shaders {
        let name = &shader.signature.name;
        let wgsl = std::fs::read_to_string(dir.path().join(format!("{name}.wgsl"))).expect("wgsl");
        assert_eq!(wgsl, shader.wgsl, "{name}: the WGSL file is naga's output");
        let json = std::fs::read_to_string(dir.path().join(format!("{name}.json"))).expect("json");
        let m: Manifest = serde_json::from_str(&json).expect("the manifest parses");
        assert_eq!(&m.kernel, name);
        assert_eq!(m.bindings.len(), shader.signature.bindings.len(), "{name}");
        check_manifest(&m, &wgsl);
    }
    node_check(&dir.path().join("kernels.js"));
}

/// `node --check` on the module, as an ES module, when Node is installed.
fn node_check(js: &Path) {
    let mjs = js.with_extension("mjs");
    std::fs::copy(js, &mjs).expect("copy");
    match std::process::Command::new("node")
        .arg("--check")
        .arg(&mjs)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "kernels.js does not parse: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "node is needed under CI to check kernels.js: {e}"
            );
            eprintln!("skipping `node --check` of kernels.js: node not found ({e})");
        }
    }
}

#[test]
fn every_mlp_kernel_exports_a_manifest_that_matches_its_wgsl() {
    let shaders: Vec<Shader> = mlp::kernels::all()
        .iter()
        .map(|k| k.build().unwrap_or_else(|e| panic!("{}: {e}", k.name())))
        .collect();
    assert!(shaders.len() > 13, "the unfused and the fused kernels");
    export_and_check(&shaders);
}

#[test]
fn the_example_kernels_export_manifests_that_match_their_wgsl() {
    let shaders: Vec<Shader> = wgsl_dsl_workspace_tests::examples::all()
        .iter()
        .map(|e| {
            (e.build)()
                .build()
                .unwrap_or_else(|err| panic!("{}: {err}", e.name))
        })
        .collect();
    export_and_check(&shaders);
    let textures = wgsl_dsl_workspace_tests::textures::texture_ops()
        .build()
        .expect("texture kernel");
    export_and_check(&[textures]);
}

#[test]
fn a_uniform_struct_has_its_members_offsets_and_an_encoder() {
    let linear = mlp::kernels::all()
        .into_iter()
        .find(|k| k.name() == "linear_relu")
        .expect("linear_relu")
        .build()
        .expect("builds");
    let e = export::export(&[&linear]).expect("export");
    let dims = &e.manifests()[0].bindings[0];
    assert_eq!(
        (dims.name.as_str(), dims.resource),
        ("dims", Resource::Uniform)
    );
    let TypeLayout::Struct {
        wgsl,
        size,
        members,
        ..
    } = &dims.ty
    else {
        panic!("{:?}", dims.ty)
    };
    assert_eq!((wgsl.as_str(), *size), ("LinearDims", 32));
    let offsets: Vec<(&str, u32)> = members
        .iter()
        .map(|m| (m.name.as_str(), m.offset))
        .collect();
    assert_eq!(
        &offsets[..5],
        &[
            ("batch", 0),
            ("inputs", 4),
            ("outputs", 8),
            ("weight_offset", 12),
            ("bias_offset", 16)
        ]
    );
    let js = &e
        .files()
        .iter()
        .find(|f| f.name == "kernels.js")
        .expect("js")
        .contents;
    assert!(
        js.contains("export function encode_LinearDims(value)"),
        "{js}"
    );
    assert!(js.contains("export function create_linear_relu(device, options = {})"));
    let dts = &e
        .files()
        .iter()
        .find(|f| f.name == "kernels.d.ts")
        .expect("d.ts")
        .contents;
    assert!(
        dts.contains("export interface LinearReluBuffers {"),
        "{dts}"
    );
}

/// A uniform struct with a struct member (`AdamParams`' `schedule: ScheduleUniform`): the
/// module parses, and its encoder, run by Node, writes the bytes Rust's `repr(C)` value has.
/// (Members are named as in the WGSL: naga writes `beta1` as `beta1_`.)
#[test]
fn a_nested_uniform_struct_encodes_as_rust_lays_it_out() {
    use mlp::kernels::optim::{ScheduleUniform, adam_params};
    use mlp::schedule::{Decay, LrSchedule};
    let adam = mlp::kernels::all()
        .into_iter()
        .find(|k| k.name() == "adam_update")
        .expect("adam_update")
        .build()
        .expect("builds");
    let dir = tempfile::tempdir().expect("tempdir");
    export::write(dir.path(), &[&adam]).expect("export");
    let js = dir.path().join("kernels.js");
    node_check(&js);
    let mut hp = adam_params(0.01, 0.9, 0.999, 1e-8, 37);
    hp.schedule = ScheduleUniform::of(&LrSchedule {
        warmup_steps: 7,
        decay: Decay::Cosine {
            steps: 90,
            final_factor: 0.25,
        },
    });
    let want: Vec<u8> = bytemuck::bytes_of(&hp).to_vec();
    let value = format!(
        "{{lr: {}, beta1_: {}, beta2_: {}, eps: {}, len: {}, log_beta1_: {}, log_beta2_: {}, \
         schedule: {{kind: {}, warmup_steps: {}, decay_steps: {}, decay_factor: {}}}}}",
        hp.lr,
        hp.beta1,
        hp.beta2,
        hp.eps,
        hp.len,
        hp.log_beta1,
        hp.log_beta2,
        hp.schedule.kind,
        hp.schedule.warmup_steps,
        hp.schedule.decay_steps,
        hp.schedule.decay_factor
    );
    let script = dir.path().join("encode.mjs");
    std::fs::write(
        &script,
        format!(
            "import {{ encode_AdamParams }} from './kernels.mjs';\n\
             const b = new Uint8Array(encode_AdamParams({value}));\n\
             console.log(Array.from(b).join(','));\n"
        ),
    )
    .expect("script");
    match std::process::Command::new("node").arg(&script).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got: Vec<u8> = String::from_utf8_lossy(&out.stdout)
                .trim()
                .split(',')
                .map(|b| b.parse().expect("a byte"))
                .collect();
            assert_eq!(got, want, "encode_AdamParams against Rust's bytes");
        }
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "node is needed under CI to run kernels.js: {e}"
            );
            eprintln!("skipping the encoder run: node not found ({e})");
        }
    }
}

#[test]
fn two_kernels_of_one_name_are_refused() {
    let k = mlp::kernels::all().remove(0).build().expect("builds");
    assert!(matches!(
        export::export(&[&k, &k]),
        Err(export::ExportError::DuplicateKernel(name)) if name == k.signature.name
    ));
}
