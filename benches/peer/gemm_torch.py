#!/usr/bin/env python3
"""The PyTorch peer of the `gemm` benchmark: torch.matmul on the same shapes and layouts, in f32
with TF32 off, f32 with TF32, and f16 (f16 inputs and output, cuBLAS accumulating in f32).

    gemm bench --json ours.jsonl          # the project's kernels (crates/gemm)
    python3 benches/peer/gemm_torch.py --ours ours.jsonl

Timing as `gemm bench` does it: warm-up, then the median of 7 timed runs of `reps` back-to-back
products (CUDA events around them), `reps` chosen so that a run takes about 40 ms of GPU time.
Prints the torch figures, and with `--ours` a table of both with the ratios the targets use.
"""
import argparse
import json

import torch

SQUARE = [1024, 2048, 4096, 8192]
# (M, N, K, layout): the MLP's forward X W^T at batches 128, 1024, 60000, and its weight and
# input gradients at batches 128 and 1024 (as in `gemm bench`).
MLP = [(b, 128, 784, "abt") for b in (128, 1024, 60000)] + [
    shape for b in (128, 1024) for shape in ((128, 784, b, "atb"), (b, 784, 128, "ab"))
]
MODES = ["f32", "tf32", "f16"]


def operands(m, n, k, layout, dtype):
    g = torch.Generator(device="cuda").manual_seed(0)
    a_shape = (k, m) if layout in ("atb", "atbt") else (m, k)
    b_shape = (n, k) if layout in ("abt", "atbt") else (k, n)
    a = (torch.rand(a_shape, generator=g, device="cuda") * 2 - 1).to(dtype)
    b = (torch.rand(b_shape, generator=g, device="cuda") * 2 - 1).to(dtype)
    op_a = a.t() if layout in ("atb", "atbt") else a
    op_b = b.t() if layout in ("abt", "atbt") else b
    return op_a, op_b


def measure(m, n, k, layout, mode, pass_ms=40.0, samples=7):
    torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    torch.backends.cudnn.allow_tf32 = mode == "tf32"
    dtype = torch.float16 if mode == "f16" else torch.float32
    a, b = operands(m, n, k, layout, dtype)
    out = torch.empty((m, n), device="cuda", dtype=dtype)

    def run(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            torch.matmul(a, b, out=out)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / reps

    run(2)
    one = max(run(3), 1e-7)
    reps = min(max(int(pass_ms * 1e-3 / one + 0.999), 3), 2000)
    times = sorted(run(reps) for _ in range(samples))
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ours", help="JSON lines written by `gemm bench --json`")
    p.add_argument("--sizes", default=",".join(map(str, SQUARE)))
    p.add_argument("--no-mlp", action="store_true")
    p.add_argument("--pass-ms", type=float, default=40.0, help="GPU time per timed run")
    p.add_argument("--samples", type=int, default=7, help="timed runs (the median is reported)")
    args = p.parse_args()
    shapes = [(s, s, s, "ab") for s in map(int, args.sizes.split(","))]
    if not args.no_mlp:
        shapes += MLP
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}")
    torch_tflops = {}
    for (m, n, k, layout) in shapes:
        for mode in MODES:
            s = measure(m, n, k, layout, mode, args.pass_ms, args.samples)
            torch_tflops[(m, n, k, layout, mode)] = 2 * m * n * k / s / 1e12
            print(f"torch {mode:5} {m}x{n}x{k} {layout:4} {s * 1e3:9.4f} ms {2 * m * n * k / s / 1e12:8.2f} TFLOP/s")
    if not args.ours:
        return
    ours = {}
    adapter = ""
    with open(args.ours) as f:
        for line in f:
            r = json.loads(line)
            if "adapter" in r:
                adapter = r["adapter"]
                continue
            ours[(r["m"], r["n"], r["k"], r["layout"], r["kernel"])] = r
    print()
    print(adapter)
    print("TFLOP/s (M x N x K; ours: simt = f32 SIMT, coop-f16 = tensor cores, f16 inputs, f32 accumulators,"
          " as CoopConfig::choose picks it,"
          " direct = fragments loaded straight from the buffers, coop-f32 = reading f32 buffers)")
    print()
    print("| M x N x K | layout | simt f32 | coop-f16 | coop-f16 direct | coop-f32 | torch f32 | torch tf32 "
          "| torch f16 | simt / torch f32 | coop-f16 / simt | coop-f16 / torch f16 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (m, n, k, layout) in shapes:
        def o(kernel):
            r = ours.get((m, n, k, layout, kernel))
            return r["tflops"] if r else float("nan")
        t = lambda mode: torch_tflops[(m, n, k, layout, mode)]
        simt, c16, s16, c32 = o("simt"), o("coop-f16"), o("coop-f16-direct"), o("coop-f32")
        print(f"| {m}x{n}x{k} | {layout} | {simt:.2f} | {c16:.2f} | {s16:.2f} | {c32:.2f} | {t('f32'):.2f} | {t('tf32'):.2f} "
              f"| {t('f16'):.2f} | {simt / t('f32'):.2f} | {c16 / simt:.2f} | {c16 / t('f16'):.2f} |")


if __name__ == "__main__":
    main()
