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

/// The `PATCHn` slots the stores (`output`) or loads of `s` reach, an indirect
/// access its whole range.
fn patch_slots(s: &varysat::ir::Shader, output: bool) -> std::collections::BTreeSet<u32> {
    use varysat::ir::{InstKind, Slot};
    let mut out = std::collections::BTreeSet::new();
    s.for_each_inst(|i| {
        let (slot, indirect) = match &i.kind {
            InstKind::StoreOutput { slot, indirect, .. } if output => (slot, indirect),
            InstKind::LoadInput { slot, indirect, .. } if !output => (slot, indirect),
            _ => return,
        };
        if let Slot::Patch(n) = slot.slot {
            let len = indirect.map_or(1, |d| u32::from(d.len));
            out.extend(u32::from(n)..u32::from(n) + len);
        }
    });
    out
}

/// piglit's `tcs-output-array` family: a 31-location per-vertex block and 30
/// patch floats, without locations. glslang's `--aml` numbers them in one
/// sequence, so the patch floats sit at locations 31..60; GL (and varysat's
/// `PATCHn`) gives patch varyings a space of their own.
const TCS_PATCH_BEHIND_BLOCK: &str = "#version 150
#extension GL_ARB_tessellation_shader : require
layout(vertices = 4) out;
out block { float m1[16]; float m2[15]; } blk[];
patch out float p1[16];
patch out float p2[14];
void main() {
  for (int i = 0; i < 16; i++) blk[gl_InvocationID].m1[i] = float(i);
  for (int i = 0; i < 15; i++) blk[gl_InvocationID].m2[i] = float(16 + i);
  for (int i = 0; i < 16; i++) p1[i] = float(31 + i) * gl_in[0].gl_Position.x;
  for (int i = 0; i < 14; i++) p2[i] = float(47 + i);
  gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
  gl_TessLevelOuter = float[4](1.0, 1.0, 1.0, 1.0);
  gl_TessLevelInner = float[2](1.0, 1.0);
}
";

