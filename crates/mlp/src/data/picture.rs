//! Pictures (PNG, the Netpbm formats PGM/PPM/PBM/PAM, JPEG; decoded by the `image` crate) into
//! the model's input pixels ([`read`], [`decode`]), with one documented rule for colour and
//! transparency ([`pixels`]).
//!
//! MNIST digits are white ink on black, each pixel the ink's coverage in `[0, 1]`. Every pixel
//! of a picture has a luminance `L` in `[0, 1]` (Rec. 709 weights of the `image` crate for
//! colour) and an opacity `A` in `[0, 1]` (1 without an alpha channel); the input value is
//!
//! - **opaque pictures** (every `A = 1`): `v = L`, or `1 - L` with `invert` (dark ink on a light
//!   background);
//! - **a drawing in one colour on transparency** (every clearly visible pixel, `A >= 1/2`, of
//!   nearly the same luminance, as a browser canvas exports the strokes of one brush): the
//!   opacity is the ink, `v = A`, whatever the colour and with or without `invert`: a black
//!   stroke on a transparent background is read as the same digit as a white one;
//! - **any other picture with transparency**: composited onto the background the polarity
//!   implies, black (`v = A L`) or, with `invert`, white (`v = A (1 - L)`), so transparent
//!   margins around an opaque digit count as background.
//!
//! So a transparent drawing, its opaque white-on-black version and its dark-on-light version
//! read with `invert` give the same input. Gray+alpha and RGBA pictures follow the same rule.
//! [`Pixels::is_blank`] tells when the result is uniform (nothing to classify).

use std::io::Cursor;
use std::path::Path;

use image::{DynamicImage, ImageReader, Limits};

use super::DataError;

/// The picture formats [`decode`] reads, for messages.
pub const FORMATS: &str = "PNG, PGM/PPM/PBM/PAM or JPEG";

/// Reads the picture file at `path` and decodes it ([`decode`]).
///
/// # Errors
/// [`DataError::Io`] when the file cannot be read, then as [`decode`].
pub fn read(path: &Path, side: usize) -> Result<DynamicImage, DataError> {
    let bytes = std::fs::read(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode(&bytes, path, side)
}

/// Decodes a picture file's bytes for a model of `side` x `side` inputs (`path` names it in
/// errors). The format is the content's (not the name's); the size is read from the header
/// and checked before any pixel is decoded, so a picture's header cannot make this allocate
/// more than `side` x `side` pixels.
///
/// # Errors
/// [`DataError::Picture`] for a file in no format of [`FORMATS`], or malformed or truncated;
/// [`DataError::PictureSize`] for a picture that is not `side` x `side`.
pub fn decode(bytes: &[u8], path: &Path, side: usize) -> Result<DynamicImage, DataError> {
    let fail = |reason: String| DataError::Picture {
        path: path.to_path_buf(),
        reason: reason.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    let failed = |e: image::ImageError| match e {
        image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            fail("the image is truncated: the file ends before its last pixel".into())
        }
        e => fail(e.to_string()),
    };
    let reader = || -> Result<ImageReader<Cursor<&[u8]>>, DataError> {
        let reader = ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| fail(e.to_string()))?;
        match reader.format() {
            Some(_) => Ok(reader),
            None => Err(fail(format!(
                "not a picture in a format read here ({FORMATS})"
            ))),
        }
    };
    let (width, height) = reader()?.into_dimensions().map_err(failed)?;
    if (width as usize, height as usize) != (side, side) {
        return Err(DataError::PictureSize {
            path: path.to_path_buf(),
            width,
            height,
            side,
        });
    }
    let mut reader = reader()?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(width);
    limits.max_image_height = Some(height);
    reader.limits(limits);
    reader.decode().map_err(failed)
}

/// Largest luminance spread (max - min over the clearly visible pixels) of a one-colour
/// drawing: 0.1, about 25 levels of 255, which antialiasing and colour management stay within.
pub const ONE_COLOUR_SPREAD: f32 = 0.1;

