//! # mlp: a multi-layer perceptron whose every kernel is written with wgsl-dsl
//!
//! Forward, loss, backward and optimizer kernels are built with the DSL (no WGSL text in this
//! crate), each paired with an independent CPU specification. The `mnist` binary trains the
//! network on real MNIST.
//!
//! The library prints nothing: training reports through [`train::Observer`] events, and the
//! binary decides what to show.

pub mod activation;
pub mod checkpoint;
pub mod config;
pub mod data;
pub mod error;
pub mod kernels;
pub mod model;
pub mod params;
pub mod plot;
pub mod profile;
pub mod reference;
pub mod schedule;
pub mod train;