#[test]
fn patch_varyings_outside_the_pair_move_into_the_patch_slots() {
    if !tools() {
        return;
    }
    // A VS + TCS pair: the TCS's outputs go to a TES outside the pair.
    let vs = "#version 150
in vec4 pos;
void main() { gl_Position = pos; }
";
    let p = import(
        "patch-outer-tcs",
        &[("a.vert", vs), ("a.tesc", TCS_PATCH_BEHIND_BLOCK)],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // At 31..60 they would not fit; moved down by 31, they keep their layout.
    assert_eq!(patch_slots(&p.consumer, true), (0..30).collect());
    optimizes_equivalently(&p);
    // A TES + FS pair: the TES's inputs come from a TCS outside the pair.
    let tes = "#version 150
#extension GL_ARB_tessellation_shader : require
layout(quads, equal_spacing) in;
in block { float m1[16]; float m2[15]; } blk[];
patch in float p1[16];
patch in float p2[14];
out vec4 color;
void main() {
  color = vec4(blk[0].m1[3], blk[3].m2[14], p1[0] + p1[15], p2[0] * p2[13]);
  gl_Position = gl_in[0].gl_Position;
}
";
    let fs = "#version 150
in vec4 color;
out vec4 outcolor;
void main() { outcolor = color; }
";
    let p = import("patch-outer-tes", &[("a.tese", tes), ("a.frag", fs)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(patch_slots(&p.producer, false), [0, 15, 16, 29].into());
    optimizes_equivalently(&p);
}

#[test]
fn outer_patch_varyings_that_span_more_than_32_slots_are_an_error() {
    if !tools() {
        return;
    }
    // Moving a family down cannot make a span of 33 locations fit.
    let tcs = "#version 150
#extension GL_ARB_tessellation_shader : require
layout(vertices = 4) out;
patch out float p1[16];
patch out float p2[17];
void main() {
  p1[0] = 1.0;
  p2[16] = 2.0;
  gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
  gl_TessLevelOuter = float[4](1.0, 1.0, 1.0, 1.0);
  gl_TessLevelInner = float[2](1.0, 1.0);
}
";
    let vs = "#version 150
in vec4 pos;
void main() { gl_Position = pos; }
";
    let e = import("patch-outer-33", &[("a.vert", vs), ("a.tesc", tcs)]).unwrap_err();
    assert!(e.contains("beyond the 32 generic slots"), "{e}");
}

/// The UBO blocks a shader loads from, and the storage buffers it loads from and
/// stores to.
fn buffers(s: &varysat::ir::Shader) -> [std::collections::BTreeSet<u32>; 3] {
    use varysat::ir::InstKind;
    let mut out: [std::collections::BTreeSet<u32>; 3] = Default::default();
    s.for_each_inst(|i| match &i.kind {
        InstKind::LoadUbo { block, .. } => {
            out[0].insert(*block);
        }
        InstKind::SsboLoad { buffer, .. } => {
            out[1].insert(*buffer);
        }
        InstKind::SsboStore { buffer, .. } => {
            out[2].insert(*buffer);
        }
        _ => {}
    });
    out
}

#[test]
fn arrays_of_storage_blocks_and_of_arrays_of_uniform_blocks_are_buffers_each() {
    if !tools() {
        return;
    }
    // piglit's arrays of storage blocks and arrays of arrays of uniform blocks:
    // each element is a buffer of its own, so the arrays have no ArrayStride
    // (import refused them: "array %N in a buffer without ArrayStride"). The
    // elements are consecutive buffers in row-major order.
    let vs = "#version 450
layout(location=0) in vec4 x;
layout(location=0) out vec4 v;
layout(std430, binding=0) buffer S { vec4 a; vec4 b; } inst[3];
void main() {
  gl_Position = x;
  inst[1].a = x * 2.0;
  v = inst[2].b;
}
";
    let fs = "#version 450
layout(location=0) in vec4 v;
layout(location=0) out vec4 color;
layout(binding=0) uniform U { vec4 x; } bar[3][4];
void main() { color = v + bar[2][1].x; }
";
    let p = vs_fs("block-arrays", vs, fs);
    let [_, loads, stores] = buffers(&p.producer);
    assert_eq!((loads, stores), ([2].into(), [1].into()));
    assert_eq!(buffers(&p.consumer)[0], [2 * 4 + 1].into());
    optimizes_equivalently(&p);
}

#[test]
fn dynamic_indices_into_arrays_of_blocks_select_among_the_elements() {
    if !tools() {
        return;
    }
    let vs = |read: &str| {
        format!(
            "#version 450
layout(location=0) in vec4 x;
layout(location=0) out vec4 v;
layout(location=1) flat out ivec2 ij;
layout(std430, binding=0) buffer S {{ vec4 a; }} inst[3];
void main() {{
  gl_Position = x;
  int i = gl_VertexIndex % 3;
  v = ({read});
  ij = ivec2(x.xy * 7.0) & 1;
}}
"
        )
    };
    let fs = |read: &str| {
        format!(
            "#version 450
layout(location=0) in vec4 v;
layout(location=1) flat in ivec2 ij;
layout(location=0) out vec4 color;
layout(binding=0) uniform U {{ vec4 x; }} bar[2][2];
void main() {{
  int i = ij.x;
  int j = ij.y;
  color = v + ({read});
}}
"
        )
    };
    let indexed = vs_fs("block-dyn", &vs("inst[i].a"), &fs("bar[i][j].x"));
    let cases = |name: &str, ssbo: &str, ubo: &str| vs_fs(name, &vs(ssbo), &fs(ubo));
    let spelled = cases(
        "block-cases",
        "i == 0 ? inst[0].a : i == 1 ? inst[1].a : inst[2].a",
        "i == 0 ? (j == 0 ? bar[0][0].x : bar[0][1].x) : (j == 0 ? bar[1][0].x : bar[1][1].x)",
    );
    equivalent(&indexed, &spelled);
    // The check can fail: two elements swapped are caught, in either array.
    let swapped_ubo = cases(
        "block-swap-ubo",
        "i == 0 ? inst[0].a : i == 1 ? inst[1].a : inst[2].a",
        "i == 0 ? (j == 0 ? bar[0][0].x : bar[1][0].x) : (j == 0 ? bar[0][1].x : bar[1][1].x)",
    );
    assert!(check_equivalent(&indexed, &swapped_ubo, &config()).is_err());
    let swapped_ssbo = cases(
        "block-swap-ssbo",
        "i == 0 ? inst[0].a : i == 1 ? inst[2].a : inst[1].a",
        "i == 0 ? (j == 0 ? bar[0][0].x : bar[0][1].x) : (j == 0 ? bar[1][0].x : bar[1][1].x)",
    );
    assert!(check_equivalent(&indexed, &swapped_ssbo, &config()).is_err());
    optimizes_equivalently(&indexed);
}

#[test]
fn a_dynamic_index_into_an_array_of_storage_blocks_in_a_store_is_an_error() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 x;
layout(location=0) out vec4 v;
layout(std430, binding=0) buffer S { vec4 a; } inst[3];
void main() {
  gl_Position = x;
  inst[gl_VertexIndex % 3].a = x;
  v = x;
}
";
    let e = import("block-dyn-store", &[("a.vert", vs), ("a.frag", FS_COLOR)]).unwrap_err();
    assert!(
        e.contains("dynamic index into an array of storage blocks"),
        "{e}"
    );
}
