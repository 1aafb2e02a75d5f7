//! Every MLP kernel against its `f64` reference on the interpreter (no GPU needed): random
//! inputs of odd sizes, outputs poisoned before the run, relative error <= 1e-5, and no race,
//! out-of-bounds access or divergent barrier.

use mlp::kernels::verify::compare;
use mlp::kernels::{Case, CaseArg, CaseSizes, Role, UniformValue, Values, VerifiedOp};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter};

const TOL: f64 = 1e-5;

fn run_case(cpu: &Interpreter, op: &dyn VerifiedOp, case: &Case) -> Result<Vec<Values>, String> {
    let shader = op.build().build().map_err(|e| e.to_string())?;
    let program = cpu.compile(&shader).map_err(|e| e.to_string())?;
    enum Buf {
        F32(HostBuffer<f32>),
        U32(HostBuffer<u32>),
        Other(Box<dyn HostArg>),
    }
    let mut bufs = Vec::new();
    for arg in &case.args {
        bufs.push(match arg {
            CaseArg::F32(v, Role::Output) => {
                Buf::F32(HostBuffer::from_slice(&vec![f32::NAN; v.len()]))
            }
            CaseArg::F32(v, _) => Buf::F32(HostBuffer::from_slice(v)),
            CaseArg::U32(v, Role::Output) | CaseArg::AtomicU32(v, Role::Output) => {
                Buf::U32(HostBuffer::from_slice(&vec![0xDEAD_BEEF; v.len()]))
            }
            CaseArg::U32(v, _) | CaseArg::AtomicU32(v, _) => Buf::U32(HostBuffer::from_slice(v)),
            CaseArg::Uniform(u) => Buf::Other(match *u {
                UniformValue::Linear(x) => Box::new(HostBuffer::from_value(x)),
                UniformValue::Loss(x) => Box::new(HostBuffer::from_value(x)),
                UniformValue::Gather(x) => Box::new(HostBuffer::from_value(x)),
                UniformValue::Sgd(x) => Box::new(HostBuffer::from_value(x)),
                UniformValue::Adam(x) => Box::new(HostBuffer::from_value(x)),
                UniformValue::Eval(x) => Box::new(HostBuffer::from_value(x)),
            }),
        });
    }
    let args: Vec<&dyn HostArg> = bufs
        .iter()
        .map(|b| match b {
            Buf::F32(b) => b as &dyn HostArg,
            Buf::U32(b) => b as &dyn HostArg,
            Buf::Other(b) => b.as_ref(),
        })
        .collect();
    let report = cpu
        .dispatch(&program, &args, case.workgroups)
        .map_err(|e| e.to_string())?;
    if let Some(w) = report.warnings.first() {
        return Err(format!("warning: {w}"));
    }
    Ok(case
        .outputs()
        .into_iter()
        .map(|i| match &bufs[i] {
            Buf::F32(b) => Values::F32(b.read().into_iter().map(f64::from).collect()),
            Buf::U32(b) => Values::U32(b.read()),
            Buf::Other(_) => unreachable!("uniforms are never outputs"),
        })
        .collect())
}

#[test]
fn every_mlp_kernel_matches_its_reference_on_the_interpreter() {
    let cpu = Interpreter::new();
    let sizes = [
        CaseSizes::default(),
        CaseSizes {
            batch: 5,
            inputs: 17,
            outputs: 3,
            classes: 2,
        },
    ];
    let mut failures = Vec::new();
    for op in mlp::kernels::all() {
        for (i, s) in sizes.iter().enumerate() {
            let seed = 100 + i as u64;
            let case = op.case(&mut ChaCha8Rng::seed_from_u64(seed), s);
            let expected = op.spec(&case);
            match run_case(&cpu, op.as_ref(), &case) {
                Ok(actual) => {
                    if let Err(m) = compare(op.name(), &actual, &expected, TOL) {
                        failures.push(format!("{m} (sizes {s:?})"));
                    }
                }
                Err(e) => failures.push(format!("{} (sizes {s:?}): {e}", op.name())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
