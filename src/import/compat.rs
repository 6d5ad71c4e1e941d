//! Compatibility-profile GLSL: the fixed-function built-ins of desktop GL 1.x /
//! `compatibility` shaders, which glslang does not compile for SPIR-V, declared as
//! ordinary variables before compiling, and mapped back to the slots NIR gives them.
//!
//! - VS attributes (`gl_Vertex`, `gl_Normal`, `gl_Color`, `gl_SecondaryColor`,
//!   `gl_MultiTexCoord0-7`, `gl_FogCoord`) become `in` variables (vertex attributes);
//! - the matrices (`gl_ModelViewProjectionMatrix`, `gl_NormalMatrix`,
//!   `gl_TextureMatrix[]`, their inverse/transpose forms) become default-block
//!   uniforms, and `ftransform()` their product with `gl_Vertex`;
//! - the fixed-function varyings become variables named `varysat_COL0` …, which
//!   linking does not number as generic varyings: the VS's `gl_FrontColor`,
//!   `gl_BackColor`, `gl_FrontSecondaryColor`, `gl_BackSecondaryColor` are
//!   `COL0`/`BFC0`/`COL1`/`BFC1`, `gl_TexCoord[i]` is `TEXi`, `gl_FogFragCoord` is
//!   `FOGC`; the FS's `gl_Color`/`gl_SecondaryColor` read `COL0`/`COL1` (the slot's
//!   meaning covers two-sided colour selection), `gl_TexCoord[i]` and
//!   `gl_FogFragCoord` read `TEXi` and `FOGC`. Like built-ins, they are never link
//!   errors when the other stage does not write them;
//! - the VS's `gl_ClipVertex` (the eye-space position user clip planes compare
//!   against) is the `CLIP_VERTEX` slot, a system-value output the FS cannot read.
//!
//! - a geometry or tessellation evaluation shader's `gl_FrontColor`, ... outputs
//!   are the VS's slots too; the per-vertex inputs of those stages and the TCS
//!   (`gl_FrontColorIn[]`, `gl_in[i].gl_FrontColor`) are `gs4.rs`'s.
//!
//! Not rewritten (glslang still reports them): the lighting, material, fog and
//! point state structs, `gl_ClipVertex` in geometry and tessellation shaders, and
//! the TCS's fixed-function outputs (`gl_out[i].gl_FrontColor`).

use crate::ir::{Half, IoSlot, Slot, Stage};

/// Prefix of the variables standing for fixed-function varyings.
const PREFIX: &str = "varysat_";

/// Where a fixed-function varying variable (by its name) lives: its slot, and
/// the component when the name gives one. A geometry shader's per-vertex inputs
/// carry `IN_` after the prefix (`gs4.rs`), since it may declare the same slot as
/// an output too. Whole-slot names are the GLSL rewrite's (`varysat_COL0`, a
/// `vec4`); per-component names (`varysat_COL0_y`, a scalar) are the SPIR-V
/// export's, which packs components wherever the packer puts them, so the
/// component comes from the name and not from the `Component` decoration.
pub(crate) fn fixed_function_slot(name: &str) -> Option<(Slot, Option<u8>)> {
    let name = name.strip_prefix(PREFIX)?;
    let name = name.strip_prefix("IN_").unwrap_or(name);
    if let Ok(io) = name.replace('_', ".").parse::<IoSlot>() {
        return (io.half == Half::Full && is_fixed_function_varying(io.slot))
            .then_some((io.slot, Some(io.comp)));
    }
    Some((whole_slot(name)?, None))
}

/// The name the SPIR-V export gives the scalar variable of component `io` when it
/// is a fixed-function varying, so that importing the export finds its slot again.
pub(crate) fn component_name(io: IoSlot) -> Option<String> {
    (io.half == Half::Full && is_fixed_function_varying(io.slot))
        .then(|| format!("{PREFIX}{io}").replace('.', "_"))
}

/// The fixed-function varyings the export may pack per component: the colours,
/// texture coordinates and fog coordinate both stages see.
fn is_fixed_function_varying(slot: Slot) -> bool {
    matches!(
        slot,
        Slot::Col(_) | Slot::Bfc(_) | Slot::Tex(_) | Slot::Fogc
    )
}

