//! A picture of training: the training loss and the test accuracy per epoch, as a PNG or a
//! JPEG ([`PlotFormat`], chosen by the file's extension).
//!
//! Text (title, axis labels) is drawn with a TrueType font read from a common system location
//! (DejaVu Sans, Liberation Sans; `fonts-dejavu-core` on Debian) through plotters' `ab_glyph`
//! backend, so nothing links fontconfig; when no font can be loaded the chart is drawn without
//! text, so a machine without fonts still gets the curves.

use std::sync::OnceLock;

use plotters::prelude::*;

use crate::checkpoint::EpochRecord;

/// Width and height of the picture, in pixels.
pub const SIZE: (u32, u32) = (960, 480);

/// Why no picture could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The history has no epoch.
    #[error("no epoch to plot")]
    Empty,
    /// plotters failed to draw.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The PNG or JPEG encoder failed.
    #[error("encoding failed: {0}")]
    Encode(String),
}

/// The file formats a plot is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotFormat {
    /// PNG (lossless; the default of `mnist train --plot`'s examples).
    Png,
    /// Baseline JPEG at quality [`PlotFormat::JPEG_QUALITY`] (lossy: thin lines get halos).
    Jpeg,
}

impl PlotFormat {
    /// The extensions [`PlotFormat::from_path`] knows, in lower case, as a user would type them.
    pub const EXTENSIONS: &[(&str, PlotFormat)] = &[
        ("png", PlotFormat::Png),
        ("jpg", PlotFormat::Jpeg),
        ("jpeg", PlotFormat::Jpeg),
    ];

    /// The JPEG encoder's quality, 1 to 100.
    pub const JPEG_QUALITY: u8 = 90;

    /// The format `path`'s extension names, in any case (`h.png`, `h.JPG`); `None` for another
    /// extension or none.
    pub fn from_path(path: &std::path::Path) -> Option<PlotFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Self::EXTENSIONS
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|&(_, f)| f)
    }

    /// [`PlotFormat::EXTENSIONS`] as a list for messages: `.png, .jpg or .jpeg`.
    pub fn extensions_text() -> String {
        let names: Vec<String> = Self::EXTENSIONS
            .iter()
            .map(|(e, _)| format!(".{e}"))
            .collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// A PNG ([`SIZE`]) of two panels: the training loss and the test accuracy (%) per epoch of
/// `history`, with axes and titles when a system font is found.
///
/// # Errors
/// As [`history_picture`].
pub fn history_png(history: &[EpochRecord]) -> Result<Vec<u8>, PlotError> {
    history_picture(history, PlotFormat::Png)
}

/// The picture of [`history_png`] encoded as `format`: the bytes of a `.png` or `.jpg` file.
///
/// # Errors
/// [`PlotError::Empty`] for an empty history; [`PlotError::Draw`], [`PlotError::Encode`].
pub fn history_picture(history: &[EpochRecord], format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    if history.is_empty() {
        return Err(PlotError::Empty);
    }
    let (w, h) = SIZE;
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    let text = register_system_font();
    if !text || draw(history, &mut pixels, (w, h), true).is_err() {
        pixels.fill(255);
        draw(history, &mut pixels, (w, h), false).map_err(PlotError::Draw)?;
    }
    let mut bytes = Vec::new();
    let rgb = image::ExtendedColorType::Rgb8;
    match format {
        PlotFormat::Png => image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut bytes),
            &pixels,
            w,
            h,
            rgb,
        ),
        PlotFormat::Jpeg => image::ImageEncoder::write_image(
            image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut bytes,
                PlotFormat::JPEG_QUALITY,
            ),
            &pixels,
            w,
            h,
            rgb,
        ),
    }
    .map_err(|e| PlotError::Encode(e.to_string()))?;
    Ok(bytes)
}

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers the first readable font of [`FONT_PATHS`] as plotters' "sans-serif", once.
/// Returns whether text can be drawn.
fn register_system_font() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        FONT_PATHS.iter().any(|path| {
            std::fs::read(path).is_ok_and(|bytes| {
                // plotters keeps registered fonts for the whole process.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
        })
    })
}

