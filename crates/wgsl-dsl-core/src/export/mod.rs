//! Export: kernels as files another host loads without this crate (ARCHITECTURE.md decision *Bring your own device*): per
//! kernel its WGSL (`<kernel>.wgsl`, as naga wrote it) and a manifest of its ABI
//! (`<kernel>.json`), and one JavaScript module (`kernels.js`, with JSDoc types, and
//! `kernels.d.ts` for TypeScript) with a function per kernel that compiles it on a WebGPU
//! device, makes its bind group from named buffers and dispatches it.
//!
//! Compiler-side only: the export reads the validated [`Shader`]s (their `naga::Module`,
//! through naga's `Layouter` and the WGSL writer's `Namer`) and needs no GPU and no wgpu.
//!
//! ```
//! # use wgsl_dsl_core as wgsl_dsl;
//! use wgsl_dsl::prelude::*;
//!
//! let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
//! let a = k.uniform::<f32>("a");
//! let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
//! let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(y.len()), |k| k.store(&y.at(&i), a.load() * x.at(&i).load() + y.at(&i).load()));
//! let shader = k.build()?;
//!
//! let export = wgsl_dsl::export::export(&[&shader])?;
//! let m = &export.manifests()[0];
//! assert_eq!((m.entry_point.as_str(), m.workgroup_size), ("saxpy", [64, 1, 1]));
//! assert_eq!(m.bindings[2].resource, wgsl_dsl::export::Resource::Storage);
//! let names: Vec<&str> = export.files().iter().map(|f| f.name.as_str()).collect();
//! assert_eq!(names, ["saxpy.wgsl", "saxpy.json", "kernels.js", "kernels.d.ts"]);
//! // export.write_to(std::path::Path::new("out"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The manifest (format version 1)
//! One JSON object per kernel, [`Manifest`]:
//!
//! | field | meaning |
//! |---|---|
//! | `format_version` | `1`; a reader refuses other versions ([`FORMAT_VERSION`]). Additions that old readers may ignore keep the version; any other change increments it. |
//! | `kernel` | the kernel's name (given to `KernelBuilder::new`) |
//! | `entry_point` | the entry point's name in the WGSL (naga's namer may append `_`: `layer1_`) |
//! | `wgsl` | the WGSL file's name, beside the manifest |
//! | `workgroup_size` | `@workgroup_size(x, y, z)` |
//! | `capabilities` | naga capabilities beyond portable WGSL (`SUBGROUP`, `SHADER_FLOAT16`, ...) |
//! | `features` | the WebGPU features those need (`shader-f16`, `subgroups`); a capability WebGPU lacks (`COOPERATIVE_MATRIX`) has none |
//! | `limits` | what the kernel needs of each WebGPU limit it can exceed, by the limit's WebGPU name (`maxComputeWorkgroupStorageSize`: bytes of `var<workgroup>` memory the entry point uses, each variable rounded up to 16; `maxStorageBuffersPerShaderStage`; `maxStorageBufferBindingSize`: the largest minimum binding size; ...) |
//! | `bindings` | in binding order, [`Binding`]: `name` (the author's), `wgsl_name` (the global variable's name in the WGSL), `group`, `binding`, `resource` (`uniform`, `storage`, `read-only-storage` as WebGPU's `GPUBufferBindingType`; `storage-texture`, `texture`), `access` (WGSL's: `read`, `read_write`, `write`), `min_binding_size` (bytes; a runtime-sized array counts one element, WGSL spec §14.4 / WebGPU "minimum binding size"), `type` |
//!
//! A `type` ([`TypeLayout`]) is an object with a `kind` (`scalar`, `vector`, `matrix`,
//! `atomic`, `array`, `struct`, `storage_texture`, `texture`), its WGSL spelling (`wgsl`, with
//! the struct names the WGSL uses) and its layout in bytes (WGSL spec §14.4 "Memory Layout",
//! computed by naga): `size` and `align`; arrays add `length` (`null` when runtime-sized, and
//! then `size` is `null`), `stride` and `element`; structs add `members`, each with `name`
//! (as in the WGSL), `offset` and `type`; vectors and matrices their `scalar` and shape.
//!
//! # The JavaScript module
//! `kernels.js` (an ES module, no dependencies, no bundler) exports `FORMAT_VERSION`,
//! `manifests` (every kernel's manifest by name), `deviceDescriptor(adapter)` (the features
//! and limits above WebGPU's defaults that the kernels need, for `adapter.requestDevice`),
//! and per kernel `create_<kernel>(device, {code?, baseUrl?})`, which fetches
//! `<kernel>.wgsl` beside the module (or takes `code`), compiles it with an explicit bind
//! group layout from the manifest, and resolves to an object whose
//! `bindGroup({binding name: GPUBuffer, ...})` checks every buffer (present, its usage, at
//! least its minimum binding size) and whose `dispatch(pass, buffersOrBindGroup,
//! [x, y, z])` checks the workgroup counts and records the dispatch. For each struct a
//! binding holds, `encode_<Struct>({member: value, ...})` gives its bytes in the WGSL layout
//! (numeric scalar, vector, fixed-size array and struct members; members whose name starts
//! with `_`, padding, default to 0). `kernels.d.ts` declares the same for TypeScript.

