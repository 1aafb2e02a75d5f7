//! The `gemm` binary refuses what it cannot run before touching the GPU: a kernel name it does
//! not know is a usage error listing the names (it once ran as the SIMT kernel, silently, at
//! every default size).

use std::process::Command;

#[test]
fn an_unknown_kernel_name_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm"))
        .args([
            "bench",
            "--sizes",
            "64",
            "--no-mlp",
            "--kernels",
            "simt,simt-hole",
        ])
        .output()
        .expect("run gemm");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("invalid value 'simt-hole' for '--kernels"),
        "{err}"
    );
    assert!(
        err.contains("simt-whole"),
        "the valid names are listed: {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing ran: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
