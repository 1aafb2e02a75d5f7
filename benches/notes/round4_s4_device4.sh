#!/bin/bash
# Round 4, fourth session, fourth device call (issue 33): the roofline with the row kernels
# with the vec4 transposes of 2 and 4 vec4s per invocation added. Carry .gl
# and .devbin/r4s4d (release `gemm` of the working tree: cargo build --release -p wgsl-gemm
# --bin gemm). Ours and PyTorch alone on the GPU, interleaved A B A B. Output: $OUT/roofline4.txt.
set -u
for f in .gl/*.deb; do dpkg -x $f / ; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export PYTHONUNBUFFERED=1
D=.devbin/r4s4d
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
} 2>&1 | tee $OUT/roofline4.txt
