#!/bin/bash
# Session 4 (2026-12-01): side-by-side with pipelining (column mnist = pipelined, the default;
# column mnist-baseline = the same binary with --no-pipeline), then seeds 1 and 2.
. "$(dirname "${BASH_SOURCE[0]}")/device.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 python3 $P/mnist_side_by_side.py --mnist $D/mnist --baseline $D/mnist-nopipe \
  --epochs 5 --timeout 80 --peers mnist,torch-graph,jax --prepare-together \
  > $OUT/side_by_side_s0.txt 2>&1
for s in 1 2; do
  timeout 150 python3 $P/mnist_side_by_side.py --mnist $D/mnist --seed $s --settings sgd128,sgd1024,adam128,default64 \
    --epochs 5 --timeout 60 --peers mnist,torch-graph,jax --prepare-together \
    > $OUT/side_by_side_s$s.txt 2>&1
done
for s in 0 1 2; do echo "=== seed $s"; grep -E "exit|failed" $OUT/side_by_side_s$s.txt | head -5
  sed -n '/^| setting/,/^$/p' $OUT/side_by_side_s$s.txt; done
