//! `mnist predict`: pictures into the model's input pixels ([`mlp::data::picture`]).

use std::path::Path;

use mlp::data::DataError;
use mlp::data::picture::{self, Reading};

use crate::choices::Center;
use crate::error::CliError;

/// The `--help` text after the options of `mnist predict`.
pub const HELP: &str = "Images are PNG, PGM (or another Netpbm format) or JPEG files, whatever \
     their names say. MNIST's digits were scaled to fit a 20x20 box, keeping their aspect, and \
     placed in 28x28 with their centre of mass at the centre; --center (auto by default) does \
     the same to each picture, of any size up to 2048x2048, unless it is already centred so \
     (the MNIST files are). With --center never, images must have the model's input size \
     (28x28 for MNIST) and are read as they are. MNIST digits are white ink on black. \
     Colour becomes luminance. Opaque images: pass --invert for dark digits on a light \
     background. Transparency: a drawing in one colour on a transparent background (as a \
     browser canvas exports it) is read by its opacity, black or white strokes alike, with or \
     without --invert; other images with transparency are composited onto black (white with \
     --invert). A warning says when an image is blank (uniform) after this conversion.";

/// The largest width and height read when pictures are centred (any size is scaled to fit).
pub const MAX_SIDE: u32 = 2048;

/// A picture as `[side * side]` input pixels (centred as `center` says), and a warning when it
/// is blank after conversion.
///
/// # Errors
/// [`CliError::Data`] when the file cannot be read or decoded or is larger than [`MAX_SIDE`];
/// [`CliError::Path`] when it is not `side` x `side` with [`Center::Never`].
pub fn read_image(
    path: &Path,
    side: usize,
    invert: bool,
    center: Center,
) -> Result<(Vec<f32>, Option<String>), CliError> {
    let img = match center {
        Center::Never => picture::read(path, side),
        Center::Auto | Center::Always => picture::read_up_to(path, MAX_SIDE),
    }
    .map_err(|e| match e {
        DataError::PictureSize { width, height, .. } => CliError::path(
            path,
            format!(
                "the image is {width}x{height}, the model takes {side}x{side} (without \
                 --center never, pictures of any size are scaled and centred)"
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
    let (width, height) = (img.width() as usize, img.height() as usize);
    // A blank picture stays as it is (uniform, as its warning says), whatever its size.
    let as_is = warning.is_some()
        || match center {
            Center::Never => true,
            Center::Auto => {
                (width, height) == (side, side) && picture::is_centered(&pixels.values, side)
            }
            Center::Always => false,
        };
    let values = if as_is && (width, height) == (side, side) {
        pixels.values
    } else if as_is {
        vec![pixels.first(); side * side]
    } else {
        picture::center(&pixels.values, width, height, side)
    };
    Ok((values, warning))
}
