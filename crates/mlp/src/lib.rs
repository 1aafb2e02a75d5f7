//! MLP on wgsl-dsl (in progress).
