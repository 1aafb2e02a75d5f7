#!/bin/bash
# Issue 32, round 4 session 7, second device call: the epoch's chunks ramping up (4 steps, then
# each a quarter longer: mlp::train::chunk_plan) against main before it (`mnist-baseline`, the
# same kernels, one chunk of --steps-per-chunk recorded before the GPU starts), beside JAX at
# `highest` and at its default (TF32) and the two Rust peers (Burn 0.22 on wgpu, meganeura 0.3),
# at SGD batch 1024 and 128. Every program alone on the GPU, one after another, interleaved,
# twice (mnist_side_by_side.py --repeats 2). Carry .gl and .devbin/i32z (mnist, mnist-baseline,
# mnist-burn, mnist-meganeura: release builds, stripped, xz). Writes $OUT/side_by_side_s7.txt.
# Session 8's call runs this script with other settings (run_s8.sh): SRC (the carried folder
# of xz binaries), SETTINGS, PEERS, EPOCHS and NAME (the output's suffix) default to session 7's;
# VARIANT (one `--variant NAME=SPEC`) and VARIANT_SETTINGS add a variant of ours.
set -u
. benches/notes/device_env.sh
export XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_COMPILATION_CACHE_DIR=/tmp/jax_cache
D=.devbin/issue32
unpack "${SRC:-.devbin/i32z}" $D
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
python3 benches/peer/mnist_side_by_side.py --mnist $D/mnist --baseline $D/mnist-baseline \
  --burn $D/mnist-burn --meganeura $D/mnist-meganeura --epochs "${EPOCHS:-4}" --timeout 90 \
  --settings "${SETTINGS:-sgd1024,sgd128}" --peers "${PEERS:-mnist,jax-u4,jax-u4-tf32,burn,meganeura}" \
  ${VARIANT:+--variant "$VARIANT"} ${VARIANT_SETTINGS:+--variant-settings "$VARIANT_SETTINGS"} \
  --repeats 2 2>&1 | tee "$OUT/side_by_side_${NAME:-s7}.txt"
