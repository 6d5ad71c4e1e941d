//! Desktop GLSL 1.x texture built-ins and `GL_EXT_gpu_shader4` spelt the core way.
//!
//! GLSL before 1.30 (and `GL_EXT_gpu_shader4`, which glslang does not support)
//! names a texture lookup by its sampler dimension: `texture2DProjLod`,
//! `shadow2DArray`, `texelFetch2DOffset`, `textureSize1D`, `texture2DRectGrad` …;
//! GLSL 1.30 dropped the dimension, which the sampler's type already gives. The
//! rename keeps the lookup's variant (`Proj`, `Lod`, `Grad`, `Offset`, in that
//! order). A `shadow*` lookup returned a `vec4` in 1.x (the comparison result in
//! r, g and b, alpha 1: the default `DEPTH_TEXTURE_MODE` luminance), where the core
//! form returns a `float`, so it is wrapped in `varysat_shadow4`, which rebuilds
//! that vector. `unsigned int` (a `GL_EXT_gpu_shader4` spelling) becomes `uint`.
//! The `#extension` lines of [`CORE_EXTENSIONS`] are blanked: glslang rejects the
//! extensions, and everything they add is core in the version the rewrite
//! compiles as (4.50).

/// Extensions glslang does not accept whose features are all core GLSL 4.50:
/// `GL_EXT_gpu_shader4` (1.30), `GL_ARB_shader_precision` (4.10, precision
/// guarantees only, no syntax), `GL_ARB_arrays_of_arrays` and
/// `GL_ARB_fragment_layer_viewport`, `GL_ARB_texture_query_levels` (4.30).
pub(crate) const CORE_EXTENSIONS: &[&str] = &[
    "GL_EXT_gpu_shader4",
    "GL_ARB_shader_precision",
    "GL_ARB_arrays_of_arrays",
    "GL_ARB_fragment_layer_viewport",
    "GL_ARB_texture_query_levels",
];

/// Whether a line enables one of [`CORE_EXTENSIONS`].
pub(crate) fn enables_core_extension(line: &str) -> bool {
    core_extension_of(line).is_some()
}

/// The [`CORE_EXTENSIONS`] entry a `#extension` line names, if any.
fn core_extension_of(line: &str) -> Option<&'static str> {
    let rest = line.trim_start().strip_prefix("#extension")?;
    let name = rest.split(':').next().unwrap_or("").trim();
    CORE_EXTENSIONS.iter().copied().find(|e| *e == name)
}

/// What replaces the `#extension` line of a [`CORE_EXTENSIONS`] entry: an empty
/// line (glslang refuses to `#define` a `GL_` name, so a shader testing the
/// extension's macro sees it undefined).
pub(crate) fn core_extension_replacement(line: &str) -> Option<String> {
    core_extension_of(line).map(|_| String::new())
}

/// The helper that gives a core shadow lookup its 1.x `vec4` result.
pub(crate) const SHADOW4_DECL: &str =
    "vec4 varysat_shadow4(float r) { return vec4(r, r, r, 1.0); }\n";

const DIMENSIONS: &[&str] = &[
    "1DArray",
    "2DArray",
    "2DRect",
    "1D",
    "2D",
    "3D",
    "CubeArray",
    "Cube",
    "Buffer",
];

/// The core name of a dimension-named texture built-in (`texture2DProjLod` ->
/// `textureProjLod`), or `None` when `id` is not one.
pub(crate) fn core_name(id: &str) -> Option<String> {
    let (family, rest) = ["textureSize", "texelFetch", "texture", "shadow"]
        .iter()
        .find_map(|f| id.strip_prefix(f).map(|r| (*f, r)))?;
    let variant = DIMENSIONS.iter().find_map(|d| rest.strip_prefix(d))?;
    let valid = match family {
        "textureSize" => variant.is_empty(),
        "texelFetch" => matches!(variant, "" | "Offset"),
        _ => is_lookup_variant(variant),
    };
    let core_family = if family == "shadow" {
        "texture"
    } else {
        family
    };
    valid.then(|| format!("{core_family}{variant}"))
}

/// `Proj`? then one of `Lod`/`Grad`? then `Offset`? (each at most once, in order).
fn is_lookup_variant(v: &str) -> bool {
    let v = v.strip_prefix("Proj").unwrap_or(v);
    let v = v
        .strip_prefix("Lod")
        .or_else(|| v.strip_prefix("Grad"))
        .unwrap_or(v);
    let v = v.strip_prefix("Offset").unwrap_or(v);
    v.is_empty()
}

/// Whether `id` is a 1.x shadow lookup (`shadow2DProj`, …), whose result needs
/// [`SHADOW4_DECL`].
fn is_shadow_lookup(id: &str) -> bool {
    id.starts_with("shadow") && core_name(id).is_some()
}

