//! Geometry shaders of `GL_ARB_geometry_shader4` / `GL_EXT_geometry_shader4`
//! (GLSL 1.10 - 1.30), which glslang does not know, rewritten as the GLSL 1.50
//! geometry shaders they mean, and the fixed-function varyings of compatibility
//! geometry shaders, before compiling.
//!
//! - the `#extension` line is blanked; `varying in` is `in`, `varying out` and a
//!   bare `varying` are `out` (this holds for every desktop GLSL geometry shader
//!   below 3.30, where `varying` is an output);
//! - `gl_VerticesIn` is the vertex count of the input primitive as a literal (it
//!   is a constant expression: array sizes use it);
//! - `gl_PositionIn[]`, `gl_PointSizeIn[]` and `gl_ClipDistanceIn[][]` are private
//!   arrays that `main` fills from `gl_in[]` first (a whole-array use, `length()`
//!   or passing one to a function then still works); a redeclared
//!   `gl_ClipDistanceIn` keeps its inner size;
//! - the fixed-function inputs `gl_FrontColorIn[]`, `gl_BackColorIn[]`,
//!   `gl_FrontSecondaryColorIn[]`, `gl_BackSecondaryColorIn[]`, `gl_TexCoordIn[][]`
//!   and `gl_FogFragCoordIn[]`, and GLSL 1.50's `gl_in[i].gl_FrontColor`, ... (the
//!   same values), are per-vertex inputs named `varysat_IN_COL0` ..., which land on
//!   the slots of the fixed-function varyings (`compat.rs`).
//!
//! The input primitive is program state in these extensions
//! (`GEOMETRY_INPUT_TYPE_ARB`), not part of the source: `gs_layout.rs` supplies the
//! extension's initial value.

/// Whether a line enables either geometry-shader-4 extension.
pub(crate) fn is_extension_line(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("#extension")
        && (t.contains("GL_ARB_geometry_shader4") || t.contains("GL_EXT_geometry_shader4"))
}

/// Whether the source enables either extension.
pub(crate) fn enables(src: &str) -> bool {
    src.lines().any(is_extension_line)
}