/// The slot of a whole-slot name after the prefix.
fn whole_slot(name: &str) -> Option<Slot> {
    Some(match name {
        "COL0" => Slot::Col(0),
        "COL1" => Slot::Col(1),
        "BFC0" => Slot::Bfc(0),
        "BFC1" => Slot::Bfc(1),
        "TEX" => Slot::Tex(0),
        "FOGC" => Slot::Fogc,
        "CLIP_VERTEX" => Slot::ClipVertex,
        _ => return None,
    })
}

/// One built-in: its name, what replaces it, and the declaration that replacement
/// needs (empty when none).
struct Builtin {
    name: &'static str,
    to: &'static str,
    decl: &'static str,
}

const fn b(name: &'static str, to: &'static str, decl: &'static str) -> Builtin {
    Builtin { name, to, decl }
}

/// Matrices every stage may read.
const MATRICES: &[Builtin] = &[
    b(
        "gl_ModelViewMatrix",
        "varysat_ModelViewMatrix",
        "uniform mat4 varysat_ModelViewMatrix;",
    ),
    b(
        "gl_ProjectionMatrix",
        "varysat_ProjectionMatrix",
        "uniform mat4 varysat_ProjectionMatrix;",
    ),
    b(
        "gl_ModelViewProjectionMatrix",
        "varysat_ModelViewProjectionMatrix",
        "uniform mat4 varysat_ModelViewProjectionMatrix;",
    ),
    b(
        "gl_TextureMatrix",
        "varysat_TextureMatrix",
        "uniform mat4 varysat_TextureMatrix[8];",
    ),
    b(
        "gl_NormalMatrix",
        "varysat_NormalMatrix",
        "uniform mat3 varysat_NormalMatrix;",
    ),
    b(
        "gl_ModelViewMatrixInverse",
        "varysat_ModelViewMatrixInverse",
        "uniform mat4 varysat_ModelViewMatrixInverse;",
    ),
    b(
        "gl_ProjectionMatrixInverse",
        "varysat_ProjectionMatrixInverse",
        "uniform mat4 varysat_ProjectionMatrixInverse;",
    ),
    b(
        "gl_ModelViewProjectionMatrixInverse",
        "varysat_ModelViewProjectionMatrixInverse",
        "uniform mat4 varysat_ModelViewProjectionMatrixInverse;",
    ),
    b(
        "gl_ModelViewMatrixTranspose",
        "varysat_ModelViewMatrixTranspose",
        "uniform mat4 varysat_ModelViewMatrixTranspose;",
    ),
    b(
        "gl_ModelViewProjectionMatrixTranspose",
        "varysat_ModelViewProjectionMatrixTranspose",
        "uniform mat4 varysat_ModelViewProjectionMatrixTranspose;",
    ),
    b(
        "gl_ModelViewMatrixInverseTranspose",
        "varysat_ModelViewMatrixInverseTranspose",
        "uniform mat4 varysat_ModelViewMatrixInverseTranspose;",
    ),
];

/// Vertex-shader attributes.
const VERTEX_ATTRIBUTES: &[Builtin] = &[
    b("gl_Vertex", "varysat_Vertex", "in vec4 varysat_Vertex;"),
    b("gl_Normal", "varysat_Normal", "in vec3 varysat_Normal;"),
    b("gl_Color", "varysat_Color", "in vec4 varysat_Color;"),
    b(
        "gl_SecondaryColor",
        "varysat_SecondaryColor",
        "in vec4 varysat_SecondaryColor;",
    ),
    b(
        "gl_FogCoord",
        "varysat_FogCoord",
        "in float varysat_FogCoord;",
    ),
    b(
        "gl_MultiTexCoord0",
        "varysat_MultiTexCoord0",
        "in vec4 varysat_MultiTexCoord0;",
    ),
    b(
        "gl_MultiTexCoord1",
        "varysat_MultiTexCoord1",
        "in vec4 varysat_MultiTexCoord1;",
    ),
    b(
        "gl_MultiTexCoord2",
        "varysat_MultiTexCoord2",
        "in vec4 varysat_MultiTexCoord2;",
    ),
    b(
        "gl_MultiTexCoord3",
        "varysat_MultiTexCoord3",
        "in vec4 varysat_MultiTexCoord3;",
    ),
    b(
        "gl_MultiTexCoord4",
        "varysat_MultiTexCoord4",
        "in vec4 varysat_MultiTexCoord4;",
    ),
    b(
        "gl_MultiTexCoord5",
        "varysat_MultiTexCoord5",
        "in vec4 varysat_MultiTexCoord5;",
    ),
    b(
        "gl_MultiTexCoord6",
        "varysat_MultiTexCoord6",
        "in vec4 varysat_MultiTexCoord6;",
    ),
    b(
        "gl_MultiTexCoord7",
        "varysat_MultiTexCoord7",
        "in vec4 varysat_MultiTexCoord7;",
    ),
];

