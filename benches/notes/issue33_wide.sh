#!/bin/bash
# Issue 33: the tensor-core kernel reading A and B sixteen bytes a load (CoopConfig::wide),
# against the ceiling program and the kernel before, in one device call:
#   1. `gemm check` (every kernel against the spec, the wide configurations included);
#      with SWEEP=1 then `gemm sweep --size 4096 --single-only` (the one-buffer tiles, as
#      `vec4`s, sixteen bytes a load, and without bounds checks);
#   2. two rounds of A B: A `gemm ceiling --size 4096` (which also times coop-f16, as
#      `CoopConfig::choose` picks it, on its device and operands), B `gemm bench --sizes 4096
#      --no-mlp --kernels $KERNELS` (default: coop-f16, the kernel before, then the same
#      configuration reading sixteen bytes a load both ways); GPU clocks before and after each.
# Call 1: `bash benches/notes/issue33_wide.sh`; call 2: `SWEEP=1
# KERNELS=coop-f16,coop-f16-words,coop-f16-words-whole,coop-f16-whole bash
# benches/notes/issue33_wide.sh`.
# Carried: .gl (the Vulkan loader, ../shared/device/vulkan-debs) and .devbin/i33 (the release
# `gemm` of branch i33-wide, this script). Output: $OUT/call.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/i33
KERNELS=${KERNELS:-coop-f16,coop-f16-pairs,coop-f16-words}
{
date -u
clocks
$D/gemm info
if [ "${CHECK:-1}" = 1 ]; then
    echo "== gemm check"
    clocks; $D/gemm check; clocks
fi
if [ "${SWEEP:-0}" = 1 ]; then
    echo "== gemm sweep --size 4096 --single-only"
    clocks; $D/gemm sweep --size 4096 --single-only; clocks
fi
for round in 1 2; do
    echo "== round $round A: gemm ceiling --size 4096"
    clocks; $D/gemm ceiling --size 4096; clocks
    echo "== round $round B: gemm bench --sizes 4096 --no-mlp --kernels $KERNELS"
    clocks; $D/gemm bench --sizes 4096 --no-mlp --kernels $KERNELS; clocks
done
date -u
} 2>&1 | tee $OUT/call.txt
