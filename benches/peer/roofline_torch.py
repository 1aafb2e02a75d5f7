#!/usr/bin/env python3
"""The PyTorch peer of `gemm roofline` (issue 33): the same memory-bound operations on the same
row-major float32 matrix x [rows, cols] (default 8192 x 4096), eager and torch.compile, timed
with CUDA events around `--reps` back-to-back calls (after warm-up), median of `--samples`;
GB/s counted as `gemm roofline` counts them: the bytes each operation must move at least
(x read once, y written once; y also read for y = a x + y; a row sum writes `rows` floats).

    python3 benches/peer/roofline_torch.py --rows 8192 --cols 4096
    python3 benches/peer/roofline_torch.py --ops transpose --show-code   # one operation, and
        # the Triton code torch.compile generates for it, with the configuration its
        # autotuning chose (Inductor's `.best_config` files in TORCHINDUCTOR_CACHE_DIR)

Operations (ours in crates/gemm/src/memory.rs):
  copy        y.copy_(x)
  axpy        y.add_(x, alpha=a)                       (y = a x + y, in place)
  gelu        torch.nn.functional.gelu(x, approximate="tanh")
  row_sum     x.sum(dim=1)
  row_softmax torch.softmax(x, dim=1)
  layer_norm  torch.nn.functional.layer_norm(x, (cols,))  (no weights, eps 1e-5)
  transpose   x.t().contiguous()
"""
import argparse
import statistics

import torch
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=8192)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--ops", help="comma-separated operations to time (default: all)")
    p.add_argument("--show-code", action="store_true",
                   help="print torch.compile's generated code and chosen configurations")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    rows, cols = a.rows, a.cols
    dev = "cuda"
    x = (torch.rand(rows, cols, device=dev) * 8 - 4).contiguous()
    y = torch.rand(rows, cols, device=dev)
    n = rows * cols * 4
    ops = {
        "copy": (lambda: y.copy_(x), 2 * n),
        "axpy": (lambda: y.add_(x, alpha=0.75), 3 * n),
        "gelu": (lambda: F.gelu(x, approximate="tanh"), 2 * n),
        "row_sum": (lambda: x.sum(dim=1), n + rows * 4),
        "row_softmax": (lambda: torch.softmax(x, dim=1), 2 * n),
        "layer_norm": (lambda: F.layer_norm(x, (cols,)), 2 * n),
        "transpose": (lambda: x.t().contiguous(), 2 * n),
    }
    if a.ops:
        wanted = a.ops.split(",")
        unknown = [o for o in wanted if o not in ops]
        if unknown:
            raise SystemExit(f"unknown operations {unknown}; known: {list(ops)}")
        ops = {k: v for k, v in ops.items() if k in wanted}
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, x [{rows}, {cols}] f32")
    print("| operation | eager us | eager GB/s | compiled us | compiled GB/s |")
    print("|---|---|---|---|---|")
    for name, (fn, nbytes) in ops.items():
        cells = []
        variants = [fn] if a.no_compile else [fn, torch.compile(fn, mode="max-autotune-no-cudagraphs")]
        for f in variants:
            for _ in range(5):
                f()
            torch.cuda.synchronize()
            times = []
            for _ in range(a.samples):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(a.reps):
                    f()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) / a.reps * 1e-3)
            t = statistics.median(times)
            cells += [f"{t * 1e6:.1f}", f"{nbytes / t / 1e9:.0f}"]
        if a.no_compile:
            cells += ["-", "-"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    if a.show_code and not a.no_compile:
        show_code(ops)


def show_code(ops):
    """Each operation's code as torch.compile generates it (a fresh compile, the same mode),
    then every configuration Inductor's autotuning recorded in its cache."""
    import glob
    import os

    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    for name, (fn, _) in ops.items():
        f = torch.compile(fn, mode="max-autotune-no-cudagraphs")
        _, codes = run_and_get_code(f)
        print(f"== torch.compile's code for {name}")
        for code in codes:
            print(code)
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if cache:
        for path in sorted(glob.glob(f"{cache}/**/*.best_config", recursive=True)):
            with open(path) as fh:
                print(f"== {os.path.relpath(path, cache)}: {fh.read()}")


if __name__ == "__main__":
    main()
