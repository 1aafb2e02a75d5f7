#!/usr/bin/env python3
"""Crate-graph check (issue 22): ARCHITECTURE.md's crate graph is the workspace's.

    python3 .ci/crate_graph.py

Reads the block after `<!-- crate-graph -->` in ARCHITECTURE.md, one line per package:
`name -> dep, dep?, ...  # comment` (`?` an optional dependency, `(none)` for none), and compares it with the normal
dependencies between workspace packages that `cargo metadata` reports; then checks that the
compiler crate (wgsl-dsl-core), the executor contract (wgsl-dsl-exec), the CPU interpreter
(wgsl-dsl-interp) and the gradient checker (wgsl-dsl-gradcheck) have no wgpu anywhere in their
dependency trees (`cargo tree`, normal and build dependencies), and the interpreter none with its
dev-dependencies either (its tests and doc tests use the crates below it, not the facade:
`cargo tree -p wgsl-dsl-interp | grep -c wgpu` is 0). Exit status 1, with each difference, when
they disagree.
"""

import json
import subprocess
import sys

# The crates without wgpu: the compiler, the executor contract, the interpreter, the gradient
# checker.
WITHOUT_WGPU = ["wgsl-dsl-core", "wgsl-dsl-exec", "wgsl-dsl-interp", "wgsl-dsl-gradcheck"]
# Of those, the ones whose tests (dev-dependencies) have no wgpu either.
TESTS_WITHOUT_WGPU = ["wgsl-dsl-interp"]


def documented(path="ARCHITECTURE.md"):
    text = open(path, encoding="utf-8").read()
    block = text.split("<!-- crate-graph -->", 1)[1].split("```", 2)[1]
    graph = {}
    for line in block.strip("\n").splitlines():
        if line.lstrip().startswith("#"):
            continue  # a comment continued on its own line
        name, _, rest = line.partition("->")
        deps = rest.split("#", 1)[0].strip()
        graph[name.strip()] = set() if deps == "(none)" else {d.strip() for d in deps.split(",")}
    return graph


def actual():
    meta = json.loads(
        subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--no-deps"])
    )
    names = {p["name"] for p in meta["packages"]}
    graph = {}
    for p in meta["packages"]:
        graph[p["name"]] = {
            d["name"] + ("?" if d.get("optional") else "")
            for d in p["dependencies"]
            if d["name"] in names and d.get("kind") is None and d["name"] != p["name"]
        }
    return graph


def wgpu_in_tree(crate, edges):
    """The wgpu crates in `crate`'s dependency tree over `edges` (`cargo tree -e`)."""
    tree = subprocess.check_output(
        ["cargo", "tree", "-p", crate, "-e", edges, "--prefix", "none"], text=True
    )
    return sorted({l.split()[0] for l in tree.splitlines() if l.startswith("wgpu")})


def main():
    doc, real = documented(), actual()
    bad = []
    for name in sorted(doc.keys() | real.keys()):
        if name not in real:
            bad.append(f"{name}: in ARCHITECTURE.md, not a workspace package")
        elif name not in doc:
            bad.append(f"{name}: a workspace package missing from ARCHITECTURE.md")
        elif doc[name] != real[name]:
            bad.append(
                f"{name}: ARCHITECTURE.md says {sorted(doc[name])}, cargo metadata {sorted(real[name])}"
            )
    for crate in WITHOUT_WGPU:
        wgpu = wgpu_in_tree(crate, "normal,build")
        if wgpu:
            bad.append(f"{crate} depends on {', '.join(wgpu)}")
        elif crate in TESTS_WITHOUT_WGPU:
            wgpu = wgpu_in_tree(crate, "normal,build,dev")
            if wgpu:
                bad.append(f"{crate}'s tests (dev-dependencies) depend on {', '.join(wgpu)}")
    for b in bad:
        print("crate graph:", b)
    if not bad:
        print(f"crate graph: ARCHITECTURE.md matches cargo metadata ({len(real)} packages); "
              f"no wgpu under {', '.join(WITHOUT_WGPU)}; nor under the tests of "
              f"{', '.join(TESTS_WITHOUT_WGPU)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
