//! `mnist predict`: images into the model's input pixels.

use std::path::Path;

use crate::error::CliError;

/// The `--help` text after the options of `mnist predict`.
pub const HELP: &str = "Images must have the model's input size (28x28 for MNIST); other sizes \
                        are rejected, not resized (resize first, keeping the digit centred, e.g. \
                        `convert in.png -resize 20x20 -gravity center -extent 28x28 out.png`). \
                        Colour images are converted to luminance, alpha is ignored. MNIST digits \
                        are white on black: pass --invert for dark digits on a light background.";

/// An image as `[rows * cols]` pixels in [0, 1] (white digit on black).
pub fn read_image(path: &Path, side: usize, invert: bool) -> Result<Vec<f32>, CliError> {
    let fail = |e: String| CliError::path(path, e);
    let img = image::ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?
        .decode()
        .map_err(|e| fail(e.to_string()))?;
    if (img.width() as usize, img.height() as usize) != (side, side) {
        return Err(fail(format!(
            "the image is {}x{}, the model takes {side}x{side} (resize it first; see `mnist \
             predict --help`)",
            img.width(),
            img.height()
        )));
    }
    Ok(img
        .to_luma8()
        .pixels()
        .map(|p| {
            let v = f32::from(p.0[0]) / 255.0;
            if invert { 1.0 - v } else { v }
        })
        .collect())
}
