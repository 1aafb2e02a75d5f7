#!/usr/bin/env python3
"""Module-cycle check: fails when the modules of a crate import each other in a circle.

    python3 .ci/module_cycles.py            # every lib, proc-macro and bin target of the workspace;
                                            # exit status 1 when any cycle is found (phase 2 of issue 22)
    python3 .ci/module_cycles.py --report   # the same listing, exit status 0 (CI until the cycles are broken)
    python3 .ci/module_cycles.py path/to/lib.rs ...   # these crate roots instead of `cargo metadata`'s

What a module is. A module is a file or an inline `mod name { ... }`; the module tree is read from
the `mod` declarations, starting at each crate root (`lib.rs`, `main.rs`, a `src/bin/*.rs`). The graph
is built level by level: for every module P that has submodules, one graph whose nodes are P's
direct submodules (each standing for its whole subtree) and P's own file (its items, marked
"(own file)"). A reference from anywhere inside submodule A to anything inside submodule B is an edge
A -> B in the graph of P, their lowest common parent. So the crate root's graph is the graph of the
top-level modules (`exp`, `kernel`, `lower`, `runtime`, ...), `runtime`'s graph the one of
`runtime::gpu`, `runtime::buffer`, ..., and a cycle is reported in the lowest graph where it closes:
`exp -> lower -> exp` in the root's graph even when the lines are in `exp::node` and `lower::expr`.

What a reference is. Every `use` declaration whose path starts with `crate::`, `super::`, `self::` or
the name of a submodule in scope (Rust 2018 paths), and every such path written in code
(`crate::exp::node::MAX_DEPTH`, `super::Kernel`, `expr::lower_expr(..)`, through a module imported
with `use`). Each path is resolved through the module tree and through the `use` declarations it
passes (re-exports, private imports, globs), so `use super::Place` where `kernel/mod.rs` has
`pub use place::Place` is an edge to `kernel::place`, not to `kernel`'s own file. A `pub use` (any
visibility) is a re-export, not an edge of its own, unless the module's own code uses the name;
a `pub use ...::*` is never an edge. Comments, doc comments (intra-doc links), string literals
and `$crate::` paths in macros are ignored; `#[cfg(test)] mod` modules are left out (a test module
imports what it tests and nothing imports it), `--tests` keeps them.

The listing gives, for every strongly connected component of two or more nodes (a circle, or
several sharing nodes), its nodes and every edge between them with the file, line and path of each
reference that makes it. CYCLES.md has the plan for breaking the ones found on 2026-12-01.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORDS_NOT_NAMES = {"fn", "const", "unsafe", "async", "extern", "pub", "mut", "r"}


# ----------------------------------------------------------------------------------------------
# Source text: comments and literals blanked, offsets kept.


def blank_comments_and_literals(text: str) -> str:
    """The text with every comment and the contents of every string, byte-string and char literal
    replaced by spaces (newlines kept), so that offsets and line numbers stay those of `text`."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        for j in range(a, min(b, n)):
            if out[j] != "\n":
                out[j] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rbc" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(?:br|cr|r)(#*)"', text[i:])
            if m:  # raw string: r"..", r#".."#, br"..", cr".."
                end = '"' + m.group(1)
                j = text.find(end, i + m.end())
                j = n if j < 0 else j + len(end)
                blank(i + 1, j)
                i = j
            elif text.startswith(('b"', 'c"'), i):
                i = skip_string(text, i + 1, blank)
            elif text.startswith("b'", i):
                i = skip_char(text, i + 1, blank)
            else:
                i += 1
        elif c == '"':
            i = skip_string(text, i, blank)
        elif c == "'":
            i = skip_char(text, i, blank)
        else:
            i += 1
    return "".join(out)


def skip_string(text: str, i: int, blank) -> int:
    j = i + 1
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    blank(i + 1, j)
    return j + 1


