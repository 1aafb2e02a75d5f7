//! Checkpoints as `mnist eval`, `mnist predict` and `mnist train --resume` read them
//! (`mlp::checkpoint::Checkpoint::from_bytes_with_warnings`): safetensors bytes, their header,
//! metadata, digests, shapes and values.
//!
//! Every input must load into a checkpoint that saves again and loads back equal, or give an
//! error of one line; nothing may panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mlp::checkpoint::Checkpoint;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz/model.safetensors");
    match Checkpoint::from_bytes_with_warnings(data, path) {
        Ok((checkpoint, warnings)) => {
            for w in &warnings {
                assert!(!w.to_string().contains('\n'), "{w}");
            }
            let bytes = checkpoint
                .to_bytes(path)
                .unwrap_or_else(|e| panic!("a loaded checkpoint does not save: {e}"));
            let (again, warnings) = Checkpoint::from_bytes_with_warnings(&bytes, path)
                .unwrap_or_else(|e| panic!("a saved checkpoint does not load: {e}"));
            assert_eq!(again, checkpoint);
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                !text.is_empty() && !text.contains('\n'),
                "not one line: {text:?}"
            );
        }
    }
});
