//! `mnist predict`: pictures into the model's input pixels ([`mlp::data::picture`]).

use std::path::Path;

use mlp::data::picture::{self, Reading};

use crate::error::CliError;

/// The `--help` text after the options of `mnist predict`.
pub const HELP: &str = "Images must have the model's input size (28x28 for MNIST); other sizes \
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
/// [`CliError::Path`] when the file cannot be read or decoded, or is not `side` x `side`.
pub fn read_image(
    path: &Path,
    side: usize,
    invert: bool,
) -> Result<(Vec<f32>, Option<String>), CliError> {
    let fail = |e: String| CliError::path(path, e);
    let img = image::ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?
        .decode()
        .map_err(|e| match e {
            image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                fail("the image is truncated: the file ends before its last pixel".into())
            }
            e => fail(e.to_string()),
        })?;
    if (img.width() as usize, img.height() as usize) != (side, side) {
        return Err(fail(format!(
            "the image is {}x{}, the model takes {side}x{side} (resize it first; see `mnist \
             predict --help`)",
            img.width(),
            img.height()
        )));
    }
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
