#!/bin/bash
# Issue 32 on the H200, before building a split-K weight gradient: `mnist train --profile` at
# batch 1024 of main's `mnist` against `mnist-quarterk`, a build for this measurement only (not
# on main: both layers' weight gradients sum only the first quarter of the batch, so its
# numbers are wrong; benches/notes/next/quarterk.patch, built by build.sh), interleaved,
# twice: how much of grad_update's time a quarter of its K walk takes, i.e. what splitting K
# in 4 across workgroups could save before the extra pass that sums the parts. Not run yet
# (2026-12-05: no device time was left). Carry .gl and .devbin/next. Writes $OUT/split.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/issue32
unpack .devbin/next $D
{
for round in 1 2; do
  for bin in mnist mnist-quarterk; do
    echo "== batch 1024 $bin (round $round)"
    clocks
    $D/$bin train --data data/mnist --epochs 1 --batch-size 1024 --lr 0.1 --momentum 0 \
      --schedule constant --warmup-epochs 0 --steps-per-chunk 58 --limit-test 1000 --profile \
      2>&1 | grep -E "grad_update|forward_gather|softmax_head|GPU time|error"
  done
done
} 2>&1 | tee "$OUT/split.txt"
