#!/bin/bash
# Round 4, fourth session, fifth device call (issue 30): the AD fuzzer with workgroup-reduced
# accumulation and constant index maps, 150 s on the H200 with a fresh seed, alone on the GPU.
# Carry .gl and .devbin/r4s4e (release `fuzz` of the working tree:
# cargo build --release -p wgsl-dsl-fuzz --bin fuzz). Output: $OUT/adfuzz-h200-20261208.txt.
set -u
. benches/notes/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv,noheader
timeout 175 .devbin/r4s4e/fuzz --ad --seconds 150 --seed 20261208 --ad-gpu-every 4 > $OUT/adfuzz-h200-20261208.txt 2>&1; echo "adfuzz rc=$?"
tail -3 $OUT/adfuzz-h200-20261208.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv,noheader
