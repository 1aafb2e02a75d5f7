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
    decode_checked(bytes, path, |width, height| {
        if (width as usize, height as usize) == (side, side) {
            Ok(())
        } else {
            Err(DataError::PictureSize {
                path: path.to_path_buf(),
                width,
                height,
                side,
            })
        }
    })
}

/// Reads the picture file at `path` and decodes it, of any size up to `max` x `max` pixels
/// ([`decode_up_to`]): for [`center`], which scales it to the model's input.
///
/// # Errors
/// [`DataError::Io`] when the file cannot be read, then as [`decode_up_to`].
pub fn read_up_to(path: &Path, max: u32) -> Result<DynamicImage, DataError> {
    let bytes = std::fs::read(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_up_to(&bytes, path, max)
}

/// As [`decode`], for a picture of any size up to `max` x `max` pixels, checked from the header
/// before any pixel is decoded.
///
/// # Errors
/// [`DataError::Picture`] as [`decode`]; [`DataError::PictureTooLarge`] for a picture wider or
/// taller than `max`.
pub fn decode_up_to(bytes: &[u8], path: &Path, max: u32) -> Result<DynamicImage, DataError> {
    decode_checked(bytes, path, |width, height| {
        if width <= max && height <= max {
            Ok(())
        } else {
            Err(DataError::PictureTooLarge {
                path: path.to_path_buf(),
                width,
                height,
                max,
            })
        }
    })
}

/// Decodes `bytes` after `size_ok` accepted the header's width and height.
fn decode_checked(
    bytes: &[u8],
    path: &Path,
    size_ok: impl Fn(u32, u32) -> Result<(), DataError>,
) -> Result<DynamicImage, DataError> {
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
    size_ok(width, height)?;
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

/// The side of the box MNIST scaled each digit into, keeping its aspect: 20 pixels.
pub const DIGIT_BOX: usize = 20;

/// The ink level from which a pixel counts for a digit's bounding box ([`center`]): 0.05,
/// about 13 levels of 255, so that faint noise does not widen the box.
pub const INK: f32 = 0.05;

/// How far (in pixels, on each axis) a digit's centre of mass may be from the field's centre
/// for [`is_centered`]: every MNIST test digit is within 0.5, every training digit within 0.52.
pub const CENTERED_WITHIN: f64 = 0.6;

/// The centre of mass (x, y) of `values` (`[height * width]`, row-major) in pixel coordinates
/// (a pixel's centre is its index + 0.5), or `None` when they sum to 0. Sums in f64, in index
/// order (`picture.js` sums the same way).
pub fn center_of_mass(values: &[f32], width: usize) -> Option<(f64, f64)> {
    let (mut total, mut sx, mut sy) = (0.0f64, 0.0f64, 0.0f64);
    for (i, &v) in values.iter().enumerate() {
        let v = f64::from(v);
        total += v;
        sx += v * ((i % width) as f64 + 0.5);
        sy += v * ((i / width) as f64 + 0.5);
    }
    (total > 0.0).then(|| (sx / total, sy / total))
}

/// The bounding box `(x0, y0, x1, y1)` (inclusive) of the pixels of `values` at least [`INK`],
/// or `None` when there is none.
fn ink_box(values: &[f32], width: usize) -> Option<(usize, usize, usize, usize)> {
    let mut b: Option<(usize, usize, usize, usize)> = None;
    for (i, _) in values.iter().enumerate().filter(|&(_, &v)| v >= INK) {
        let (x, y) = (i % width, i / width);
        b = Some(match b {
            None => (x, y, x, y),
            Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
        });
    }
    b
}

/// Whether `values` (`side` x `side`) are already centred as MNIST's digits are: the ink's
/// bounding box ([`INK`]) 19 or 20 ([`DIGIT_BOX`]) pixels on its longer side, and the centre
/// of mass within [`CENTERED_WITHIN`] of pixel (`side / 2`, `side / 2`) counted from 0 (its
/// centre: 14.5, 14.5 for 28 x 28). Every MNIST digit is; [`center`] leaves such a picture
/// nearly as it is.
pub fn is_centered(values: &[f32], side: usize) -> bool {
    if values.len() != side * side {
        return false;
    }
    let Some((x0, y0, x1, y1)) = ink_box(values, side) else {
        return false;
    };
    let longer = (x1 - x0 + 1).max(y1 - y0 + 1);
    let target = (side / 2) as f64 + 0.5;
    matches!(center_of_mass(values, side), Some((cx, cy))
        if (DIGIT_BOX - 1..=DIGIT_BOX).contains(&longer)
            && (cx - target).abs() <= CENTERED_WITHIN
            && (cy - target).abs() <= CENTERED_WITHIN)
}

/// `values` (`[height * width]`, white ink on black in `[0, 1]`) as `side` x `side` input
/// pixels centred as MNIST's digits were made (LeCun, Cortes and Burges, "The MNIST database":
/// "normalized to fit in a 20x20 pixel box while preserving their aspect ratio ... centered in
/// a 28x28 image by computing the center of mass of the pixels, and translating the image so
/// as to position this point at the center of the 28x28 field"):
///
/// 1. the bounding box of the pixels at least [`INK`] is cut out;
/// 2. it is scaled, keeping its aspect, to [`DIGIT_BOX`] pixels on its longer side (the other
///    side rounded, at least 1), each new pixel the mean of the old pixels' areas it covers
///    (area averaging; a box already 20 pixels long is copied as it is);
/// 3. it is placed in the `side` x `side` field moved by whole pixels so that its centre of
///    mass falls on pixel (`side / 2`, `side / 2`) counted from 0 (where MNIST's files have it:
///    their mean is 14.51, 14.49 for the test set); ink moved outside is dropped.
///
/// A picture with no pixel at least [`INK`] gives `side` x `side` zeros. Computed in f64 and
/// rounded to f32 at the end; `picture.js`'s `center` does the same operations in the same
/// order, so the page and `mnist predict` give the same pixels.
///
/// # Panics
/// If `values.len() != width * height` (a caller's mistake, not input).
pub fn center(values: &[f32], width: usize, height: usize, side: usize) -> Vec<f32> {
    assert_eq!(
        values.len(),
        width * height,
        "center: values are not width x height"
    );
    let mut out = vec![0.0f32; side * side];
    let Some((x0, y0, x1, y1)) = ink_box(values, width) else {
        return out;
    };
    let (bw, bh) = (x1 - x0 + 1, y1 - y0 + 1);
    let scale = DIGIT_BOX as f64 / bw.max(bh) as f64;
    let size = |n: usize| ((n as f64 * scale + 0.5).floor() as usize).clamp(1, DIGIT_BOX);
    let (ow, oh) = (size(bw), size(bh));
    // Area averaging, rows then columns: `rows[y][ox]` over the box's rows y.
    let weights = |n_in: usize, n_out: usize| -> Vec<Vec<(usize, f64)>> {
        let step = n_in as f64 / n_out as f64;
        (0..n_out)
            .map(|o| {
                let (lo, hi) = (o as f64 * step, (o + 1) as f64 * step);
                let first = lo.floor() as usize;
                let last = (hi.ceil() as usize).min(n_in);
                (first..last)
                    .map(|i| {
                        let overlap = hi.min((i + 1) as f64) - lo.max(i as f64);
                        (i, overlap / step)
                    })
                    .filter(|&(_, w)| w > 0.0)
                    .collect()
            })
            .collect()
    };
    let (wx, wy) = (weights(bw, ow), weights(bh, oh));
    let mut rows = vec![0.0f64; bh * ow];
    for y in 0..bh {
        for (ox, taps) in wx.iter().enumerate() {
            let mut acc = 0.0f64;
            for &(i, w) in taps {
                acc += f64::from(values[(y0 + y) * width + x0 + i]) * w;
            }
            rows[y * ow + ox] = acc;
        }
    }
    let mut scaled = vec![0.0f64; oh * ow];
    for (oy, taps) in wy.iter().enumerate() {
        for ox in 0..ow {
            let mut acc = 0.0f64;
            for &(i, w) in taps {
                acc += rows[i * ow + ox] * w;
            }
            scaled[oy * ow + ox] = acc;
        }
    }
    let (mut total, mut sx, mut sy) = (0.0f64, 0.0f64, 0.0f64);
    for (i, &v) in scaled.iter().enumerate() {
        total += v;
        sx += v * ((i % ow) as f64 + 0.5);
        sy += v * ((i / ow) as f64 + 0.5);
    }
    let target = (side / 2) as f64 + 0.5;
    let shift = |c: f64| (target - c + 0.5).floor() as i64;
    let (dx, dy) = if total > 0.0 {
        (shift(sx / total), shift(sy / total))
    } else {
        (((side - ow) / 2) as i64, ((side - oh) / 2) as i64)
    };
    for oy in 0..oh {
        for ox in 0..ow {
            let (x, y) = (ox as i64 + dx, oy as i64 + dy);
            if (0..side as i64).contains(&x) && (0..side as i64).contains(&y) {
                out[y as usize * side + x as usize] = scaled[oy * ow + ox].clamp(0.0, 1.0) as f32;
            }
        }
    }
    out
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

    /// The MNIST test digits (`[n * 784]`), from the repository's data.
    fn test_digits() -> Vec<f32> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist");
        crate::data::Mnist::load_split(&dir, crate::data::Split::Test)
            .expect("the repository's MNIST test set")
            .images
    }

    /// `digit` (28 x 28) moved by whole pixels, or `None` if ink would leave the field.
    fn shifted(digit: &[f32], dx: i64, dy: i64) -> Option<Vec<f32>> {
        let mut out = vec![0.0; 784];
        for (i, &v) in digit.iter().enumerate() {
            let (x, y) = ((i % 28) as i64 + dx, (i / 28) as i64 + dy);
            if (0..28).contains(&x) && (0..28).contains(&y) {
                out[(y * 28 + x) as usize] = v;
            } else if v > 0.0 {
                return None;
            }
        }
        Some(out)
    }

    /// Every MNIST test digit counts as centred (so `--center auto` reads the files as they
    /// are), and centring one changes no pixel by more than [`INK`] (only faint pixels outside
    /// the ink's box are dropped); moved by up to 5 pixels, a digit is no longer centred, and
    /// centring it gives what centring the original gives, pixel for pixel.
    #[test]
    fn shifted_test_digits_center_back_to_the_originals() {
        let digits = test_digits();
        let mut compared = 0;
        for (k, digit) in digits.chunks(784).enumerate() {
            assert!(is_centered(digit, 28), "test digit {k}");
            if k >= 300 {
                continue;
            }
            let centred = center(digit, 28, 28, 28);
            let worst = digit
                .iter()
                .zip(&centred)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(
                worst < INK,
                "test digit {k}: centring it moved a pixel by {worst}"
            );
            let (dx, dy) = ((k % 11) as i64 - 5, (k / 11 % 11) as i64 - 5);
            if dx.abs().max(dy.abs()) < 2 {
                continue;
            }
            let Some(moved) = shifted(digit, dx, dy) else {
                continue;
            };
            assert!(
                !is_centered(&moved, 28),
                "test digit {k} moved by ({dx}, {dy})"
            );
            assert_eq!(
                center(&moved, 28, 28, 28),
                centred,
                "test digit {k} moved by ({dx}, {dy})"
            );
            compared += 1;
        }
        assert!(compared >= 150, "only {compared} digits could be moved");
    }

    /// A digit drawn larger (each pixel 3 x 3) in a corner of a 100 x 90 picture, centred,
    /// is the original within area averaging's error: the box scales back to 20 pixels.
    #[test]
    fn a_large_digit_elsewhere_centers_to_the_original() {
        let digits = test_digits();
        for (k, digit) in digits.chunks(784).take(50).enumerate() {
            let (w, h) = (100usize, 90usize);
            let mut big = vec![0.0f32; w * h];
            for y in 0..84 {
                for x in 0..84 {
                    big[(y + 3) * w + x + 14] = digit[(y / 3) * 28 + x / 3];
                }
            }
            let got = center(&big, w, h, 28);
            let want = center(digit, 28, 28, 28);
            let com = |v: &[f32]| center_of_mass(v, 28).expect("ink");
            let ((gx, gy), (wx, wy)) = (com(&got), com(&want));
            assert!(
                (gx - 14.5).abs() <= 0.5 && (gy - 14.5).abs() <= 0.5,
                "digit {k}: centre of mass ({gx}, {gy})"
            );
            assert!((wx - 14.5).abs() <= 0.5 && (wy - 14.5).abs() <= 0.5);
            let diff: f32 = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).sum();
            let ink: f32 = want.iter().sum();
            assert!(diff <= 0.05 * ink, "digit {k}: {diff} of {ink} differs");
        }
        assert_eq!(center(&[0.0; 12], 4, 3, 28), vec![0.0; 784]);
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
