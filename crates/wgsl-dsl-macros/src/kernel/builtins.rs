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
];

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

/// Subgroup operations, builder methods taking one value (and a lane for shuffle).
pub const SUBGROUP_FNS: &[&str] = &[
    "subgroup_add",
    "subgroup_max",
    "subgroup_min",
    "subgroup_exclusive_add",
    "subgroup_broadcast_first",
    "subgroup_shuffle",
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
        .find(|b| *b == alias && *b != "select")
}

/// Methods of `Exp` used as they are.
pub const EXP_METHODS: &[&str] = &[
    "to_f32", "to_i32", "to_u32", "to_bool", "bitcast", "x", "y", "z", "w", "xy", "xyz", "any",
    "all", "select",
];

/// Vector components and swizzles written as fields: `v.x`, `v.xy`.
pub const SWIZZLES: &[&str] = &["x", "y", "z", "w", "xy", "xyz"];

/// All method names, for the "unknown method" message.
pub fn known_methods() -> String {
    let mut all: Vec<&str> = BUILTIN_FNS
        .iter()
        .copied()
        .filter(|b| *b != "select")
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
    all.join(", ")
}
