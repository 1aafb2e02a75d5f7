#!/bin/bash
# Round 4, fourth session, third device call (issue 33): the roofline with the row kernels
# as in the second call, with the vec4 transpose and the 32 x 4 transpose built as named. Carry .gl
# and .devbin/r4s4c (release `gemm` of the working tree: cargo build --release -p wgsl-gemm
# --bin gemm). Ours and PyTorch alone on the GPU, interleaved A B A B. Output: $OUT/roofline3.txt.
set -u
for f in .gl/*.deb; do dpkg -x $f / ; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export PYTHONUNBUFFERED=1
D=.devbin/r4s4c
clocks() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv,noheader; }
{
for round in 1 2; do
  clocks
  echo "== ours, round $round: gemm roofline --rows 8192 --cols 4096"
  $D/gemm roofline --rows 8192 --cols 4096
  clocks
  echo "== PyTorch, round $round"
  python3 benches/peer/roofline_torch.py --rows 8192 --cols 4096
done
clocks
} 2>&1 | tee $OUT/roofline3.txt
