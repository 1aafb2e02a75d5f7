#!/bin/bash
# Issue 33 on the H200, two rounds of: A `gemm bench --sizes 4096 --no-mlp --kernels
# simt,simt-checked,coop-f16` (the SIMT tile without bounds checks, which `choose` picks
# since dd12cf6, and with them; the call of 2026-12-05 ran `simt,simt-whole`, when `simt`
# still had them: benches/notes/round4_s10/call_gemm.txt; and the tensor-core kernel `choose`
# picks), B `torch.matmul` at 4096 (f32 without
# TF32, TF32, f16: benches/peer/gemm_torch.py), C `gemm ceiling --size 4096`; the GPU's clocks
# before and after each. Build first: benches/notes/next/build.sh. Carry .gl and .devbin/next.
# Writes $OUT/call_gemm.txt. With SWEEP=1 it runs instead `gemm sweep --size 4096` (every
# SIMT tile of simt_sweep_tiles with and without bounds checks, and the tensor-core tiles) and
# torch.matmul at 4096 once, and writes $OUT/sweep_simt.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/bin
unpack .devbin/next $D
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
if [ "${SWEEP:-0}" = 1 ]; then
  { date -u
    clocks; $D/gemm sweep --size 4096; clocks
    clocks; python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp; clocks
    date -u
  } 2>&1 | tee "$OUT/sweep_simt.txt"
  exit 0
fi
{
date -u
for round in 1 2; do
  echo "== round $round A: gemm bench --sizes 4096 --no-mlp --kernels simt,simt-checked,coop-f16"
  clocks; $D/gemm bench --sizes 4096 --no-mlp --kernels simt,simt-checked,coop-f16; clocks
  echo "== round $round B: python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp"
  clocks; python3 benches/peer/gemm_torch.py --sizes 4096 --no-mlp; clocks
  echo "== round $round C: gemm ceiling --size 4096"
  clocks; $D/gemm ceiling --size 4096; clocks
done
date -u
} 2>&1 | tee "$OUT/call_gemm.txt"
