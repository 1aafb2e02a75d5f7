// Drives the page `mnist export-web` wrote, in headless Chromium through playwright-core
// (run by crates/mlp/tests/mnist_web.rs; see there). Usage:
//
//   node browser.cjs PAGE_DIR SCREENSHOT.png IMAGE.png...
//
// Serves PAGE_DIR on 127.0.0.1 (a port the system picks), opens it in Chromium with WebGPU on
// SwiftShader, and prints one JSON object: the adapter, the page's results for the images
// (chosen in its file input, as a user would), and again after "Opaque images" is ticked
// (`inverted`) and unticked (`restored`); for each digit drawn on its canvas with the mouse
// (pointer events; `drawings`) the prediction and the model's 28 x 28 input as a PNG data URL;
// where the canvas and the probabilities stand at two common window sizes (`layout`; a
// screenshot of each, SCREENSHOT with the size before .png); the message the page shows when
// the browser has no WebGPU, and the one it shows when model.json names a kernel that
// kernels.js lacks. Every wait is bounded; any failure exits non-zero with the reason.

"use strict";

const fs = require("fs");
const http = require("http");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const [dir, screenshot, ...images] = process.argv.slice(2);
const CHROMIUM = process.env.MNIST_WEB_CHROMIUM || "/usr/bin/chromium";
const TIMEOUT = 60000;

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wgsl": "text/plain; charset=utf-8",
  ".bin": "application/octet-stream",
  ".png": "image/png",
  ".ts": "text/plain; charset=utf-8",
};

function serve(root) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const name = url.pathname === "/" ? "index.html" : decodeURIComponent(url.pathname.slice(1));
    const file = path.join(root, name);
    if (!file.startsWith(path.resolve(root)) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function main() {
  const server = await serve(path.resolve(dir));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "mnist-web-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--enable-unsafe-webgpu",
      "--enable-unsafe-swiftshader",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
    viewport: { width: 960, height: 1000 },
    timeout: TIMEOUT,
  });
  const out = {};
  try {
    const page = await context.newPage();
    const console_ = [];
    page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`));
    await page.goto(url, { timeout: TIMEOUT });
    try {
      out.adapter = await page.evaluate(() => window.mnist.ready);
    } catch (e) {
      const status = await page.textContent("#status");
      throw new Error(`the page did not start: ${status} (console: ${console_.join(" | ")})`);
    }
    out.status = await page.textContent("#status");

    // The test images, chosen in the file input; then read again with "Opaque images" ticked,
    // and unticked.
    await page.setInputFiles("#files", images);
    await page.waitForFunction((n) => window.mnist.runs >= 1 && window.mnist.results.length >= n, images.length, { timeout: TIMEOUT });
    out.files = await page.evaluate(() => window.mnist.results);
    await page.check("#invert");
    await page.waitForFunction(() => window.mnist.runs >= 2, null, { timeout: TIMEOUT });
    out.inverted = await page.evaluate(() => window.mnist.results);
    await page.uncheck("#invert");
    await page.waitForFunction(() => window.mnist.runs >= 3, null, { timeout: TIMEOUT });
    out.restored = await page.evaluate(() => window.mnist.results);

    // Digits drawn on the canvas with the mouse (pointer events), each in a part of the
    // canvas and at a size of its own: the page centres them as MNIST's digits were made. Each
    // stroke is a polyline in fractions of the canvas.
    const drawings = {
      one: [[[0.56, 0.15], [0.44, 0.85]]],
      // A 7 in the upper left, its bar long and heavy (the drawing of issue 34).
      seven: [[[0.1, 0.12], [0.55, 0.12], [0.3, 0.62]]],
      zero: [[[0.5, 0.2], [0.68, 0.3], [0.72, 0.5], [0.68, 0.7], [0.5, 0.8], [0.32, 0.7], [0.28, 0.5], [0.32, 0.3], [0.5, 0.2]]],
    };
    out.drawings = {};
    for (const [name, strokes] of Object.entries(drawings)) {
      await page.click("#clear");
      const box = await page.locator("#canvas").boundingBox();
      const p = (fx, fy) => [box.x + fx * box.width, box.y + fy * box.height];
      for (const s of strokes) {
        await page.mouse.move(...p(...s[0]));
        await page.mouse.down();
        for (const q of s.slice(1)) await page.mouse.move(...p(...q), { steps: 12 });
        await page.mouse.up();
      }
      await page.waitForFunction(() => window.mnist.canvas !== null, null, { timeout: TIMEOUT });
      // Let the last frame's prediction finish: two animation frames, then the queue.
      await page.evaluate(async () => {
        for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(r));
        await window.mnist.classify(new Float32Array(784));
        await new Promise((r) => setTimeout(r, 50));
      });
      const c = await page.evaluate(() => window.mnist.canvas);
      c.shown = await page.textContent("#prediction");
      c.png = await page.evaluate(() => document.getElementById("input").toDataURL("image/png"));
      out.drawings[name] = c;
    }
    await page.screenshot({ path: screenshot });

    // Where the results stand at common window sizes.
    out.layout = [];
    for (const [width, height] of [[900, 700], [1400, 800]]) {
      await page.setViewportSize({ width, height });
      await page.evaluate(() => window.scrollTo(0, 0));
      const where = async (sel) => page.locator(sel).boundingBox();
      out.layout.push({ width, height, canvas: await where("#canvas"), bars: await where("#bars"), prediction: await where("#prediction") });
      await page.screenshot({ path: screenshot.replace(/\.png$/, `-${width}x${height}.png`) });
    }

    // No WebGPU: the same page with navigator.gpu removed says so.
    const bare = await context.newPage();
    await bare.addInitScript(() => {
      Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
    });
    await bare.goto(url, { timeout: TIMEOUT });
    await bare.waitForFunction(() => document.body.dataset.webgpu === "missing", null, { timeout: TIMEOUT });
    out.no_webgpu = await bare.textContent("#status");

    // A model.json whose first layer names a kernel kernels.js lacks: the page says which.
    const missing = await context.newPage();
    await missing.route("**/model.json", async (route) => {
      const response = await route.fetch();
      const model = await response.json();
      model.layers[0].kernel = "linear_direct_missing";
      await route.fulfill({ response, json: model });
    });
    await missing.goto(url, { timeout: TIMEOUT });
    await missing.waitForFunction(() => document.body.dataset.webgpu === "failed", null, { timeout: TIMEOUT });
    out.missing_kernel = await missing.textContent("#status");
    out.console = console_;
  } finally {
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