/// The vertex shader's clip vertex (not an output of later stages).
const CLIP_VERTEX: &[Builtin] = &[b(
    "gl_ClipVertex",
    "varysat_CLIP_VERTEX",
    "out vec4 varysat_CLIP_VERTEX;",
)];

/// The fixed-function varyings a vertex, geometry or tessellation evaluation shader
/// writes (a GS's and TES's inputs are `gs4.rs`'s): the same slots in every stage.
const FIXED_FUNCTION_OUTPUTS: &[Builtin] = &[
    b("gl_FrontColor", "varysat_COL0", "out vec4 varysat_COL0;"),
    b("gl_BackColor", "varysat_BFC0", "out vec4 varysat_BFC0;"),
    b(
        "gl_FrontSecondaryColor",
        "varysat_COL1",
        "out vec4 varysat_COL1;",
    ),
    b(
        "gl_BackSecondaryColor",
        "varysat_BFC1",
        "out vec4 varysat_BFC1;",
    ),
    b("gl_TexCoord", "varysat_TEX", "out vec4 varysat_TEX[8];"),
    b("gl_FogFragCoord", "varysat_FOGC", "out float varysat_FOGC;"),
];

/// Fragment-shader inputs.
const FRAGMENT: &[Builtin] = &[
    b("gl_Color", "varysat_COL0", "in vec4 varysat_COL0;"),
    b("gl_SecondaryColor", "varysat_COL1", "in vec4 varysat_COL1;"),
    b("gl_TexCoord", "varysat_TEX", "in vec4 varysat_TEX[8];"),
    b("gl_FogFragCoord", "varysat_FOGC", "in float varysat_FOGC;"),
];

