// @ts-check
// A picture's RGBA bytes into the model's input pixels: the rule of `mnist predict`
// (Rust: crates/mlp/src/data/picture.rs, `mlp::data::picture::pixels`), step for step and in
// the same f32 arithmetic (Math.fround), so that a PNG gives the same inputs here and there.
//
// MNIST digits are white ink on black, each pixel the ink's coverage in [0, 1]. Each pixel has
// a luminance L (the `image` crate's: (2126 R + 7152 G + 722 B) / 10000 in integers, then
// / 255) and an opacity A = alpha / 255; the input value is
// - opaque pictures (every A = 1): L, or 1 - L with `invert` (dark ink on a light background);
// - a drawing in one colour on transparency (the clearly visible pixels, A >= 1/2, within
//   ONE_COLOUR_SPREAD of luminance; as a canvas exports strokes of one brush): A;
// - any other picture with transparency: A L, or A (1 - L) with `invert`.
//
// Browsers decode PNGs to 8 bits per channel: a 16-bit PNG is read from its top 8 bits here
// and from all 16 by `mnist predict`.

/** Largest luminance spread of a one-colour drawing (Rust: `ONE_COLOUR_SPREAD`). */
export const ONE_COLOUR_SPREAD = Math.fround(0.1);

const f = Math.fround;

/**
 * @param {ArrayLike<number>} rgba `[height * width * 4]` bytes, row-major (ImageData.data)
 * @param {boolean} invert dark ink on a light background
 * @returns {{values: Float32Array, reading: "opaque" | "drawing" | "composited"}}
 */
export function pixels(rgba, invert) {
  const n = rgba.length / 4;
  const lum = new Float32Array(n);
  const alpha = new Float32Array(n);
  let opaque = true;
  for (let i = 0; i < n; i++) {
    const [r, g, b, a] = [rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2], rgba[4 * i + 3]];
    lum[i] = f(Math.floor((2126 * r + 7152 * g + 722 * b) / 10000) / 255);
    alpha[i] = f(a / 255);
    if (alpha[i] < 1) opaque = false;
  }
  const reading = opaque ? "opaque" : oneColour(lum, alpha) ? "drawing" : "composited";
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const ink = invert ? f(1 - lum[i]) : lum[i];
    values[i] = reading === "opaque" ? ink : reading === "drawing" ? alpha[i] : f(alpha[i] * ink);
  }
  return { values, reading };
}

/**
 * Whether the clearly visible pixels (A >= 1/2; all pixels with any opacity if none is) have
 * luminances within ONE_COLOUR_SPREAD; true for a picture with no visible pixel.
 * @param {Float32Array} lum
 * @param {Float32Array} alpha
 */
function oneColour(lum, alpha) {
  const clearly = alpha.some((a) => a >= 0.5);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < lum.length; i++) {
    if (clearly ? alpha[i] >= 0.5 : alpha[i] > 0) {
      lo = Math.min(lo, lum[i]);
      hi = Math.max(hi, lum[i]);
    }
  }
  return f(hi - lo) <= ONE_COLOUR_SPREAD || lo > hi;
}

/**
 * True when every value is the same within half a level of 255 (Rust: `Pixels::is_blank`).
 * @param {Float32Array} values
 */
export function isBlank(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return values.length === 0 || f(hi - lo) < f(0.5 / 255);
}
