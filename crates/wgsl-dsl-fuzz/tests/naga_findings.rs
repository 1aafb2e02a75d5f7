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

/// WGSL's `pack2x16snorm` and `pack4x8snorm` round each `32767 * e` (`127 * e`) as
/// `floor(0.5 + x)` (WGSL spec §17.9); naga's SPIR-V backend lowers them to GLSL.std.450
/// `PackSnorm2x16` and `PackSnorm4x8`, whose `round` leaves halves to the implementation
/// (GLSL.std.450 §`Round`), so at the one tie that differs, a component of `-0.5`, a driver
/// may give `-k - 1` where WGSL says `-k` (lavapipe does: `tests/lavapipe_findings.rs`). The
/// fuzzer's analysis refuses snorm packs of a component that may be `-0.5`
/// (`analysis_math::call`, FUZZING.md naga finding 4).
#[test]
fn naga_spirv_lowers_the_snorm_packs_to_glsl_round() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read_write> inp: array<f32>;
@compute @workgroup_size(1) fn main() {
    out[0] = pack2x16snorm(vec2(inp[0], inp[1]));
    out[1] = pack4x8snorm(vec4(inp[0], inp[1], inp[2], inp[3]));
}";
    let m = parse(wgsl);
    let info = validate(&m, naga::valid::Capabilities::all()).unwrap();
    let words = naga::back::spv::write_vec(&m, &info, &naga::back::spv::Options::default(), None)
        .expect("SPIR-V");
    // OpExtInst (opcode 12): result type, result id, set, instruction, operands.
    let ext: Vec<u32> = (0..words.len().saturating_sub(4))
        .filter(|&i| words[i] & 0xffff == 12 && words[i] >> 16 >= 5)
        .map(|i| words[i + 4])
        .collect();
    const PACK_SNORM_4X8: u32 = 54;
    const PACK_SNORM_2X16: u32 = 56;
    assert!(
        ext.contains(&PACK_SNORM_2X16) && ext.contains(&PACK_SNORM_4X8),
        "naga no longer lowers the snorm packs to GLSL.std.450 PackSnorm* ({ext:?}): \
         check the tie on lavapipe and let the fuzzer pack -0.5 again"
    );
}

fn write(m: &naga::Module) -> String {
    let info = validate(m, naga::valid::Capabilities::all()).unwrap();
    naga::back::wgsl::write_string(m, &info, naga::back::wgsl::WriterFlags::empty()).unwrap()
}

/// naga's front end inlines a `let` of a constant into its uses (finding 3) without folding
/// the expressions it lands in, so the comparison it ends up in is folded only when the
/// re-emitted text is parsed again: `if (0u <= 1u)` once, `if true` twice. Oracle (b)
/// therefore lets a round trip take up to three rounds to reach its fixed point.
#[test]
fn naga_round_trip_folds_an_inlined_let_only_on_the_next_round() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { let s = 0u; if s <= 1u { out[0] = out[1]; } }";
    let once = write(&parse(wgsl));
    let twice = write(&parse(&once));
    assert!(
        once.contains("(0u <= 1u)") && twice.contains("if true"),
        "naga folds an inlined let in one round now: oracle (b) may ask for a fixed point \
         after one round\n{once}\n{twice}"
    );
    assert_eq!(twice, write(&parse(&twice)));
}

/// naga's WGSL writer writes `enable f16;` only when the module's type arena has an `f16`
/// type, and its front end does not put the type of an `f16` literal there: a module whose
/// only `f16`s are literals is re-emitted without the directive, and that text does not
/// parse. Oracle (b) puts the directive back before parsing a re-emission again.
#[test]
fn naga_writer_drops_enable_f16_when_only_literals_are_f16() {
    let wgsl = "enable f16;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main() { out[0] = f32(select(1.5h, 2.5h, out[1] > 0.0)); }";
    let once = write(&parse(wgsl));
    assert!(once.contains("1.5h"), "{once}");
    assert!(
        !once.contains("enable f16;"),
        "naga's writer now declares f16 for literals: drop oracle (b)'s rule\n{once}"
    );
    assert!(naga::front::wgsl::parse_str(&once).is_err());
}

/// naga's WGSL writer prints a component of a unary operation's result without parentheses
/// around the operation: `(-v).y` is written `-(v).y`, which WGSL parses as `-(v.y)` (a
/// postfix binds tighter than a unary operator, WGSL spec §8.19). The value is the same for
/// every unary operator (each is component-wise), so oracle (b) counts such a module among
/// those the front end rewrites (`oracle::front_end_rewrites`) and compares its meaning.
#[test]
fn naga_writer_leaves_a_unary_operand_of_a_component_unparenthesised() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main() { out[0] = (-vec2(out[1], out[2])).y; }";
    let m = parse(wgsl);
    let once = write(&m);
    let twice = write(&parse(&once));
    assert!(
        once.contains(")).y;") && !twice.contains(")).y;"),
        "naga's writer now parenthesises a unary operand of a component: drop the rule in \
         oracle::front_end_rewrites\n{once}\n{twice}"
    );
}