/// A line with `varying in` as `in` and `varying out` or a bare `varying` as `out`
/// (a geometry shader's storage qualifiers of GLSL 1.50).
pub(crate) fn varying_line(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = find_word(rest, "varying") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "varying".len()..];
        let next = after.trim_start();
        let explicit = ["in", "out"].into_iter().find(|q| {
            next.strip_prefix(q)
                .is_some_and(|t| !t.starts_with(is_ident))
        });
        match explicit {
            // `varying in` / `varying out`: the qualifier that follows stays.
            Some(_) => rest = next,
            None => {
                out.push_str("out");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The fixed-function per-vertex inputs: the name of `ARB_geometry_shader4`, the
/// `gl_in[]` member of GLSL 1.50 it equals, and the declaration standing for it.
const FIXED_INPUTS: &[(&str, &str, &str, &str)] = &[
    (
        "gl_FrontColorIn",
        "gl_FrontColor",
        "varysat_IN_COL0",
        "in vec4 varysat_IN_COL0[];",
    ),
    (
        "gl_BackColorIn",
        "gl_BackColor",
        "varysat_IN_BFC0",
        "in vec4 varysat_IN_BFC0[];",
    ),
    (
        "gl_FrontSecondaryColorIn",
        "gl_FrontSecondaryColor",
        "varysat_IN_COL1",
        "in vec4 varysat_IN_COL1[];",
    ),
    (
        "gl_BackSecondaryColorIn",
        "gl_BackSecondaryColor",
        "varysat_IN_BFC1",
        "in vec4 varysat_IN_BFC1[];",
    ),
    (
        "gl_TexCoordIn",
        "gl_TexCoord",
        "varysat_IN_TEX",
        "in vec4 varysat_IN_TEX[][8];",
    ),
    (
        "gl_FogFragCoordIn",
        "gl_FogFragCoord",
        "varysat_IN_FOGC",
        "in float varysat_IN_FOGC[];",
    ),
];

/// The source with every `gl_in[E].gl_FrontColor` (and the other fixed-function
/// members of `FIXED_INPUTS`) spelt `gl_FrontColorIn[E]`, so one rename covers
/// both spellings.
pub(crate) fn gl_in_members(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(at) = find_word(rest, "gl_in") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "gl_in".len()..];
        match fixed_member_access(after) {
            Some((index, name, used)) => {
                out.push_str(name);
                out.push_str(index);
                rest = &after[used..];
            }
            None => {
                out.push_str("gl_in");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// For the text after `gl_in`: the bracketed index, the `ARB_geometry_shader4`
/// name of the fixed-function member it selects and the bytes consumed, when it
/// is `[E].gl_FrontColor` or another member of `FIXED_INPUTS`.
fn fixed_member_access(after: &str) -> Option<(&str, &'static str, usize)> {
    let open = after.len() - after.trim_start().len();
    if !after[open..].starts_with('[') {
        return None;
    }
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in after[open..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let tail = &after[close + 1..];
    let dot = tail.trim_start().strip_prefix('.')?.trim_start();
    let len = dot.find(|c: char| !is_ident(c)).unwrap_or(dot.len());
    let member = &dot[..len];
    let (gs4_name, ..) = FIXED_INPUTS.iter().find(|(_, m, ..)| *m == member)?;
    let used = after.len() - dot.len() + len;
    Some((&after[open..=close], gs4_name, used))
}

/// The renames and declarations for the fixed-function per-vertex inputs a source
/// uses (`declares` says whether the shader redeclares one itself, as
/// `varying in vec4 gl_TexCoordIn[][2];`, which then keeps its sizes).
pub(crate) fn fixed_inputs(
    uses: &dyn Fn(&str) -> bool,
    declares: &dyn Fn(&str) -> bool,
) -> (Vec<(&'static str, String)>, String) {
    let mut renames = vec![];
    let mut decls = String::new();
    for (name, _, to, decl) in FIXED_INPUTS {
        if uses(name) {
            renames.push((*name, (*to).to_owned()));
            if !declares(name) {
                decls.push_str(decl);
                decls.push('\n');
            }
        }
    }
    (renames, decls)
}

/// What the per-vertex built-ins of a geometry shader become: identifier renames,
/// global declarations, and the statements `main` runs first.
#[derive(Default)]
pub(crate) struct VertexBuiltins {
    /// Identifier renames (`gl_VerticesIn` to the vertex count).
    pub renames: Vec<(&'static str, String)>,
    /// Declarations of the private arrays.
    pub decls: String,
    /// Statements that fill them from `gl_in[]`, on one line.
    pub prologue: String,
}

/// `GL_MAX_CLIP_DISTANCES` as glslang compiles it (and the size GL 3.0 guarantees).
const MAX_CLIP_DISTANCES: u32 = 8;

/// The rewrite of `gl_VerticesIn`, `gl_PositionIn`, `gl_PointSizeIn` and
/// `gl_ClipDistanceIn` for an input primitive of `vertices` vertices; `clip_size`
/// is the inner size of a shader's own `gl_ClipDistanceIn` declaration.
pub(crate) fn vertex_builtins(
    uses: &dyn Fn(&str) -> bool,
    vertices: u32,
    clip_size: Option<u32>,
) -> VertexBuiltins {
    let mut r = VertexBuiltins::default();
    if uses("gl_VerticesIn") {
        r.renames.push(("gl_VerticesIn", vertices.to_string()));
    }
    for (name, to, ty, member) in [
        ("gl_PositionIn", "varysat_PositionIn", "vec4", "gl_Position"),
        (
            "gl_PointSizeIn",
            "varysat_PointSizeIn",
            "float",
            "gl_PointSize",
        ),
    ] {
        if !uses(name) {
            continue;
        }
        r.renames.push((name, to.to_owned()));
        r.decls.push_str(&format!("{ty} {to}[{vertices}];\n"));
        for v in 0..vertices {
            r.prologue
                .push_str(&format!("{to}[{v}] = gl_in[{v}].{member}; "));
        }
    }
    if uses("gl_ClipDistanceIn") {
        let to = "varysat_ClipDistanceIn";
        r.renames.push(("gl_ClipDistanceIn", to.to_owned()));
        let size = match clip_size {
            Some(n) => n,
            None => {
                r.decls
                    .push_str(&format!("float {to}[{vertices}][{MAX_CLIP_DISTANCES}];\n"));
                MAX_CLIP_DISTANCES
            }
        };
        for v in 0..vertices {
            for k in 0..size {
                r.prologue.push_str(&format!(
                    "{to}[{v}][{k}] = gl_in[{v}].gl_ClipDistance[{k}]; "
                ));
            }
        }
    }
    r
}

/// A shader's own declaration of `gl_ClipDistanceIn` (`in float
/// gl_ClipDistanceIn[3][8];`, the sizes constants or `gl_MaxClipDistances`, the
/// outer one possibly empty), as the private array's declaration for `vertices`
/// vertices, and its inner size. `None` when the line is no such declaration.
pub(crate) fn clip_distance_declaration(line: &str, vertices: u32) -> Option<(String, u32)> {
    let t = line.trim();
    let t = t.strip_prefix("varying").map_or(t, str::trim_start);
    let t = t.strip_prefix("in")?.trim_start();
    let t = t.strip_prefix("float")?.trim_start();
    let t = t.strip_prefix("gl_ClipDistanceIn")?.trim_start();
    let (_outer, t) = bracketed(t)?;
    let (inner, t) = bracketed(t)?;
    if t.trim() != ";" {
        return None;
    }
    let size = match inner.trim() {
        "gl_MaxClipDistances" => MAX_CLIP_DISTANCES,
        n => n
            .parse()
            .ok()
            .filter(|n| (1..=MAX_CLIP_DISTANCES).contains(n))?,
    };
    Some((
        format!("float varysat_ClipDistanceIn[{vertices}][{size}];"),
        size,
    ))
}

/// `[X]rest` split into `X` and `rest`.
fn bracketed(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('[')?;
    let close = s.find(']')?;
    Some((&s[..close], s[close + 1..].trim_start()))
}

/// The source with `prologue` placed right after the `{` that opens `main`, on
/// the same line (line numbers do not move). `None` when there is no `main`.
pub(crate) fn insert_prologue(src: &str, prologue: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = find_word(&src[from..], "main") {
        let at = from + i + "main".len();
        let rest = src[at..].trim_start();
        if let Some(params) = rest.strip_prefix('(') {
            let close = params.find(')')?;
            let body = params[close + 1..].trim_start();
            if body.starts_with('{') {
                let brace = src.len() - body.len() + 1;
                return Some(format!("{} {prologue}{}", &src[..brace], &src[brace..]));
            }
        }
        from = at;
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Byte offset of the first occurrence of `word` as a whole identifier.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before_ok = !s[..at].chars().next_back().is_some_and(is_ident);
        let after_ok = !s[at + word.len()..].chars().next().is_some_and(is_ident);
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varying_qualifiers_become_in_and_out() {
        assert_eq!(varying_line("varying in float x[];"), "in float x[];");
        assert_eq!(varying_line("varying out vec4 c;"), "out vec4 c;");
        assert_eq!(varying_line("varying float v;"), "out float v;");
        assert_eq!(varying_line("varying int_t y;"), "out int_t y;");
        assert_eq!(varying_line("float varyings;"), "float varyings;");
    }

    #[test]
    fn gl_in_fixed_function_members_take_the_gs4_names() {
        let src = "c = gl_in[i + f(j[2])].gl_FrontColor + gl_in [0] . gl_TexCoord[1];\n\
                   p = gl_in[i].gl_Position;";
        assert_eq!(
            gl_in_members(src),
            "c = gl_FrontColorIn[i + f(j[2])] + gl_TexCoordIn[0][1];\np = gl_in[i].gl_Position;"
        );
    }

    #[test]
    fn vertex_builtins_are_filled_from_gl_in() {
        let src = "x = gl_PositionIn[1] * float(gl_VerticesIn);";
        let r = vertex_builtins(&|w| src.contains(w), 2, None);
        assert!(r.renames.contains(&("gl_VerticesIn", "2".to_owned())));
        assert_eq!(r.decls, "vec4 varysat_PositionIn[2];\n");
        assert_eq!(
            r.prologue,
            "varysat_PositionIn[0] = gl_in[0].gl_Position; varysat_PositionIn[1] = gl_in[1].gl_Position; "
        );
    }

    #[test]
    fn a_clip_distance_redeclaration_keeps_its_inner_size() {
        let (decl, size) =
            clip_distance_declaration("in float gl_ClipDistanceIn[3][2];", 3).expect("decl");
        assert_eq!(
            (decl.as_str(), size),
            ("float varysat_ClipDistanceIn[3][2];", 2)
        );
        let (_, size) = clip_distance_declaration(
            "varying in float gl_ClipDistanceIn[][gl_MaxClipDistances];",
            3,
        )
        .expect("decl");
        assert_eq!(size, 8);
        assert!(clip_distance_declaration("in float gl_ClipDistanceIn[3][k];", 3).is_none());
    }

    #[test]
    fn the_prologue_opens_main_on_its_line() {
        let src = "void f() {}\nvoid main ()\n{\n  g();\n}\n";
        assert_eq!(
            insert_prologue(src, "a = 1;").expect("main"),
            "void f() {}\nvoid main ()\n{ a = 1;\n  g();\n}\n"
        );
        assert!(insert_prologue("void f() {}", "a;").is_none());
    }
}
