#!/bin/bash
# Issue 32 on the H200, one call (about 400 s):
# 1. main (`mnist`: 394f387, the next epoch's first chunk recorded while the GPU runs the last
#    chunks) against bb3a01a (`mnist-baseline`, before it), beside JAX u4 at `highest` and
#    TF32, in the four settings, 5 epochs, every program alone on the GPU, interleaved and
#    repeated twice (session 7's script); plus `mnist train --precision f16` (the first
#    layer's forward on tensor cores, kernels/fused_f16.rs) as the column mnist:f16 at batch
#    1024.
# 2. Accuracy after 5 epochs at batch 1024, f32 against f16, seeds 1 and 2 (seed 0 is in 1):
#    issue 32's "within 0.3 points of f32 over 3 seeds".
# Build first: benches/notes/next/build.sh. Carry .gl and .devbin/next. Writes
# $OUT/side_by_side_next.txt and $OUT/f16_seeds.txt.
set -u
SRC=.devbin/next EPOCHS=5 SETTINGS=sgd1024,sgd128,adam128,default64 PEERS=mnist,jax-u4,jax-u4-tf32 \
  VARIANT="f16=args:--precision f16" VARIANT_SETTINGS=sgd1024 \
  NAME=next bash benches/notes/issue32/run_s7.sh
D=.devbin/issue32
for seed in 1 2; do
  for precision in f32 f16; do
    echo "== seed $seed precision $precision"
    $D/mnist train --data data/mnist --epochs 5 --batch-size 1024 --lr 0.1 --momentum 0 \
      --schedule constant --warmup-epochs 0 --seed $seed --precision $precision 2>&1 | tail -3
  done
done | tee "$OUT/f16_seeds.txt"
# 3. Where a step's time goes at batch 1024, f32 then f16 (mnist train --profile).
bash benches/notes/next/profile_1024.sh f16_profile.txt
