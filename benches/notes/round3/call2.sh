#!/bin/bash
# Issue 24, H200 call 2: this branch's binaries (`cargo build --release -p mlp --bin mnist
# -p wgsl-gemm --bin gemm`) beside main's (ed0f24c, as in call 1) and every peer variant, in
# one call: `gemm check` of the retuned tiles on the device, the GEMM bench against torch (and
# main's at 4096^3), the side-by-side with profiles (ours, main's as mnist-baseline, and ours
# with each retuned tile set back to main's: one change at a time), the accuracy of seeds 1, 2.
# Carry `.gl` and `.devbin/perf` (this script, benches/peer/*.py, new/ and base/
# {mnist,gemm}.gz, mnist-burn.gz):     bash .devbin/perf/call2.sh
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TORCHINDUCTOR_COMPILE_THREADS=1
D=${D:-.devbin/perf}; B=/tmp/bin; mkdir -p $B
for v in base new; do for f in $D/$v/*.gz; do gunzip -c $f > $B/$v-$(basename $f .gz); done; done
[ -f $D/mnist-burn.gz ] && gunzip -c $D/mnist-burn.gz > $B/mnist-burn; chmod +x $B/*
T0=$(date +%s); t() { echo "== $1 ($(( $(date +%s) - T0 )) s)"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  python3 -c "import torch, jax; print('torch', torch.__version__, 'jax', jax.__version__)"; } > $OUT/gpu.txt 2>&1
t gemm
{ timeout 100 $B/new-gemm check
  timeout 60 $B/base-gemm bench --sizes 4096 --no-mlp --kernels simt,coop-f16 --samples 5 --pass-ms 15
  timeout 100 $B/new-gemm bench --sizes 4096 --samples 5 --pass-ms 15 --json /tmp/ours.jsonl
  timeout 80 python3 $D/peer/gemm_torch.py --sizes 4096 --samples 5 --pass-ms 15 --ours /tmp/ours.jsonl
} > $OUT/gemm.txt 2>&1
t side_by_side
timeout 400 python3 $D/peer/mnist_side_by_side.py --mnist $B/new-mnist --baseline $B/base-mnist \
  --burn $B/mnist-burn --data data/mnist --epochs 5 --peers mnist,all --prepare-together \
  --prepare-deadline 170 --prepare-jobs 12 --timeout 60 --profile \
  --variant f32=forward=t32x32x16r4x4g4 --variant g4=grad=t32x32x16r4x4g4 > $OUT/side_by_side.txt 2>&1
t seeds
for s in 1 2; do timeout 60 python3 $D/peer/mnist_side_by_side.py --mnist $B/new-mnist --data data/mnist \
  --epochs 5 --seed $s --peers mnist --timeout 30; done > $OUT/seeds.txt 2>&1
t done
grep -E "^check|worst|FAILED|^\| 4096" $OUT/gemm.txt
grep -E "^## .*(not prepared|not started|peers prepared)" $OUT/side_by_side.txt
sed -n '/^median epoch/,$p' $OUT/side_by_side.txt; grep -E "^\| SGD|^\| Adam" $OUT/seeds.txt