mod js;
mod manifest;

use std::collections::BTreeMap;
use std::path::Path;

use naga::proc::NameKey;
use serde::Serialize;

use crate::kernel::BindingKind;
use crate::shader::Shader;

pub use manifest::{
    Access, Binding, ExportError, FORMAT_VERSION, Manifest, Member, Resource, TypeLayout,
};

/// One file of an [`Export`]: its name in the output directory and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    /// The file's name (no directory).
    pub name: String,
    /// Its text.
    pub contents: String,
}

/// Exported kernels, in memory: their manifests and the files to write
/// ([`Export::write_to`]).
#[derive(Clone, Debug)]
pub struct Export {
    manifests: Vec<Manifest>,
    files: Vec<File>,
}

impl Export {
    /// The manifests, in the order the kernels were given.
    pub fn manifests(&self) -> &[Manifest] {
        &self.manifests
    }

    /// The files: per kernel `<kernel>.wgsl` and `<kernel>.json`, in the order the kernels were
    /// given, then `kernels.js` and `kernels.d.ts`.
    pub fn files(&self) -> &[File] {
        &self.files
    }

    /// Write every file into `dir` (created if missing), each to a temporary name beside it
    /// first and renamed into place, so no file is ever half-written.
    ///
    /// # Errors
    /// [`ExportError::Io`] naming the file that could not be written.
    pub fn write_to(&self, dir: &Path) -> Result<(), ExportError> {
        let io = |path: &Path, e: std::io::Error| ExportError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        for f in &self.files {
            let path = dir.join(&f.name);
            let tmp = dir.join(format!(".{}.tmp", f.name));
            std::fs::write(&tmp, &f.contents).map_err(|e| io(&tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io(&path, e)
            })?;
        }
        Ok(())
    }
}

/// Export `shaders`: see the [module docs](self).
///
/// # Errors
/// [`ExportError::DuplicateKernel`], [`ExportError::NameCollision`], [`ExportError::Layout`].
pub fn export(shaders: &[&Shader]) -> Result<Export, ExportError> {
    let mut seen = std::collections::HashSet::new();
    let mut manifests = Vec::with_capacity(shaders.len());
    let mut files = Vec::with_capacity(2 * shaders.len() + 2);
    for shader in shaders {
        let m = manifest(shader)?;
        if !seen.insert(m.kernel.clone()) {
            return Err(ExportError::DuplicateKernel(m.kernel));
        }
        files.push(File {
            name: m.wgsl.clone(),
            contents: shader.wgsl.clone(),
        });
        files.push(File {
            name: format!("{}.json", m.kernel),
            contents: to_json(&m),
        });
        manifests.push(m);
    }
    let (js, dts) = js::module(&manifests)?;
    files.push(File {
        name: "kernels.js".into(),
        contents: js,
    });
    files.push(File {
        name: "kernels.d.ts".into(),
        contents: dts,
    });
    Ok(Export { manifests, files })
}

/// [`export`], then [`Export::write_to`] `dir`.
///
/// # Errors
/// As both.
pub fn write(dir: &Path, shaders: &[&Shader]) -> Result<Export, ExportError> {
    let e = export(shaders)?;
    e.write_to(dir)?;
    Ok(e)
}

