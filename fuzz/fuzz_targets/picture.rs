//! Pictures as `mnist predict` reads them (`mlp::data::picture`): the file's bytes (PNG, PGM and
//! the other Netpbm formats, JPEG; the format guessed from the content) decoded for a 28x28
//! model, then turned into input pixels with and without `--invert`.
//!
//! Every input must give 784 values in `[0, 1]`, or an error of one line; nothing may panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mlp::data::picture;

fuzz_target!(|data: &[u8]| {
    match picture::decode(data, Path::new("fuzz/digit.png"), 28) {
        Ok(image) => {
            for invert in [false, true] {
                let pixels = picture::pixels(&image, invert);
                assert_eq!(pixels.values.len(), 28 * 28);
                assert!(pixels.values.iter().all(|v| (0.0..=1.0).contains(v)));
            }
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
