#!/bin/bash
# Issue 32: the MNIST epoch side by side with JAX, every program alone on the GPU, ours and the
# peers interleaved and repeated (mnist_side_by_side.py --repeats). Run on the device from the
# repository root, carrying .gl (the Vulkan loader, shared/device/README.md) and .devbin/issue32
# (the release `mnist` built here: cargo build --release -p mlp --bin mnist). Two halves, each
# well inside one device command's 10 minutes:
#   bash benches/notes/issue32/run.sh a   # SGD batch 128, SGD batch 1024
#   bash benches/notes/issue32/run.sh b   # Adam batch 128, SGD momentum 0.9 batch 64
# Writes $OUT/side_by_side_<half>.txt.
set -u
. benches/notes/device_env.sh
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export JAX_COMPILATION_CACHE_DIR=/tmp/jax_cache
D=${D:-.devbin/issue32}
case "${1:-a}" in
  a) settings=sgd128,sgd1024 ;;
  b) settings=adam128,default64 ;;
  *) echo "usage: run.sh a|b"; exit 2 ;;
esac
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
# Nothing else on the GPU: say what is.
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
python3 benches/peer/mnist_side_by_side.py --mnist $D/mnist --epochs 5 --timeout 120 \
  --settings $settings --peers mnist,jax-u4,jax-u8,jax-u4-tf32 --repeats 2 \
  2>&1 | tee $OUT/side_by_side_${1:-a}.txt
