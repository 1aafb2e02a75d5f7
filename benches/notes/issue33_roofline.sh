#!/bin/bash
# Issue 33: the roofline of memory-bound kernels on the H200, ours then PyTorch's, one after the
# other in one device call (carrying .gl and .devbin/issue33 with the release `gemm`:
# cargo build --release -p wgsl-gemm --bin gemm). Output: $OUT/roofline.txt.
set -u
. benches/notes/device_env.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "== ours: gemm roofline --rows 8192 --cols 4096"
.devbin/issue33/gemm roofline --rows 8192 --cols 4096
echo "== PyTorch"
python3 benches/peer/roofline_torch.py --rows 8192 --cols 4096
echo "== ours again (interleaved)"
.devbin/issue33/gemm roofline --rows 8192 --cols 4096
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
} 2>&1 | tee $OUT/roofline.txt
