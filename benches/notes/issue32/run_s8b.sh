#!/bin/bash
# Issue 32, round 4 session 8, second call: the next epoch's first chunk recorded while the GPU
# runs this epoch's last chunks (`mnist`, pipelined runs) against main before it
# (`mnist-baseline`, the binary of run_s8.sh's `mnist`), beside JAX at `highest` and TF32, in
# the four settings: session 7's script with these settings. Carry .gl and .devbin/s8b.
# Writes $OUT/side_by_side_s8b.txt.
SRC=.devbin/s8b EPOCHS=5 SETTINGS=sgd1024,sgd128,adam128,default64 PEERS=mnist,jax-u4,jax-u4-tf32 \
  NAME=s8b exec bash benches/notes/issue32/run_s7.sh
