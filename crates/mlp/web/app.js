// @ts-check
// The MNIST page: the model's own inference kernels (exported from Rust by wgsl_dsl::export,
// with their typed bindings in kernels.js) on WebGPU, fed by a canvas you draw on or by PNG
// files read as `mnist predict` reads them (picture.js). Written by `mnist export-web`.
//
// The kernels to run are named in model.json (each layer's `kernel`, `softmax_kernel`): the
// page compiles kernels.js's `create_<kernel>` for each, so it runs a model of any activation
// that `mnist export-web` exported, and says which kernel is missing if kernels.js lacks one.
//
// For tests and tools, `window.mnist` has `ready` (resolves to the adapter's info once the
// kernels are compiled, rejects with the reason otherwise), `classify(values)` (probabilities
// `[n * classes]` for inputs `[n * inputs]`), `results` (one entry per file of the latest
// files read), `runs` (how many times files were classified: choosing them, then each change
// of "Opaque images" re-runs them) and `canvas` (the drawing's latest prediction).

import * as kernels from "./kernels.js";
import { MAX_SIDE, center, isBlank, isCentered, pixels } from "./picture.js";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const status = $("status");
/** The version of model.json's format this page reads (docs/mnist-web.md). */
const MODEL_FORMAT_VERSION = 2;
/** kernels.js's exports by name: `create_<kernel>` per exported kernel, `manifests`. */
const exported = /** @type {Record<string, any>} */ (/** @type {unknown} */ (kernels));

/** @typedef {{prediction: number, probabilities: number[]}} Prediction */

const state = {
  /** @type {Promise<any>} */
  ready: Promise.resolve(null),
  /** @type {null | ((values: Float32Array) => Promise<Float32Array>)} */
  classify: null,
  /** @type {{name: string, reading?: string, blank?: boolean, prediction?: number, probabilities?: number[], error?: string}[]} */
  results: [],
  runs: 0,
  /** @type {null | Prediction} */
  canvas: null,
};
/** @type {any} */ (window).mnist = state;

class NoWebGpu extends Error {}

/** @param {string} text @param {"" | "error" | "ok"} [kind] */
function say(text, kind = "") {
  status.textContent = text;
  status.className = kind;
}

/**
 * The kernels model.json names, each once, in order: every layer's `kernel`, then
 * `softmax_kernel`. Throws, naming them, if kernels.js lacks any.
 * @param {any} model model.json
 * @returns {string[]}
 */
function neededKernels(model) {
  /** @type {string[]} */
  const names = [...new Set([...model.layers.map((/** @type {any} */ l) => l.kernel), model.softmax_kernel])];
  const missing = names.filter((n) => typeof n !== "string" || typeof exported[`create_${n}`] !== "function" || !kernels.manifests[n]);
  if (missing.length > 0) {
    const list = missing.map((n) => `\`${n}\``).join(", ");
    const have = Object.keys(kernels.manifests).join(", ");
    throw new Error(
      `model.json names the kernel${missing.length > 1 ? "s" : ""} ${list}, which kernels.js does not have (it has ${have}); ` +
        "export the page again with `mnist export-web`",
    );
  }
  return names;
}

/**
 * The model on `device`: its parameters and workspace in buffers, and `classify`, which
 * records, per batch of at most `max_batch` rows, each layer's kernel (`linear_direct_{activation}`
 * per hidden layer, `linear_direct_identity`) and the softmax kernel in one compute pass, and
 * reads the probabilities.
 * @param {GPUDevice} device
 * @param {any} model model.json
 * @param {ArrayBuffer} weights weights.bin: the flat parameters, f32 little-endian
 * @param {Record<string, any>} k the compiled kernels, by name
 */
