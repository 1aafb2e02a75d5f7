#!/bin/bash
# Issue 29 (one product): `gemm`'s SIMT kernel rebuilt on the tiled product the MLP uses
# (`wgsl_gemm::tiled`), against the SIMT kernel before (its own staging, `vec4` loads and
# registers, two buffers) and torch f32 (TF32 off), in one device call:
#   1. `gemm check` of the new binary (every kernel against the spec);
#   2. `gemm sweep --size 4096` of the new binary (every SIMT tile of `simt_sweep_tiles`, and the
#      tensor-core tiles, each checked on sampled elements, timed);
#   3. two rounds of A B C interleaved: A `gemm bench --kernels simt` of the new binary (square
#      sizes 1024-4096 and the MLP's shapes), B the same of the binary before (.devbin/simt-old:
#      the sources of c8b8893), C `torch.matmul` (benches/peer/gemm_torch.py, f32/tf32/f16);
#      GPU clocks before and after each.
# Carried: .gl (the Vulkan loader), .devbin/simt-new (this tree's release `gemm`),
# .devbin/simt-old. Output: $OUT/call.txt.
set -u
. benches/notes/device_env.sh
NEW=.devbin/simt-new
OLD=.devbin/simt-old
{
date -u
clocks
$NEW/gemm info | head -5
echo "== gemm check (new)"
clocks; $NEW/gemm check 2>&1 | tail -15; clocks
echo "== gemm sweep --size 4096 (new)"
clocks; $NEW/gemm sweep --size 4096; clocks
for round in 1 2; do
    echo "== round $round A: gemm bench --sizes 1024,2048,4096 --kernels simt (new)"
    clocks; $NEW/gemm bench --sizes 1024,2048,4096 --kernels simt; clocks
    echo "== round $round B: gemm bench --sizes 1024,2048,4096 --kernels simt (before: $OLD)"
    clocks; $OLD/gemm bench --sizes 1024,2048,4096 --kernels simt; clocks
    echo "== round $round C: python3 benches/peer/gemm_torch.py --sizes 1024,2048,4096"
    clocks; python3 benches/peer/gemm_torch.py --sizes 1024,2048,4096; clocks
done
date -u
} 2>&1 | tee $OUT/call.txt