/// Which case of the [module rule](self) a picture fell into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// No transparency: luminance (inverted with `invert`).
    Opaque,
    /// A one-colour drawing on transparency: opacity is the ink.
    Drawing,
    /// Transparency and several colours: composited onto black (white with `invert`).
    Composited,
}

/// A picture as the model's input.
#[derive(Clone, Debug, PartialEq)]
pub struct Pixels {
    /// `[height * width]`, row-major, in `[0, 1]`: white ink on black, as MNIST.
    pub values: Vec<f32>,
    /// How they were read.
    pub reading: Reading,
}

impl Pixels {
    /// True when every value is the same (within half a level of 255): a blank input, whose
    /// prediction says nothing about the picture.
    pub fn is_blank(&self) -> bool {
        let (lo, hi) = self
            .values
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        self.values.is_empty() || hi - lo < 0.5 / 255.0
    }

    /// The value every pixel has when [`Pixels::is_blank`].
    pub fn first(&self) -> f32 {
        self.values.first().copied().unwrap_or(0.0)
    }
}

/// The input pixels of `picture` by the [module rule](self); `invert` for dark ink on a light
/// background.
pub fn pixels(picture: &DynamicImage, invert: bool) -> Pixels {
    let la = picture.to_luma_alpha32f();
    let lum_alpha: Vec<(f32, f32)> = la
        .pixels()
        .map(|p| (p.0[0].clamp(0.0, 1.0), p.0[1].clamp(0.0, 1.0)))
        .collect();
    let reading = if lum_alpha.iter().all(|&(_, a)| a >= 1.0) {
        Reading::Opaque
    } else if one_colour(&lum_alpha) {
        Reading::Drawing
    } else {
        Reading::Composited
    };
    let values = lum_alpha
        .iter()
        .map(|&(l, a)| {
            let ink = if invert { 1.0 - l } else { l };
            match reading {
                Reading::Opaque => ink,
                Reading::Drawing => a,
                Reading::Composited => a * ink,
            }
        })
        .collect();
    Pixels { values, reading }
}

/// Whether the clearly visible pixels (`A >= 1/2`; all pixels with any opacity if none is) have
/// luminances within [`ONE_COLOUR_SPREAD`]. True for a picture with no visible pixel.
fn one_colour(lum_alpha: &[(f32, f32)]) -> bool {
    let clearly = lum_alpha.iter().any(|&(_, a)| a >= 0.5);
    let (lo, hi) = lum_alpha
        .iter()
        .filter(|&&(_, a)| if clearly { a >= 0.5 } else { a > 0.0 })
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &(l, _)| {
            (lo.min(l), hi.max(l))
        });
    hi - lo <= ONE_COLOUR_SPREAD || lo > hi
}

#[cfg(test)]
mod tests {
    use image::{GrayAlphaImage, GrayImage, LumaA, Rgb, RgbImage, Rgba, RgbaImage};

    use super::*;