def skip_char(text: str, i: int, blank) -> int:
    """A char literal ('x', '\\n', '\\u{..}') is blanked; a lifetime ('a) is left as it is."""
    if text.startswith("\\", i + 1):
        j = text.find("'", i + 3)
        if j < 0:
            return i + 1
        blank(i + 1, j)
        return j + 1
    if i + 2 < len(text) and text[i + 2] == "'":
        blank(i + 1, i + 2)
        return i + 3
    return i + 1


@dataclass
class Source:
    path: str
    text: str
    clean: str
    line_starts: list[int]

    @staticmethod
    def load(path: str) -> "Source":
        with open(path, encoding="utf-8") as f:
            text = f.read()
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        return Source(path, text, blank_comments_and_literals(text), starts)

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)


def matching_brace(clean: str, i: int) -> int:
    """The offset just after the `}` matching the `{` at `i`."""
    depth = 0
    for j in range(i, len(clean)):
        if clean[j] == "{":
            depth += 1
        elif clean[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(clean)


# ----------------------------------------------------------------------------------------------
# The module tree.


@dataclass
class UseLeaf:
    """One path a `use` declaration imports: `use a::{b, c::d as e, f::*}` has three."""

    segs: list[str]
    alias: str | None  # the name it binds; None for a glob or `as _`
    glob: bool
    public: bool
    line: int
    text: str


@dataclass(eq=False)
class Module:
    path: tuple[str, ...]
    source: Source
    span: tuple[int, int]
    child_dir: str
    parent: "Module | None"
    test: bool = False
    children: dict[str, "Module"] = field(default_factory=dict)
    inline_spans: list[tuple[int, int]] = field(default_factory=list)
    uses: list[UseLeaf] = field(default_factory=list)
    use_spans: list[tuple[int, int]] = field(default_factory=list)
    items: set[str] = field(default_factory=set)
    exported_macros: set[str] = field(default_factory=set)  # `#[macro_export] macro_rules! m`
    body: str = ""  # its own code: children's inline spans and `use` declarations blanked
    _aliases: dict[str, UseLeaf] | None = None

    def name(self) -> str:
        return "::".join(self.path) if self.path else "crate"

    def ancestors(self) -> list["Module"]:
        out, m = [], self
        while m is not None:
            out.append(m)
            m = m.parent
        return out

    def aliases(self) -> dict[str, UseLeaf]:
        if self._aliases is None:
            self._aliases = {u.alias: u for u in self.uses if u.alias and u.alias != "_"}
        return self._aliases

    def globs(self) -> list[UseLeaf]:
        return [u for u in self.uses if u.glob]


MOD_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:pub\s*(?:\([^)]*\))?\s*)?mod\s+(?:r#)?(" + IDENT + r")\s*([;{])"
)
ATTRS_RE = re.compile(r"((?:#\[(?:[^\[\]]|\[[^\]]*\])*\]\s*)*)$")


def module_file(directory: str, name: str) -> str | None:
    for candidate in (os.path.join(directory, name + ".rs"), os.path.join(directory, name, "mod.rs")):
        if os.path.isfile(candidate):
            return candidate
    return None


