#!/usr/bin/env python3
"""Tests of .ci/module_cycles.py on small crates written to a temporary directory:
`python3 .ci/test_module_cycles.py` (run by .ci/run before the check itself)."""

import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_cycles  # noqa: E402


CLEANUP: list[tempfile.TemporaryDirectory] = []


class Crate:
    """A crate of the given files (path -> source) in a temporary directory."""

    def __init__(self, files: dict[str, str]):
        self.dir = tempfile.TemporaryDirectory()
        CLEANUP.append(self.dir)
        for path, text in files.items():
            full = os.path.join(self.dir.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        self.root = os.path.join(self.dir.name, "lib.rs")

    def cycles(self, tests: bool = False, flat: bool = False):
        errors: list[str] = []
        found = module_cycles.find_cycles("fixture", self.root, tests, errors, flat)
        assert not errors, errors
        return found

    def edges(self, **kw):
        """{(parent, from, to): [line, ...]} of every edge inside a cycle."""
        return {
            (c.parent, x, y): [r.line for r in refs] for c in self.cycles(**kw) for x, y, refs in c.edges
        }

    def main(self, *args: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = module_cycles.main([*args, self.root])
        return code, out.getvalue()


# a -> b (use crate::), b -> c (a path in code, through c's re-export of c::inner::g),
# c::inner -> a (super::super:: in a signature): one cycle of the crate's top-level modules.
THREE = {
    "lib.rs": "mod a;\nmod b;\nmod c;\n",
    "a.rs": "use crate::b::B;\npub struct A(B);\n",
    "b.rs": "pub struct B;\npub fn f() {\n    crate::c::g();\n}\n",
    "c/mod.rs": "mod inner;\npub use inner::g;\n",
    "c/inner.rs": "pub fn g() {}\nfn h() -> super::super::a::A {\n    todo!()\n}\n",
}


class Cycles(unittest.TestCase):
    def tearDown(self):
        while CLEANUP:
            CLEANUP.pop().cleanup()

    def test_a_cycle_through_use_code_paths_reexports_and_super(self):
        crate = Crate(THREE)
        [cycle] = crate.cycles()
        self.assertEqual(cycle.parent, "crate")
        self.assertEqual(cycle.nodes, ["a", "b", "c"])
        self.assertEqual(
            crate.edges(), {("crate", "a", "b"): [1], ("crate", "b", "c"): [3], ("crate", "c", "a"): [2]}
        )

    def test_no_cycle_once_an_edge_is_gone(self):
        files = dict(THREE, **{"c/inner.rs": "pub fn g() {}\n"})
        self.assertEqual(Crate(files).cycles(), [])

    def test_reference_text_and_location(self):
        [cycle] = Crate(THREE).cycles()
        refs = {(x, y): refs for x, y, refs in cycle.edges}
        [use] = refs[("a", "b")]
        self.assertEqual((os.path.basename(use.file), use.line, use.text), ("a.rs", 1, "use crate::b::B"))
        [path] = refs[("c", "a")]
        self.assertEqual((os.path.basename(path.file), path.text), ("inner.rs", "super::super::a::A"))

    def test_comments_strings_and_doc_links_are_not_references(self):
        files = dict(
            THREE,
            **{
                "c/inner.rs": """\
                    //! See [`crate::a::A`].
                    pub fn g() {
                        // let _ = super::super::a::A;
                        /* crate::a::A /* nested */ crate::a::A */
                        let _ = "crate::a::A";
                        let _ = r#"crate::a::A "quoted""#;
                        let _ = '"';
                        let _ = b'\\'';
                    }
                """
            },
        )
        self.assertEqual(Crate(files).cycles(), [])

    def test_code_after_char_and_raw_string_literals_is_still_read(self):
        files = dict(
            THREE,
            **{"c/inner.rs": "pub fn g() {\n    let _ = ('\"', r#\"\"\"#, '\\'');\n    let _ = crate::a::A;\n}\n"},
        )
        self.assertEqual(Crate(files).edges()[("crate", "c", "a")], [3])

    def test_a_reexport_alone_is_not_an_edge(self):
        # m/mod.rs re-exports child::X and defines Y, which child uses: no cycle...
        files = {
            "lib.rs": "pub mod m;\n",
            "m/mod.rs": "mod child;\npub use child::X;\npub struct Y;\n",
            "m/child.rs": "use super::Y;\npub struct X(Y);\n",
        }
        self.assertEqual(Crate(files).cycles(), [])
        # ...until m's own code uses X: then m's own file and m::child form a cycle.
        files["m/mod.rs"] += "pub fn f(_: X) {}\n"
        [cycle] = Crate(files).cycles()
        self.assertEqual((cycle.parent, cycle.nodes), ("m", ["m (own file)", "m::child"]))

    def test_a_name_in_an_attribute_or_after_a_dot_is_no_use_of_a_reexport(self):
        # m re-exports child::derive and child::check; `#[derive(..)]` and `x.check` in m's own
        # code do not use them, so child's use of m's Y closes no cycle.
        files = {
            "lib.rs": "pub mod m;\n",
            "m/mod.rs": "mod child;\npub use child::{check, derive};\n#[derive(Debug)]\n"
            "#[cfg_attr(test, derive(Clone))]\npub struct Y {\n    check: u8,\n}\n"
            "fn f(x: &Y) -> u8 {\n    x.check\n}\n",
            "m/child.rs": "use super::Y;\npub fn derive(_: &Y) {}\npub fn check() {}\n",
        }
        self.assertEqual(Crate(files).cycles(), [])
        files["m/mod.rs"] += "fn g(y: &Y) {\n    derive(y);\n}\n"
        [cycle] = Crate(files).cycles()
        self.assertEqual(cycle.nodes, ["m (own file)", "m::child"])

    def test_use_super_resolves_through_the_parents_reexport_to_the_sibling(self):
        files = {
            "lib.rs": "pub mod rt;\n",
            "rt/mod.rs": "mod gpu;\nmod buffer;\npub use gpu::Gpu;\npub use buffer::Buffer;\n",
            "rt/gpu.rs": "use super::Buffer;\npub struct Gpu(Buffer);\n",
            "rt/buffer.rs": "use super::Gpu;\npub struct Buffer;\nfn f(_: &Gpu) {}\n",
        }
        [cycle] = Crate(files).cycles()
        self.assertEqual((cycle.parent, cycle.nodes), ("rt", ["rt::buffer", "rt::gpu"]))

    def test_a_childs_import_of_its_parents_private_import(self):
        # p imports x::T privately; p::q takes it from p: the edge is p -> x, the cycle p, x.
        files = {
            "lib.rs": "mod p;\nmod x;\n",
            "p/mod.rs": "mod q;\nuse crate::x::T;\npub struct P;\n",
            "p/q.rs": "use super::T;\nfn f(_: T) {}\n",
            "x.rs": "pub struct T;\nfn g(_: crate::p::P) {}\n",
        }
        self.assertEqual(Crate(files).cycles()[0].nodes, ["p", "x"])

    def test_glob_imports_and_relative_module_paths(self):
        files = {
            "lib.rs": "mod a;\nmod b;\n",
            "a/mod.rs": "mod inner;\npub struct A;\nfn f() {\n    inner::g();\n}\n",
            "a/inner.rs": "use crate::b::*;\npub fn g() {}\n",
            "b.rs": "pub struct B;\nfn f(_: crate::a::A) {}\n",
        }
        self.assertEqual(Crate(files).edges(), {("crate", "a", "b"): [1], ("crate", "b", "a"): [2]})

    def test_a_public_glob_is_a_reexport(self):
        files = {
            "lib.rs": "mod a;\nmod b;\npub mod prelude {\n    pub use crate::a::*;\n}\n",
            "a.rs": "pub struct A;\nfn f(_: crate::b::B) {}\n",
            "b.rs": "pub struct B;\nfn g(_: crate::prelude::A) {}\n",
        }
        # b reaches a through the prelude's glob; the prelude itself is no node of the cycle.
        self.assertEqual(Crate(files).cycles()[0].nodes, ["a", "b"])

    def test_test_modules_are_left_out_unless_asked(self):
        files = {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "pub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
            "b.rs": "pub struct B;\nfn f(_: crate::a::A) {}\n",
        }
        self.assertEqual(Crate(files).cycles(), [])
        self.assertEqual(Crate(files).cycles(tests=True)[0].nodes, ["a", "b"])

    def test_precise_capturing_visibility_and_external_paths_are_not_references(self):
        files = {
            "lib.rs": "pub mod a;\nmod b;\npub use naga;\n",
            "a.rs": "pub struct A;\npub(in crate::a) fn f() -> impl Sized + use<> {}\n"
            "fn g() {\n    let _ = ::std::mem::size_of::<u8>();\n    let _: crate::naga::Span;\n}\n",
            "b.rs": "use crate::a::A;\n",
        }
        self.assertEqual(Crate(files).cycles(), [])

    def test_files_mode_makes_every_file_a_node(self):
        files = {
            "lib.rs": "mod a;\nmod b;\n",
            "a/mod.rs": "mod x;\nmod y;\n",
            "a/x.rs": "pub struct X;\nfn f(_: crate::b::B) {}\n",
            "a/y.rs": "pub struct Y;\n",
            "b.rs": "pub struct B;\nfn g(_: crate::a::y::Y) {}\n",
        }
        # Top-level modules a and b import each other; the files a::x -> b -> a::y do not circle.
        self.assertEqual(Crate(files).cycles()[0].nodes, ["a", "b"])
        self.assertEqual(Crate(files).cycles(flat=True), [])

    def test_an_exported_macro_is_an_item_of_the_module_that_defines_it(self):
        # `#[macro_export]` puts `with_ty!` at the crate root (`crate::with_ty`), but the edge
        # goes to `value`, which writes it: with value -> emit, emit and value form a cycle
        # (and the crate root's own file is in none).
        files = {
            "lib.rs": "mod emit;\nmod value;\n",
            "value.rs": "#[macro_export]\nmacro_rules! with_ty {\n    () => {};\n}\nfn g() {\n    crate::emit::f();\n}\n",
            "emit.rs": "use crate::with_ty;\npub fn f() {\n    with_ty!();\n}\n",
        }
        self.assertEqual(Crate(files).edges(), {("crate", "emit", "value"): [1], ("crate", "value", "emit"): [6]})
        # A macro without `#[macro_export]` is not found at the root.
        files["value.rs"] = files["value.rs"].replace("#[macro_export]\n", "")
        self.assertEqual(Crate(files).cycles(), [])

    def test_exit_status(self):
        crate = Crate(THREE)
        code, out = crate.main()
        self.assertEqual(code, 1)
        self.assertIn("cycle 1 between its top-level modules, 3 modules: a, b, c", out)
        self.assertIn("a.rs:1: use crate::b::B", out)
        self.assertEqual(crate.main("--report")[0], 0)
        acyclic = Crate(dict(THREE, **{"c/inner.rs": "pub fn g() {}\n"}))
        self.assertEqual(acyclic.main(), (0, "fixture.rs: no cycles\nmodule cycles: none\n".replace("fixture.rs", acyclic.root)))


if __name__ == "__main__":
    unittest.main()
