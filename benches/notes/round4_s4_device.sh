#!/bin/bash
# Round 4, fourth session, first device call. Carry .gl and .devbin/r4s4 (release `gemm` and
# `fuzz` of the working tree: cargo build --release -p wgsl-gemm --bin gemm;
# cargo build --release -p wgsl-dsl-fuzz --bin fuzz). Each program alone on the GPU, one after
# another: the roofline (issue 33: ours in every configuration of MemConfig::candidates, then
# PyTorch eager and torch.compile, then ours again), then the differential fuzzer with a fresh
# seed (issue 34), 150 s. Outputs under $OUT.
set -u
. benches/notes/device_env.sh
D=.devbin/r4s4
{
clocks
echo "== ours: gemm roofline --rows 8192 --cols 4096"
$D/gemm roofline --rows 8192 --cols 4096
clocks
echo "== PyTorch"
python3 benches/peer/roofline_torch.py --rows 8192 --cols 4096
clocks
echo "== ours again"
$D/gemm roofline --rows 8192 --cols 4096
clocks
} 2>&1 | tee $OUT/roofline.txt
timeout 175 $D/fuzz --seconds 150 --seed 20261207 > $OUT/fuzz-h200-20261207.txt 2>&1; echo "fuzz rc=$?"
tail -4 $OUT/fuzz-h200-20261207.txt
clocks