def load_module(
    path: tuple[str, ...], src: Source, span: tuple[int, int], child_dir: str, parent, errors
) -> Module:
    module = Module(path, src, span, child_dir, parent)
    i, end = span
    while True:
        m = MOD_RE.search(src.clean, i, end)
        if not m:
            break
        name, kind = m.group(1), m.group(2)
        # Attributes read on the blanked text (a comment is no attribute), their strings on the real one.
        lo = max(span[0], m.start() - 400)
        attrs_match = ATTRS_RE.search(src.clean[lo : m.start()].rstrip())
        attrs = src.text[lo + attrs_match.start(1) : lo + attrs_match.end(1)]
        test = re.search(r"cfg\s*\(\s*test\s*\)", attrs) is not None
        path_attr = re.search(r'#\[\s*path\s*=\s*"([^"]*)"\s*\]', attrs)
        if kind == "{":
            close = matching_brace(src.clean, m.end() - 1)
            child = load_module(
                path + (name,), src, (m.end(), close - 1), os.path.join(child_dir, name), module, errors
            )
            module.inline_spans.append((m.start(), close))
            i = close
        else:
            if path_attr:
                base = os.path.dirname(src.path) if module.span[0] == 0 else child_dir
                file = os.path.normpath(os.path.join(base, path_attr.group(1)))
            else:
                file = module_file(child_dir, name)
            if file is None or not os.path.isfile(file):
                errors.append(f"{src.path}:{src.line(m.start())}: no file for `mod {name};`")
                i = m.end()
                continue
            child_src = Source.load(file)
            stem = os.path.splitext(os.path.basename(file))[0]
            grand_dir = os.path.dirname(file) if stem == "mod" else os.path.join(os.path.dirname(file), stem)
            child = load_module(path + (name,), child_src, (0, len(child_src.text)), grand_dir, module, errors)
            module.inline_spans.append((m.start(), m.end()))
            i = m.end()
        child.test = test or module.test
        module.children[name] = child
    parse_own_code(module)
    return module


USE_RE = re.compile(r"(?<![A-Za-z0-9_:$])use\b(?!\s*<)")
VIS_BEFORE_RE = re.compile(r"pub\s*(?:\([^)]*\))?\s*$")
ITEM_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:struct|enum|union|trait|fn|type|const|static)\s+(" + IDENT + r")"
    r"|macro_rules!\s*(" + IDENT + r")"
)
TOKEN_RE = re.compile(r"\s*(::|\$crate|r#" + IDENT + "|" + IDENT + r"|[{},*;])")


def parse_own_code(module: Module) -> None:
    src, (start, end) = module.source, module.span
    own = list(src.clean[start:end])
    for a, b in module.inline_spans:
        for j in range(a, b):
            if own[j - start] != "\n":
                own[j - start] = " "
    own_text = "".join(own)
    for m in USE_RE.finditer(own_text):
        vis = VIS_BEFORE_RE.search(own_text, 0, m.start())
        public = vis is not None and vis.end() == m.start()
        stmt_start = vis.start() if public else m.start()
        semi = own_text.find(";", m.end())
        if semi < 0:
            continue
        leaves = parse_use_tree(src, start + m.end(), start + semi, public)
        module.uses.extend(leaves)
        module.use_spans.append((start + stmt_start, start + semi + 1))
    body = list(own_text)
    for a, b in module.use_spans:
        for j in range(a, b):
            if body[j - start] != "\n":
                body[j - start] = " "
    module.body = "".join(body)
    for m in ITEM_RE.finditer(module.body):
        name = m.group(1) or m.group(2)
        if name not in KEYWORDS_NOT_NAMES:
            module.items.add(name)
        if m.group(2):
            attrs = ATTRS_RE.search(src.clean[max(start, start + m.start() - 400) : start + m.start()].rstrip())
            if attrs and re.search(r"#\[\s*macro_export\b", attrs.group(1)):
                module.exported_macros.add(m.group(2))


