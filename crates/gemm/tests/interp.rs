//! The GEMM kernels on the CPU interpreter (`wgsl_dsl::interp`), which checks every access for
//! bounds and data races: the SIMT kernel against the specification on odd sizes in every
//! layout (scalar accesses: the sizes are not multiples of 4), and the cooperative kernel
//! refused with `Unsupported`, since the interpreter does not execute cooperative matrices.

use wgsl_dsl::TargetLimits;
use wgsl_dsl::interp::{HostBuffer, InterpError, Interpreter};
use wgsl_gemm::harness::random;
use wgsl_gemm::{CoopConfig, CoopInput, Layout, Problem, SimtConfig, TileConfig, spec};

#[test]
fn simt_kernel_on_the_interpreter_matches_the_specification() {
    let cpu = Interpreter::new();
    let target = TargetLimits::default();
    for (seed, layout) in Layout::ALL.into_iter().enumerate() {
        for (m, n, k) in [(1, 1, 1), (37, 45, 61), (19, 7, 33)] {
            let p = Problem { m, n, k, layout };
            let config = SimtConfig::choose(&p, &target);
            assert!(
                !config.vector_a && !config.vector_b && !config.vector_c,
                "odd sizes take scalar accesses"
            );
            let shader = wgsl_gemm::simt::build(&config)
                .build_for(&target)
                .expect("builds");
            let program = cpu.compile(&shader).expect("the interpreter takes it");
            let a = random(p.a_len(), seed as u64);
            let b = random(p.b_len(), seed as u64 + 1);
            let dims = HostBuffer::from_value(p.dims());
            let ab = HostBuffer::from_slice(&a);
            let bb = HostBuffer::from_slice(&b);
            let cb = HostBuffer::from_slice(&vec![f32::NAN; p.c_len()]);
            cpu.dispatch(&program, &[&dims, &ab, &bb, &cb], config.grid(&p))
                .unwrap_or_else(|e| panic!("{}: {e}", config.kernel_name()));
            let widen = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
            spec::check(
                &p,
                &widen(&a),
                &widen(&b),
                &cb.read(),
                spec::simt_bound(p.k),
                None,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", config.kernel_name()));
        }
    }
}

#[test]
fn cooperative_kernel_is_refused_by_the_interpreter() {
    let target = wgsl_gemm::h200_limits();
    let p = Problem {
        m: 37,
        n: 45,
        k: 61,
        layout: Layout::ABt,
    };
    let config = CoopConfig::choose(&p, CoopInput::F16, &target, 32);
    let shader = wgsl_gemm::coop::build(&config)
        .build_for(&target)
        .expect("builds");
    match Interpreter::new().compile(&shader) {
        Err(e @ InterpError::Unsupported { .. }) => {
            assert!(e.to_string().contains("CooperativeMatrix"), "{e}");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("the interpreter does not execute cooperative matrices"),
    }
}
