//! Oracle (b)'s text comparison: the WGSL the DSL emits against naga's re-emission of it
//! (parse, validate, write), after undoing the naga 30 behaviours FUZZING.md lists (each
//! pinned by a test of `tests/naga_findings.rs`, so that a rule goes when naga changes).
//!
//! [`canonical`] applies only these rules, to both texts:
//!
//! - **Names** (naga finding 2): every identifier the text declares (`fn`, `struct` and
//!   its members, parameters, `let`, `var`, `const`, `override`, `alias`) is renamed to
//!   `n0`, `n1`, ... in declaration order, each use to its declaration's name ([`rename`]).
//!   naga's writer appends `_` to names that end in a digit, numbers its temporaries (`_eN`,
//!   `local_N`) after its expression handles, which a re-parse renumbers, and makes a name
//!   that another function also has unique (`_e22_1`); a consistent renaming is all these
//!   change.
//! - **An empty `else`**: the front end gives a final `if` without `else` an
//!   `else { return; }`, which is empty once the `return;` goes.
//! - **The final `return;`** (naga finding 2): naga's front end ends every function without
//!   a return type with an explicit `return;`, into the branches of a final `if` or `switch`
//!   (`proc::ensure_block_returns`), so a `return;` right before a closing brace is dropped.
//! - **`enable wgpu_cooperative_matrix;` and `enable f16;`** (naga findings 5 and 6): naga's
//!   writer drops them from some re-parsed modules, so the emitted text's directive is
//!   dropped when the re-emitted text lacks it (and put back to parse the re-emission again:
//!   [`restore_directives`]).
//!
//! Anything else that differs is a failure of oracle (b), shown as the first differing line.

/// The identifiers of `text` with their byte ranges (WGSL identifiers: `[A-Za-z_][A-Za-z0-9_]*`;
/// numeric literals, including their suffixes and hex digits, are skipped).
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// The next non-space byte at or after `i`.
fn next_byte(text: &str, mut i: usize) -> Option<u8> {
    let b = text.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    b.get(i).copied()
}

