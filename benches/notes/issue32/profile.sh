#!/bin/bash
# Issue 32, round 4 session 7, first device call: where a step's time goes at batch 1024 and 128
# (`mnist train --profile`: per-kernel GPU timestamps and the step timed as a whole), and a first
# run of the two Rust peers (Burn 0.22 on wgpu, meganeura 0.3 on Vulkan). Each program alone on
# the GPU, one after another; the GPU warmed by a first run before anything is read. Carry .gl
# and .devbin/i32z: mnist, mnist-burn and mnist-meganeura, built here in release, stripped and
# compressed with xz (device_env.sh's `unpack`).
# Writes $OUT/profile.txt (kept in benches/notes/issue32/s7/).
set -u
. benches/notes/device_env.sh
D=${D:-.devbin/issue32}
unpack .devbin/i32z $D
M=data/mnist
common="--schedule constant --warmup-epochs 0 --data $M"
{
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
clocks
echo "== warm-up: mnist train, batch 1024, 2 epochs"
$D/mnist train --epochs 2 --batch-size 1024 --lr 0.1 --momentum 0 $common | tail -1
for b in 1024 128; do
  clocks
  echo "== mnist train --profile, SGD lr 0.1, batch $b"
  $D/mnist train --epochs 3 --batch-size $b --lr 0.1 --momentum 0 $common --profile
done
for b in 128 1024; do
  for p in burn meganeura; do
    clocks
    echo "== $p, SGD lr 0.1, batch $b, 3 epochs"
    timeout 150 $D/mnist-$p --epochs 3 --batch-size $b --lr 0.1 --data $M 2>&1 | tail -8
  done
done
clocks
} 2>&1 | tee $OUT/profile.txt
