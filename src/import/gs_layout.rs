//! Default layout declarations for a GLSL geometry shader that declares no input
//! primitive, output primitive or `max_vertices`.
//!
//! GL takes none of the three from the API: a geometry shader without them does not
//! link, and glslang refuses to compile it. Such shaders still occur — compiler tests
//! that are never linked, and shaders whose layout sits in another compilation unit of
//! the same stage — so import adds what is missing, with a warning naming what it
//! assumed:
//!
//! - input primitive `triangles`: the primitive of the draw that would feed the
//!   shader is unknown; triangles are what most draws produce, and the input array
//!   length (3) is the one `gl_in.length()` has for them;
//! - output primitive `points`: the varyings of each emitted vertex are the same
//!   whatever the strip assembly, and points assemble nothing;
//! - `max_vertices = 256`: the smallest `GL_MAX_GEOMETRY_OUTPUT_VERTICES` every GL
//!   implementation supports, so it never limits a shader that runs anywhere.
//!
//! A `GL_ARB_geometry_shader4` / `GL_EXT_geometry_shader4` shader takes all three
//! from the program (`glProgramParameteri`), never from the source: it gets the
//! extension's initial program state instead, input `triangles` (also the default
//! above) and output `triangle_strip`; the initial `GEOMETRY_VERTICES_OUT` is 0,
//! which does not link, so `max_vertices` is 256 as above.
//!
//! The declarations go after the `#version` / `#extension` preamble, followed by a
//! `#line` directive so reported line numbers stay those of the original file.

/// The source with the missing layout declarations added and what was assumed,
/// or `None` when the shader declares all three. `gs4`: the shader is a
/// `GL_*_geometry_shader4` one (output `triangle_strip` then).
pub(crate) fn add_missing(src: &str, gs4: bool) -> Option<(String, String)> {
    let declared = declared_layouts(src);
    let mut decls = String::new();
    let mut assumed = vec![];
    if !declared.input_primitive {
        decls.push_str("layout(triangles) in;\n");
        assumed.push("input primitive `triangles`");
    }
    if !declared.output_primitive && gs4 {
        decls.push_str("layout(triangle_strip) out;\n");
        assumed.push("output primitive `triangle_strip`");
    } else if !declared.output_primitive {
        decls.push_str("layout(points) out;\n");
        assumed.push("output primitive `points`");
    }
    if !declared.max_vertices {
        decls.push_str("layout(max_vertices = 256) out;\n");
        assumed.push("`max_vertices = 256`");
    }
    if assumed.is_empty() {
        return None;
    }
    let note = format!(
        "the geometry shader declares no {}; assumed {}{}",
        if assumed.len() == 1 {
            "layout for it"
        } else {
            "complete layout"
        },
        assumed.join(", "),
        if gs4 {
            " (GL_ARB_geometry_shader4 sets them in the program; its initial state)"
        } else {
            ""
        }
    );
    Some((insert_after_preamble(src, &decls), note))
}

/// The vertex count of the input primitive a source declares, or of the default
/// (`triangles`) when it declares none.
pub(crate) fn input_vertices(src: &str) -> u32 {
    match declared_layouts(src).input_name.as_deref() {
        Some("points") => 1,
        Some("lines") => 2,
        Some("lines_adjacency") => 4,
        Some("triangles_adjacency") => 6,
        _ => 3,
    }
}

/// Which of the three geometry-shader layouts a source declares.
#[derive(Default)]
struct Declared {
    input_primitive: bool,
    /// The input primitive's name, when declared.
    input_name: Option<String>,
    output_primitive: bool,
    max_vertices: bool,
}