def parse_use_tree(src: Source, a: int, b: int, public: bool) -> list[UseLeaf]:
    tokens: list[tuple[str, int]] = []
    i = a
    while i < b:
        m = TOKEN_RE.match(src.clean, i, b)
        if not m:
            break
        tokens.append((m.group(1), m.start(1)))
        i = m.end()
    leaves: list[UseLeaf] = []
    pos = 0
    kw = "pub use " if public else "use "

    def peek() -> str:
        return tokens[pos][0] if pos < len(tokens) else ""

    def tree(prefix: list[str]) -> None:
        nonlocal pos
        segs = list(prefix)
        if peek() == "::":  # `use ::std::..`: an external crate
            pos += 1
            segs.append("::")
        while pos < len(tokens):
            tok, off = tokens[pos]
            if tok == "{":
                pos += 1
                while peek() not in ("}", ""):
                    tree(segs)
                    if peek() == ",":
                        pos += 1
                pos += 1
                return
            if tok == "*":
                pos += 1
                leaves.append(UseLeaf(segs, None, True, public, src.line(off), kw + "::".join(segs) + "::*"))
                return
            pos += 1
            segs = segs + [tok.removeprefix("r#")]
            if peek() == "::":
                pos += 1
                continue
            alias = segs[-1]
            if peek() == "as":
                pos += 1
                alias = peek()
                pos += 1
            if segs[-1] == "self":
                segs = segs[:-1]
                if alias == "self":
                    alias = segs[-1] if segs else None
            text = kw + "::".join(segs) + (f" as {alias}" if segs and alias != segs[-1] else "")
            leaves.append(UseLeaf(segs, alias, False, public, src.line(off), text))
            return

    tree([])
    return leaves


# ----------------------------------------------------------------------------------------------
# Resolution.


class Resolver:
    """Resolves paths through the module tree and the `use` declarations they pass."""

    def __init__(self, root: Module):
        self.root = root
        # `#[macro_export]` macros are items of the crate root wherever they are written
        # (`crate::m!`): a path to one is an edge to the module that defines it.
        self.macros: dict[str, Module] = {}
        stack = [root]
        while stack:
            m = stack.pop()
            for name in m.exported_macros:
                self.macros.setdefault(name, m)
            stack.extend(m.children.values())

    def start(self, segs: list[str], context: Module) -> tuple[Module, list[str]] | None:
        """Where a path starts: (module, the segments left to follow from it); None outside the
        crate. `crate::`, `super::`, `self::` and a submodule's name (Rust 2018 paths)."""
        if not segs or segs[0] in ("::", "$crate"):
            return None
        if segs[0] == "crate":
            return self.root, segs[1:]
        if segs[0] in ("super", "self"):
            cur, rest = context, list(segs)
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super" and cur.parent is not None:
                    cur = cur.parent
                rest = rest[1:]
            return cur, rest
        if segs[0] in context.children:
            return context, segs
        return None

    def resolve(self, segs: list[str], context: Module, depth: int = 0) -> Module | None:
        """The module where the item (or module) `segs` names, seen from `context`, is defined;
        None when it is outside the crate."""
        if depth > 32 or not segs:
            return None
        begun = self.start(segs, context)
        if begun is not None:
            return self.walk(begun[0], begun[1], depth)[0]
        alias = context.aliases().get(segs[0])
        if alias is not None and alias.segs[:1] != segs[:1]:  # `use naga;` names the crate
            return self.resolve(alias.segs + segs[1:], context, depth + 1)
        if segs[0] in context.items:
            return context
        return None

    def walk(self, cur: Module, rest: list[str], depth: int) -> tuple[Module | None, bool]:
        """Follows `rest` down from `cur`: (the module reached, whether the name was found in it;
        a name found nowhere is taken as defined in the last module, e.g. by a macro)."""
        for i, seg in enumerate(rest):
            if seg in cur.children:
                cur = cur.children[seg]
                continue
            if seg in cur.items:
                return cur, True
            alias = cur.aliases().get(seg)
            if alias is not None:
                return self.resolve(alias.segs + rest[i + 1 :], cur, depth + 1), True
            for g in cur.globs():
                base = self.resolve(g.segs, cur, depth + 1)
                if base is not None and base is not cur:
                    target, found = self.walk(base, rest[i:], depth + 1)
                    if found:
                        return target, True
            if cur is self.root and seg in self.macros:
                return self.macros[seg], True
            return cur, False
        return cur, True

    def module_of(self, segs: list[str], context: Module) -> Module | None:
        """The module `segs` names when it names a module (`crate::exp`, `super::node`)."""
        begun = self.start(segs, context)
        if begun is None:
            return None
        cur = begun[0]
        for seg in begun[1]:
            if seg not in cur.children:
                return None
            cur = cur.children[seg]
        return cur


