//! Reduce a WGSL kernel that makes the driver abort the process (lavapipe's LLVM "Cannot
//! select", FUZZING.md lavapipe finding 2) by deleting lines, each candidate compiled in a
//! child process so the abort does not end the reducer.
//!
//! `cargo run -p wgsl-dsl-fuzz --example reduce_abort -- kernel.wgsl > small.wgsl`: deletes
//! chunks of lines (halves down to single lines, repeated until none goes) while naga still
//! validates the text and the child still dies of a signal. `--compile FILE` is the child:
//! it creates the compute pipeline of `FILE` on the default adapter and dispatches it once.

use std::process::Command;

use wgsl_dsl::naga;
use wgsl_dsl::runtime::{Gpu, wgpu};

fn compile(path: &str) {
    let text = std::fs::read_to_string(path).expect("read the WGSL");
    let gpu = Gpu::new().expect("a GPU adapter");
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        // As the DSL's runtime hands its modules to wgpu: as naga IR, not as text.
        source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(
            naga::front::wgsl::parse_str(&text).expect("WGSL"),
        )),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: None,
        compilation_options: Default::default(),
        cache: None,
    });
    // lavapipe compiles the shader's variant at the first dispatch: bind a small buffer to
    // each binding of group 0 and dispatch one workgroup.
    let m = naga::front::wgsl::parse_str(&text).expect("WGSL");
    let buffers: Vec<(u32, wgpu::Buffer)> = m
        .global_variables
        .iter()
        .filter_map(|(_, g)| {
            let b = g.binding.as_ref()?;
            let uniform = g.space == naga::AddressSpace::Uniform;
            let usage = if uniform {
                wgpu::BufferUsages::UNIFORM
            } else {
                wgpu::BufferUsages::STORAGE
            };
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 256,
                usage,
                mapped_at_creation: false,
            });
            Some((b.binding, buffer))
        })
        .collect();
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    gpu.queue().submit([encoder.finish()]);
    device.poll(wgpu::PollType::wait_indefinitely()).ok();
}

/// naga parses and validates `text` with one compute entry point.
fn valid(text: &str) -> bool {
    let Ok(m) = naga::front::wgsl::parse_str(text) else {
        return false;
    };
    m.entry_points.len() == 1
        && naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&m)
        .is_ok()
}

/// The child compiling `lines` dies of a signal (the abort), not of an error exit.
fn aborts(lines: &[String], checks: &mut usize) -> bool {
    let text = lines.join("\n");
    if !valid(&text) {
        return false;
    }
    *checks += 1;
    let path = std::env::temp_dir().join(format!("reduce_abort_{}.wgsl", std::process::id()));
    std::fs::write(&path, &text).expect("write the candidate");
    let exe = std::env::current_exe().expect("this program");
    let status = Command::new(exe)
        .arg("--compile")
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run the child");
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--compile" {
        compile(&args[2]);
        return;
    }
    let path = args.get(1).expect("usage: reduce_abort kernel.wgsl");
    let text = std::fs::read_to_string(path).expect("read the WGSL");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut checks = 0;
    assert!(
        aborts(&lines, &mut checks),
        "the kernel does not abort the child"
    );
    loop {
        let before = lines.len();
        let mut chunk = lines.len() / 2;
        while chunk >= 1 {
            let mut i = 0;
            while i < lines.len() {
                let mut cand = lines.clone();
                cand.drain(i..(i + chunk).min(lines.len()));
                if aborts(&cand, &mut checks) {
                    lines = cand;
                    eprintln!("{} lines ({checks} checks)", lines.len());
                } else {
                    i += chunk;
                }
            }
            chunk /= 2;
        }
        if lines.len() >= before {
            break;
        }
    }
    eprintln!("{} lines after {checks} checks", lines.len());
    println!("{}", lines.join("\n"));
}
