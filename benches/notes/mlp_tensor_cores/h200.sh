#!/bin/bash
# Does a tensor-core forward product pay in the MLP's fused step? Same run: the fused step's
# per-kernel profile at batches 64 (default), 128, 1024, and the gemm kernels (SIMT f32,
# tensor cores with f16 / f32 buffers) on the forward product X W^T (batch x 128 x 784, abt).
# Binaries: `cargo build --release -p mlp --bin mnist -p wgsl-gemm --bin gemm` (branch tensor,
# 2026-12-01 04:00 UTC), copied with this script to .dev/tensor/; one device call with
# carry [".gl", ".dev/tensor"]: `bash .dev/tensor/mlp_tc.sh`. Outputs: the .txt files here.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
M=.dev/tensor/mnist; G=.dev/tensor/gemm
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
for b in 64 128 1024; do
  echo "== mnist batch $b ($(( $(date +%s) - T0 )) s)"
  timeout 60 $M train --data data/mnist --epochs 2 --batch-size $b --limit-test 1000 --profile 2>&1 \
    | grep -v XDG > $OUT/mnist_$b.txt; tail -4 $OUT/mnist_$b.txt
done
echo "== gemm ($(( $(date +%s) - T0 )) s)"
timeout 120 $G bench --sizes 1024 --kernels simt,coop-f16,coop-f32 --samples 5 --pass-ms 15 2>&1 \
  | grep -v XDG > $OUT/gemm.txt
echo "== done ($(( $(date +%s) - T0 )) s)"
python3 - "$OUT" <<'PY'
import re, sys, os
out = sys.argv[1]
print("| batch | forward_gather us/dispatch | softmax_head | grad_update | GPU us/step (chunk) | epoch 2 ms |")
print("|---|---|---|---|---|---|")
for b in (64, 128, 1024):
    t = open(os.path.join(out, f"mnist_{b}.txt")).read()
    def k(name):
        m = re.search(rf"^\s*{name}\S*\s+[\d.]+\s+[\d.]+\s+([\d.]+)", t, re.M)
        return m.group(1) if m else "?"
    g = re.search(r"timed as a whole[^:]*:\s*([\d.]+)", t)
    e = re.search(r"epoch 2/\d+:.*?\((\d+) samples/s\)", t)
    ms = f"{60000 / int(e.group(1)) * 1e3:.1f}" if e else "?"
    print(f"| {b} | {k('forward_gather')} | {k('softmax_head')} | {k('grad_update')} | {g.group(1) if g else '?'} | {ms} |")
print()
print("| M x N x K abt | kernel | us/product | TFLOP/s |")
print("|---|---|---|---|")
for line in open(os.path.join(out, "gemm.txt")):
    c = [x.strip() for x in line.strip().strip('|').split('|')]
    if len(c) >= 6 and c[1] == "abt":
        try: print(f"| {c[0]} | {c[2]} | {float(c[4])*1000:.2f} | {c[5]} |")
        except ValueError: pass
PY
