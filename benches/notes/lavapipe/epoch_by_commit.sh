#!/bin/bash
# One training epoch on this machine's adapter (lavapipe here) for each commit given, back to back in
# one sitting, so that a slower epoch can be told from a slower machine. Each commit is built in a
# scratch worktree (release) and runs `mnist train --epochs 1 --limit-test 1000` with its defaults.
#   bash benches/notes/lavapipe/epoch_by_commit.sh 184b557 eafe481 main
# Prints: commit, training seconds, samples/s, as the binary reports them.
set -eu
ROOT=$(git rev-parse --show-toplevel)
WT=${WT:-/tmp/epoch_by_commit}
[ -d "$WT" ] || git -C "$ROOT" worktree add --detach "$WT" HEAD >/dev/null
export WGPU_BACKEND=${WGPU_BACKEND:-vulkan} XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
for c in "$@"; do
  git -C "$WT" checkout -q --detach "$c"
  (cd "$WT" && cargo build -q --release -p mlp --bin mnist)
  line=$(cd "$WT" && ./target/release/mnist train --epochs 1 --limit-test 1000 2>/dev/null \
           | grep -E '^epoch 1/1' || true)
  secs=$(echo "$line" | grep -oE '(train )?[0-9.]+ s \(' | grep -oE '[0-9.]+' | head -1)
  rate=$(echo "$line" | grep -oE '[0-9]+ samples/s' | head -1)
  echo "$(git -C "$ROOT" rev-parse --short "$c") | ${secs:-?} s | ${rate:-?} | load $(cut -d' ' -f1 /proc/loadavg)"
done
