#!/bin/bash
# Issue 32 on the H200: the weight gradient's tiles (the fused step's grad_update, 128 x 785
# outputs, K = the batch), swept through MLP_FUSED_CONFIG=grad=... (FusedConfig::choose_with)
# with `mnist train --profile` at batch 1024 and 128: per configuration the profile's kernel
# times and GPU time per step, then 3 epochs' times. main's choice first and last. Carry .gl
# and .devbin/next. Then the same profile with `mnist-nogather`, a build for this measurement
# only (not on main: its gradient reads the images in dataset order, not the batch's
# permutation, so its numbers are wrong): what the dependent load of the permutation costs the
# weight gradient. Writes $OUT/sweep_grad.txt.
set -u
. benches/notes/device_env.sh
D=.devbin/issue32
unpack .devbin/next $D
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
{
for batch in 1024 128; do
  steps=100; [ $batch = 1024 ] && steps=58
  for spec in "" grad=t16x16x16r2x2g8 grad=t16x32x16r2x4g8 grad=t32x16x16r4x2g8 \
      grad=t32x32x8r4x4g8 grad=t16x16x8r2x2g8 grad=t32x32x16r4x4g4 ""; do
    echo "== batch $batch MLP_FUSED_CONFIG=$spec"
    clocks
    MLP_FUSED_CONFIG=$spec $D/mnist train --data data/mnist --epochs 3 --batch-size $batch \
      --lr 0.1 --momentum 0 --schedule constant --warmup-epochs 0 --steps-per-chunk $steps \
      --limit-test 1000 --profile 2>&1 | grep -E "grad_update|forward_gather|softmax_head|GPU time|host time|^epoch|error"
  done
  for bin in mnist-nogather mnist; do
    echo "== batch $batch $bin"
    clocks
    $D/$bin train --data data/mnist --epochs 3 --batch-size $batch \
      --lr 0.1 --momentum 0 --schedule constant --warmup-epochs 0 --steps-per-chunk $steps \
      --limit-test 1000 --profile 2>&1 | grep -E "grad_update|forward_gather|softmax_head|GPU time|host time|^epoch|error"
  done
done
# The slow fourth epoch at batch 1024 (call_mnist.sh and call_f16.sh: 5.2-6.4 ms against
# 4.0-4.7 for the others, in main's binary since 394f387 only): 8 epochs of main, main
# --no-pipeline and bb3a01a, twice, each epoch's samples/s.
for round in 1 2; do
  for run in "mnist" "mnist --no-pipeline" "mnist-baseline"; do
    set -- $run
    echo "== epochs at batch 1024: $run (round $round)"
    $D/$1 train ${2:-} --data data/mnist --epochs 8 --batch-size 1024 --lr 0.1 --momentum 0 \
      --schedule constant --warmup-epochs 0 --steps-per-chunk 100 2>&1 | grep -E "^epoch|error"
  done
done
} 2>&1 | tee "$OUT/sweep_grad.txt"
