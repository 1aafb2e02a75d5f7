#!/bin/bash
# Issue 32 on the H200, after call_mnist.sh found `mnist train --precision f16` refused there
# (the binary opened the GPU without cooperative matrices; fixed by GpuMlp::gpu_options):
# 1. SGD at batch 1024 and 128, main's `mnist` (f32) and its `--precision f16` variant against
#    bb3a01a and JAX u4 at `highest` and TF32, 5 epochs, every program alone on the GPU,
#    interleaved, repeated twice (run_s7.sh);
# 2. accuracy after 5 epochs at batch 1024 with --precision f16, seeds 0, 1, 2 (f32's seeds
#    1 and 2 are in call_mnist.sh's f16_seeds.txt, seed 0 in its table);
# 3. `mnist train --profile` at batch 1024, f32 then f16.
# Build first: benches/notes/next/build.sh. Carry .gl and .devbin/next. Writes
# $OUT/side_by_side_f16.txt, $OUT/f16_seeds2.txt and $OUT/f16_profile2.txt.
set -u
SRC=.devbin/next EPOCHS=5 SETTINGS=sgd1024,sgd128 PEERS=mnist,jax-u4,jax-u4-tf32 \
  VARIANT="f16=args:--precision f16" VARIANT_SETTINGS=sgd1024,sgd128 \
  NAME=f16 bash benches/notes/issue32/run_s7.sh
D=.devbin/issue32
for seed in 0 1 2; do
  echo "== seed $seed precision f16"
  $D/mnist train --data data/mnist --epochs 5 --batch-size 1024 --lr 0.1 --momentum 0 \
    --schedule constant --warmup-epochs 0 --seed $seed --precision f16 2>&1 | tail -2
done | tee "$OUT/f16_seeds2.txt"
bash benches/notes/next/profile_1024.sh f16_profile2.txt