    /// A 9x7 "digit": ink coverage in levels of 255, antialiased edges, a blank margin.
    fn coverage() -> Vec<u8> {
        let mut c = vec![0u8; 9 * 7];
        for y in 1..8 {
            c[y * 7 + 3] = 255;
            c[y * 7 + 2] = 90;
            c[y * 7 + 4] = 40;
        }
        c[7 + 1] = 170;
        c
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn transparent_drawings_read_as_their_opaque_versions() {
        let c = coverage();
        let (w, h) = (7, 9);
        let at = |x: u32, y: u32| c[(y * w + x) as usize];
        let white_on_black = GrayImage::from_fn(w, h, |x, y| image::Luma([at(x, y)]));
        let dark_on_light = RgbImage::from_fn(w, h, |x, y| Rgb([255 - at(x, y); 3]));
        let black_strokes = RgbaImage::from_fn(w, h, |x, y| Rgba([0, 0, 0, at(x, y)]));
        let white_strokes = RgbaImage::from_fn(w, h, |x, y| Rgba([255, 255, 255, at(x, y)]));
        let red_strokes = RgbaImage::from_fn(w, h, |x, y| Rgba([200, 20, 20, at(x, y)]));
        let gray_alpha = GrayAlphaImage::from_fn(w, h, |x, y| LumaA([0, at(x, y)]));
        let opaque_rgba = RgbaImage::from_fn(w, h, |x, y| {
            Rgba([255 - at(x, y), 255 - at(x, y), 255 - at(x, y), 255])
        });

        let expected = pixels(&white_on_black.into(), false);
        assert_eq!(expected.reading, Reading::Opaque);
        assert!(!expected.is_blank());
        let inverted = pixels(&dark_on_light.into(), true);
        assert!(close(&inverted.values, &expected.values));
        let inverted = pixels(&opaque_rgba.into(), true);
        assert_eq!(inverted.reading, Reading::Opaque);
        assert!(close(&inverted.values, &expected.values));
        for (name, picture) in [
            ("black strokes", DynamicImage::from(black_strokes)),
            ("white strokes", white_strokes.into()),
            ("red strokes", red_strokes.into()),
            ("gray+alpha", gray_alpha.into()),
        ] {
            for invert in [false, true] {
                let p = pixels(&picture, invert);
                assert_eq!(p.reading, Reading::Drawing, "{name}");
                assert!(
                    close(&p.values, &expected.values),
                    "{name}, invert {invert}"
                );
            }
        }
    }

    #[test]
    fn transparent_margins_are_background() {
        // A white-on-black digit pasted into a transparent canvas: margin A = 0, digit opaque.
        let c = coverage();
        let (w, h) = (7u32, 9u32);
        let inside = |x: u32, y: u32| (1..6).contains(&x) && (1..8).contains(&y);
        let pasted = RgbaImage::from_fn(w, h, |x, y| {
            let v = c[(y * w + x) as usize];
            if inside(x, y) {
                Rgba([v, v, v, 255])
            } else {
                Rgba([9, 9, 9, 0])
            }
        });
        let p = pixels(&pasted.into(), false);
        assert_eq!(p.reading, Reading::Composited);
        for y in 0..h {
            for x in 0..w {
                let v = p.values[(y * w + x) as usize];
                let want = if inside(x, y) {
                    f32::from(c[(y * w + x) as usize]) / 255.0
                } else {
                    0.0
                };
                assert!((v - want).abs() < 1e-6, "({x}, {y}): {v} vs {want}");
            }
        }
        // The same pasted dark-on-light, read with invert: the margin is still background.
        let pasted = RgbaImage::from_fn(w, h, |x, y| {
            let v = 255 - c[(y * w + x) as usize];
            if inside(x, y) {
                Rgba([v, v, v, 255])
            } else {
                Rgba([250, 250, 250, 0])
            }
        });
        let p = pixels(&pasted.into(), true);
        assert_eq!(p.values[0], 0.0);
        assert!((p.values[(3 * w + 3) as usize] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn uniform_results_are_blank() {
        let transparent = RgbaImage::from_pixel(5, 5, Rgba([0, 0, 0, 0]));
        let p = pixels(&transparent.into(), false);
        assert!(p.is_blank() && p.first() == 0.0, "{p:?}");
        let white = GrayImage::from_pixel(5, 5, image::Luma([255]));
        assert!(pixels(&white.clone().into(), false).is_blank());
        assert!(pixels(&white.into(), true).is_blank());
        let mut one_dot = GrayImage::from_pixel(5, 5, image::Luma([0]));
        one_dot.put_pixel(2, 2, image::Luma([1]));
        assert!(!pixels(&one_dot.into(), false).is_blank());
    }
}