# ----------------------------------------------------------------------------------------------
# References and graphs.


@dataclass
class Ref:
    file: str
    line: int
    text: str


PATH_RE = re.compile(r"(?<![A-Za-z0-9_$:])(?:r#)?(" + IDENT + r")((?:\s*::\s*(?:r#)?" + IDENT + r")+)")


def references(module: Module, resolver: Resolver, tests: bool):
    """(source module, target module, Ref) for every reference of `module`'s own code and of its
    descendants' (test modules left out unless `tests`)."""
    if module.test and not tests:
        return
    src = module.source
    names = module.aliases()
    code = without_attributes(module.body)
    for u in module.uses:
        # A name in an attribute (`#[derive(..)]` beside `pub use derive::derive`), after a `.`
        # (a field or method) or before a single `:` (a field, a parameter) is no use of the
        # re-exported item.
        if u.public and (
            u.glob
            or u.alias is None
            or not re.search(r"(?<![.\w])" + re.escape(u.alias) + r"\b(?!\s*:(?!:))", code)
        ):
            continue  # a re-export: an edge of whoever uses it
        target = resolver.resolve(u.segs, module)
        if target is not None:
            yield module, target, Ref(src.path, u.line, u.text)
    # Paths in code; `pub(in crate::x)` is a visibility, not a reference.
    body = re.sub(r"pub\s*\([^)]*\)", lambda m: " " * len(m.group(0)), module.body)
    for m in PATH_RE.finditer(body):
        first = m.group(1)
        segs = [first] + [s.strip().removeprefix("r#") for s in m.group(2).split("::")[1:]]
        if resolver.start(segs, module) is None:
            # Through a module imported with `use` (`use super::node; node::Kind`); a path through an
            # imported item (`Exp::new`) adds nothing to its `use`.
            alias = names.get(first)
            if alias is None or resolver.module_of(alias.segs, module) is None:
                continue
        target = resolver.resolve(segs, module)
        if target is not None:
            yield module, target, Ref(src.path, src.line(m.start()), "::".join(segs))
    for child in module.children.values():
        yield from references(child, resolver, tests)


def without_attributes(text: str) -> str:
    """`text` with every attribute (`#[..]`, `#![..]`, brackets nested) blanked."""
    out = list(text)
    for m in re.finditer(r"#!?\s*\[", text):
        if out[m.start()] == " ":
            continue  # inside an attribute blanked already
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "[":
                depth += 1
            elif text[j] == "]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        for k in range(m.start(), min(j + 1, len(text))):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def lowest_common_parent(a: Module, b: Module) -> tuple[Module, Module, Module] | None:
    """(P, A, B): P the lowest module containing both, A and B the nodes of P's graph they belong
    to (a direct submodule of P, or P itself for P's own file)."""
    anc_a = a.ancestors()
    anc_b = b.ancestors()
    set_b = {id(m) for m in anc_b}
    parent = next(m for m in anc_a if id(m) in set_b)

    def node(x: Module) -> Module:
        if x is parent:
            return parent
        for m in x.ancestors():
            if m.parent is parent:
                return m
        raise AssertionError

    na, nb = node(a), node(b)
    if na is nb:
        return None
    return parent, na, nb


def strongly_connected(nodes: list, edges: dict) -> list[list]:
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


@dataclass
class Cycle:
    crate: str
    parent: str
    nodes: list[str]
    edges: list[tuple[str, str, list[Ref]]]


