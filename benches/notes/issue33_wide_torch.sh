#!/bin/bash
# Issue 33, call 3 of branch i33-wide: one round of A `gemm ceiling --size 4096` (which also
# times coop-f16 as `CoopConfig::choose` now picks it: no bounds checks where the tile divides
# the problem), B `gemm bench --sizes 4096 --no-mlp --kernels coop-f16`, C `torch.matmul` f16
# (benches/peer/gemm_torch.py); GPU clocks before and after each. Carried: .gl and .devbin/i33
# (the release `gemm` of commit 1955bf9, this script). Output: $OUT/call.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/i33
{
date -u
echo "== A: gemm ceiling --size 4096"
clocks; $D/gemm ceiling --size 4096; clocks
echo "== B: gemm bench --sizes 4096 --no-mlp --kernels coop-f16"
clocks; $D/gemm bench --sizes 4096 --no-mlp --kernels coop-f16; clocks
echo "== C: python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp"
clocks; python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp; clocks
date -u
} 2>&1 | tee $OUT/call.txt
