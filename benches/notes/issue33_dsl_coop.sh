#!/bin/bash
# Issue 33: the DSL's tensor-core kernel staged through one buffer per operand (the next K slice
# in registers during the math, K slices of 32 and 64 within 48 KiB) against the ceiling and
# torch, in one device call:
#   1. `gemm check` (every kernel against the spec, the new configurations included);
#   2. `gemm sweep --size 4096` (every tile of ours, checked on 32 sampled elements, timed);
#   3. two rounds of A B C D interleaved: A `gemm ceiling --size 4096` (which also times ours,
#      as `CoopConfig::choose` picks it, on its device and operands), B `gemm bench` of the new
#      binary (coop-f16: what `CoopConfig::choose` picks), C `gemm bench` of the binary before
#      (.devbin/i33, the sources of commit 9ad83b1: 128x256x16 through two buffers), D
#      `torch.matmul` f16 (benches/peer/gemm_torch.py); GPU clocks before and after each.
# Carried: .gl (the Vulkan loader, /work/shared/device/vulkan-debs), .devbin/i33b (the release
# `gemm` of this branch, gemm_torch.py, this script) and .devbin/i33 (the binary before).
# Output: $OUT/call.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/i33b
OLD=.devbin/i33
{
date -u
clocks
$D/gemm info
echo "== gemm check"
clocks; $D/gemm check; clocks
echo "== gemm sweep --size 4096"
clocks; $D/gemm sweep --size 4096; clocks
for round in 1 2; do
    echo "== round $round A: gemm ceiling --size 4096"
    clocks; $D/gemm ceiling --size 4096; clocks
    echo "== round $round B: gemm bench --sizes 4096 --no-mlp --kernels coop-f16 (this branch)"
    clocks; $D/gemm bench --sizes 4096 --no-mlp --kernels coop-f16; clocks
    echo "== round $round C: gemm bench --sizes 4096 --no-mlp --kernels coop-f16 (before: $OLD)"
    clocks; $OLD/gemm bench --sizes 4096 --no-mlp --kernels coop-f16; clocks
    echo "== round $round D: python3 gemm_torch.py --sizes 4096 --no-mlp"
    clocks; python3 $D/gemm_torch.py --sizes 4096 --no-mlp; clocks
done
date -u
} 2>&1 | tee $OUT/call.txt
