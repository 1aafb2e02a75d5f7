#!/bin/bash
# Run here (not on the device), before the next H200 call: release builds of `mnist` and `gemm`
# from HEAD and of `mnist` from bb3a01a (main before 394f387, which records the next epoch's
# first chunk during the last chunks), stripped and xz-compressed into .devbin/next, with the
# Vulkan loader in .gl. Then call the device with carry [".gl", ".devbin/next"] and
# `bash benches/notes/next/call_mnist.sh` or `bash benches/notes/next/call_gemm.sh`.
set -eu
cd "$(dirname "$0")/../../.."
mkdir -p .gl .devbin/next
cp ../shared/device/vulkan-debs/*.deb .gl/ 2>/dev/null || echo "no ../shared/device/vulkan-debs: copy the loader into .gl by hand"
cargo build --release -p mlp --bin mnist -p wgsl-gemm --bin gemm
BASE=${BASE:-bb3a01a}
rm -rf /tmp/next-baseline && git worktree add -f /tmp/next-baseline "$BASE"
(cd /tmp/next-baseline && CARGO_TARGET_DIR=/tmp/next-baseline-target cargo build --release -p mlp --bin mnist)
strip -o .devbin/next/mnist target/release/mnist
strip -o .devbin/next/gemm target/release/gemm
strip -o .devbin/next/mnist-baseline /tmp/next-baseline-target/release/mnist
xz -f -T2 .devbin/next/mnist .devbin/next/gemm .devbin/next/mnist-baseline
git worktree remove --force /tmp/next-baseline
# `mnist-quarterk` for call_split.sh: HEAD with quarterk.patch (a measurement only).
rm -rf /tmp/next-quarterk && git worktree add -f /tmp/next-quarterk HEAD
(cd /tmp/next-quarterk && git apply benches/notes/next/quarterk.patch &&
  CARGO_TARGET_DIR=/tmp/next-baseline-target cargo build --release -p mlp --bin mnist)
strip -o .devbin/next/mnist-quarterk /tmp/next-baseline-target/release/mnist
xz -f -T2 .devbin/next/mnist-quarterk
git worktree remove --force /tmp/next-quarterk
ls -la .devbin/next