/// The renames and declarations for the fixed-function built-ins a shader of
/// `stage` uses (`uses` says whether an identifier occurs in it, `declares` whether
/// the shader redeclares it itself, which then keeps its qualifiers).
pub(crate) fn rewrite(
    stage: Stage,
    uses: &dyn Fn(&str) -> bool,
    declares: &dyn Fn(&str) -> bool,
) -> (Vec<(&'static str, &'static str)>, String) {
    let stage_lists: &[&[Builtin]] = match stage {
        Stage::Vertex => &[VERTEX_ATTRIBUTES, FIXED_FUNCTION_OUTPUTS, CLIP_VERTEX],
        Stage::Geometry | Stage::TessEval => &[FIXED_FUNCTION_OUTPUTS],
        Stage::Fragment => &[FRAGMENT],
        _ => &[],
    };
    let mut renames = vec![];
    let mut decls = String::new();
    let ftransform = stage == Stage::Vertex && uses("ftransform");
    for bi in MATRICES.iter().chain(stage_lists.iter().copied().flatten()) {
        let needed_by_ftransform =
            ftransform && matches!(bi.name, "gl_Vertex" | "gl_ModelViewProjectionMatrix");
        if !uses(bi.name) && !needed_by_ftransform {
            continue;
        }
        renames.push((bi.name, bi.to));
        if !declares(bi.name) {
            decls.push_str(bi.decl);
            decls.push('\n');
        }
    }
    if ftransform {
        renames.push(("ftransform", "varysat_ftransform"));
        decls.push_str(
            "vec4 varysat_ftransform() { return varysat_ModelViewProjectionMatrix * varysat_Vertex; }\n",
        );
    }
    (renames, decls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_used_built_ins_are_declared() {
        let src = "gl_Position = ftransform(); gl_FrontColor = gl_Color;";
        let uses = |w: &str| src.contains(w);
        let (renames, decls) = rewrite(Stage::Vertex, &uses, &|_| false);
        assert!(renames.contains(&("gl_FrontColor", "varysat_COL0")));
        assert!(renames.contains(&("gl_Color", "varysat_Color")));
        assert!(renames.contains(&("ftransform", "varysat_ftransform")));
        assert!(decls.contains("in vec4 varysat_Vertex;"));
        assert!(decls.contains("uniform mat4 varysat_ModelViewProjectionMatrix;"));
        assert!(!decls.contains("varysat_NormalMatrix"));
        // In the FS, gl_Color is the interpolated front (or back) colour.
        let (renames, decls) = rewrite(Stage::Fragment, &|w: &str| w == "gl_Color", &|_| false);
        assert_eq!(renames, vec![("gl_Color", "varysat_COL0")]);
        assert_eq!(decls, "in vec4 varysat_COL0;\n");
        // A redeclared built-in keeps the shader's own declaration (and qualifiers).
        let (renames, decls) = rewrite(Stage::Fragment, &|w: &str| w == "gl_Color", &|_| true);
        assert_eq!(renames, vec![("gl_Color", "varysat_COL0")]);
        assert_eq!(decls, "");
    }

    #[test]
    fn declarations_follow_the_extension_lines_and_keep_line_numbers() {
        let src = "#version 130\n#extension GL_ARB_foo : enable\nvoid main() {\n  gl_Position = gl_Vertex;\n}\n";
        let out = crate::import::rewrite_desktop_glsl(src, Stage::Vertex).expect("rewritten");
        assert_eq!(
            out,
            "#version 450\n#line 2\n#extension GL_ARB_foo : enable\nin vec4 varysat_Vertex;\n\
             #line 3\nvoid main() {\n  gl_Position = varysat_Vertex;\n}\n"
        );
        // A later version in the compatibility profile is rewritten too.
        let v400 = "#version 400 compatibility\nvoid main() { gl_Position = gl_Vertex; }\n";
        let out = crate::import::rewrite_desktop_glsl(v400, Stage::Vertex).expect("rewritten");
        assert!(out.contains("in vec4 varysat_Vertex;"), "{out}");
        // GLSL 1.30 may redeclare a fixed-function varying with a qualifier.
        let v130 = "#version 130\nflat out vec4 gl_FrontColor;\nvoid main() { gl_FrontColor = vec4(0); }\n";
        let out = crate::import::rewrite_desktop_glsl(v130, Stage::Vertex).expect("rewritten");
        assert!(out.contains("flat out vec4 varysat_COL0;"), "{out}");
        assert_eq!(out.matches("vec4 varysat_COL0;").count(), 1, "{out}");
    }

    #[test]
    fn fixed_function_names_map_to_their_slots() {
        assert_eq!(
            fixed_function_slot("varysat_BFC1"),
            Some((Slot::Bfc(1), None))
        );
        assert_eq!(
            fixed_function_slot("varysat_TEX"),
            Some((Slot::Tex(0), None))
        );
        assert_eq!(
            fixed_function_slot("varysat_CLIP_VERTEX"),
            Some((Slot::ClipVertex, None))
        );
        assert_eq!(
            fixed_function_slot("varysat_IN_COL1"),
            Some((Slot::Col(1), None))
        );
        assert_eq!(fixed_function_slot("varysat_Vertex"), None);
        assert_eq!(fixed_function_slot("COL0"), None);
    }

    #[test]
    fn exported_component_names_map_back_to_their_components() {
        for io in [
            IoSlot::new(Slot::Col(0), 0),
            IoSlot::new(Slot::Bfc(1), 3),
            IoSlot::new(Slot::Tex(7), 2),
            IoSlot::new(Slot::Fogc, 1),
        ] {
            let name = component_name(io).expect("a fixed-function varying");
            assert_eq!(fixed_function_slot(&name), Some((io.slot, Some(io.comp))));
        }
        assert_eq!(component_name(IoSlot::var(0, 1)), None);
        assert_eq!(component_name(IoSlot::new(Slot::Pos, 0)), None);
        assert_eq!(
            component_name(IoSlot::half(Slot::Col(0), 0, Half::Lo)),
            None
        );
        // Generic slots and 16-bit halves spelled with the prefix are no colours.
        assert_eq!(fixed_function_slot("varysat_VAR0_x"), None);
        assert_eq!(fixed_function_slot("varysat_COL0_x_lo"), None);
    }
}
