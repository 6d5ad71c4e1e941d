//! GL's qualifier rules when linking GLSL varyings (issue 16, honest linking):
//! interpolation qualifiers (`flat`, `noperspective`, none) must match across
//! stages below GLSL 4.40 and in GLSL ES, the auxiliary ones (`centroid`,
//! `sample`) below GLSL 4.30 and GLSL ES 3.10; the program's version is the higher
//! of the two stages'. A mismatch GL refuses is a link error at the input's
//! declaration (not at an earlier use of its name in a comment, a macro, a struct
//! member or a parameter). GLSL sources are compiled by glslang (skipped outside
//! CI when it is missing).

use std::path::PathBuf;

use varysat::import::{import_files, ImportOptions, GLSLANG};

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

/// Imports a VS/FS pair written into a fresh directory; the error text on failure.
fn import(name: &str, vs: &str, fs: &str) -> Result<(), (String, PathBuf)> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-import-linking-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (a, b) = (dir.join("a.vert"), dir.join("a.frag"));
    std::fs::write(&a, vs).expect("write");
    std::fs::write(&b, fs).expect("write");
    import_files(&a, &b, &ImportOptions::default())
        .map(|_| ())
        .map_err(|e| (e.to_string(), b))
}

fn vs(version: &str, decl: &str) -> String {
    format!(
        "#version {version}\n{decl}\nvoid main() {{ c = vec4(1.0); gl_Position = vec4(0.0); }}\n"
    )
}

/// An FS whose input `c` is declared on line 6, column 17 (after `/* c */`), with
/// the name used earlier in a comment, a macro, a struct member and a parameter.
fn fs(version: &str, qualifiers: &str) -> String {
    format!(
        "#version {version}\n\
         // c is the colour\n\
         #define C_SCALE(c) (c * 2.0)\n\
         struct S {{ vec4 c; }};\n\
         vec4 twice(vec4 c) {{ return C_SCALE(c); }}\n\
         /* c */ {qualifiers} vec4 c;\n\
         out vec4 color;\n\
         void main() {{ color = twice(c); }}\n"
    )
}

fn expect_link_error(name: &str, vs: &str, fs: &str, what: &str) {
    let (err, file) = import(name, vs, fs).expect_err(what);
    let at = format!("{}:6:", file.display());
    assert!(err.starts_with(&at), "{what}: {err}");
    assert!(err.contains("link error: input `c`"), "{what}: {err}");
    assert!(err.contains(what), "{what}: {err}");
}

#[test]
fn interpolation_qualifiers_must_match_below_4_40() {
    if !tools() {
        return;
    }
    expect_link_error(
        "flat-330",
        &vs("330", "flat out vec4 c;"),
        &fs("330", "in"),
        "is smooth but output `c` of the vs shader is flat (GLSL below 4.40",
    );
    expect_link_error(
        "noperspective-430",
        &vs("430", "out vec4 c;"),
        &fs("430", "noperspective in"),
        "is noperspective but output `c` of the vs shader is smooth",
    );
    // 4.40 and later: the FS's qualifier applies, whatever the VS says.
    import("flat-440", &vs("440", "flat out vec4 c;"), &fs("440", "in"))
        .unwrap_or_else(|(e, _)| panic!("{e}"));
    // The program's version is the higher one.
    import(
        "flat-mixed",
        &vs("450", "flat out vec4 c;"),
        &fs("330", "in"),
    )
    .unwrap_or_else(|(e, _)| panic!("{e}"));
    // Matching qualifiers link in every version.
    import(
        "flat-both",
        &vs("150", "flat out vec4 c;"),
        &fs("150", "flat in"),
    )
    .unwrap_or_else(|(e, _)| panic!("{e}"));
}

#[test]
fn auxiliary_qualifiers_must_match_below_4_30() {
    if !tools() {
        return;
    }
    expect_link_error(
        "centroid-420",
        &vs("420", "centroid out vec4 c;"),
        &fs("420", "in"),
        "is neither centroid nor sample but output `c` of the vs shader is centroid (GLSL below 4.30",
    );
    expect_link_error(
        "sample-400",
        &vs("400", "out vec4 c;"),
        &fs("400", "sample in"),
        "is sample but output `c` of the vs shader is neither centroid nor sample",
    );
    import(
        "centroid-430",
        &vs("430", "centroid out vec4 c;"),
        &fs("430", "in"),
    )
    .unwrap_or_else(|(e, _)| panic!("{e}"));
}

#[test]
fn gles_interpolation_must_match_and_auxiliary_from_3_10_need_not() {
    if !tools() {
        return;
    }
    let es_vs = |decl: &str| {
        format!(
            "#version 310 es\n{decl}\nvoid main() {{ c = vec4(1.0); gl_Position = vec4(0.0); }}\n"
        )
    };
    let es_fs = |q: &str| {
        format!(
            "#version 310 es\nprecision highp float;\n// c\nstruct S {{ vec4 c; }};\n\n\
             /* c */ {q} vec4 c;\nout vec4 color;\nvoid main() {{ color = c; }}\n"
        )
    };
    expect_link_error(
        "es-flat",
        &es_vs("flat out vec4 c;"),
        &es_fs("in"),
        "(GLSL ES requires interpolation qualifiers to match)",
    );
    import("es-centroid", &es_vs("centroid out vec4 c;"), &es_fs("in"))
        .unwrap_or_else(|(e, _)| panic!("{e}"));
}

#[test]
fn located_varyings_and_block_members_are_checked_too() {
    if !tools() {
        return;
    }
    expect_link_error(
        "located-410",
        &vs("410", "layout(location = 2) flat out vec4 c;"),
        &fs("410", "layout(location = 2) in"),
        "is smooth but output `c` of the vs shader is flat",
    );
    let block_vs = "#version 150\nout B { flat vec4 a; vec4 b; } ob;\n\
                    void main() { ob.a = vec4(1.0); ob.b = vec4(2.0); gl_Position = vec4(0.0); }\n";
    let block_fs =
        "#version 150\n// B\nstruct T { vec4 B; };\n\n\n/* B */ in B { vec4 a; vec4 b; } ib;\n\
                    out vec4 color;\nvoid main() { color = ib.a + ib.b; }\n";
    let (err, file) = import("block-150", block_vs, block_fs).expect_err("flat member");
    assert!(err.starts_with(&format!("{}:6:", file.display())), "{err}");
    assert!(
        err.contains("input `ib.a` is smooth but output `ob.a` of the vs shader is flat"),
        "{err}"
    );
}

/// The link error's position is the declaration's, not the first occurrence of
/// the name in the file.
#[test]
fn a_link_error_points_at_the_declaration() {
    if !tools() {
        return;
    }
    let (err, file) = import("position", &vs("330", "flat out vec4 c;"), &fs("330", "in"))
        .expect_err("flat against smooth");
    assert!(
        err.starts_with(&format!("{}:6:17: error: link error:", file.display())),
        "{err}"
    );
    // The type-mismatch error of located varyings points there too.
    let located_vs = "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); gl_Position = c; }\n";
    let located_fs =
        "#version 450\n/* c c */ struct S { vec4 c; };\nvec2 f(vec2 c) { return c; }\n\
                      layout(location = 0) out vec4 color;\nlayout(location = 0) in vec2 c;\n\
                      void main() { color = f(c).xyxy; }\n";
    let (err, file) = import("position-type", located_vs, located_fs).expect_err("vec2 vs vec4");
    assert!(
        err.starts_with(&format!(
            "{}:5:30: error: link error: input `c`",
            file.display()
        )),
        "{err}"
    );
}