/// The SPIR-V opcodes naga writes for `wgsl` (with every capability allowed, as wgpu does on
/// an adapter with `shaderInt8`), each with its operand words: `(opcode, words)`.
fn spirv_ops(
    wgsl: &str,
    capabilities: Option<naga::FastHashSet<naga::back::spv::Capability>>,
) -> Vec<(u32, Vec<u32>)> {
    let m = parse(wgsl);
    let info = validate(&m, naga::valid::Capabilities::all()).unwrap();
    let options = naga::back::spv::Options {
        capabilities,
        ..naga::back::spv::Options::default()
    };
    let words = naga::back::spv::write_vec(&m, &info, &options, None).expect("SPIR-V");
    let mut ops = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        ops.push((words[i] & 0xffff, words[i + 1..i + n].to_vec()));
        i += n.max(1);
    }
    ops
}

/// NVIDIA finding 1 (FUZZING.md): the H200's driver drops the store of
/// `(unpack4xI8(u) + vec4(x) / vec4(3i)).z` (and every later store). naga's SPIR-V for it,
/// where the `Int8` capability is available (wgpu allows it on adapters with `shaderInt8`,
/// the H200 among them), is the "optimized" form: `OpBitcast` of the `u32` to a `vec4` of
/// 8-bit integers and `OpSConvert` to `vec4<i32>` (`OpCapability Int8`; no extension but
/// SPV_KHR_storage_buffer_storage_class, and none of SPV_KHR_integer_dot_product's
/// packed-vector instructions), then the division as naga's usual guarded `OpSDiv` helper
/// function (`OpFunctionCall`), and `OpIAdd` of the two. Each is valid SPIR-V 1.0 with `Int8` (an
/// 8-bit type needs no storage capability outside memory), and each half alone runs right
/// on the H200, so the fault is the driver's. Without `Int8` naga writes bit operations
/// (`OpBitFieldSExtract`), the form that runs right there.
#[test]
fn naga_spirv_unpacks_4x8_integers_through_8_bit_vectors_with_int8() {
    let wgsl = "@group(0) @binding(0) var<storage> xu: array<u32>;
@group(0) @binding(1) var<storage> xi: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() {
    out[0] = bitcast<u32>((unpack4xI8(xu[0]) + (vec4(xi[0]) / vec4(3i))).z);
}";
    const CAPABILITY: u32 = 17;
    const TYPE_INT: u32 = 21;
    const EXTENSION: u32 = 10;
    const BITCAST: u32 = 124;
    const SCONVERT: u32 = 114;
    const SDIV: u32 = 135;
    const FUNCTION_CALL: u32 = 57;
    const BIT_FIELD_S_EXTRACT: u32 = 202;
    const INT8: u32 = 39;
    let ops = spirv_ops(wgsl, None);
    let names: Vec<u32> = ops.iter().map(|(op, _)| *op).collect();
    assert!(
        ops.iter().any(|(op, w)| *op == CAPABILITY && w == &[INT8]),
        "{ops:?}"
    );
    assert!(
        ops.iter().any(|(op, w)| *op == TYPE_INT && w[1] == 8),
        "an 8-bit integer type"
    );
    let extensions: Vec<String> = ops
        .iter()
        .filter(|(op, _)| *op == EXTENSION)
        .map(|(_, w)| {
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            String::from_utf8_lossy(&bytes)
                .trim_end_matches('\0')
                .to_string()
        })
        .collect();
    assert_eq!(extensions, ["SPV_KHR_storage_buffer_storage_class"]);
    for op in [BITCAST, SCONVERT, SDIV, FUNCTION_CALL] {
        assert!(names.contains(&op), "opcode {op} in {names:?}");
    }
    assert!(!names.contains(&BIT_FIELD_S_EXTRACT));
    // SPV_KHR_integer_dot_product's OpSDot/OpUDot/OpSUDot (4450-4452) and their
    // accumulating forms (4453-4455): none.
    assert!(!names.iter().any(|op| (4450..=4455).contains(op)));
    // Without Int8, the polyfill: bit-field extracts, no 8-bit type.
    let shader_caps = [naga::back::spv::Capability::Shader].into_iter().collect();
    let ops = spirv_ops(wgsl, Some(shader_caps));
    let names: Vec<u32> = ops.iter().map(|(op, _)| *op).collect();
    assert!(names.contains(&BIT_FIELD_S_EXTRACT), "{names:?}");
    assert!(!ops.iter().any(|(op, w)| *op == TYPE_INT && w[1] == 8));
}

/// Finding 8: a shift by a vector `let` composed of run-time and constant parts is a run-time
/// shift in WGSL (the `let` is no const-expression, and neither is the composition: only a
/// const-expression amount of 32 or more is an error, spec §8.9), but naga 30's validator
/// checks each constant component of a composed amount (`validate_constant_shift_amounts`)
/// and refuses `x << v` with `let v = vec2(u, 40u)`: "Shift amount exceeds the bit width".
/// The fuzzer's analysis checks the parts of such a `let` as if written in place (H200 run of
/// seed 20261206, case 5378828363366603443).
#[test]
fn naga_refuses_a_run_time_shift_by_a_composed_vector_with_a_large_constant_part() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<vec2<i32>>;
@group(0) @binding(1) var<storage> amounts: array<u32>;
@compute @workgroup_size(1) fn main() {
    let v = vec2(amounts[0], 40u);
    out[0] = out[1] << v;
}";
    let err = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&parse(wgsl))
    .map(|_| ())
    .expect_err(
        "naga now accepts a run-time shift by a composed vector: drop compose_lets from the \
         fuzzer's analysis",
    );
    let err = format!("{:?}", err.into_inner());
    assert!(err.contains("ShiftAmountTooLarge"), "{err}");
}
