#!/bin/bash
# Session 4 (2026-12-01): batch 1024, steps per chunk vs epoch time (pipelined), JAX in the same call
. "$(dirname "${BASH_SOURCE[0]}")/device.sh"
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
