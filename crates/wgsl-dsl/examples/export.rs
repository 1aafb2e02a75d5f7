//! Export kernels for hosts that load WGSL themselves (a browser page, an engine): per kernel
//! its `.wgsl` and a manifest of its ABI (`.json`), and a JavaScript module (`kernels.js`,
//! `kernels.d.ts`) with a typed function per kernel. No GPU needed.
//!
//! ```text
//! cargo run -p wgsl-dsl --example export -- out/kernels     # default: target/wgsl-export
//! ```
//!
//! The kernels: `saxpy` (a uniform scalar, two storage buffers), `blur_rows` (a uniform
//! struct, `#[kernel]`) and `histogram` (atomics). The MLP's kernels are exported by
//! `mnist export-web` (with a page that runs them) and checked by the workspace test
//! `tests/export.rs`.

use std::path::PathBuf;

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::KernelDef;

/// The sizes of a `[rows, cols]` image.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct ImageSize {
    rows: u32,
    cols: u32,
    _pad0: u32,
    _pad1: u32,
}

/// `out[r, c] = (img[r, c - 1] + img[r, c] + img[r, c + 1]) / 3`, edges clamped.
#[kernel(workgroup_size = [16, 16, 1])]
fn blur_rows(
    #[uniform] size: ImageSize,
    #[storage(read)] img: &[f32],
    #[storage(read_write)] out: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let c = gid.x;
    let r = gid.y;
    if r < size.rows && c < size.cols {
        let base = r * size.cols;
        let left = select(c - 1u32, 0u32, c == 0u32);
        let right = min(c + 1u32, size.cols - 1u32);
        out[base + c] = (img[base + left] + img[base + c] + img[base + right]) / 3.0;
    }
}

#[path = "kernels/saxpy.rs"]
mod saxpy;

use saxpy::saxpy;

/// `bins[v % 16] += 1` for each value `v`.
#[kernel(workgroup_size = 64)]
fn histogram(
    #[storage(read)] values: &[u32],
    #[storage(read_write)] bins: &mut [Atomic<u32>],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < values.len() {
        let _ = bins[values[i] % 16u32].atomic_add(1u32);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/wgsl-export"), PathBuf::from);
    let shaders = [
        saxpy().build()?,
        BlurRows.build().build()?,
        Histogram.build().build()?,
    ];
    let refs: Vec<&Shader> = shaders.iter().collect();
    let export = wgsl_dsl::export::write(&dir, &refs)?;
    for f in export.files() {
        println!("{}", dir.join(&f.name).display());
    }
    Ok(())
}