function makeClassifier(device, model, weights, k) {
  const { inputs, classes, max_batch: cap } = model;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const buffer = (/** @type {number} */ bytes, u = usage) =>
    device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 4) * 4), usage: u });
  const view = new DataView(weights);
  const flat = new Float32Array(model.params);
  for (let i = 0; i < flat.length; i++) flat[i] = view.getFloat32(4 * i, true);
  const params = buffer(flat.byteLength);
  device.queue.writeBuffer(params, 0, flat);
  const x = buffer(cap * inputs * 4);
  const acts = model.layers.map((/** @type {any} */ l) => buffer(cap * l.outputs * 4));
  const dims = model.layers.map(() => buffer(32, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST));
  const lossDims = buffer(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  const labels = buffer(cap * 4);
  const probs = buffer(cap * classes * 4);
  const losses = buffer(cap * 4);
  const readback = buffer(cap * classes * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  let queue = Promise.resolve();

  /** @param {Float32Array} batch rows of `inputs` values, at most `cap` */
  async function run(batch) {
    const rows = batch.length / inputs;
    device.queue.writeBuffer(x, 0, batch);
    model.layers.forEach((/** @type {any} */ l, /** @type {number} */ i) => {
      const bytes = kernels.encode_LinearDims({
        batch: rows,
        inputs: l.inputs,
        outputs: l.outputs,
        weight_offset: l.weight_offset,
        bias_offset: l.bias_offset,
      });
      device.queue.writeBuffer(dims[i], 0, bytes);
    });
    device.queue.writeBuffer(lossDims, 0, kernels.encode_LossDims({ batch: rows, classes }));
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    model.layers.forEach((/** @type {any} */ l, /** @type {number} */ i) => {
      const kernel = k[l.kernel];
      const grid = [Math.ceil(l.outputs / model.linear_workgroup), rows, 1];
      kernel.dispatch(pass, { dims: dims[i], x: i === 0 ? x : acts[i - 1], params, y: acts[i] }, grid);
    });
    const logits = acts[acts.length - 1];
    k[model.softmax_kernel].dispatch(pass, { dims: lossDims, logits, labels, probs, losses }, [
      Math.ceil(rows / model.softmax_workgroup),
      1,
      1,
    ]);
    pass.end();
    encoder.copyBufferToBuffer(probs, 0, readback, 0, rows * classes * 4);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ, 0, rows * classes * 4);
    const out = new Float32Array(readback.getMappedRange(0, rows * classes * 4).slice(0));
    readback.unmap();
    return out;
  }

  /** @param {Float32Array} values `[n * inputs]` */
  return (values) => {
    if (values.length === 0 || values.length % inputs !== 0) {
      return Promise.reject(new RangeError(`${values.length} values are not a whole number of images of ${inputs} pixels`));
    }
    const job = queue.then(async () => {
      const out = new Float32Array((values.length / inputs) * classes);
      for (let start = 0; start < values.length; start += cap * inputs) {
        const batch = values.subarray(start, Math.min(values.length, start + cap * inputs));
        out.set(await run(batch), (start / inputs) * classes);
      }
      return out;
    });
    queue = job.then(() => {}, () => {});
    return job;
  };
}

async function start() {
  if (!("gpu" in navigator) || !navigator.gpu) {
    throw new NoWebGpu(
      "This browser has no WebGPU (navigator.gpu is missing), so the model cannot run here. " +
        "Use a browser with WebGPU: Chrome or Edge 113+, Safari 26+, Firefox 141+ on Windows; " +
        "Chromium on Linux with --enable-unsafe-webgpu.",
    );
  }
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) {
    throw new NoWebGpu(
      "This browser has WebGPU but offers no GPU adapter (WebGPU may be disabled, or the GPU " +
        "blocklisted), so the model cannot run here.",
    );
  }
  const [model, weights] = await Promise.all([
    fetch("model.json").then((r) => r.json()),
    fetch("weights.bin").then((r) => r.arrayBuffer()),
  ]);
  if (model.format_version !== MODEL_FORMAT_VERSION) {
    throw new Error(`model.json has format_version ${model.format_version}; this page reads ${MODEL_FORMAT_VERSION} (export the page again with \`mnist export-web\`)`);
  }
  const names = neededKernels(model);
  if (weights.byteLength !== model.params * 4) {
    throw new Error(`weights.bin has ${weights.byteLength} bytes; the model has ${model.params} parameters`);
  }
  const device = await adapter.requestDevice(kernels.deviceDescriptor(adapter, names));
  device.lost.then((info) => say(`The GPU device was lost: ${info.message}`, "error"));
  const compiled = await Promise.all(names.map((n) => exported[`create_${n}`](device)));
  const k = Object.fromEntries(names.map((n, i) => [n, compiled[i]]));
  state.classify = makeClassifier(device, model, weights, k);
  const info = adapter.info ?? {};
  const shape = [model.inputs, ...model.hidden, model.classes].join("-");
  say(`Model ${shape}, ${model.activation} (epoch ${model.epoch}) on WebGPU, adapter ${info.vendor || "?"} ${info.architecture || info.device || ""}`.trim(), "ok");
  $("model").textContent = shape;
  return { vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description };
}

// ---- the bars ----

const bars = $("bars");
const barFill = [];
const barText = [];
for (let d = 0; d < 10; d++) {
  const li = document.createElement("li");
  li.innerHTML = `<span class="digit">${d}</span><span class="bar"><span class="fill"></span></span><span class="pct">–</span>`;
  bars.append(li);
  barFill.push(/** @type {HTMLElement} */ (li.querySelector(".fill")));
  barText.push(/** @type {HTMLElement} */ (li.querySelector(".pct")));
}

