//! Support code for the workspace's cross-crate integration tests in `tests/`.
