#!/bin/bash
# Issue 32, round 4 session 8: main (with ccade16, the next epoch's permutation drawn during the
# last chunks) against main before it (`mnist-baseline`, 4f099bb), beside JAX at `highest` and
# at its default (TF32), lax.scan unroll 4 (the best JAX of the 2026-12-03 sweep in every
# setting), at SGD batch 1024 and 128, Adam batch 128 and SGD momentum 0.9 batch 64. Every
# program alone on the GPU, one after another, interleaved, twice, 5 epochs: session 7's script
# with these settings. Carry .gl and .devbin/s8 (mnist, mnist-baseline: release builds,
# stripped, xz). Writes $OUT/side_by_side_s8.txt.
SRC=.devbin/s8 EPOCHS=5 SETTINGS=sgd1024,sgd128,adam128,default64 PEERS=mnist,jax-u4,jax-u4-tf32 \
  NAME=s8 exec bash benches/notes/issue32/run_s7.sh
