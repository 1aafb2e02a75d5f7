#!/usr/bin/env bash
# Every public item path of wgsl-dsl at REV (default ad5edf9, the last commit before the crate
# split of issue 22) must resolve against the working tree's wgsl-dsl:
#   bash benches/notes/issue22/api_paths.sh [REV]
# It builds REV's rustdoc (cargo doc -p wgsl-dsl --no-deps, in a temporary worktree), takes
# every item page that is not a redirect (structs, enums, traits, functions, type aliases,
# constants, macros: 296 at ad5edf9), writes `use <path> as _;` for each into a temporary
# example of crates/wgsl-dsl, and builds it. Exit status 0: every path resolves.
set -euo pipefail
rev="${1:-ad5edf9}"
root="$(git rev-parse --show-toplevel)"
tmp="$(mktemp -d)"
example="$root/crates/wgsl-dsl/examples/api_paths_of_${rev}.rs"
trap 'git -C "$root" worktree remove --force "$tmp/tree" 2>/dev/null || true; rm -rf "$tmp" "$example"' EXIT
git -C "$root" worktree add -q "$tmp/tree" "$rev"
# The working tree's target directory, for its build of the dependencies (copying it took tens
# of GB); REV's rustdoc goes to a directory of its own.
target="${CARGO_TARGET_DIR:-$root/target}"
rm -rf "$target/doc"
(cd "$tmp/tree" && CARGO_TARGET_DIR="$target" cargo doc -q -p wgsl-dsl --no-deps)
mv "$target/doc" "$tmp/doc"
python3 - "$tmp/doc" "$rev" > "$example" <<'PY'
import os, sys
doc, rev = sys.argv[1], sys.argv[2]
paths = set()
for dirpath, _, files in os.walk(os.path.join(doc, "wgsl_dsl")):
    for f in files:
        if not f.endswith(".html") or f in ("index.html", "all.html"):
            continue
        head = open(os.path.join(dirpath, f), errors="replace").read(2000)
        if 'http-equiv="refresh"' in head:
            continue  # a redirect to the item's public page
        name = f[:-5].split(".", 1)[1]
        module = os.path.relpath(dirpath, doc).replace(os.sep, "::")
        paths.add(f"{module}::{name}")
print(f"//! Every public item path of wgsl-dsl at {rev} ({len(paths)}), from its rustdoc pages.")
for p in sorted(paths):
    print(f"use {p} as _;")
print("fn main() {}")
PY
echo "api paths: $(grep -c '^use ' "$example") public item paths of wgsl-dsl at $rev"
(cd "$root" && cargo build -q -p wgsl-dsl --example "$(basename "$example" .rs)")
echo "api paths: all resolve against the working tree"
