//! Constructs of real shaders the third-party corpus run (docs/testing.md) found
//! the importer refusing although they translate (issue 16): `frexp` / `modf`,
//! constant indices past an array, dynamic indices into VS attribute arrays, and
//! the slots of a stage's outer varyings. GLSL sources are compiled by glslang
//! (skipped outside CI when it is missing); each import is checked in the
//! interpreter against the same program written without the construct, or
//! against the identity the construct satisfies.

use std::path::PathBuf;

use varysat::import::{import_files, ImportOptions, GLSLANG};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::Pipeline;
use varysat::{optimize, Options};

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

/// Imports the stages `srcs` (file name, source) written into a fresh directory.
fn import(name: &str, srcs: &[(&str, &str)]) -> Result<Pipeline, String> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-import-limits-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let paths: Vec<PathBuf> = srcs
        .iter()
        .map(|(file, text)| {
            let p = dir.join(file);
            std::fs::write(&p, text).expect("write source");
            p
        })
        .collect();
    import_files(&paths[0], &paths[1], &ImportOptions::default()).map_err(|e| e.to_string())
}

fn vs_fs(name: &str, vs: &str, fs: &str) -> Pipeline {
    import(name, &[("a.vert", vs), ("a.frag", fs)]).unwrap_or_else(|e| panic!("{e}"))
}

fn config() -> EquivConfig {
    EquivConfig {
        runs: 4,
        ..EquivConfig::default()
    }
}

fn equivalent(a: &Pipeline, b: &Pipeline) {
    check_equivalent(a, b, &config()).unwrap_or_else(|e| panic!("{e}"));
}

/// Optimizes `p` and checks the result against it in the interpreter.
fn optimizes_equivalently(p: &Pipeline) {
    let out = optimize(p, &Options::new()).expect("optimize");
    assert!(out.report.fallback.is_none(), "{:?}", out.report.fallback);
    equivalent(p, &out.pipeline);
}

const FS_COLOR: &str = "#version 450
layout(location=0) in vec4 v;
layout(location=0) out vec4 color;
void main() { color = v; }
";

/// A VS over attribute `x` that writes `expr` to the FS's colour.
fn vs_of(body: &str) -> String {
    format!(
        "#version 450
layout(location=0) in vec4 x;
layout(location=0) out vec4 v;
void main() {{
  gl_Position = x;
{body}
}}
"
    )
}

#[test]
fn frexp_and_modf_satisfy_their_identities() {
    if !tools() {
        return;
    }
    // frexp: x = m * 2^e with |m| in [0.5, 1); modf: x = f + w, w = trunc(x),
    // |f| < 1. The seeded attributes are neither zero nor denormal.
    let with = vs_of(
        "  ivec4 e;
  vec4 m = frexp(x * 37.0, e);
  vec4 w;
  vec4 f = modf(x * 5.0, w);
  bool in_range = all(greaterThanEqual(abs(m), vec4(0.5))) && all(lessThan(abs(m), vec4(1.0)));
  bool whole = w == trunc(x * 5.0) && all(lessThan(abs(f), vec4(1.0)));
  v = vec4((m * exp2(vec4(e))).x, (f + w).y, float(in_range), float(whole));",
    );
    let identity = vs_of("  v = vec4(x.x * 37.0, x.y * 5.0, 1.0, 1.0);");
    let p = vs_fs("frexp", &with, FS_COLOR);
    equivalent(&p, &vs_fs("frexp-identity", &identity, FS_COLOR));
    // The check can fail: a wrong exponent is caught.
    let off = vs_of("  v = vec4(x.x * 74.0, x.y * 5.0, 1.0, 1.0);");
    assert!(check_equivalent(&p, &vs_fs("frexp-off", &off, FS_COLOR), &config()).is_err());
    optimizes_equivalently(&p);
}

#[test]
fn frexp_struct_and_modf_of_doubles_satisfy_their_identities() {
    if !tools() {
        return;
    }
    let with = vs_of(
        "  dvec2 d = dvec2(x.xy) * 3.0lf;
  ivec2 e;
  dvec2 m = frexp(d, e);
  dvec2 w;
  dvec2 f = modf(d, w);
  v = vec4(float(m.x * double(exp2(float(e.x)))), float(f.y + w.y),
           float(abs(m.y) >= 0.5lf && abs(m.y) < 1.0lf), float(w.x == trunc(d.x)));",
    );
    let identity =
        vs_of("  dvec2 d = dvec2(x.xy) * 3.0lf;\n  v = vec4(float(d.x), float(d.y), 1.0, 1.0);");
    let p = vs_fs("frexp64", &with, FS_COLOR);
    equivalent(&p, &vs_fs("frexp64-identity", &identity, FS_COLOR));
    optimizes_equivalently(&p);
}

#[test]
fn constant_indices_past_an_array_read_undef_and_write_nothing() {
    if !tools() {
        return;
    }
    // piglit's out-of-bounds tests: spirv-opt folds `idx` into a constant index
    // past the array. GLSL leaves both accesses undefined: the read is `undef`,
    // the write changes nothing.
    let fs = |body: &str| {
        format!(
            "#version 450
layout(location=0) in vec4 v;
layout(location=0) out vec4 color;
float array[4] = float[](1.0, 2.0, 3.0, 4.0);
void main() {{
  int idx = 20;
  int neg = -2;
{body}
}}
"
        )
    };
    let vs = vs_of("  v = x;");
    let read = vs_fs("oob-read", &vs, &fs("  color = vec4(array[idx], v.yzw);"));
    // Undefined: any value refines it (a defined read would match one at most).
    for k in ["123.0", "-7.0"] {
        let other = vs_fs(
            &format!("oob-{k}"),
            &vs,
            &fs(&format!("  color = vec4({k}, v.yzw);")),
        );
        equivalent(&read, &other);
    }
    optimizes_equivalently(&read);
    let write = vs_fs(
        "oob-write",
        &vs,
        &fs("  array[idx] = 5.0;\n  array[neg] = 6.0;\n  color = vec4(array[0], array[1], array[2], array[3]) + v;"),
    );
    let plain = vs_fs(
        "oob-none",
        &vs,
        &fs("  color = vec4(1.0, 2.0, 3.0, 4.0) + v;"),
    );
    equivalent(&write, &plain);
    optimizes_equivalently(&write);
}

#[test]
fn a_dynamic_index_into_an_attribute_array_selects_among_its_elements() {
    if !tools() {
        return;
    }
    // piglit's enhanced-layouts test: attributes cannot be indexed indirectly in
    // the IR (validation refuses `ATTR` indirects, and import used to write one).
    let vs = |read: &str| {
        format!(
            "#version 450
layout(location=0) in vec3 vertex;
layout(location=1) in float red[3];
layout(location=0) out vec4 v;
void main() {{
  gl_Position = vec4(vertex, 1.0);
  int i = gl_VertexIndex % 3;
  v = vec4({read}, 0.0, 0.0, 1.0);
}}
"
        )
    };
    let p = vs_fs("attr-dyn", &vs("red[i]"), FS_COLOR);
    let cases = vs_fs(
        "attr-cases",
        &vs("i == 0 ? red[0] : i == 1 ? red[1] : red[2]"),
        FS_COLOR,
    );
    equivalent(&p, &cases);
    let swapped = vs_fs(
        "attr-swap",
        &vs("i == 0 ? red[0] : i == 1 ? red[2] : red[1]"),
        FS_COLOR,
    );
    assert!(check_equivalent(&p, &swapped, &config()).is_err());
    optimizes_equivalently(&p);
}
