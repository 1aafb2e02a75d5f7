#!/bin/bash
# Issue 32 on the H200: the weight gradient's tiles (the fused step's grad_update, 128 x 785
# outputs, K = the batch), swept through MLP_FUSED_CONFIG=grad=... (FusedConfig::choose_with)
# with `mnist train --profile` at batch 1024 and 128: per configuration the profile's kernel
# times and GPU time per step, then 3 epochs' times. main's choice first and last. Carry .gl
# and .devbin/next. Writes $OUT/sweep_grad.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/issue32
unpack .devbin/next $D
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
{
for batch in 1024 128; do
  steps=100; [ $batch = 1024 ] && steps=58
  for spec in "" grad=t16x16x16r2x2g8 grad=t16x32x16r2x4g8 grad=t32x16x16r4x2g8 \
      grad=t32x32x8r4x4g8 grad=t16x16x8r2x2g8 grad=t32x32x16r4x4g16 grad=t32x32x16r4x4g4 ""; do
    echo "== batch $batch MLP_FUSED_CONFIG=$spec"
    clocks
    MLP_FUSED_CONFIG=$spec $D/mnist train --data data/mnist --epochs 3 --batch-size $batch \
      --lr 0.1 --momentum 0 --schedule constant --warmup-epochs 0 --steps-per-chunk $steps \
      --limit-test 1000 --profile 2>&1 | grep -E "grad_update|forward_gather|softmax_head|GPU time|host time|^epoch|error"
  done
done
} 2>&1 | tee "$OUT/sweep_grad.txt"
