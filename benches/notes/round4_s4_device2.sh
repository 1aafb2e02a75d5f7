#!/bin/bash
# Round 4, fourth session, second device call (issue 33): the roofline with the row kernels
# also holding their row in registers and the transpose also with 32 x 4 workgroups. Carry .gl
# and .devbin/r4s4b (release `gemm` of the working tree: cargo build --release -p wgsl-gemm
# --bin gemm). Ours and PyTorch alone on the GPU, interleaved A B A B. Output: $OUT/roofline2.txt.
# The third and fourth calls ran the same commands with .devbin/r4s4c and .devbin/r4s4d into
# roofline3.txt and roofline4.txt; their scripts now call this one with those two arguments
# (the binary's folder, the output's name).
set -u
D=${1:-.devbin/r4s4b}
NAME=${2:-roofline2.txt}
. benches/notes/device_env.sh
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
} 2>&1 | tee $OUT/$NAME