/** @param {null | ArrayLike<number>} p @param {string} [note] */
function show(p, note = "") {
  const best = p ? argmax(p) : -1;
  for (let d = 0; d < 10; d++) {
    const v = p ? p[d] : 0;
    barFill[d].style.width = `${(100 * v).toFixed(1)}%`;
    barText[d].textContent = p ? `${(100 * v).toFixed(1)}%` : "–";
    bars.children[d].classList.toggle("best", d === best);
  }
  $("prediction").textContent = best >= 0 ? String(best) : "–";
  $("note").textContent = note;
}

/** @param {ArrayLike<number>} p */
function argmax(p) {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i] > p[best]) best = i;
  return best;
}

// ---- the drawing ----

const canvas = /** @type {HTMLCanvasElement} */ ($("canvas"));
const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
const input = /** @type {HTMLCanvasElement} */ ($("input"));
const inputCtx = /** @type {CanvasRenderingContext2D} */ (input.getContext("2d", { willReadFrequently: true }));
const invert = /** @type {HTMLInputElement} */ ($("invert"));
let drawing = false;
let last = { x: 0, y: 0 };
let pending = false;
let drawn = false;

ctx.lineWidth = canvas.width / 9;
ctx.lineCap = "round";
ctx.lineJoin = "round";
ctx.strokeStyle = "#fff";

/** @param {PointerEvent} e */
function at(e) {
  const r = canvas.getBoundingClientRect();
  return { x: ((e.clientX - r.left) * canvas.width) / r.width, y: ((e.clientY - r.top) * canvas.height) / r.height };
}

canvas.addEventListener("pointerdown", (e) => {
  canvas.setPointerCapture(e.pointerId);
  drawing = true;
  last = at(e);
  stroke(last);
});
canvas.addEventListener("pointermove", (e) => {
  if (drawing) stroke(at(e));
});
for (const ev of ["pointerup", "pointercancel"]) {
  canvas.addEventListener(ev, () => {
    drawing = false;
    schedule();
  });
}

/** @param {{x: number, y: number}} p */
function stroke(p) {
  ctx.beginPath();
  ctx.moveTo(last.x, last.y);
  ctx.lineTo(p.x + 0.01, p.y);
  ctx.stroke();
  last = p;
  drawn = true;
  schedule();
}

/** Predict once per animation frame while drawing. */
function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    predictDrawing();
  });
}

/**
 * The drawing as the model's 28x28 picture, as MNIST's digits were made (picture.js's
 * `center`, which `mnist predict` also applies): the strokes' opacity on the full canvas, their
 * bounding box scaled to 20 pixels on its longer side keeping its aspect, placed in 28 x 28
 * with its centre of mass at the centre; drawn into the input canvas as white strokes on
 * transparency (so that the saved PNG reads as the same input in `mnist predict`).
 */