/// Scans `layout(...) in;` and `layout(...) out;` declarations (the qualifier
/// list, then the storage word, then `;`).
fn declared_layouts(src: &str) -> Declared {
    let mut d = Declared::default();
    let code = strip_comments(src);
    let mut rest = code.as_str();
    while let Some(at) = find_word(rest, "layout") {
        rest = &rest[at + "layout".len()..];
        let Some(open) = rest.trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(close) = open.find(')') else {
            break;
        };
        let qualifiers = &open[..close];
        let after = open[close + 1..].trim_start();
        let storage = ["in", "out"].into_iter().find(|s| {
            after
                .strip_prefix(s)
                .is_some_and(|t| t.trim_start().starts_with(';'))
        });
        let words: Vec<&str> = qualifiers
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let has = |names: &[&str]| words.iter().any(|w| names.contains(w));
        match storage {
            Some("in") => {
                let primitives = [
                    "points",
                    "lines",
                    "lines_adjacency",
                    "triangles",
                    "triangles_adjacency",
                ];
                if let Some(p) = words.iter().find(|w| primitives.contains(w)) {
                    d.input_primitive = true;
                    d.input_name = Some((*p).to_owned());
                }
            }
            Some("out") => {
                d.output_primitive |= has(&["points", "line_strip", "triangle_strip"]);
                d.max_vertices |= has(&["max_vertices"]);
            }
            _ => {}
        }
        rest = &open[close + 1..];
    }
    d
}

/// Byte offset of the first occurrence of `word` as a whole identifier.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before_ok = !s[..at].chars().next_back().is_some_and(ident);
        let after_ok = !s[at + word.len()..].chars().next().is_some_and(ident);
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The source with `//` and `/* */` comments blanked out.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Inserts `decls` after the last `#version` / `#extension` line and restores the
/// line numbering of what follows with `#line` (counting `#line` directives already
/// in the source, such as those the desktop-GL rewrite writes).
fn insert_after_preamble(src: &str, decls: &str) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let is_preamble = |l: &str| {
        let t = l.trim_start();
        t.starts_with("#version") || t.starts_with("#extension")
    };
    let split = lines
        .iter()
        .rposition(|l| is_preamble(l))
        .map_or(0, |i| i + 1);
    // The logical line number of line `split` (1-based, as glslang counts them).
    let mut logical = 1u32;
    for l in &lines[..split] {
        logical = match l.trim_start().strip_prefix("#line") {
            Some(n) => n.trim().parse().unwrap_or(logical + 1),
            None => logical + 1,
        };
    }
    let mut out = String::new();
    for l in &lines[..split] {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(decls);
    out.push_str(&format!("#line {logical}\n"));
    for l in &lines[split..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_layout_is_left_alone() {
        let src = "#version 150\nlayout(lines) in;\nlayout(line_strip, max_vertices = 2) out;\nvoid main() {}\n";
        assert!(add_missing(src, false).is_none());
        assert_eq!(input_vertices(src), 2);
    }

    #[test]
    fn split_output_layouts_count_and_comments_do_not() {
        let src = "#version 150\n// layout(points) in;\nlayout(triangle_strip) out;\nlayout(max_vertices=3) out;\nvoid main() {}\n";
        let (out, note) = add_missing(src, false).expect("input primitive missing");
        assert_eq!(input_vertices(src), 3);
        assert!(out.contains("layout(triangles) in;"));
        assert!(!out.contains("layout(points) out;"));
        assert!(note.contains("input primitive `triangles`"), "{note}");
        assert!(!note.contains("max_vertices"), "{note}");
    }

    #[test]
    fn geometry_shader4_shaders_get_the_initial_program_state() {
        let src = "#version 120\nvoid main() {}\n";
        let (out, note) = add_missing(src, true).expect("nothing declared");
        assert!(out.contains("layout(triangles) in;"), "{out}");
        assert!(out.contains("layout(triangle_strip) out;"), "{out}");
        assert!(note.contains("initial state"), "{note}");
    }

    #[test]
    fn declarations_follow_the_preamble_and_keep_line_numbers() {
        let src = "#version 450\n#line 2\n#extension GL_foo : require\nvoid main() {}\n";
        let (out, _) = add_missing(src, false).expect("nothing declared");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], "#extension GL_foo : require");
        assert_eq!(lines[3], "layout(triangles) in;");
        // `#extension` is logical line 2, so `void main` must be line 3 again.
        assert_eq!(lines[6], "#line 3");
        assert_eq!(lines[7], "void main() {}");
    }
}
