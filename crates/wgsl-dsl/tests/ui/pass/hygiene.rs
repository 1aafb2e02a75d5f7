//! Every identifier the `#[kernel]` and `#[derive(Bindings)]` expansions generate, as the
//! name of a parameter of every kind and of a helper function's parameter, and every
//! generated generic parameter's name as a const parameter: all compile, build and
//! validate (issue 21, item 3). Generated from the macros' own expansions by
//! `crates/wgsl-dsl-macros/src/hygiene.rs`; regenerate with
//! `WGSL_DSL_HYGIENE=overwrite cargo test -p wgsl-dsl-macros hygiene`.
#![allow(non_snake_case, non_camel_case_types, non_upper_case_globals, unused)]

use wgsl_dsl::prelude::*;

#[kernel(helper)]
fn helper_0(Clone: u32, Debug: u32, __f: u32, __fn_sign_of: u32, __fn_smooth: u32, __k: u32) -> u32 {
    Clone + Debug + __f + __fn_sign_of + __fn_smooth + __k
}

#[kernel(helper)]
fn helper_1(__kernel: u32, __literal: u32, __old: u32, __operand: u32, __s: u32, __t1: u32) -> u32 {
    __kernel + __literal + __old + __operand + __s + __t1
}

#[kernel(helper)]
fn helper_2(__t2: u32, __t3: u32, __t4: u32, _i: u32, allow: u32, args: u32) -> u32 {
    __t2 + __t3 + __t4 + _i + allow + args
}

#[kernel(helper)]
fn helper_3(bindings: u32, bool: u32, buffer: u32, builder: u32, cpu: u32, def: u32) -> u32 {
    bindings + bool + buffer + builder + cpu + def
}

#[kernel(helper)]
fn helper_4(derive: u32, doc: u32, executor: u32, f: u32, gpu: u32, grid: u32) -> u32 {
    derive + doc + executor + f + gpu + grid
}

#[kernel(helper)]
fn helper_5(interp: u32, k: u32, kernel: u32, must_use: u32, rec: u32, self_: u32) -> u32 {
    interp + k + kernel + must_use + rec + self_
}

#[kernel(helper)]
fn helper_6(size: u32, u32: u32, unused_variables: u32, workgroups: u32) -> u32 {
    size + u32 + unused_variables + workgroups
}