/// Pretty JSON and a final newline. A manifest has no map keys that are not strings and no
/// floats, so serializing it cannot fail.
fn to_json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// The manifest of one kernel.
///
/// # Errors
/// [`ExportError::Layout`] if the module cannot be laid out or lacks a declared binding.
pub fn manifest(shader: &Shader) -> Result<Manifest, ExportError> {
    let sig = &shader.signature;
    let module = &shader.module;
    let layout_err = |message: String| ExportError::Layout {
        kernel: sig.name.clone(),
        message,
    };
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| layout_err(e.to_string()))?;
    let names = crate::shader::wgsl_names(module);
    let types = Types {
        module,
        layouter: &layouter,
        names: &names,
    };
    let mut bindings = Vec::with_capacity(sig.bindings.len());
    for b in &sig.bindings {
        let want = naga::ResourceBinding {
            group: b.group,
            binding: b.binding,
        };
        let (handle, var) = module
            .global_variables
            .iter()
            .find(|(_, v)| v.binding.as_ref() == Some(&want))
            .ok_or_else(|| {
                layout_err(format!(
                    "binding {} `{}` is declared but not in the module",
                    b.binding, b.name
                ))
            })?;
        let (resource, access) = match b.kind {
            BindingKind::Uniform => (Resource::Uniform, Access::Read),
            BindingKind::StorageRead => (Resource::ReadOnlyStorage, Access::Read),
            BindingKind::StorageReadWrite => (Resource::Storage, Access::ReadWrite),
            BindingKind::Texture => match &module.types[var.ty].inner {
                naga::TypeInner::Image {
                    class: naga::ImageClass::Storage { access, .. },
                    ..
                } => (Resource::StorageTexture, texture_access(*access)),
                _ => (Resource::Texture, Access::Read),
            },
        };
        let min_binding_size = match resource {
            Resource::StorageTexture | Resource::Texture => 0,
            _ => u64::from(layouter[var.ty].size),
        };
        bindings.push(Binding {
            name: b.name.clone(),
            wgsl_name: names
                .get(&NameKey::GlobalVariable(handle))
                .cloned()
                .unwrap_or_else(|| b.name.clone()),
            group: b.group,
            binding: b.binding,
            resource,
            access,
            min_binding_size,
            ty: types.layout(var.ty),
        });
    }
    let capabilities: Vec<String> = sig
        .capabilities
        .iter_names()
        .map(|(name, _)| name.to_string())
        .collect();
    let mut features: Vec<String> = sig
        .capabilities
        .iter()
        .filter_map(webgpu_feature)
        .map(str::to_string)
        .collect();
    features.dedup();
    Ok(Manifest {
        format_version: FORMAT_VERSION,
        kernel: sig.name.clone(),
        entry_point: sig.entry_point.clone(),
        wgsl: format!("{}.wgsl", sig.name),
        workgroup_size: shader.entry_workgroup_size(),
        capabilities,
        features,
        limits: limits(shader, &layouter, &bindings),
        bindings,
    })
}

/// The WebGPU feature a naga capability needs (WebGPU spec §24 "Feature Index").
fn webgpu_feature(c: naga::valid::Capabilities) -> Option<&'static str> {
    use naga::valid::Capabilities as C;
    if c == C::SHADER_FLOAT16 {
        Some("shader-f16")
    } else if c == C::SUBGROUP || c == C::SUBGROUP_BARRIER {
        Some("subgroups")
    } else {
        None
    }
}

fn texture_access(a: naga::StorageAccess) -> Access {
    let load = a.contains(naga::StorageAccess::LOAD);
    let store = a.contains(naga::StorageAccess::STORE);
    match (load, store) {
        (true, true) => Access::ReadWrite,
        (false, true) => Access::Write,
        _ => Access::Read,
    }
}

/// What the kernel needs of each WebGPU limit it can exceed (the limits `Gpu::compile`
/// checks, by their WebGPU names), counted as WebGPU counts them.
fn limits(
    shader: &Shader,
    layouter: &naga::proc::Layouter,
    bindings: &[Binding],
) -> BTreeMap<String, u64> {
    let size = shader.entry_workgroup_size();
    let workgroup_bytes = shader.workgroup_bytes(layouter);
    let count = |r: Resource| bindings.iter().filter(|b| b.resource == r).count() as u64;
    let largest = |rs: &[Resource]| {
        bindings
            .iter()
            .filter(|b| rs.contains(&b.resource))
            .map(|b| b.min_binding_size)
            .max()
            .unwrap_or(0)
    };
    let storage = [Resource::Storage, Resource::ReadOnlyStorage];
    let entries: [(&str, u64); 12] = [
        ("maxComputeWorkgroupSizeX", size[0].into()),
        ("maxComputeWorkgroupSizeY", size[1].into()),
        ("maxComputeWorkgroupSizeZ", size[2].into()),
        (
            "maxComputeInvocationsPerWorkgroup",
            size.iter().map(|&s| u64::from(s)).product(),
        ),
        ("maxComputeWorkgroupStorageSize", workgroup_bytes),
        (
            "maxStorageBuffersPerShaderStage",
            count(Resource::Storage) + count(Resource::ReadOnlyStorage),
        ),
        ("maxUniformBuffersPerShaderStage", count(Resource::Uniform)),
        (
            "maxStorageTexturesPerShaderStage",
            count(Resource::StorageTexture),
        ),
        ("maxSampledTexturesPerShaderStage", count(Resource::Texture)),
        (
            "maxBindingsPerBindGroup",
            bindings
                .iter()
                .map(|b| u64::from(b.binding) + 1)
                .max()
                .unwrap_or(0),
        ),
        ("maxStorageBufferBindingSize", largest(&storage)),
        ("maxUniformBufferBindingSize", largest(&[Resource::Uniform])),
    ];
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The module's types, laid out and named as the WGSL writes them.
struct Types<'a> {
    module: &'a naga::Module,
    layouter: &'a naga::proc::Layouter,
    names: &'a naga::FastHashMap<NameKey, String>,
}

