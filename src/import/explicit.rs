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

/// What a GLSL source located explicitly, and its text (for error positions).
#[derive(Clone, Debug, Default)]
pub struct Explicit {
    vars: Vec<AstVar>,
    source: String,
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

    /// Where the source first names `word` (the declaration of a global), for an
    /// error message; `None` when it does not (a name the front end made up).
    pub(crate) fn position(&self, word: &str) -> Option<SrcLoc> {
        if word.is_empty() {
            return None;
        }
        for (i, line) in self.source.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut from = 0;
            while let Some(at) = code[from..].find(word).map(|a| a + from) {
                let before = code[..at].chars().next_back();
                let after = code[at + word.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if !ident(before) && !ident(after) {
                    let col = code[..at].chars().count() as u32 + 1;
                    return Some(SrcLoc {
                        line: i as u32 + 1,
                        col,
                    });
                }
                from = at + word.len();
            }
        }
        None
    }
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
    fn position_is_the_first_whole_word_outside_comments() {
        let src = "#version 450\n// ab is here\nout vec4 abc;\n  out vec4 ab;\n";
        let e = Explicit::from_ast("", src);
        assert_eq!(e.position("ab"), Some(SrcLoc { line: 4, col: 12 }));
        assert_eq!(e.position("zz"), None);
    }
}