/// The end of the parenthesised list that starts at the first `(` at or after `open`.
fn matching_paren(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The indices (into `toks`) of the identifiers `text` declares.
fn declarations(text: &str, toks: &[(usize, usize)]) -> std::collections::HashSet<usize> {
    let word = |k: usize| &text[toks[k].0..toks[k].1];
    let mut decl = std::collections::HashSet::new();
    let mut k = 0;
    while k < toks.len() {
        let w = word(k);
        match w {
            "let" | "const" | "fn" | "struct" | "override" | "alias" if k + 1 < toks.len() => {
                decl.insert(k + 1);
            }
            "var" => {
                // `var<storage, read_write> name` or `var name`: the first identifier after
                // the closing `>` (or right after `var`).
                let mut j = k + 1;
                if next_byte(text, toks[k].1) == Some(b'<') {
                    let close = text[toks[k].1..].find('>').map(|p| p + toks[k].1);
                    while j < toks.len() && close.is_some_and(|c| toks[j].0 < c) {
                        j += 1;
                    }
                }
                if j < toks.len() {
                    decl.insert(j);
                }
            }
            _ => {}
        }
        if w == "fn" && k + 1 < toks.len() {
            // Parameters: identifiers followed by `:` before the list's closing `)`.
            let close = matching_paren(text, toks[k + 1].1);
            let mut j = k + 2;
            while j < toks.len() && toks[j].0 < close {
                if next_byte(text, toks[j].1) == Some(b':') {
                    decl.insert(j);
                }
                j += 1;
            }
        }
        if w == "struct" && k + 1 < toks.len() {
            let open = toks[k + 1].1;
            let close = text[open..].find('}').map_or(text.len(), |p| p + open);
            let mut j = k + 2;
            while j < toks.len() && toks[j].0 < close {
                // A member `name: T`, not an attribute's argument.
                let before = text[..toks[j].0].trim_end();
                if next_byte(text, toks[j].1) == Some(b':') && !before.ends_with('(') {
                    decl.insert(j);
                }
                j += 1;
            }
        }
        k += 1;
    }
    decl
}

/// `text` with each declaration's name replaced by `n0`, `n1`, ... in the order of the
/// declarations, and each use by its declaration's (the last one before it: naga's writer
/// makes names unique within a function, and a function's names may repeat another's).
pub fn rename(text: &str) -> String {
    let toks = tokens(text);
    let decl = declarations(text, &toks);
    let names: std::collections::HashSet<&str> =
        decl.iter().map(|&k| &text[toks[k].0..toks[k].1]).collect();
    let mut map: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    let mut next = 0;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (k, &(s, e)) in toks.iter().enumerate() {
        let w = &text[s..e];
        if !names.contains(w) {
            continue;
        }
        let canon = if decl.contains(&k) || !map.contains_key(w) {
            let c = format!("n{next}");
            next += 1;
            map.insert(w, c.clone());
            c
        } else {
            map[w].clone()
        };
        out.push_str(&text[at..s]);
        out.push_str(&canon);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

/// `text` without a `return;` that ends a block (the line after it closes the block:
/// `}` or `} else {`, at any depth). naga's front end adds one at the end of every block in
/// tail position of a function without a return type, recursively into the branches of a
/// final `if` or `switch` (`proc::ensure_block_returns`), and an `else` to a final `if`
/// without one: an `else` left empty goes too.
pub fn drop_final_returns(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        if l.trim() == "return;"
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim() == "}" || n.trim() == "} else {")
        {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    // An `else` left empty (the front end gives a final `if` without one an
    // `else { return; }`).
    let lines: Vec<&str> = out.lines().collect();
    let mut kept = String::with_capacity(out.len());
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim() == "} else {"
            && lines.get(i + 1).is_some_and(|n| {
                n.trim() == "}" && n.len() - n.trim_start().len() == l.len() - l.trim_start().len()
            })
        {
            kept.push_str(&l[..l.len() - l.trim_start().len()]);
            kept.push_str("}\n");
            i += 2;
            continue;
        }
        kept.push_str(l);
        kept.push('\n');
        i += 1;
    }
    kept
}

/// The directive naga's writer drops from a module with cooperative matrices (naga finding 5).
pub const COOP_ENABLE: &str = "enable wgpu_cooperative_matrix;";
/// The directive naga's writer drops from a module whose only `f16`s are literals (naga
/// finding 6: its front end does not put an `f16` literal's type into the type arena).
pub const F16_ENABLE: &str = "enable f16;";
/// The directives naga's writer may drop.
pub const DROPPED_DIRECTIVES: [&str; 2] = [COOP_ENABLE, F16_ENABLE];

/// `again` with each directive of [`DROPPED_DIRECTIVES`] that `wgsl` has and `again` lacks
/// put back in front, so that it parses.
pub fn restore_directives(wgsl: &str, again: &str) -> String {
    let mut out = String::new();
    for d in DROPPED_DIRECTIVES {
        if wgsl.lines().any(|l| l.trim() == d) && !again.lines().any(|l| l.trim() == d) {
            out.push_str(d);
            out.push('\n');
        }
    }
    out.push_str(again);
    out
}

/// The emitted `wgsl` and naga's re-emission `again`, each with the rules applied.
pub fn canonical(wgsl: &str, again: &str) -> (String, String) {
    let strip = |t: &str| -> String {
        t.lines()
            .filter(|l| {
                !DROPPED_DIRECTIVES
                    .iter()
                    .any(|d| l.trim() == *d && !again.lines().any(|a| a.trim() == *d))
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    // Without a dropped directive the blank line after the directives leads.
    let c = |t: &str| rename(&drop_final_returns(strip(t).trim_start()));
    (c(wgsl), c(again))
}

/// The first line where `a` and `b` differ (1-based), with both lines.
pub fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    (0..la.len().max(lb.len())).find_map(|i| {
        let (x, y) = (la.get(i).copied(), lb.get(i).copied());
        (x != y).then(|| {
            (
                i + 1,
                x.unwrap_or("<end>").to_string(),
                y.unwrap_or("<end>").to_string(),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_is_consistent_and_leaves_the_rest() {
        let a = "fn f(a_1: u32) -> u32 {\n    let _e6 = a_1 + 1u;\n    return _e6;\n}\n";
        let b = "fn f(a_1_: u32) -> u32 {\n    let _e7 = a_1_ + 1u;\n    return _e7;\n}\n";
        assert_eq!(rename(a), rename(b));
        assert!(rename(a).contains("n1 + 1u"), "{}", rename(a));
        let c = "fn f(a_1: u32) -> u32 {\n    let _e6 = a_1 + 2u;\n    return _e6;\n}\n";
        assert_ne!(rename(a), rename(c));
        let d = "fn f(a_1: u32) -> u32 {\n    let _e6 = a_1 + 1u;\n    return a_1;\n}\n";
        assert_ne!(rename(a), rename(d));
        // The same temporary name in two functions, made unique in one text only.
        let e = "fn f() {\n    let _e2 = x;\n}\nfn main(@builtin(local_invocation_index) i: u32) {\n    let _e2 = i;\n    y = _e2;\n}\n";
        let f = "fn f() {\n    let _e2_ = x;\n}\nfn main(@builtin(local_invocation_index) i: u32) {\n    let _e2_1 = i;\n    y = _e2_1;\n}\n";
        assert_eq!(rename(e), rename(f));
        assert!(rename(e).contains("let n4 = n3;"), "{}", rename(e));
    }

    #[test]
    fn only_returns_that_end_a_block_go() {
        let t = "fn f() {\n    if c {\n        return;\n    } else {\n        x = 1;\n        return;\n    }\n    return;\n}\n";
        assert_eq!(
            drop_final_returns(t),
            "fn f() {\n    if c {\n    } else {\n        x = 1;\n    }\n}\n"
        );
        let v = "fn f() {\n    if c {\n        x = 1;\n    } else {\n        return;\n    }\n}\n";
        assert_eq!(
            drop_final_returns(v),
            "fn f() {\n    if c {\n        x = 1;\n    }\n}\n"
        );
        let u = "fn f() -> u32 {\n    return 1u;\n}\n";
        assert_eq!(drop_final_returns(u), u);
    }
}
