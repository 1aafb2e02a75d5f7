#!/bin/bash
# Issue 33 on the H200: `gemm sweep --size 4096` (every SIMT tile of simt_sweep_tiles with and
# without bounds checks, two of them new: 256x128x16 of 16x8 and 128x256x8 of 8x16 per
# invocation; and the tensor-core tiles), then torch.matmul at 4096 in the same call, each
# alone on the GPU, clocks around each. Carry .gl and .devbin/next (gemm built from this
# commit). Writes $OUT/sweep_simt.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/bin
unpack .devbin/next $D
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
{
date -u
clocks; $D/gemm sweep --size 4096; clocks
clocks; python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp; clocks
date -u
} 2>&1 | tee "$OUT/sweep_simt.txt"
