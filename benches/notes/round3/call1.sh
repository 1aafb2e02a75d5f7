#!/bin/bash
# Issue 24, H200 call 1: the baseline (main at ed0f24c, `cargo build --release -p mlp --bin mnist
# -p wgsl-gemm --bin gemm`, the gemm binary with the longer `sweep` list of this branch) beside
# every peer variant, with the per-kernel profile, configurations of the fused kernels
# (MLP_FUSED_CONFIG) and chunk sizes at batch 1024, and the GEMM bench and sweep against torch.
# Run from the repository root on the device with `.gl` (Vulkan loader debs) and `.devbin/perf`
# (this script, benches/peer/*.py, base/{mnist,gemm}.gz, mnist-burn.gz) carried:
#     bash .devbin/perf/call1.sh
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TORCHINDUCTOR_COMPILE_THREADS=1
D=${D:-.devbin/perf}; B=/tmp/bin; mkdir -p $B
for f in $D/base/*.gz $D/*.gz; do [ -f "$f" ] && gunzip -c "$f" > $B/$(basename "$f" .gz); done
chmod +x $B/*
T0=$(date +%s); t() { echo "== $1 ($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c "import torch, jax; print('torch', torch.__version__, 'jax', jax.__version__)"; } > $OUT/gpu.txt 2>&1
t gemm
{ timeout 150 $B/gemm bench --sizes 4096 --samples 5 --pass-ms 15 --json /tmp/ours.jsonl
  timeout 90 python3 $D/peer/gemm_torch.py --sizes 4096 --samples 5 --pass-ms 15 --ours /tmp/ours.jsonl
  timeout 120 $B/gemm sweep --size 4096 --samples 5 --pass-ms 15; } > $OUT/gemm.txt 2>&1
t side_by_side
V="--variant g8=grad=t32x32x16r4x4g8 --variant gs=grad=t16x16x16r2x2g4 --variant g16x32=grad=t16x32x16r2x4g8"
V="$V --variant gk32=grad=t32x32x32r4x4g4 --variant f8=forward=t32x32x16r4x4g8 --variant s8=splits=8"
V="$V --variant fs=forward=t16x16x16r2x2g4 --variant g16=grad=t16x32x8r2x4g16"
timeout 480 python3 $D/peer/mnist_side_by_side.py --mnist $B/mnist --burn $B/mnist-burn --data data/mnist \
  --epochs 5 --peers mnist,all --prepare-together --prepare-deadline 180 --timeout 90 --profile \
  $V --variant-settings sgd1024,sgd128 > $OUT/side_by_side.txt 2>&1
t chunks
for c in 10 20 40 100; do echo "steps per chunk $c"; timeout 30 $B/mnist train --data data/mnist --epochs 5 \
  --batch-size 1024 --lr 0.1 --momentum 0 --schedule constant --warmup-epochs 0 --steps-per-chunk $c 2>&1 \
  | grep -E '^epoch'; done > $OUT/chunks.txt
t done
grep -E "TFLOP|^\| 4096" $OUT/gemm.txt | head -40
sed -n '/^median epoch/,$p' $OUT/side_by_side.txt
