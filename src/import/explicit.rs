//! Which interface variables a GLSL source located explicitly
//! (`layout(location = N)` on the variable, the block or its members).
//!
//! GL links those by location and the rest by name (`link.rs`), but the SPIR-V
//! glslang writes does not say which locations the source chose: `--aml` gives every
//! unlocated varying a location too. glslang's AST dump (`-i`, printed by the same
//! compile that writes the SPIR-V) does: its "Linker Objects" list holds each global
//! with the qualifiers the source gave, before automatic locations, one per line:
//!
//! ```text
//! 0:?     'a' (layout( location=0 component=1) smooth out highp float)
//! 0:?     'blk' ( out block{layout( location=3) out highp 4-component vector of float x, ...})
//! ```
//!
//! A block's own location shows on the variable (arrays of blocks) or on every member
//! (glslang hands it down), so a block counts as located when either has one.

use rspirv::spirv::StorageClass;

use super::module::{Module, Ty};
use crate::ir::SrcLoc;

/// One `in` or `out` global of glslang's AST dump.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AstVar {
    output: bool,
    /// The instance name; `anon@N` for an anonymous block.
    name: String,
    /// The source gave it (or one of its block members) a location.
    located: bool,
    /// Member names of a block, in order (empty for other variables).
    members: Vec<String>,
}

/// What a GLSL source located explicitly, its `#version` and its text (for error
/// positions).
#[derive(Clone, Debug, Default)]
pub struct Explicit {
    vars: Vec<AstVar>,
    source: String,
    /// The source's GLSL version, as written (before the desktop rewrite).
    pub(crate) version: GlslVersion,
}

/// A `#version` line: its number and whether it is GLSL ES.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GlslVersion {
    pub es: bool,
    pub number: u32,
}

impl GlslVersion {
    /// The version a source declares; 1.10 (desktop) without a `#version` line, as
    /// GL takes it (1.00 for ES has a `#version 100`).
    pub(crate) fn of(source: &str) -> GlslVersion {
        let line = source
            .lines()
            .map(str::trim_start)
            .find(|l| l.starts_with("#version"));
        let mut words = line.into_iter().flat_map(|l| l.split_whitespace()).skip(1);
        let number = words.next().and_then(|n| n.parse().ok()).unwrap_or(110);
        let es = words.next() == Some("es") || number == 100;
        GlslVersion { es, number }
    }
}

