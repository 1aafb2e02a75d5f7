#!/bin/bash
# Round 4, third session, third device call: the derived backward pass of the tiled product
# against the custom pair, and the derived pass with its global gradients accumulated
# Exclusive (racy, timing only) to attribute its time, three passes timed in turn twice
# (A B C A B C), at 128^3 and 256^3, alone on the GPU.
# Carry .gl and .devbin/r4s3b (release `ad_product_bench` of the commit that adds the third pass:
# cargo build --release -p wgsl-dsl-harness --bin ad_product_bench).
set -u
. benches/notes/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
for s in 128 256; do
  timeout 80 .devbin/r4s3b/ad_product_bench $s 10 > $OUT/ad_product_$s.txt 2>&1; echo "bench $s rc=$?"
  grep -E "round|max \||compiled" $OUT/ad_product_$s.txt
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv
