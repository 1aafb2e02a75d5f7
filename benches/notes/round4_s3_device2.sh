#!/bin/bash
# Round 4, third session, second device call: the AD fuzzer with f32 atomic additions generated
# (commit 9eef74e), 150 s, then the differential fuzzer (with AtomicAddF32) 80 s, each alone on the GPU.
# Carry .gl and .devbin/r4s3 (release `fuzz` of 9eef74e: cargo build --release -p wgsl-dsl-fuzz --bin fuzz).
set -u
. benches/notes/device_env.sh
D=.devbin/r4s3
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
timeout 175 $D/fuzz --ad --seconds 150 --seed 20261206 --ad-gpu-every 4 > $OUT/adfuzz-h200-20261206.txt 2>&1; echo "adfuzz rc=$?"
tail -4 $OUT/adfuzz-h200-20261206.txt
timeout 100 $D/fuzz --seconds 80 --seed 20261206 > $OUT/fuzz-h200-20261206.txt 2>&1; echo "fuzz rc=$?"
tail -3 $OUT/fuzz-h200-20261206.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