/// Draws two panels (loss, accuracy) into an RGB buffer; `text` draws captions and labels.
fn draw(
    history: &[EpochRecord],
    pixels: &mut [u8],
    (w, h): (u32, u32),
    text: bool,
) -> Result<(), String> {
    let root = BitMapBackend::with_buffer(pixels, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (left, right) = root.split_horizontally(w / 2);
    let first = history.first().map_or(1, |r| r.epoch) as f64;
    let last = history.last().map_or(1, |r| r.epoch) as f64;
    let x = (first - 0.5)..(last + 0.5);
    let max_loss = history.iter().map(|r| r.train_loss).fold(0.0f32, f32::max) as f64;
    let min_acc = history.iter().map(|r| r.test_accuracy).fold(1.0, f64::min);
    let panels = [
        (
            left,
            "training loss (cross-entropy)",
            0.0..max_loss * 1.1 + 1e-6,
            history
                .iter()
                .map(|r| (r.epoch as f64, f64::from(r.train_loss)))
                .collect::<Vec<_>>(),
            RED,
        ),
        (
            right,
            "test accuracy (%)",
            (100.0 * min_acc - 1.0).max(0.0)..100.0,
            history
                .iter()
                .map(|r| (r.epoch as f64, 100.0 * r.test_accuracy))
                .collect(),
            BLUE,
        ),
    ];
    for (area, title, y, points, color) in panels {
        let mut builder = ChartBuilder::on(&area);
        builder.margin(20);
        if text {
            builder
                .caption(title, ("sans-serif", 20))
                .x_label_area_size(35)
                .y_label_area_size(55);
        }
        let mut chart = builder
            .build_cartesian_2d(x.clone(), y.clone())
            .map_err(|e| e.to_string())?;
        if !text {
            // A frame instead of the axes, whose tick labels need a font.
            let frame = [(x.start, y.start), (x.end, y.end)];
            chart
                .draw_series([Rectangle::new(frame, BLACK.stroke_width(1))])
                .map_err(|e| e.to_string())?;
        }
        let mut mesh = chart.configure_mesh();
        if text {
            mesh.x_desc("epoch")
                .x_labels(history.len().min(20) + 2)
                .x_label_formatter(&|v| {
                    if (v - v.round()).abs() < 1e-6 {
                        format!("{v:.0}")
                    } else {
                        String::new()
                    }
                });
        } else {
            mesh.disable_x_mesh().disable_y_mesh();
        }
        mesh.draw().map_err(|e| e.to_string())?;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<EpochRecord> {
        (1..=4)
            .map(|e| EpochRecord {
                epoch: e,
                train_loss: 1.0 / e as f32,
                test_accuracy: 0.9 + 0.02 * e as f64,
                train_seconds: 1.5,
                eval_seconds: 0.25,
            })
            .collect()
    }

    #[test]
    fn the_extension_names_the_format() {
        use std::path::Path;
        for (path, format) in [
            ("h.png", Some(PlotFormat::Png)),
            ("dir.jpg/h.PNG", Some(PlotFormat::Png)),
            ("h.jpg", Some(PlotFormat::Jpeg)),
            ("h.Jpeg", Some(PlotFormat::Jpeg)),
            ("h.gif", None),
            ("h", None),
            ("h.png.txt", None),
            (".png", None),
        ] {
            assert_eq!(PlotFormat::from_path(Path::new(path)), format, "{path}");
        }
        assert_eq!(PlotFormat::extensions_text(), ".png, .jpg or .jpeg");
        let jpeg = history_picture(&history(), PlotFormat::Jpeg).unwrap();
        assert_eq!(
            image::guess_format(&jpeg).unwrap(),
            image::ImageFormat::Jpeg
        );
        let img = image::load_from_memory(&jpeg).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), SIZE);
        // Lossy, but the red loss curve is still there.
        let reddish = img
            .pixels()
            .filter(|p| p.0[0] > 200 && p.0[1] < 60 && p.0[2] < 60);
        assert!(reddish.count() > 100);
    }

    #[test]
    fn plot_is_a_png_with_curves_in_both_modes() {
        let png = history_png(&history()).unwrap();
        let img = image::load_from_memory(&png).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), SIZE);
        let red = img.pixels().filter(|p| p.0 == [255, 0, 0]).count();
        let blue = img.pixels().filter(|p| p.0 == [0, 0, 255]).count();
        assert!(red > 100 && blue > 100, "red {red}, blue {blue}");
        // Without text (no fonts needed): still the curves.
        let (w, h) = SIZE;
        let mut pixels = vec![255u8; (w * h * 3) as usize];
        draw(&history(), &mut pixels, (w, h), false).unwrap();
        let red = pixels.chunks(3).filter(|p| p == &[255, 0, 0]).count();
        assert!(red > 100, "red {red}");
    }

    #[test]
    fn empty_history_is_an_error() {
        assert_eq!(history_png(&[]), Err(PlotError::Empty));
    }
}