/// Wraps every shadow lookup call in `varysat_shadow4( … )`, its arguments
/// possibly spanning lines (line breaks are kept, so line numbers do not move).
/// Returns the new source and whether anything was wrapped.
pub(crate) fn wrap_shadow_calls(src: &str) -> (String, bool) {
    let mut out = String::with_capacity(src.len());
    let mut closes: Vec<usize> = vec![]; // paren depths at which to close a wrapper
    let mut depth = 0usize;
    let mut wrapped = false;
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // Comments are copied untouched: their parentheses need not balance.
        if let Some(end) = comment_end(src, i) {
            out.push_str(&src[i..end]);
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let id = &src[start..i];
            let calls = src[i..].trim_start().starts_with('(');
            if calls && is_shadow_lookup(id) {
                out.push_str("varysat_shadow4(");
                closes.push(depth);
                wrapped = true;
            }
            out.push_str(id);
            continue;
        }
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                out.push(')');
                i += 1;
                if closes.last() == Some(&depth) {
                    closes.pop();
                    out.push(')');
                }
                continue;
            }
            _ => {}
        }
        // Copy one whole character (the source may hold non-ASCII comments).
        let len = src[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&src[i..i + len]);
        i += len;
    }
    (out, wrapped)
}

/// Where the comment starting at byte `i` ends (after `*/`, or before the line
/// break of a `//` comment), if one starts there.
fn comment_end(src: &str, i: usize) -> Option<usize> {
    let rest = &src[i..];
    if rest.starts_with("//") {
        return Some(i + rest.find('\n').unwrap_or(rest.len()));
    }
    if let Some(body) = rest.strip_prefix("/*") {
        return Some(i + body.find("*/").map_or(rest.len(), |e| e + 4));
    }
    None
}

/// `unsigned int` as `uint`, and a [`CORE_EXTENSIONS`] line blanked.
pub(crate) fn gpu_shader4_line(line: &str) -> String {
    if let Some(define) = core_extension_replacement(line) {
        return define;
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("unsigned") {
        let before_ok = !rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tail = &rest[at + "unsigned".len()..];
        let gap = tail.len() - tail.trim_start().len();
        let is_type = before_ok
            && gap > 0
            && tail.trim_start().starts_with("int")
            && !tail.trim_start()[3..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_type {
            out.push_str(&rest[..at]);
            out.push_str("uint");
            rest = &tail[gap + 3..];
        } else {
            out.push_str(&rest[..at + "unsigned".len()]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimension_named_lookups_get_their_core_names() {
        for (from, to) in [
            ("texture2D", "texture"),
            ("texture2DProjLod", "textureProjLod"),
            ("texture1DArrayGradOffset", "textureGradOffset"),
            ("texture2DRectProjGradOffset", "textureProjGradOffset"),
            ("textureCubeLod", "textureLod"),
            ("shadow2DArray", "texture"),
            ("shadow1DProjOffset", "textureProjOffset"),
            ("texelFetch2DOffset", "texelFetchOffset"),
            ("texelFetchBuffer", "texelFetch"),
            ("textureSize2DRect", "textureSize"),
        ] {
            assert_eq!(core_name(from).as_deref(), Some(to), "{from}");
        }
        for not in [
            "texture",
            "texture2DFoo",
            "textureSize2DLod",
            "texelFetch2DLod",
            "texture2DOffsetProj",
            "shadow",
            "sampler2D",
        ] {
            assert_eq!(core_name(not), None, "{not}");
        }
    }

    #[test]
    fn shadow_calls_are_wrapped_across_lines() {
        let src = "vec4 v = shadow2DProj(s, vec4(c, 1.0)\n  , 0.5) * 2.0;\nfloat shadow2DX;";
        let (out, wrapped) = wrap_shadow_calls(src);
        assert!(wrapped);
        assert_eq!(
            out,
            "vec4 v = varysat_shadow4(shadow2DProj(s, vec4(c, 1.0)\n  , 0.5)) * 2.0;\nfloat shadow2DX;"
        );
        assert!(!wrap_shadow_calls("x = texture2D(s, c);").1);
        // An unbalanced parenthesis in a comment inside the call changes nothing.
        let src = "v = shadow2D(s, /* (see */ c // note (\n) + 1.0;";
        assert_eq!(
            wrap_shadow_calls(src).0,
            "v = varysat_shadow4(shadow2D(s, /* (see */ c // note (\n)) + 1.0;"
        );
    }

    #[test]
    fn gpu_shader4_spellings() {
        assert_eq!(
            gpu_shader4_line("attribute unsigned  int x; unsignedint y;"),
            "attribute uint x; unsignedint y;"
        );
        assert_eq!(
            gpu_shader4_line("#extension GL_EXT_gpu_shader4 : require"),
            ""
        );
        assert_eq!(
            gpu_shader4_line("#extension GL_ARB_foo : require"),
            "#extension GL_ARB_foo : require"
        );
        assert!(enables_core_extension(
            "  #extension GL_ARB_arrays_of_arrays: enable"
        ));
        assert!(!enables_core_extension(
            "#extension GL_ARB_arrays_of_arrays_x: enable"
        ));
    }
}
