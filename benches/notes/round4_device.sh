#!/bin/bash
# Round 4's last device call: the differential fuzzer with a fresh seed (issue 34 item 6's
# follow-up), the AD fuzzer (issue 30), and the derived against the custom backward pass of the
# tiled product (issue 31), one after another. Carry .gl and .devbin/final (release `fuzz`
# and `ad_product_bench`: cargo build --release -p wgsl-dsl-fuzz --bin fuzz -p
# wgsl-dsl-harness --bin ad_product_bench).
set -u
. benches/notes/device_env.sh
D=.devbin/final
timeout 175 $D/fuzz --seconds 150 --seed 3434 > $OUT/fuzz-h200.txt 2>&1; echo "fuzz rc=$?"
tail -15 $OUT/fuzz-h200.txt
timeout 175 $D/fuzz --ad --seconds 150 --seed 2 --ad-gpu-every 4 > $OUT/adfuzz-h200.txt 2>&1; echo "ad fuzz rc=$?"
tail -15 $OUT/adfuzz-h200.txt
timeout 200 $D/ad_product_bench 1024 10 > $OUT/ad_product.txt 2>&1; echo "bench rc=$?"
cat $OUT/ad_product.txt
