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

// ---- centring, as MNIST's digits were made (Rust: `mlp::data::picture::center`) ----
// The same operations in the same order, in f64 (JavaScript's numbers) from the f32 values,
// rounded to f32 at the end: the page and `mnist predict` give the same pixels.

/** The side of the box MNIST scaled each digit into (Rust: `DIGIT_BOX`). */
export const DIGIT_BOX = 20;
/** The ink level from which a pixel counts for the bounding box (Rust: `INK`). */
export const INK = Math.fround(0.05);
/** How far the centre of mass of a centred digit may be from the centre (Rust: `CENTERED_WITHIN`). */
export const CENTERED_WITHIN = 0.6;
/** The largest width and height read when pictures are centred (Rust: `MAX_SIDE` of `mnist predict`). */
export const MAX_SIDE = 2048;

/**
 * The centre of mass (x, y) in pixel coordinates (a pixel's centre is its index + 0.5), or null.
 * @param {ArrayLike<number>} values @param {number} width
 * @returns {null | [number, number]}
 */
export function centerOfMass(values, width) {
  let total = 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    total += v;
    sx += v * ((i % width) + 0.5);
    sy += v * (Math.floor(i / width) + 0.5);
  }
  return total > 0 ? [sx / total, sy / total] : null;
}

/**
 * The bounding box [x0, y0, x1, y1] (inclusive) of the pixels at least INK, or null.
 * @param {ArrayLike<number>} values @param {number} width
 */
function inkBox(values, width) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -1, -1];
  for (let i = 0; i < values.length; i++) {
    if (values[i] >= INK) {
      const x = i % width;
      const y = Math.floor(i / width);
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
  }
  return x1 < 0 ? null : [x0, y0, x1, y1];
}

/**
 * Whether `values` (side x side) are already centred as MNIST's digits are (Rust: `is_centered`).
 * @param {ArrayLike<number>} values @param {number} side
 */
export function isCentered(values, side) {
  if (values.length !== side * side) return false;
  const box = inkBox(values, side);
  const com = centerOfMass(values, side);
  if (!box || !com) return false;
  const longer = Math.max(box[2] - box[0] + 1, box[3] - box[1] + 1);
  const target = Math.floor(side / 2) + 0.5;
  return (
    longer >= DIGIT_BOX - 1 &&
    longer <= DIGIT_BOX &&
    Math.abs(com[0] - target) <= CENTERED_WITHIN &&
    Math.abs(com[1] - target) <= CENTERED_WITHIN
  );
}

/**
 * Area-averaging taps: for each of `nOut` output pixels, [input index, weight] pairs.
 * @param {number} nIn @param {number} nOut
 * @returns {[number, number][][]}
 */
function taps(nIn, nOut) {
  const step = nIn / nOut;
  /** @type {[number, number][][]} */
  const out = [];
  for (let o = 0; o < nOut; o++) {
    const lo = o * step;
    const hi = (o + 1) * step;
    /** @type {[number, number][]} */
    const t = [];
    for (let i = Math.floor(lo); i < Math.min(Math.ceil(hi), nIn); i++) {
      const w = (Math.min(hi, i + 1) - Math.max(lo, i)) / step;
      if (w > 0) t.push([i, w]);
    }
    out.push(t);
  }
  return out;
}

/**
 * `values` (width x height, white ink on black in [0, 1]) as side x side pixels centred as
 * MNIST's digits were made: the ink's bounding box scaled to 20 pixels on its longer side,
 * keeping its aspect (area averaging), moved by whole pixels so that its centre of mass is at
 * pixel (side / 2, side / 2) counted from 0 (Rust: `mlp::data::picture::center`).
 * @param {ArrayLike<number>} values @param {number} width @param {number} height @param {number} side
 */
export function center(values, width, height, side) {
  const out = new Float32Array(side * side);
  const box = inkBox(values, width);
  if (!box) return out;
  const [x0, y0, x1, y1] = box;
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  const scale = DIGIT_BOX / Math.max(bw, bh);
  const size = (/** @type {number} */ n) => Math.min(DIGIT_BOX, Math.max(1, Math.floor(n * scale + 0.5)));
  const ow = size(bw);
  const oh = size(bh);
  const wx = taps(bw, ow);
  const wy = taps(bh, oh);
  const rows = new Float64Array(bh * ow);
  for (let y = 0; y < bh; y++) {
    for (let ox = 0; ox < ow; ox++) {
      let acc = 0;
      for (const [i, w] of wx[ox]) acc += values[(y0 + y) * width + x0 + i] * w;
      rows[y * ow + ox] = acc;
    }
  }
  const scaled = new Float64Array(oh * ow);
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      let acc = 0;
      for (const [i, w] of wy[oy]) acc += rows[i * ow + ox] * w;
      scaled[oy * ow + ox] = acc;
    }
  }
  let total = 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < scaled.length; i++) {
    const v = scaled[i];
    total += v;
    sx += v * ((i % ow) + 0.5);
    sy += v * (Math.floor(i / ow) + 0.5);
  }
  const target = Math.floor(side / 2) + 0.5;
  const shift = (/** @type {number} */ c) => Math.floor(target - c + 0.5);
  const [dx, dy] = total > 0 ? [shift(sx / total), shift(sy / total)] : [Math.floor((side - ow) / 2), Math.floor((side - oh) / 2)];
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      const x = ox + dx;
      const y = oy + dy;
      if (x >= 0 && x < side && y >= 0 && y < side) out[y * side + x] = f(Math.min(1, Math.max(0, scaled[oy * ow + ox])));
    }
  }
  return out;
}
