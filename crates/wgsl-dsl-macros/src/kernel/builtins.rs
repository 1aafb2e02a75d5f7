//! The names `#[kernel]` bodies may call: WGSL built-in functions and values, and the Rust-style
//! method names mapped onto them.

/// Free functions forwarded to `::wgsl_dsl::exp::builtins` (WGSL spec §17.3, §17.5).
pub const BUILTIN_FNS: &[&str] = &[
    "abs",
    "sign",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "inverse_sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "saturate",
    "radians",
    "degrees",
    "count_one_bits",
    "count_leading_zeros",
    "count_trailing_zeros",
    "first_leading_bit",
    "first_trailing_bit",
    "reverse_bits",
    "min",
    "max",
    "clamp",
    "pow",
    "atan2",
    "step",
    "mix",
    "smoothstep",
    "fma",
    "dot",
    "cross",
    "length",
    "distance",
    "normalize",
    "transpose",
    "extract_bits",
    "insert_bits",
    "select",
    "modf",
    "frexp",
    "ldexp",
    "quantize_to_f16",
    "face_forward",
    "reflect",
    "refract",
    "determinant",
    "dot4_i8_packed",
    "dot4_u8_packed",
    "pack4x8snorm",
    "pack4x8unorm",
    "pack2x16snorm",
    "pack2x16unorm",
    "pack2x16float",
    "pack4x_i8",
    "pack4x_u8",
    "pack4x_i8_clamp",
    "pack4x_u8_clamp",
    "unpack4x8snorm",
    "unpack4x8unorm",
    "unpack2x16snorm",
    "unpack2x16unorm",
    "unpack2x16float",
    "unpack4x_i8",
    "unpack4x_u8",
];

/// Built-ins whose result is a struct (`modf`, `frexp`): never method spellings, since
/// `m.fract` is the struct's member (written as a field, as in WGSL).
const STRUCT_RESULT_FNS: &[&str] = &["modf", "frexp"];

/// Vector constructors in `::wgsl_dsl::exp::vector` (WGSL spec §8.3).
pub const VECTOR_FNS: &[&str] = &["vec2", "vec3", "vec4"];

/// Built-in values (WGSL spec §13.3.1.1), as `#[builtin(name)]` parameters and as calls.
pub const BUILTIN_VALUES: &[&str] = &[
    "global_invocation_id",
    "local_invocation_id",
    "local_invocation_index",
    "workgroup_id",
    "num_workgroups",
    "subgroup_size",
    "subgroup_invocation_id",
];

/// Statements that are calls on the builder: barriers (WGSL spec §17.11).
pub const BARRIERS: &[&str] = &["workgroup_barrier", "storage_barrier"];

/// Subgroup and quad operations (WGSL spec §17.12, §17.13), builder methods taking one value
/// (and a lane, mask or delta for broadcasts and shuffles; nothing for `subgroup_elect`).
pub const SUBGROUP_FNS: &[&str] = &[
    "subgroup_add",
    "subgroup_max",
    "subgroup_min",
    "subgroup_mul",
    "subgroup_and",
    "subgroup_or",
    "subgroup_xor",
    "subgroup_all",
    "subgroup_any",
    "subgroup_exclusive_add",
    "subgroup_inclusive_add",
    "subgroup_exclusive_mul",
    "subgroup_inclusive_mul",
    "subgroup_ballot",
    "subgroup_elect",
    "subgroup_broadcast",
    "subgroup_broadcast_first",
    "subgroup_shuffle",
    "subgroup_shuffle_xor",
    "subgroup_shuffle_up",
    "subgroup_shuffle_down",
    "quad_broadcast",
    "quad_swap_x",
    "quad_swap_y",
    "quad_swap_diagonal",
];

/// Atomic operations as methods on a place: `counts[i].atomic_add(1u32)` (WGSL spec §17.8).
pub const ATOMIC_METHODS: &[&str] = &[
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_exchange",
];

/// Method-call spellings of built-ins: `x.max(y)` is `max(x, y)`. Rust aliases with the same
/// meaning are accepted (`ln` for `log`, `powf` for `pow`, `mul_add` for `fma`, ...). Every
/// method has WGSL semantics (`round` ties to even, `fract` is `x - floor(x)`).
pub fn method_builtin(name: &str) -> Option<&'static str> {
    let alias = match name {
        "ln" => "log",
        "powf" => "pow",
        "mul_add" => "fma",
        "to_radians" => "radians",
        "to_degrees" => "degrees",
        "count_ones" => "count_one_bits",
        "leading_zeros" => "count_leading_zeros",
        "trailing_zeros" => "count_trailing_zeros",
        "round_ties_even" => "round",
        _ => name,
    };
    BUILTIN_FNS
        .iter()
        .copied()
        .find(|b| *b == alias && *b != "select" && !STRUCT_RESULT_FNS.contains(b))
}

/// Methods of `Exp` used as they are.
pub const EXP_METHODS: &[&str] = &[
    "to_f32", "to_i32", "to_u32", "to_bool", "bitcast", "x", "y", "z", "w", "xy", "xyz", "any",
    "all", "select",
];

/// Vector components and swizzles written as fields: `v.x`, `v.xy`.
pub const SWIZZLES: &[&str] = &["x", "y", "z", "w", "xy", "xyz"];

/// All method names.
fn known_methods() -> Vec<&'static str> {
    let mut all: Vec<&str> = BUILTIN_FNS
        .iter()
        .copied()
        .filter(|b| *b != "select" && !STRUCT_RESULT_FNS.contains(b))
        .chain(EXP_METHODS.iter().copied())
        .chain(ATOMIC_METHODS.iter().copied())
        .chain([
            "len",
            "load",
            "atomic_store",
            "ln",
            "powf",
            "mul_add",
            "to_radians",
            "to_degrees",
            "count_ones",
            "leading_zeros",
            "trailing_zeros",
            "round_ties_even",
        ])
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Levenshtein distance of two ASCII names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known method closest to `name`, if it is close (a typo, a Rust spelling): at most a
/// third of the name's letters differ.
pub fn closest_method(name: &str) -> Option<&'static str> {
    known_methods()
        .into_iter()
        .map(|m| (edit_distance(name, m), m))
        .filter(|&(d, _)| d <= name.len().max(3) / 3)
        .min()
        .map(|(_, m)| m)
}
