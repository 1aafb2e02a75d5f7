#!/bin/bash
# Round 4, second session's device call: the differential fuzzer with a fresh seed after the
# fix of case 1438706623654173776 (issue 34), and the derived against the custom backward pass
# of the tiled product at three sizes (issue 31), one after another, each alone on the GPU.
# Carry .gl and .devbin/r4s2 (release `fuzz` and `ad_product_bench`:
# cargo build --release -p wgsl-dsl-fuzz --bin fuzz -p wgsl-dsl-harness --bin ad_product_bench).
set -u
. benches/notes/device_env.sh
D=.devbin/r4s2
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
timeout 175 $D/fuzz --seconds 150 --seed 20261203 > $OUT/fuzz-h200.txt 2>&1; echo "fuzz rc=$?"
tail -8 $OUT/fuzz-h200.txt
for s in 128 256 512; do
  timeout 120 $D/ad_product_bench $s 10 > $OUT/ad_product_$s.txt 2>&1; echo "bench $s rc=$?"
  cat $OUT/ad_product_$s.txt
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
