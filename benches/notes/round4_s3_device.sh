#!/bin/bash
# Round 4, third session's device call: the AD fuzzer on the seed whose run found case
# 11050032409562616883 (the identity's tolerance against FMA cancellation, issue 30), after
# the fix, then on a fresh seed; each run alone on the GPU.
# Carry .gl and .devbin/r4s3 (release `fuzz`: cargo build --release -p wgsl-dsl-fuzz --bin fuzz).
set -u
. benches/notes/device_env.sh
D=.devbin/r4s3
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
$D/fuzz --ad --replay 11050032409562616883 > $OUT/adfuzz-case.txt 2>&1; echo "replay rc=$?"
tail -5 $OUT/adfuzz-case.txt
for seed in 20261204 20261205; do
  timeout 175 $D/fuzz --ad --seconds 150 --seed $seed --ad-gpu-every 4 > $OUT/adfuzz-h200-$seed.txt 2>&1; echo "adfuzz $seed rc=$?"
  tail -6 $OUT/adfuzz-h200-$seed.txt
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
