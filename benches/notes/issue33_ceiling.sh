#!/bin/bash
# Issue 33: the ceiling of the tensor-core kernel on the H200. In one device call, two rounds of
# A B C interleaved: A `gemm ceiling` (NVIDIA's cooperative-matrix technique in GLSL through
# wgpu's SPIR-V passthrough, every tile checked and timed, then our coop-f16 kernels on the same
# device, timed the same way), B `gemm bench` of our f16 tensor-core kernels at 4096^3, C
# `torch.matmul` (benches/peer/gemm_torch.py) at 4096^3; the GPU clocks before and after each.
# Carried: .gl (the Vulkan loader, /work/shared/device/vulkan-debs) and .devbin/i33 with the
# release `gemm` (cargo build --release -p wgsl-gemm --bin gemm), gemm_torch.py and this
# script. Output: $OUT/ceiling.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/i33
{
date -u
clocks
$D/gemm info
for round in 1 2; do
    echo "== round $round A: gemm ceiling --size 4096"
    clocks; $D/gemm ceiling --size 4096; clocks
    echo "== round $round B: gemm bench --sizes 4096 --no-mlp --kernels coop-f16,coop-f16-direct"
    clocks; $D/gemm bench --sizes 4096 --no-mlp --kernels coop-f16,coop-f16-direct; clocks
    echo "== round $round C: python3 gemm_torch.py --sizes 4096 --no-mlp"
    clocks; python3 $D/gemm_torch.py --sizes 4096 --no-mlp; clocks
done
date -u
} 2>&1 | tee $OUT/ceiling.txt