function drawingToInput() {
  const side = input.width;
  const { data, width, height } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  const alpha = new Float32Array(width * height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = data[4 * i + 3] / 255;
  const values = center(alpha, width, height, side);
  const image = inputCtx.createImageData(side, side);
  for (let i = 0; i < values.length; i++) {
    image.data.set([255, 255, 255, Math.round(values[i] * 255)], 4 * i);
  }
  inputCtx.putImageData(image, 0, 0);
}

async function predictDrawing() {
  if (!state.classify || !drawn) return;
  drawingToInput();
  const image = inputCtx.getImageData(0, 0, input.width, input.height);
  const { values } = pixels(image.data, invert.checked);
  if (isBlank(values)) {
    show(null, "Nothing drawn yet.");
    return;
  }
  const p = Array.from(await state.classify(values));
  state.canvas = { prediction: argmax(p), probabilities: p };
  show(p, "Your drawing, as the model's 28 x 28 input (right).");
  /** @type {HTMLAnchorElement} */ ($("save")).href = input.toDataURL("image/png");
}

$("clear").addEventListener("click", () => {
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  inputCtx.clearRect(0, 0, input.width, input.height);
  drawn = false;
  state.canvas = null;
  show(null);
});
invert.addEventListener("change", () => {
  predictDrawing();
  if (lastFiles.length > 0) classifyFiles(lastFiles);
});

// ---- files ----

/** The files read last, classified again when "Opaque images" changes. @type {File[]} */
let lastFiles = [];

/**
 * A picture's input pixels as `mnist predict` reads them by default (`--center auto`): the
 * picture rule (picture.js's `pixels`), then centred as MNIST's digits were (`center`) unless
 * already centred so or blank.
 * @param {ImageData} image
 * @returns {{values: Float32Array, reading: string, blank: boolean}}
 */
function readPicture(image) {
  const side = input.width;
  const { values, reading } = pixels(image.data, invert.checked);
  const blank = isBlank(values);
  const square = image.width === side && image.height === side;
  if (blank) return { values: square ? values : new Float32Array(side * side).fill(values[0] ?? 0), reading, blank };
  if (square && isCentered(values, side)) return { values, reading, blank };
  return { values: center(values, image.width, image.height, side), reading, blank };
}

/**
 * Read image files as `mnist predict` does and classify them in one batch: one row each in
 * the table (or the reason it was not read), the last one's bars and input.
 * @param {File[]} files
 */
async function classifyFiles(files) {
  if (!state.classify) return;
  lastFiles = files;
  const side = input.width;
  /** @type {{name: string, values?: Float32Array, reading?: string, blank?: boolean, error?: string}[]} */
  const read = [];
  for (const file of files) {
    try {
      const bitmap = await createImageBitmap(file, { premultiplyAlpha: "none", colorSpaceConversion: "none" });
      if (bitmap.width > MAX_SIDE || bitmap.height > MAX_SIDE) {
        read.push({ name: file.name, error: `the image is ${bitmap.width}x${bitmap.height}, larger than the ${MAX_SIDE}x${MAX_SIDE} pixels read` });
        continue;
      }
      const c = new OffscreenCanvas(bitmap.width, bitmap.height);
      const cx = /** @type {OffscreenCanvasRenderingContext2D} */ (c.getContext("2d", { willReadFrequently: true }));
      cx.drawImage(bitmap, 0, 0);
      const picture = readPicture(cx.getImageData(0, 0, bitmap.width, bitmap.height));
      read.push({ name: file.name, ...picture });
    } catch (e) {
      read.push({ name: file.name, error: `cannot be decoded as an image (${e})` });
    }
  }
  const ok = read.filter((r) => r.values);
  const inputs = new Float32Array(ok.length * side * side);
  ok.forEach((r, i) => inputs.set(/** @type {Float32Array} */ (r.values), i * side * side));
  const probs = ok.length > 0 ? await state.classify(inputs) : new Float32Array();
  const table = $("files-result");
  table.replaceChildren();
  /** @type {typeof state.results} */
  const results = [];
  let i = 0;
  for (const r of read) {
    const row = document.createElement("tr");
    if (r.values) {
      const p = Array.from(probs.subarray(i * 10, i * 10 + 10));
      i++;
      const best = argmax(p);
      results.push({ name: r.name, reading: r.reading, blank: r.blank, prediction: best, probabilities: p });
      row.innerHTML = `<td></td><td>${best}</td><td>${(100 * p[best]).toFixed(1)}%</td><td>${r.blank ? "blank after conversion" : ""}</td>`;
      if (r === ok[ok.length - 1]) {
        const image = inputCtx.createImageData(side, side);
        r.values.forEach((v, j) => image.data.set([255, 255, 255, Math.round(v * 255)], 4 * j));
        inputCtx.putImageData(image, 0, 0);
        show(p, `${r.name} (read as ${r.reading === "opaque" ? "an opaque image" : r.reading === "drawing" ? "a drawing on transparency" : "an image with transparency"}).`);
      }
    } else {
      results.push({ name: r.name, error: r.error });
      row.innerHTML = `<td></td><td colspan="3" class="error"></td>`;
      /** @type {HTMLElement} */ (row.children[1]).textContent = r.error ?? "";
    }
    /** @type {HTMLElement} */ (row.children[0]).textContent = r.name;
    table.append(row);
  }
  state.results = results;
  state.runs += 1;
}

const files = /** @type {HTMLInputElement} */ ($("files"));
files.addEventListener("change", () => classifyFiles(Array.from(files.files ?? [])));
document.addEventListener("dragover", (e) => e.preventDefault());
document.addEventListener("drop", (e) => {
  e.preventDefault();
  classifyFiles(Array.from(e.dataTransfer?.files ?? []));
});

show(null, "Draw a digit in the black square, or drop pictures of digits.");
state.ready = start().catch((e) => {
  document.body.dataset.webgpu = e instanceof NoWebGpu ? "missing" : "failed";
  say(e instanceof NoWebGpu ? e.message : `The model could not be started: ${e.message ?? e}`, "error");
  throw e;
});
state.ready.catch(() => {});