impl Explicit {
    /// Reads the "Linker Objects" of glslang's `-i` output; `source` is the file as
    /// the user wrote it.
    pub(crate) fn from_ast(ast: &str, source: &str) -> Explicit {
        let mut vars: Vec<AstVar> = vec![];
        let mut in_objects = false;
        for line in ast.lines() {
            if line.trim_end().ends_with("Linker Objects") {
                in_objects = true;
                continue;
            }
            // The section ends at the first line that is not part of the tree
            // (initializers of constants follow their object, numbered `0:N`).
            if !line.starts_with("0:") {
                in_objects = false;
                continue;
            }
            if let Some(v) = in_objects.then(|| parse_object(line)).flatten() {
                // The dump lists the objects once per compile and once linked.
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
        }
        Explicit {
            vars,
            source: source.to_owned(),
            version: GlslVersion::of(source),
        }
    }

    /// Whether the source located interface variable `var` of `m` explicitly.
    /// Anonymous blocks are found by their member names (GLSL makes those global,
    /// so no two blocks of one direction share them).
    pub(crate) fn located(&self, m: &Module, var: u32) -> bool {
        let Some(g) = m.vars.get(&var) else {
            return false;
        };
        let output = g.class == StorageClass::Output;
        let name = m.name(var);
        let found = if name.is_empty() {
            let members = block_member_names(m, g.ty);
            self.vars
                .iter()
                .find(|v| v.output == output && v.name.starts_with("anon@") && v.members == members)
        } else {
            self.vars
                .iter()
                .find(|v| v.output == output && v.name == name)
        };
        found.is_some_and(|v| v.located)
    }

    /// Where the source declares the global `word` (an interface variable, or the
    /// block name of an anonymous block), for an error message: its first
    /// occurrence at global scope (outside braces and parentheses), outside
    /// comments and preprocessor lines (a comment, a struct or block member, a
    /// local or a parameter may use the name earlier). `None` when there is none (a name the front end made up).
    pub(crate) fn position(&self, word: &str) -> Option<SrcLoc> {
        if word.is_empty() {
            return None;
        }
        let code = blank_comments(&self.source);
        let mut depth = 0u32;
        for (i, line) in code.lines().enumerate() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            let mut chars = line.char_indices().peekable();
            while let Some((at, c)) = chars.next() {
                match c {
                    '{' | '(' => depth += 1,
                    '}' | ')' => depth = depth.saturating_sub(1),
                    c if c.is_alphabetic() || c == '_' => {
                        let mut end = at + c.len_utf8();
                        while let Some((j, d)) = chars.peek().copied() {
                            if !(d.is_alphanumeric() || d == '_') {
                                break;
                            }
                            end = j + d.len_utf8();
                            chars.next();
                        }
                        if depth == 0 && &line[at..end] == word {
                            let col = line[..at].chars().count() as u32 + 1;
                            return Some(SrcLoc {
                                line: i as u32 + 1,
                                col,
                            });
                        }
                    }
                    // A number's letters (`1e5`, `2u`) are not identifiers.
                    c if c.is_ascii_digit() => {
                        while chars
                            .peek()
                            .is_some_and(|(_, d)| d.is_alphanumeric() || *d == '_' || *d == '.')
                        {
                            chars.next();
                        }
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

/// The source with every comment's characters (but its line breaks) replaced by
/// blanks, so lines and columns stay those of the source.
fn blank_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(c) = rest.chars().next() {
        let comment = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if let Some(body) = rest.strip_prefix("/*") {
            body.find("*/").map_or(rest.len(), |e| e + 4)
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        for ch in rest[..comment].chars() {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
        rest = &rest[comment..];
    }
    out
}

/// The lines of glslang's AST dump that [`Explicit::from_ast`] reads (the "Linker
/// Objects" sections, each closed by an empty line), so a cache keeps those only:
/// `from_ast` of them is `from_ast` of the whole dump.
pub(crate) fn linker_objects(ast: &str) -> String {
    let mut out = String::new();
    let mut in_objects = false;
    for line in ast.lines() {
        if line.trim_end().ends_with("Linker Objects") {
            in_objects = true;
        } else if !line.starts_with("0:") {
            if in_objects {
                out.push('\n');
            }
            in_objects = false;
            continue;
        }
        if in_objects {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The member names of a block variable's type (through array dimensions).
fn block_member_names(m: &Module, mut ty: u32) -> Vec<String> {
    while let Some(Ty::Array { elem, .. }) = m.types.get(&ty) {
        ty = *elem;
    }
    match m.types.get(&ty) {
        Some(Ty::Struct { members }) => (0..members.len() as u32)
            .map(|i| m.member_names.get(&(ty, i)).cloned().unwrap_or_default())
            .collect(),
        _ => vec![],
    }
}

/// One linker object: `0:?     'NAME' (QUALIFIERS TYPE)`; `None` unless it is an
/// `in` or `out` variable.
fn parse_object(line: &str) -> Option<AstVar> {
    let rest = line.strip_prefix("0:?")?.trim_start();
    let rest = rest.strip_prefix('\'')?;
    let end = rest.find('\'')?;
    let name = rest[..end].to_owned();
    let ty = rest[end + 1..].trim();
    let ty = ty.strip_prefix('(')?.strip_suffix(')')?;
    // The variable's own qualifiers come before a block's or struct's braces.
    let (head, body) = match ty.find('{') {
        Some(b) => (&ty[..b], Some(&ty[b + 1..])),
        None => (ty, None),
    };
    let words: Vec<&str> = head
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .collect();
    let output = if words.contains(&"out") {
        true
    } else if words.contains(&"in") {
        false
    } else {
        return None;
    };
    let mut located = has_location(head);
    let mut members = vec![];
    if head.trim_end().ends_with("block") {
        for member in split_members(body.unwrap_or("")) {
            let own = member.split('{').next().unwrap_or("");
            located |= has_location(own);
            let ident = |c: char| c.is_alphanumeric() || c == '_';
            let trimmed = member.trim_end_matches(|c: char| !ident(c));
            let start = trimmed.rfind(|c: char| !ident(c)).map_or(0, |i| i + 1);
            members.push(trimmed[start..].to_owned());
        }
    }
    Some(AstVar {
        output,
        name,
        located,
        members,
    })
}

/// Whether qualifier text holds a `layout( ... location=N ...)`.
fn has_location(qualifiers: &str) -> bool {
    qualifiers.find("layout(").is_some_and(|at| {
        qualifiers[at..]
            .split(')')
            .next()
            .unwrap_or("")
            .contains("location=")
    })
}

/// The members of a block's body (the text after its `{`), split at the commas
/// outside nested braces; stops at the block's closing brace.
fn split_members(body: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut start) = (0u32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(&body[start..i]);
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&body[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const AST: &str = "\
0:?   Linker Objects
0:?     'a' (layout( location=0) smooth out highp 4-component vector of float)
0:?     'N' ( specialization-constant const highp int)
0:3       add ( specialization-constant const highp int)
0:?     'c' ( smooth out highp 2-component vector of float)
0:?     'blk' ( out block{layout( location=3) out highp 4-component vector of float x, layout( location=5 component=1) out highp float y})
0:?     'blk2' ( out block{ out highp 4-component vector of float p,  out structure{ global float f} s})
0:?     'anon@0' (layout( location=4) in 3-element array of block{ in highp 4-component vector of float q,  in highp 2X2 matrix of float m})
0:?     'u' (layout( location=2) uniform highp float)
0:?     'gl_VertexID' ( gl_VertexId int VertexId)
";

    fn var(e: &Explicit, name: &str) -> AstVar {
        e.vars.iter().find(|v| v.name == name).cloned().unwrap()
    }

    #[test]
    fn reads_locations_of_variables_blocks_and_members() {
        let e = Explicit::from_ast(AST, "");
        assert!(var(&e, "a").located && var(&e, "a").output);
        assert!(!var(&e, "c").located);
        let blk = var(&e, "blk");
        assert!(blk.located);
        assert_eq!(blk.members, ["x", "y"]);
        let blk2 = var(&e, "blk2");
        assert!(!blk2.located);
        assert_eq!(blk2.members, ["p", "s"]);
        let anon = var(&e, "anon@0");
        assert!(anon.located && !anon.output);
        assert_eq!(anon.members, ["q", "m"]);
        // Uniforms and built-ins are not varyings.
        assert!(e
            .vars
            .iter()
            .all(|v| v.name != "u" && v.name != "gl_VertexID"));
    }

    #[test]
    fn linker_objects_keep_what_from_ast_reads() {
        let dump = format!("s.vert\nShader version: 450\n0:? Sequence\n0:3   'a' (out float)\n{AST}\nLinked vertex stage:\n\n{AST}");
        let kept = linker_objects(&dump);
        assert!(!kept.contains("Sequence") && !kept.contains("Linked"));
        let (full, short) = (Explicit::from_ast(&dump, ""), Explicit::from_ast(&kept, ""));
        assert_eq!(full.vars, short.vars);
        assert_eq!(full.vars.len(), 5);
    }

    #[test]
    fn position_is_the_declaration_at_global_scope() {
        let src = "#version 450\n// ab is here\nout vec4 abc;\n  out vec4 ab;\n";
        let e = Explicit::from_ast("", src);
        assert_eq!(e.position("ab"), Some(SrcLoc { line: 4, col: 12 }));
        assert_eq!(e.position("zz"), None);
        // Earlier uses in a block comment, a macro, a struct member, a named
        // block's member and a function's parameter and local do not count.
        let src = "#version 450\n#define col (col0)\n/* col\n col */ struct S { vec4 col; };\n\
                   uniform U { vec4 col; } u;\nvec4 f(vec4 col) { vec4 col2 = col; return col2; }\n\
                   /* x */ in vec4 col;\n";
        let e = Explicit::from_ast("", src);
        assert_eq!(e.position("col"), Some(SrcLoc { line: 7, col: 17 }));
        // A comment with multi-byte characters before it keeps the column in characters.
        let e = Explicit::from_ast("", "/* é */ out float q;\n");
        assert_eq!(e.position("q"), Some(SrcLoc { line: 1, col: 19 }));
    }
}
