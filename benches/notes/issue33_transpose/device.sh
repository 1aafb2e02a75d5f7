#!/bin/bash
# Issue 33, the transpose alone (helper session of 2026-12-04): every transpose configuration
# of `gemm roofline` (`--only mem_transpose`) and PyTorch's `x.t().contiguous()` (eager and
# torch.compile), each program alone on the GPU, interleaved A B A B, clocks before and after
# each. Carry .gl and the folder of a release `gemm` (cargo build --release -p wgsl-gemm --bin
# gemm); PEER names the torch script (default benches/peer/roofline_torch.py, which needs the
# --ops/--show-code of this branch). Round 1's torch also prints torch.compile's generated
# Triton kernel and the configuration its autotuning chose.
#   bash benches/notes/issue33_transpose/device.sh .devbin/i33t call1.txt
set -u
D=${1:-.devbin/i33t}
NAME=${2:-call1.txt}
PEER=${PEER:-benches/peer/roofline_torch.py}
. benches/notes/device_env.sh
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-i33t
{
for round in 1 2; do
  show=""
  [ "$round" = 1 ] && show="--show-code"
  clocks
  echo "== ours, round $round: gemm roofline --rows 8192 --cols 4096 --only mem_transpose"
  $D/gemm roofline --rows 8192 --cols 4096 --only mem_transpose
  clocks
  echo "== PyTorch, round $round: $PEER --rows 8192 --cols 4096 --ops transpose $show"
  python3 $PEER --rows 8192 --cols 4096 --ops transpose $show
done
clocks
} 2>&1 | tee $OUT/$NAME
