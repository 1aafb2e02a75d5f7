#!/bin/bash
# Where a step's time goes at batch 1024, f32 then f16: `mnist train --profile` of the
# binary in .devbin/issue32 (unpacked by the calling script), written to $OUT/$1. Run by
# call_mnist.sh and call_f16.sh.
D=.devbin/issue32
for precision in f32 f16; do
  echo "== profile, batch 1024, precision $precision"
  $D/mnist train --data data/mnist --epochs 1 --batch-size 1024 --lr 0.1 --momentum 0 \
    --schedule constant --warmup-epochs 0 --steps-per-chunk 58 --limit-test 1000 --profile \
    --precision $precision 2>&1 | head -20
done | tee "$OUT/$1"