def find_cycles(crate: str, root_file: str, tests: bool, errors: list[str], flat: bool = False) -> list[Cycle]:
    src = Source.load(root_file)
    root = load_module((), src, (0, len(src.text)), os.path.dirname(root_file), None, errors)
    resolver = Resolver(root)
    graphs: dict[int, tuple[Module, dict]] = {}
    for a, b, ref in references(root, resolver, tests):
        if b.test and not tests:
            continue
        if flat:  # `--files`: one graph, each module (file or inline `mod`) a node of its own
            if a is b:
                continue
            parent, na, nb = root, a, b
        else:
            lcp = lowest_common_parent(a, b)
            if lcp is None:
                continue
            parent, na, nb = lcp
        graph = graphs.setdefault(id(parent), (parent, {}))[1]
        graph.setdefault((na, nb), []).append(ref)

    def label(node: Module, parent: Module) -> str:
        if flat:
            return node.name()
        if node is parent:
            return f"{parent.name()} (own file)"
        return node.name()

    cycles = []
    for parent, graph in graphs.values():
        nodes = sorted({n for e in graph for n in e}, key=lambda m: m.path)
        succ: dict = {}
        for x, y in graph:
            succ.setdefault(x, []).append(y)
        for comp in strongly_connected(nodes, succ):
            if len(comp) < 2:
                continue
            members = set(comp)
            comp.sort(key=lambda m: m.path)
            edges = [
                (label(x, parent), label(y, parent), refs)
                for (x, y), refs in sorted(graph.items(), key=lambda e: (e[0][0].path, e[0][1].path))
                if x in members and y in members
            ]
            cycles.append(Cycle(crate, parent.name(), [label(m, parent) for m in comp], edges))
    cycles.sort(key=lambda c: (c.parent != "crate", c.parent, c.nodes))
    return cycles


# ----------------------------------------------------------------------------------------------
# Command line.


def workspace_roots() -> list[tuple[str, str]]:
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    roots = []
    for package in meta["packages"]:
        for target in package["targets"]:
            kinds = set(target["kind"])
            if kinds & {"lib", "proc-macro", "bin", "rlib", "cdylib", "staticlib", "dylib"}:
                kind = "bin" if "bin" in kinds else "lib"
                roots.append((f"{package['name']} ({kind} {target['name']})", target["src_path"]))
    return sorted(roots)


def relative(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", action="store_true", help="list the cycles, exit 0")
    parser.add_argument("--tests", action="store_true", help="keep #[cfg(test)] modules")
    parser.add_argument(
        "--files", action="store_true", help="one graph per crate, every file and inline module a node"
    )
    parser.add_argument("--max-refs", type=int, default=0, help="references shown per edge (0: all)")
    parser.add_argument("roots", nargs="*", help="crate root files (default: the workspace's targets)")
    args = parser.parse_args(argv)

    roots = [(r, r) for r in args.roots] if args.roots else workspace_roots()
    errors: list[str] = []
    total = 0
    for crate, root_file in roots:
        cycles = find_cycles(crate, root_file, args.tests, errors, args.files)
        if not cycles:
            print(f"{crate}: no cycles")
            continue
        print(f"{crate}: {len(cycles)} cycle(s)")
        for c in cycles:
            total += 1
            if args.files:
                where = "between its files"
            else:
                where = "between its top-level modules" if c.parent == "crate" else f"inside `{c.parent}`"
            print(f"  cycle {total} {where}, {len(c.nodes)} modules: {', '.join(c.nodes)}")
            for x, y, refs in c.edges:
                print(f"    {x} -> {y}: {len(refs)} reference(s)")
                shown = refs if args.max_refs == 0 else refs[: args.max_refs]
                for r in shown:
                    print(f"      {relative(r.file)}:{r.line}: {r.text}")
                if len(shown) < len(refs):
                    print(f"      ... and {len(refs) - len(shown)} more")
    for e in errors:
        print(f"warning: {e}", file=sys.stderr)
    if total == 0:
        print("module cycles: none")
        return 0
    print(f"module cycles: {total} (python3 .ci/module_cycles.py lists them; plan in CYCLES.md)")
    return 0 if args.report else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