#[kernel(workgroup_size = 64)]
fn names_0(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    Clone: u32,
    #[storage(read_write)] Debug: &mut [u32],
    #[uniform] __f: u32,
    #[workgroup] __fn_sign_of: &mut [u32; 4],
    #[builtin(local_invocation_index)] __fn_smooth: u32,
    __k: u32,
    #[storage(read_write)] __kernel: &mut [u32],
    #[uniform] __literal: u32,
    #[workgroup] __old: &mut [u32; 4],
    #[builtin(local_invocation_index)] __operand: u32,
    __s: u32,
    #[storage(read_write)] __t1: &mut [u32],
    #[uniform] __t2: u32,
    #[workgroup] __t3: &mut [u32; 4],
    #[builtin(local_invocation_index)] __t4: u32,
    _i: u32,
    #[storage(read_write)] allow: &mut [u32],
    #[uniform] args: u32,
    #[workgroup] bindings: &mut [u32; 4],
    #[builtin(local_invocation_index)] bool: u32,
    buffer: u32,
    #[storage(read_write)] builder: &mut [u32],
    #[uniform] cpu: u32,
    #[workgroup] def: &mut [u32; 4],
    #[builtin(local_invocation_index)] derive: u32,
    doc: u32,
    #[storage(read_write)] executor: &mut [u32],
    #[uniform] f: u32,
    #[workgroup] gpu: &mut [u32; 4],
    #[builtin(local_invocation_index)] grid: u32,
    interp: u32,
    #[storage(read_write)] k: &mut [u32],
    #[uniform] kernel: u32,
    #[workgroup] must_use: &mut [u32; 4],
    #[builtin(local_invocation_index)] rec: u32,
    self_: u32,
    #[storage(read_write)] size: &mut [u32],
    #[uniform] u32: u32,
    #[workgroup] unused_variables: &mut [u32; 4],
    #[builtin(local_invocation_index)] workgroups: u32,
) {
    let mut hygiene_total = 0u32;
    hygiene_total += Clone;
    hygiene_total += Debug[0u32];
    hygiene_total += __f;
    hygiene_total += __fn_sign_of[0u32];
    hygiene_total += __fn_smooth;
    hygiene_total += __k;
    hygiene_total += __kernel[0u32];
    hygiene_total += __literal;
    hygiene_total += __old[0u32];
    hygiene_total += __operand;
    hygiene_total += __s;
    hygiene_total += __t1[0u32];
    hygiene_total += __t2;
    hygiene_total += __t3[0u32];
    hygiene_total += __t4;
    hygiene_total += _i;
    hygiene_total += allow[0u32];
    hygiene_total += args;
    hygiene_total += bindings[0u32];
    hygiene_total += bool;
    hygiene_total += buffer;
    hygiene_total += builder[0u32];
    hygiene_total += cpu;
    hygiene_total += def[0u32];
    hygiene_total += derive;
    hygiene_total += doc;
    hygiene_total += executor[0u32];
    hygiene_total += f;
    hygiene_total += gpu[0u32];
    hygiene_total += grid;
    hygiene_total += interp;
    hygiene_total += k[0u32];
    hygiene_total += kernel;
    hygiene_total += must_use[0u32];
    hygiene_total += rec;
    hygiene_total += self_;
    hygiene_total += size[0u32];
    hygiene_total += u32;
    hygiene_total += unused_variables[0u32];
    hygiene_total += workgroups;
    hygiene_total += helper_0(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_1(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_2(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_3(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_4(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_5(hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_total += helper_6(hygiene_total, hygiene_total, hygiene_total, hygiene_total);
    hygiene_sink[0u32] = hygiene_total;
}

#[kernel(workgroup_size = 64)]
fn names_1(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    #[storage(read_write)] Clone: &mut [u32],
    #[uniform] Debug: u32,
    #[workgroup] __f: &mut [u32; 4],
    #[builtin(local_invocation_index)] __fn_sign_of: u32,
    __fn_smooth: u32,
    #[storage(read_write)] __k: &mut [u32],
    #[uniform] __kernel: u32,
    #[workgroup] __literal: &mut [u32; 4],
    #[builtin(local_invocation_index)] __old: u32,
    __operand: u32,
    #[storage(read_write)] __s: &mut [u32],
    #[uniform] __t1: u32,
    #[workgroup] __t2: &mut [u32; 4],
    #[builtin(local_invocation_index)] __t3: u32,
    __t4: u32,
    #[storage(read_write)] _i: &mut [u32],
    #[uniform] allow: u32,
    #[workgroup] args: &mut [u32; 4],
    #[builtin(local_invocation_index)] bindings: u32,
    bool: u32,
    #[storage(read_write)] buffer: &mut [u32],
    #[uniform] builder: u32,
    #[workgroup] cpu: &mut [u32; 4],
    #[builtin(local_invocation_index)] def: u32,
    derive: u32,
    #[storage(read_write)] doc: &mut [u32],
    #[uniform] executor: u32,
    #[workgroup] f: &mut [u32; 4],
    #[builtin(local_invocation_index)] gpu: u32,
    grid: u32,
    #[storage(read_write)] interp: &mut [u32],
    #[uniform] k: u32,
    #[workgroup] kernel: &mut [u32; 4],
    #[builtin(local_invocation_index)] must_use: u32,
    rec: u32,
    #[storage(read_write)] self_: &mut [u32],
    #[uniform] size: u32,
    #[workgroup] u32: &mut [u32; 4],
    #[builtin(local_invocation_index)] unused_variables: u32,
    workgroups: u32,
) {
    let mut hygiene_total = 0u32;
    hygiene_total += Clone[0u32];
    hygiene_total += Debug;
    hygiene_total += __f[0u32];
    hygiene_total += __fn_sign_of;
    hygiene_total += __fn_smooth;
    hygiene_total += __k[0u32];
    hygiene_total += __kernel;
    hygiene_total += __literal[0u32];
    hygiene_total += __old;
    hygiene_total += __operand;
    hygiene_total += __s[0u32];
    hygiene_total += __t1;
    hygiene_total += __t2[0u32];
    hygiene_total += __t3;
    hygiene_total += __t4;
    hygiene_total += _i[0u32];
    hygiene_total += allow;
    hygiene_total += args[0u32];
    hygiene_total += bindings;
    hygiene_total += bool;
    hygiene_total += buffer[0u32];
    hygiene_total += builder;
    hygiene_total += cpu[0u32];
    hygiene_total += def;
    hygiene_total += derive;
    hygiene_total += doc[0u32];
    hygiene_total += executor;
    hygiene_total += f[0u32];
    hygiene_total += gpu;
    hygiene_total += grid;
    hygiene_total += interp[0u32];
    hygiene_total += k;
    hygiene_total += kernel[0u32];
    hygiene_total += must_use;
    hygiene_total += rec;
    hygiene_total += self_[0u32];
    hygiene_total += size;
    hygiene_total += u32[0u32];
    hygiene_total += unused_variables;
    hygiene_total += workgroups;
    hygiene_sink[0u32] = hygiene_total;
}

#[kernel(workgroup_size = 64)]
fn names_2(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    #[uniform] Clone: u32,
    #[workgroup] Debug: &mut [u32; 4],
    #[builtin(local_invocation_index)] __f: u32,
    __fn_sign_of: u32,
    #[storage(read_write)] __fn_smooth: &mut [u32],
    #[uniform] __k: u32,
    #[workgroup] __kernel: &mut [u32; 4],
    #[builtin(local_invocation_index)] __literal: u32,
    __old: u32,
    #[storage(read_write)] __operand: &mut [u32],
    #[uniform] __s: u32,
    #[workgroup] __t1: &mut [u32; 4],
    #[builtin(local_invocation_index)] __t2: u32,
    __t3: u32,
    #[storage(read_write)] __t4: &mut [u32],
    #[uniform] _i: u32,
    #[workgroup] allow: &mut [u32; 4],
    #[builtin(local_invocation_index)] args: u32,
    bindings: u32,
    #[storage(read_write)] bool: &mut [u32],
    #[uniform] buffer: u32,
    #[workgroup] builder: &mut [u32; 4],
    #[builtin(local_invocation_index)] cpu: u32,
    def: u32,
    #[storage(read_write)] derive: &mut [u32],
    #[uniform] doc: u32,
    #[workgroup] executor: &mut [u32; 4],
    #[builtin(local_invocation_index)] f: u32,
    gpu: u32,
    #[storage(read_write)] grid: &mut [u32],
    #[uniform] interp: u32,
    #[workgroup] k: &mut [u32; 4],
    #[builtin(local_invocation_index)] kernel: u32,
    must_use: u32,
    #[storage(read_write)] rec: &mut [u32],
    #[uniform] self_: u32,
    #[workgroup] size: &mut [u32; 4],
    #[builtin(local_invocation_index)] u32: u32,
    unused_variables: u32,
    #[storage(read_write)] workgroups: &mut [u32],
) {
    let mut hygiene_total = 0u32;
    hygiene_total += Clone;
    hygiene_total += Debug[0u32];
    hygiene_total += __f;
    hygiene_total += __fn_sign_of;
    hygiene_total += __fn_smooth[0u32];
    hygiene_total += __k;
    hygiene_total += __kernel[0u32];
    hygiene_total += __literal;
    hygiene_total += __old;
    hygiene_total += __operand[0u32];
    hygiene_total += __s;
    hygiene_total += __t1[0u32];
    hygiene_total += __t2;
    hygiene_total += __t3;
    hygiene_total += __t4[0u32];
    hygiene_total += _i;
    hygiene_total += allow[0u32];
    hygiene_total += args;
    hygiene_total += bindings;
    hygiene_total += bool[0u32];
    hygiene_total += buffer;
    hygiene_total += builder[0u32];
    hygiene_total += cpu;
    hygiene_total += def;
    hygiene_total += derive[0u32];
    hygiene_total += doc;
    hygiene_total += executor[0u32];
    hygiene_total += f;
    hygiene_total += gpu;
    hygiene_total += grid[0u32];
    hygiene_total += interp;
    hygiene_total += k[0u32];
    hygiene_total += kernel;
    hygiene_total += must_use;
    hygiene_total += rec[0u32];
    hygiene_total += self_;
    hygiene_total += size[0u32];
    hygiene_total += u32;
    hygiene_total += unused_variables;
    hygiene_total += workgroups[0u32];
    hygiene_sink[0u32] = hygiene_total;
}

#[kernel(workgroup_size = 64)]
fn names_3(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    #[workgroup] Clone: &mut [u32; 4],
    #[builtin(local_invocation_index)] Debug: u32,
    __f: u32,
    #[storage(read_write)] __fn_sign_of: &mut [u32],
    #[uniform] __fn_smooth: u32,
    #[workgroup] __k: &mut [u32; 4],
    #[builtin(local_invocation_index)] __kernel: u32,
    __literal: u32,
    #[storage(read_write)] __old: &mut [u32],
    #[uniform] __operand: u32,
    #[workgroup] __s: &mut [u32; 4],
    #[builtin(local_invocation_index)] __t1: u32,
    __t2: u32,
    #[storage(read_write)] __t3: &mut [u32],
    #[uniform] __t4: u32,
    #[workgroup] _i: &mut [u32; 4],
    #[builtin(local_invocation_index)] allow: u32,
    args: u32,
    #[storage(read_write)] bindings: &mut [u32],
    #[uniform] bool: u32,
    #[workgroup] buffer: &mut [u32; 4],
    #[builtin(local_invocation_index)] builder: u32,
    cpu: u32,
    #[storage(read_write)] def: &mut [u32],
    #[uniform] derive: u32,
    #[workgroup] doc: &mut [u32; 4],
    #[builtin(local_invocation_index)] executor: u32,
    f: u32,
    #[storage(read_write)] gpu: &mut [u32],
    #[uniform] grid: u32,
    #[workgroup] interp: &mut [u32; 4],
    #[builtin(local_invocation_index)] k: u32,
    kernel: u32,
    #[storage(read_write)] must_use: &mut [u32],
    #[uniform] rec: u32,
    #[workgroup] self_: &mut [u32; 4],
    #[builtin(local_invocation_index)] size: u32,
    u32: u32,
    #[storage(read_write)] unused_variables: &mut [u32],
    #[uniform] workgroups: u32,
) {
    let mut hygiene_total = 0u32;
    hygiene_total += Clone[0u32];
    hygiene_total += Debug;
    hygiene_total += __f;
    hygiene_total += __fn_sign_of[0u32];
    hygiene_total += __fn_smooth;
    hygiene_total += __k[0u32];
    hygiene_total += __kernel;
    hygiene_total += __literal;
    hygiene_total += __old[0u32];
    hygiene_total += __operand;
    hygiene_total += __s[0u32];
    hygiene_total += __t1;
    hygiene_total += __t2;
    hygiene_total += __t3[0u32];
    hygiene_total += __t4;
    hygiene_total += _i[0u32];
    hygiene_total += allow;
    hygiene_total += args;
    hygiene_total += bindings[0u32];
    hygiene_total += bool;
    hygiene_total += buffer[0u32];
    hygiene_total += builder;
    hygiene_total += cpu;
    hygiene_total += def[0u32];
    hygiene_total += derive;
    hygiene_total += doc[0u32];
    hygiene_total += executor;
    hygiene_total += f;
    hygiene_total += gpu[0u32];
    hygiene_total += grid;
    hygiene_total += interp[0u32];
    hygiene_total += k;
    hygiene_total += kernel;
    hygiene_total += must_use[0u32];
    hygiene_total += rec;
    hygiene_total += self_[0u32];
    hygiene_total += size;
    hygiene_total += u32;
    hygiene_total += unused_variables[0u32];
    hygiene_total += workgroups;
    hygiene_sink[0u32] = hygiene_total;
}

#[kernel(workgroup_size = 64)]
fn names_4(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    #[builtin(local_invocation_index)] Clone: u32,
    Debug: u32,
    #[storage(read_write)] __f: &mut [u32],
    #[uniform] __fn_sign_of: u32,
    #[workgroup] __fn_smooth: &mut [u32; 4],
    #[builtin(local_invocation_index)] __k: u32,
    __kernel: u32,
    #[storage(read_write)] __literal: &mut [u32],
    #[uniform] __old: u32,
    #[workgroup] __operand: &mut [u32; 4],
    #[builtin(local_invocation_index)] __s: u32,
    __t1: u32,
    #[storage(read_write)] __t2: &mut [u32],
    #[uniform] __t3: u32,
    #[workgroup] __t4: &mut [u32; 4],
    #[builtin(local_invocation_index)] _i: u32,
    allow: u32,
    #[storage(read_write)] args: &mut [u32],
    #[uniform] bindings: u32,
    #[workgroup] bool: &mut [u32; 4],
    #[builtin(local_invocation_index)] buffer: u32,
    builder: u32,
    #[storage(read_write)] cpu: &mut [u32],
    #[uniform] def: u32,
    #[workgroup] derive: &mut [u32; 4],
    #[builtin(local_invocation_index)] doc: u32,
    executor: u32,
    #[storage(read_write)] f: &mut [u32],
    #[uniform] gpu: u32,
    #[workgroup] grid: &mut [u32; 4],
    #[builtin(local_invocation_index)] interp: u32,
    k: u32,
    #[storage(read_write)] kernel: &mut [u32],
    #[uniform] must_use: u32,
    #[workgroup] rec: &mut [u32; 4],
    #[builtin(local_invocation_index)] self_: u32,
    size: u32,
    #[storage(read_write)] u32: &mut [u32],
    #[uniform] unused_variables: u32,
    #[workgroup] workgroups: &mut [u32; 4],
) {
    let mut hygiene_total = 0u32;
    hygiene_total += Clone;
    hygiene_total += Debug;
    hygiene_total += __f[0u32];
    hygiene_total += __fn_sign_of;
    hygiene_total += __fn_smooth[0u32];
    hygiene_total += __k;
    hygiene_total += __kernel;
    hygiene_total += __literal[0u32];
    hygiene_total += __old;
    hygiene_total += __operand[0u32];
    hygiene_total += __s;
    hygiene_total += __t1;
    hygiene_total += __t2[0u32];
    hygiene_total += __t3;
    hygiene_total += __t4[0u32];
    hygiene_total += _i;
    hygiene_total += allow;
    hygiene_total += args[0u32];
    hygiene_total += bindings;
    hygiene_total += bool[0u32];
    hygiene_total += buffer;
    hygiene_total += builder;
    hygiene_total += cpu[0u32];
    hygiene_total += def;
    hygiene_total += derive[0u32];
    hygiene_total += doc;
    hygiene_total += executor;
    hygiene_total += f[0u32];
    hygiene_total += gpu;
    hygiene_total += grid[0u32];
    hygiene_total += interp;
    hygiene_total += k;
    hygiene_total += kernel[0u32];
    hygiene_total += must_use;
    hygiene_total += rec[0u32];
    hygiene_total += self_;
    hygiene_total += size;
    hygiene_total += u32[0u32];
    hygiene_total += unused_variables;
    hygiene_total += workgroups[0u32];
    hygiene_sink[0u32] = hygiene_total;
}

#[kernel(workgroup_size = 64)]
fn generic_names<const __E: usize, const __Executor: usize, const __R: usize>(
    #[storage(read_write)] hygiene_sink: &mut [u32],
    #[storage(read)] sized_0: &[u32; __E],
    #[storage(read)] sized_1: &[u32; __Executor],
    #[storage(read)] sized_2: &[u32; __R],
) {
    hygiene_sink[0u32] = sized_0[0u32] + sized_1[0u32] + sized_2[0u32];
}

fn main() {
    names_0(0, 0, 0, 0, 0, 0, 0, 0).build().expect("names_0 builds");
    names_1(0, 0, 0, 0, 0, 0, 0, 0).build().expect("names_1 builds");
    names_2(0, 0, 0, 0, 0, 0, 0, 0).build().expect("names_2 builds");
    names_3(0, 0, 0, 0, 0, 0, 0, 0).build().expect("names_3 builds");
    names_4(0, 0, 0, 0, 0, 0, 0, 0).build().expect("names_4 builds");
    generic_names::<1, 2, 3>().build().expect("generic_names builds");
}
