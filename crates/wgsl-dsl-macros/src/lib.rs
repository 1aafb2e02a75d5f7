//! Proc macros for wgsl-dsl (in progress).
