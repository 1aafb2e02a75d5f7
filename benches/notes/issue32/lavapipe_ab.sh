#!/bin/bash
# Issue 32's "lavapipe's default run no slower than today in the same sitting": the README's
# `mnist train` (the defaults: 5 epochs, batch 64, SGD momentum 0.9, cosine schedule), main
# (`NEW`) against afe68d2 (`OLD`, the commit the issue was filed on), interleaved new, old,
# old, new, one at a time on an otherwise idle machine. Build both release binaries first
# (afe68d2 in a worktree: `git worktree add /tmp/wt-afe afe68d2`, `CARGO_TARGET_DIR=...
# cargo build --release -p mlp --bin mnist`). Output: lavapipe/ab.txt.
set -u
cd "$(dirname "$0")/../../.."
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
NEW=${NEW:-target/release/mnist} OLD=${OLD:-/tmp/afe-target/release/mnist}
for who in new old old new; do
  bin=$NEW; [ "$who" = old ] && bin=$OLD
  echo "== $who: $bin train"
  "$bin" train --data data/mnist 2>&1 | grep -E "^(GPU|epoch 5|done)"
done | tee benches/notes/issue32/lavapipe/ab.txt
