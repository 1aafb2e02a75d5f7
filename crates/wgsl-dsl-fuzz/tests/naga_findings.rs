//! What the kernel fuzzer found in naga 30 (FUZZING.md, "Findings"), each as the minimal
//! WGSL that shows it, so that the fuzzer's workaround can go when naga changes: these tests
//! then fail and say so.

use wgsl_dsl::naga;

fn parse(wgsl: &str) -> naga::Module {
    naga::front::wgsl::parse_str(wgsl).unwrap_or_else(|e| panic!("{}", e.emit_to_string(wgsl)))
}

fn validate(
    m: &naga::Module,
    caps: naga::valid::Capabilities,
) -> Result<naga::valid::ModuleInfo, String> {
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(m)
        .map_err(|e| e.as_inner().to_string())
}

/// WGSL's `frexp` of an `f16` returns `__frexp_result_f16 { fract: f16, exp: i32 }` (WGSL
/// spec §17.5, `frexp`); naga 30 types the exponent `i16`: its front end refuses to store it
/// into an `i32`, and a module built with naga's predeclared type (as the DSL's lowering
/// does) fails validation without `SHADER_INT16`. The fuzzer generates no `frexp` of `f16`.
#[test]
fn naga_frexp_of_f16_predeclares_an_i16_exponent() {
    let wgsl = "enable f16;
@group(0) @binding(0) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(1) fn main() { out[0] = frexp(1.5h).exp; }";
    let err = naga::front::wgsl::parse_str(wgsl).map(|_| ()).expect_err(
        "naga now types frexp(f16).exp as i32: re-enable it in the fuzzer (analysis_math::split)",
    );
    let msg = err.emit_to_string(wgsl);
    assert!(msg.contains("i16"), "{msg}");
}

/// naga's WGSL writer names values that end in a digit with a `_` appended, and names its
/// own temporaries `_eN`; re-parsed, `_eN` is such a name, so writing the re-parsed module
/// gives `_eN_`: the writer's output is not a fixed point of parse and write. The fuzzer's
/// oracle (b) therefore compares meaning (the re-parsed module run on the interpreter), not
/// text.
#[test]
fn naga_writer_output_is_not_a_fixed_point_of_parse_and_write() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { let a = out[1]; out[0] = a + out[2]; }";
    let write = |m: &naga::Module| {
        let info = validate(m, naga::valid::Capabilities::all()).unwrap();
        naga::back::wgsl::write_string(m, &info, naga::back::wgsl::WriterFlags::empty()).unwrap()
    };
    let once = write(&parse(wgsl));
    let twice = write(&parse(&once));
    assert!(once.contains("_e"), "{once}");
    assert_ne!(
        once, twice,
        "naga's round trip is now a fixed point: tighten oracle (b)"
    );
}

/// A `let` is not a const-expression in WGSL (spec §7.4, §8.1.1): `x << s` with `let s = 40u`
/// is a run-time shift (the amount taken modulo 32, §8.9) and `x / d` with `let d = 0i` a
/// run-time division (`x`, §8.7). naga 30's front end folds such `let`s as constants and its
/// validator then refuses the module ("Shift amount exceeds the bit width", "Division by
/// zero"). The fuzzer does not use `let`s of constants as shift amounts or divisors.
#[test]
fn naga_folds_a_let_of_a_constant_and_refuses_a_run_time_shift() {
    for body in [
        "let s = 40u; out[0] = out[1] << s;",
        "let d = 0i; out[0] = out[1] / d;",
    ] {
        let wgsl = format!(
            "@group(0) @binding(0) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(1) fn main() {{ {body} }}"
        );
        let refused = match naga::front::wgsl::parse_str(&wgsl) {
            Err(_) => true,
            Ok(m) => validate(&m, naga::valid::Capabilities::all()).is_err(),
        };
        assert!(
            refused,
            "naga now accepts `{body}`: let the fuzzer use such lets again"
        );
    }
}
