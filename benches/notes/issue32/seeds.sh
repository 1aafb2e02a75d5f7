#!/usr/bin/env bash
# Issue 32's accuracy target over three seeds, without a GPU: ours on lavapipe (Mesa's software
# Vulkan driver) and JAX on the CPU at `highest` (full-precision f32 products: what JAX computes
# on the H200 with `--precision highest`; its TF32 default cannot run on a CPU). Four settings of
# mnist_side_by_side.py, 5 epochs, seeds 0, 1, 2, one process at a time. Timings here are of
# CPUs, not of anything the issue targets: only the accuracies are read.
#
#   python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax numpy
#   cargo build --release -p mlp --bin mnist
#   bash benches/notes/issue32/seeds.sh   # ~40 min on 2 cores; output in seeds/seed{0,1,2}.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY=${PY:-/tmp/jaxenv/bin/python}
OUT=benches/notes/issue32/seeds
mkdir -p "$OUT"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
for seed in ${SEEDS:-0 1 2}; do
  "$PY" benches/peer/mnist_side_by_side.py --mnist target/release/mnist --epochs 5 \
    --settings "${SETTINGS:-sgd1024,sgd128,adam128,default64}" --peers mnist,jax-u1 \
    --seed "$seed" --timeout 1200 > "$OUT/seed$seed.txt" 2>&1
done
