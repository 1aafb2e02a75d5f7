//! `mnist predict`: pictures into the model's input pixels ([`mlp::data::picture`]).

use std::path::Path;

use mlp::data::DataError;
use mlp::data::picture::{self, Reading};

use crate::error::CliError;

/// The `--help` text after the options of `mnist predict`.
pub const HELP: &str = "Images are PNG, PGM (or another Netpbm format) or JPEG files, whatever \
     their names say. They must have the model's input size (28x28 for MNIST); other sizes \
     are rejected, not resized (resize first, keeping the digit centred, e.g. `convert in.png \
     -resize 20x20 -gravity center -extent 28x28 out.png`). MNIST digits are white ink on black. \
     Colour becomes luminance. Opaque images: pass --invert for dark digits on a light \
     background. Transparency: a drawing in one colour on a transparent background (as a \
     browser canvas exports it) is read by its opacity, black or white strokes alike, with or \
     without --invert; other images with transparency are composited onto black (white with \
     --invert). A warning says when an image is blank (uniform) after this conversion.";

/// A picture as `[side * side]` input pixels, and a warning when it is blank after conversion.
///
/// # Errors
/// [`CliError::Data`] when the file cannot be read or decoded, [`CliError::Path`] when it is
/// not `side` x `side`.
pub fn read_image(
    path: &Path,
    side: usize,
    invert: bool,
) -> Result<(Vec<f32>, Option<String>), CliError> {
    let img = picture::read(path, side).map_err(|e| match e {
        DataError::PictureSize { width, height, .. } => CliError::path(
            path,
            format!(
                "the image is {width}x{height}, the model takes {side}x{side} (resize it first; \
                 see `mnist predict --help`)"
            ),
        ),
        e => CliError::Data(e),
    })?;
    let pixels = picture::pixels(&img, invert);
    let warning = pixels.is_blank().then(|| {
        let hint = match pixels.reading {
            Reading::Opaque if invert => "an opaque image, inverted: is it dark on light?",
            Reading::Opaque => {
                "an opaque image: for dark digits on a light background pass --invert"
            }
            Reading::Drawing => "a drawing on transparency with nothing drawn",
            Reading::Composited => "an image with transparency, composited onto the background",
        };
        format!(
            "{}: blank after conversion (every input pixel is {:.2}; {hint}): its prediction \
             says nothing about it",
            path.display(),
            pixels.first()
        )
    });
    Ok((pixels.values, warning))
}