impl naga::common::wgsl::TypeContext for Types<'_> {
    fn lookup_type(&self, handle: naga::Handle<naga::Type>) -> &naga::Type {
        &self.module.types[handle]
    }

    fn type_name(&self, handle: naga::Handle<naga::Type>) -> &str {
        self.names
            .get(&NameKey::Type(handle))
            .map(String::as_str)
            .or(self.module.types[handle].name.as_deref())
            .unwrap_or("{anonymous type}")
    }

    fn write_unnamed_struct<W: std::fmt::Write>(
        &self,
        _: &naga::TypeInner,
        out: &mut W,
    ) -> std::fmt::Result {
        out.write_str("{unnamed struct}")
    }

    fn write_override<W: std::fmt::Write>(
        &self,
        handle: naga::Handle<naga::Override>,
        out: &mut W,
    ) -> std::fmt::Result {
        match &self.module.overrides[handle].name {
            Some(name) => out.write_str(name),
            None => out.write_str("{anonymous override}"),
        }
    }
}

impl Types<'_> {
    fn wgsl(&self, ty: naga::Handle<naga::Type>) -> String {
        use naga::common::wgsl::TypeContext;
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = self.write_type(ty, &mut s);
        s
    }

    fn layout(&self, ty: naga::Handle<naga::Type>) -> TypeLayout {
        let l = self.layouter[ty];
        let (size, align) = (l.size, l.alignment.round_up(1));
        let wgsl = self.wgsl(ty);
        let scalar_name = |s: naga::Scalar| scalar_wgsl(s);
        match &self.module.types[ty].inner {
            naga::TypeInner::Scalar(_) => TypeLayout::Scalar { wgsl, size, align },
            naga::TypeInner::Vector { size: n, scalar } => TypeLayout::Vector {
                wgsl,
                size,
                align,
                components: *n as u32,
                scalar: scalar_name(*scalar),
            },
            naga::TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => TypeLayout::Matrix {
                wgsl,
                size,
                align,
                columns: *columns as u32,
                rows: *rows as u32,
                scalar: scalar_name(*scalar),
                column_stride: size / (*columns as u32),
            },
            naga::TypeInner::Atomic(s) => TypeLayout::Atomic {
                wgsl,
                size,
                align,
                scalar: scalar_name(*s),
            },
            naga::TypeInner::Array {
                base,
                size: n,
                stride,
            } => {
                let length = match n {
                    naga::ArraySize::Constant(c) => Some(c.get()),
                    _ => None,
                };
                TypeLayout::Array {
                    wgsl,
                    size: length.map(|_| size),
                    align,
                    length,
                    stride: *stride,
                    element: Box::new(self.layout(*base)),
                }
            }
            naga::TypeInner::Struct { members, .. } => TypeLayout::Struct {
                wgsl,
                size,
                align,
                members: members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| Member {
                        name: self
                            .names
                            .get(&NameKey::StructMember(ty, i as u32))
                            .cloned()
                            .or_else(|| m.name.clone())
                            .unwrap_or_default(),
                        offset: m.offset,
                        ty: self.layout(m.ty),
                    })
                    .collect(),
            },
            naga::TypeInner::Image {
                class: naga::ImageClass::Storage { format, access },
                ..
            } => {
                use naga::common::wgsl::ToWgsl;
                TypeLayout::StorageTexture {
                    wgsl,
                    format: format.to_wgsl().to_string(),
                    access: match texture_access(*access) {
                        Access::Read => "read-only",
                        Access::Write => "write-only",
                        Access::ReadWrite => "read-write",
                    }
                    .to_string(),
                    dimension: "2d".into(),
                }
            }
            naga::TypeInner::Image {
                class: naga::ImageClass::Sampled { kind, .. },
                ..
            } => TypeLayout::Texture {
                wgsl,
                sample_type: match kind {
                    naga::ScalarKind::Sint => "sint",
                    naga::ScalarKind::Uint => "uint",
                    _ => "unfilterable-float",
                }
                .into(),
                dimension: "2d".into(),
            },
            // Nothing else can be a binding's store type or inside one in a validated kernel
            // the DSL builds; described by its WGSL spelling and size.
            _ => TypeLayout::Scalar { wgsl, size, align },
        }
    }
}

fn scalar_wgsl(s: naga::Scalar) -> String {
    use naga::common::wgsl::TryToWgsl;
    s.to_wgsl_for_diagnostics()
}
