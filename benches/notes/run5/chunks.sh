#!/bin/bash
# Session 4 (2026-12-01): batch 1024, steps per chunk vs epoch time (pipelined), JAX in the same call
set -u
for f in .gl/*.deb; do dpkg -x $f / ; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
# Run from the repository root on the device, with .gl (the Vulkan loader debs) carried and
# D a directory holding the release binary `mnist` and `mnist-nopipe` (benches/notes/run5/).
D=${D:-.dev/lead}
P=benches/peer
for rep in 1 2; do
for n in 100 30 15 8 4; do
  for p in "" "--no-pipeline"; do
    out=$($D/mnist train --epochs 5 --batch-size 1024 --lr 0.1 --momentum 0 --schedule constant \
      --warmup-epochs 0 --data data/mnist --steps-per-chunk $n $p 2>&1)
    echo "rep $rep chunk $n ${p:-pipelined}: $(echo "$out" | grep -oE '[0-9]+ samples/s' | awk '{printf "%.2fms ", 60000000/$1}' | tr '\n' ' ')"
  done
done
done
python3 $P/mnist_jax.py --epochs 5 --batch-size 1024 --lr 0.1 --optimizer sgd --data data/mnist 2>&1 | grep "^epoch"
