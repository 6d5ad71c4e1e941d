//! Import of what real modules use beyond plain arithmetic (issue 16): opaque
//! operations of each purity, spirv-opt's merge-return switch break-outs, runtime
//! arrays, specialization constants (default, set, folded `OpSpecConstantOp`),
//! honest linking, and malformed SPIR-V reported without a panic. GLSL sources are
//! compiled by glslang (skipped outside CI when it is missing).

use std::path::PathBuf;

use varysat::import::{import_files, import_spirv, ImportOptions, GLSLANG};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{InstKind, OpaqueCode, Pipeline, Purity, Shader};
use varysat::{optimize, Options};

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

/// Writes the sources into a fresh directory and returns their paths.
fn files(name: &str, srcs: &[(&str, &str)]) -> Vec<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-import-features-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    srcs.iter()
        .map(|(file, text)| {
            let p = dir.join(file);
            std::fs::write(&p, text).expect("write source");
            p
        })
        .collect()
}

fn import_with(name: &str, vs: &str, fs: &str, opts: &ImportOptions) -> Result<Pipeline, String> {
    let p = files(name, &[("a.vert", vs), ("a.frag", fs)]);
    import_files(&p[0], &p[1], opts).map_err(|e| e.to_string())
}

fn import(name: &str, vs: &str, fs: &str) -> Pipeline {
    import_with(name, vs, fs, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The opaque ops of a shader: (name, purity, code).
fn opaque_ops(s: &Shader) -> Vec<(String, Purity, OpaqueCode)> {
    let mut out = vec![];
    s.for_each_inst(|i| {
        if let InstKind::Opaque { op, .. } = &i.kind {
            out.push((op.name.clone(), op.purity, op.code.clone()));
        }
    });
    out
}

/// Optimizes `p` and checks the result against it in the interpreter.
fn optimizes_equivalently(p: &Pipeline) -> Pipeline {
    let out = optimize(p, &Options::new()).expect("optimize");
    assert!(out.report.fallback.is_none(), "{:?}", out.report.fallback);
    let cfg = EquivConfig {
        runs: 4,
        ..EquivConfig::default()
    };
    check_equivalent(p, &out.pipeline, &cfg).unwrap_or_else(|e| panic!("{e}"));
    out.pipeline
}

const VS_PLAIN: &str = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec2 uv;
layout(location=0) out vec2 v_uv;
void main() { gl_Position = pos; v_uv = uv; }
";

#[test]
fn unmodelled_instructions_become_opaque_ops_of_the_right_class() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec2 uv;
layout(location=0) out float v_ang;
layout(location=1) flat out uint v_bits;
layout(location=2) out vec2 v_uv;
layout(binding=1, std430) buffer B { uint counter; float data[]; } buf;
void main() {
  gl_Position = pos;
  v_uv = uv;
  v_ang = atan(uv.y, uv.x);
  v_bits = bitfieldExtract(uint(uv.x * 100.0), 2, 5) + atomicAdd(buf.counter, 1u)
         + uint(buf.data.length()) + uint(buf.data[3]);
}
";
    let fs = "#version 450
layout(location=0) in float v_ang;
layout(location=1) flat in uint v_bits;
layout(location=2) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {
  float d = dFdx(v_uv.x) + fwidth(v_ang);
  mat2 m = inverse(mat2(v_uv.x, 1.0, 0.5, v_uv.y + 2.0));
  color = vec4(d, float(v_bits), m[1][1], acos(clamp(v_ang, -1.0, 1.0)));
}
";
    let p = import("classes", vs, fs);
    let (vs_ops, fs_ops) = (opaque_ops(&p.producer), opaque_ops(&p.consumer));
    let has = |ops: &[(String, Purity, OpaqueCode)], name: &str, purity: Purity, code: &str| {
        ops.iter()
            .any(|(n, p, c)| n == name && *p == purity && c.to_string() == code)
    };
    assert!(
        has(&vs_ops, "atan2", Purity::Pure, "ext:GLSL.std.450:25"),
        "{vs_ops:?}"
    );
    assert!(
        has(&vs_ops, "bitfielduextract", Purity::Pure, "op:203"),
        "{vs_ops:?}"
    );
    assert!(
        has(&vs_ops, "atomiciadd", Purity::Effect, "op:234"),
        "{vs_ops:?}"
    );
    assert!(
        has(&vs_ops, "arraylength", Purity::Stage, "op:68"),
        "{vs_ops:?}"
    );
    assert!(has(&fs_ops, "dpdx", Purity::Stage, "op:207"), "{fs_ops:?}");
    assert!(
        has(&fs_ops, "fwidth", Purity::Stage, "op:209"),
        "{fs_ops:?}"
    );
    assert!(
        has(
            &fs_ops,
            "matrixinverse",
            Purity::Pure,
            "ext:GLSL.std.450:34"
        ),
        "{fs_ops:?}"
    );
    assert!(
        has(&fs_ops, "acos", Purity::Pure, "ext:GLSL.std.450:17"),
        "{fs_ops:?}"
    );
    let out = optimizes_equivalently(&p);
    // The atomic stays in the producer, the derivatives in the consumer.
    let count = |s: &Shader, name: &str| opaque_ops(s).iter().filter(|o| o.0 == name).count();
    assert_eq!(count(&out.producer, "atomiciadd"), 1);
    assert_eq!(count(&out.consumer, "atomiciadd"), 0);
    assert_eq!(count(&out.producer, "dpdx"), 0);
    assert!(count(&out.consumer, "dpdx") >= 1);
}

#[test]
fn merge_return_switch_break_outs_import() {
    if !tools() {
        return;
    }
    // Early returns from inside a loop and an if: spirv-opt's merge-return turns them
    // into breaks out of a one-case switch, from inside nested control flow.
    let fs = "#version 450
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
float f(float x) {
  for (int i = 0; i < 4; i++) {
    if (x > float(i)) { if (x > 2.5) return x * 2.0; x += 0.5; }
  }
  if (x < 0.0) return -x;
  return x + 1.0;
}
void main() { color = vec4(f(v_uv.x * 4.0), f(v_uv.y), 0.0, 1.0); }
";
    let p = import("merge-return", VS_PLAIN, fs);
    optimizes_equivalently(&p);
}

#[test]
fn switch_with_breaks_and_fallthrough_imports() {
    if !tools() {
        return;
    }
    let fs = "#version 450
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {
  float r = 0.0;
  switch (int(v_uv.x * 5.0)) {
    case 0: r = 1.0; if (v_uv.y > 0.5) break; r += 2.0;
    case 1: r += 3.0; break;
    case 3: case 4: r = v_uv.y; break;
    default: r = -1.0;
  }
  color = vec4(r);
}
";
    let vs = VS_PLAIN;
    for spirv_opt in [true, false] {
        let opts = ImportOptions {
            spirv_opt,
            ..ImportOptions::default()
        };
        let p = import_with("switch", vs, fs, &opts).unwrap_or_else(|e| panic!("{e}"));
        optimizes_equivalently(&p);
    }
}

const SPEC_FS: &str = "#version 450
layout(constant_id = 3) const int N = 4;
const int M = N * 2 + 1;
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() { color = vec4(float(M), float(N), v_uv); }
";

/// Whether the consumer defines the 32-bit integer constant `k`.
fn has_const(p: &Pipeline, k: u32) -> bool {
    let mut found = false;
    p.consumer
        .for_each_inst(|i| found |= i.kind == InstKind::Const(k));
    found
}

#[test]
fn specialization_constants_take_defaults_or_set_values_and_fold() {
    if !tools() {
        return;
    }
    // Unoptimized, so that M stays an OpSpecConstantOp (IMul then IAdd) to fold.
    let opts = |spec: &[(u32, u32)]| ImportOptions {
        spec: spec.iter().copied().collect(),
        spirv_opt: false,
        ..ImportOptions::default()
    };
    let p = import_with("spec", VS_PLAIN, SPEC_FS, &opts(&[])).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        has_const(&p, 4) && has_const(&p, 9),
        "{}",
        varysat::text::print(&p)
    );
    let p = import_with("spec-set", VS_PLAIN, SPEC_FS, &opts(&[(3, 10)]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        has_const(&p, 10) && has_const(&p, 21),
        "{}",
        varysat::text::print(&p)
    );
    assert!(!has_const(&p, 9));
}

/// The SPIR-V glslang makes of one source (no spirv-opt).
fn spirv(name: &str, file: &str, src: &str) -> Vec<u8> {
    let p = files(name, &[(file, src)]);
    varysat::import::compile_glsl(&p[0], false).expect("compiles")
}

#[test]
fn a_malformed_spec_constant_op_is_an_error_not_a_panic() {
    if !tools() {
        return;
    }
    let vs = spirv("bad-spec", "a.vert", VS_PLAIN);
    let mut fs = spirv("bad-spec", "a.frag", SPEC_FS);
    // Find OpSpecConstantOp (opcode 52) and give it an unknown operation.
    let words: Vec<u32> = fs
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut at = 5;
    let mut found = false;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if words[at] & 0xffff == 52 {
            fs[(at + 3) * 4..(at + 4) * 4].copy_from_slice(&0xffffu32.to_le_bytes());
            found = true;
            break;
        }
        at += count.max(1);
    }
    assert!(found, "glslang wrote no OpSpecConstantOp");
    let err = import_spirv(&vs, &fs, &ImportOptions::default()).expect_err("malformed");
    assert!(err.to_string().contains("OpSpecConstantOp"), "{err}");
}

#[test]
fn unmatched_inputs_are_link_errors_for_glsl_and_warnings_for_spirv() {
    if !tools() {
        return;
    }
    let fs = "#version 450
layout(location=0) in vec2 v_uv;
layout(location=5) in vec4 v_missing;
layout(location=0) out vec4 color;
void main() { color = v_missing + vec4(v_uv, 0.0, 1.0); }
";
    let err = import_with("link", VS_PLAIN, fs, &ImportOptions::default())
        .expect_err("a GLSL link error");
    assert!(
        err.contains("v_missing") && err.contains("link error"),
        "{err}"
    );
    let vs_spv = spirv("link-spv", "a.vert", VS_PLAIN);
    let fs_spv = spirv("link-spv", "a.frag", fs);
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("varysat-import-features-link-spv");
    let (a, b) = (dir.join("a.vert.spv"), dir.join("a.frag.spv"));
    std::fs::write(&a, vs_spv).expect("write");
    std::fs::write(&b, fs_spv).expect("write");
    let (p, warnings) =
        varysat::import::import_files_with_warnings(&a, &b, &ImportOptions::default())
            .expect("SPIR-V imports");
    assert!(
        warnings.iter().any(|w| w.contains("v_missing")),
        "{warnings:?}"
    );
    optimizes_equivalently(&p);
}

#[test]
fn import_validates_what_it_writes() {
    if !tools() {
        return;
    }
    // A lines GS reading vertex 5 of its 2-vertex input: glslang accepts the
    // constant index, the pair would not validate, so import refuses it.
    let gs = "#version 450
layout(lines) in;
layout(points, max_vertices = 1) out;
layout(location=0) in vec2 v_uv[];
layout(location=0) out vec2 g_uv;
void main() { g_uv = v_uv[1]; gl_Position = gl_in[1].gl_Position; EmitVertex(); }
";
    let p = files("gs", &[("a.vert", VS_PLAIN), ("a.geom", gs)]);
    import_files(&p[0], &p[1], &ImportOptions::default()).expect("a valid GS imports");
    // A variable index glslang cannot check; spirv-opt folds it to a constant.
    let bad = gs
        .replace("void main() {", "void main() { int k = 1048577;")
        .replace("gl_in[1]", "gl_in[k]");
    let p = files("gs-bad", &[("a.vert", VS_PLAIN), ("a.geom", &bad)]);
    match import_files(&p[0], &p[1], &ImportOptions::default()) {
        Err(e) => assert!(e.to_string().contains("does not validate"), "{e}"),
        Ok(pipe) => panic!("accepted:\n{}", varysat::text::print(&pipe)),
    }
}

#[test]
fn other_fragment_built_ins_are_stage_bound_opaque_loads_or_system_values() {
    if !tools() {
        return;
    }
    let fs = "#version 450
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {
  float h = gl_HelperInvocation ? 1.0 : 0.0;
  color = vec4(gl_PointCoord + v_uv, float(gl_SampleMaskIn[0]), h);
}
";
    let p = import("builtins", VS_PLAIN, fs);
    let ops = opaque_ops(&p.consumer);
    for (name, code) in [
        ("builtin_pointcoord", "builtin:16"),
        ("builtin_helperinvocation", "builtin:23"),
    ] {
        assert!(
            ops.iter()
                .any(|(n, p, c)| n == name && *p == Purity::Stage && c.to_string() == code),
            "{name}: {ops:?}"
        );
    }
    // The sample mask is modelled: a system value, not an opaque load.
    assert!(
        !ops.iter().any(|(n, _, _)| n == "builtin_samplemask"),
        "{ops:?}"
    );
    let text = varysat::text::print(&p);
    assert!(text.contains("load_system_value sample_mask_in"), "{text}");
    optimizes_equivalently(&p);
}

#[test]
fn stores_to_a_dynamically_indexed_output_array_count_every_slot() {
    // `out vec4 a[2]; a[i] = v;`: both slots may be written and are read.
    let text = "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%i = load_input ATTR1.x)
    (%k = f2u32 %i)
    (store_output POS.x %p)
    (store_output VAR0.x %p (indirect %k 2))
    (store_output VAR0.y %p (indirect %k 2)))
  (consumer fs
    (%a = load_interpolated_input VAR0.x persp center)
    (%b = load_interpolated_input VAR1.y persp center)
    (%s = fadd %a %b)
    (store_output DATA0.x %s)))";
    let p = varysat::text::parse(text, None).expect("parses");
    let s = varysat::import::stats(&p);
    assert_eq!((s.live_slots, s.live_components), (2, 2), "{s:?}");
}

/// The slots a shader stores to (`store`) or loads from, as text (`COL0.x`, ...).
fn slots_used(s: &Shader, store: bool) -> Vec<String> {
    let mut out = vec![];
    s.for_each_inst(|i| {
        let slot = match (&i.kind, store) {
            (InstKind::StoreOutput { slot, .. }, true) => slot,
            (InstKind::LoadInput { slot, .. }, false)
            | (InstKind::LoadInterpolatedInput { slot, .. }, false)
            | (InstKind::LoadPerVertexInput { slot, .. }, false) => slot,
            _ => return,
        };
        out.push(slot.to_string());
    });
    out.sort();
    out.dedup();
    out
}

/// Compatibility-profile GLSL: fixed-function attributes and matrices become
/// attributes and uniforms, the fixed-function varyings land on the slots NIR gives
/// them (COLn, BFCn, TEXn, FOGC) instead of generic ones, and the pair optimizes.
#[test]
fn compatibility_profile_built_ins_import_to_their_slots() {
    if !tools() {
        return;
    }
    let vs = "#version 120
uniform vec4 tint;
void main() {
  gl_Position = ftransform();
  gl_FrontColor = gl_Color * tint;
  gl_BackColor = vec4(1.0) - gl_Color;
  gl_TexCoord[1] = gl_TextureMatrix[1] * gl_MultiTexCoord1;
  gl_FogFragCoord = gl_Vertex.z;
}
";
    let fs = "#version 120
void main() {
  gl_FragColor = gl_Color * gl_TexCoord[1].x + vec4(gl_FogFragCoord);
}
";
    let p = import("compat", vs, fs);
    let stored = slots_used(&p.producer, true);
    for s in ["COL0.x", "BFC0.w", "TEX1.x", "TEX1.w", "FOGC.x", "POS.w"] {
        assert!(stored.contains(&s.to_string()), "{s} not in {stored:?}");
    }
    assert!(stored.iter().all(|s| !s.starts_with("VAR")), "{stored:?}");
    // gl_Color in the FS is the colour slot (its back-face half is the slot's
    // business), interpolated like any smooth input.
    let loaded = slots_used(&p.consumer, false);
    assert_eq!(
        loaded,
        ["COL0.w", "COL0.x", "COL0.y", "COL0.z", "FOGC.x", "TEX1.x"],
        "{loaded:?}"
    );
    // ftransform() reads the 16 words of the MVP matrix: with tint's 4 and the 8
    // texture matrices' 128, 148 uniform words in all.
    assert_eq!(p.uniforms, 148);
    optimizes_equivalently(&p);
    // A stage that reads a fixed-function varying nobody writes is not a link error
    // (they are built-ins); the FS reads undefined values.
    let fs2 = "#version 120
void main() { gl_FragColor = gl_SecondaryColor; }
";
    let p2 = import("compat_unwritten", vs, fs2);
    assert!(slots_used(&p2.consumer, false).contains(&"COL1.x".to_string()));
}

#[test]
fn a_geometry_shader_without_layouts_gets_documented_defaults() {
    if !tools() {
        return;
    }
    use varysat::ir::{Primitive, StageInfo};
    // No layout at all (piglit's compile-only GS tests): glslang alone refuses it.
    // Reading vertex 2 is valid only if the assumed input primitive has three
    // vertices, so import validating the pair checks the `triangles` default.
    let gs = "#version 150
in vec2 v_uv[];
out vec2 g_uv;
void main() { g_uv = v_uv[2]; gl_Position = gl_in[2].gl_Position; EmitVertex(); }
";
    let vs = "#version 150
in vec4 pos;
in vec2 uv;
out vec2 v_uv;
void main() { gl_Position = pos; v_uv = uv; }
";
    let p = files("gs-nolayout", &[("a.vert", vs), ("a.geom", gs)]);
    let (pipe, warnings) =
        varysat::import::import_files_with_warnings(&p[0], &p[1], &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("a.geom") && w.contains("`triangles`") && w.contains("256")),
        "{warnings:?}"
    );
    let StageInfo::Geometry {
        input,
        output,
        max_vertices,
        ..
    } = pipe.consumer.info
    else {
        panic!("not a GS: {:?}", pipe.consumer.info)
    };
    assert_eq!(
        (input, output, max_vertices),
        (Primitive::Triangles, Primitive::Points, 256)
    );
    optimizes_equivalently(&pipe);
    // A declared input primitive is kept; only the output layout is added.
    let lines = gs
        .replace("#version 150\n", "#version 150\nlayout(lines) in;\n")
        .replace("[2]", "[1]");
    let p = files("gs-lines", &[("a.vert", vs), ("a.geom", &lines)]);
    let (pipe, warnings) =
        varysat::import::import_files_with_warnings(&p[0], &p[1], &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        warnings
            .iter()
            .any(|w| !w.contains("`triangles`") && w.contains("`points`")),
        "{warnings:?}"
    );
    assert!(matches!(
        pipe.consumer.info,
        StageInfo::Geometry {
            input: Primitive::Lines,
            ..
        }
    ));
    // The same GS fed by a triangles-reading index but a lines layout is refused:
    // the default never overrides what the shader says.
    let bad = lines.replace("[1]", "[2]");
    let p = files("gs-lines-bad", &[("a.vert", vs), ("a.geom", &bad)]);
    assert!(import_files(&p[0], &p[1], &ImportOptions::default()).is_err());
}

#[test]
fn gpu_shader4_and_dimension_named_lookups_compile_the_core_way() {
    if !tools() {
        return;
    }
    // GL_EXT_gpu_shader4 (glslang does not know it): `unsigned int`, integer
    // varyings, dimension-named lookups; a 1.x shadow lookup returns a vec4.
    let vs = "#version 120
#extension GL_EXT_gpu_shader4 : require
attribute vec4 pos;
attribute unsigned int k;
flat varying unsigned int v_k;
varying vec3 v_c;
void main() { gl_Position = pos; v_k = k ^ 5u; v_c = pos.xyz; }
";
    let fs = "#version 120
#extension GL_EXT_gpu_shader4 : require
uniform sampler2DArray arr;
uniform sampler2DShadow sh;
uniform usampler2D texels;
flat varying unsigned int v_k;
varying vec3 v_c;
void main() {
  vec4 s = shadow2DProj(sh,
                        vec4(v_c, 1.0));
  uvec4 t = texelFetch2D(texels, ivec2(v_k), 0);
  gl_FragColor = texture2DArray(arr, v_c) + s + vec4(t) + vec4(textureSize2D(texels, 0), 0, 0);
}
";
    let p = import("gpu-shader4", vs, fs);
    let fs_texs = {
        let mut n = 0;
        p.consumer.for_each_inst(|i| {
            if matches!(i.kind, InstKind::Texture { .. }) {
                n += 1;
            }
        });
        n
    };
    assert!(fs_texs > 0, "no texture lookups imported");
    optimizes_equivalently(&p);
}

#[test]
fn gl_clip_vertex_is_the_clip_vertex_slot() {
    if !tools() {
        return;
    }
    let vs = "#version 120
varying vec2 uv;
void main() {
  gl_Position = ftransform();
  gl_ClipVertex = gl_ModelViewMatrix * gl_Vertex;
  uv = gl_MultiTexCoord0.xy;
}
";
    let fs = "#version 120
varying vec2 uv;
void main() { gl_FragColor = vec4(uv, 0.0, 1.0); }
";
    let p = import("clip-vertex", vs, fs);
    let stores_clip_vertex = |s: &Shader| {
        let mut n = 0;
        s.for_each_inst(|i| {
            if let InstKind::StoreOutput { slot, .. } = &i.kind {
                if slot.slot == varysat::ir::Slot::ClipVertex {
                    n += 1;
                }
            }
        });
        n
    };
    assert_eq!(stores_clip_vertex(&p.producer), 4);
    // A system-value output: optimization keeps all four components.
    let out = optimizes_equivalently(&p);
    assert_eq!(stores_clip_vertex(&out.producer), 4);
}

/// Instructions of a shader (every statement, nested ones included).
fn inst_count(s: &Shader) -> usize {
    let mut n = 0;
    s.for_each_inst(|_| n += 1);
    n
}

#[test]
fn dynamically_indexed_uniform_arrays_are_indexed_loads() {
    if !tools() {
        return;
    }
    // Issue 16's case: a 192-element default-block array indexed by an attribute
    // (a skinning palette) used to become a selection over all 768 words.
    let vs = "#version 120
uniform vec4 palette[192];
uniform float scale;
attribute vec4 pos;
attribute float bone;
varying vec4 v_col;
varying float v_k;
void main() {
  int i = int(bone);
  gl_Position = pos + palette[i] * scale;
  v_col = palette[i + 1] + palette[3];
  v_k = scale;
}
";
    let fs = "#version 120
uniform vec4 palette[192];
varying vec4 v_col;
varying float v_k;
void main() { gl_FragColor = v_col * v_k + palette[3]; }
";
    let p = import("uniform-array", vs, fs);
    let (vs_n, fs_n) = (inst_count(&p.producer), inst_count(&p.consumer));
    assert!(vs_n < 120 && fs_n < 40, "VS {vs_n}, FS {fs_n} instructions");
    // The array is read through the default block's UBO, declared after the real
    // blocks (none here) with one word per uniform scalar: 768 + 1 words.
    assert_eq!(p.ubos.len(), 1);
    assert_eq!(p.ubos[0].size, (192 * 4 + 1) * 4);
    let (mut ubo, mut words) = (0, 0);
    for s in [&p.producer, &p.consumer] {
        s.for_each_inst(|i| match i.kind {
            InstKind::LoadUbo { .. } => ubo += 1,
            InstKind::LoadUniform { .. } => words += 1,
            _ => {}
        });
    }
    // VS: 4 + 4 dynamic + 4 constant palette loads; FS: 4 constant ones. `scale`
    // (not an array) stays a default-block word.
    assert_eq!(ubo, 16);
    assert!(words >= 1);
    let out = optimizes_equivalently(&p);
    // Uniform values still propagate: `v_k` (= `scale`) stops being a varying, so
    // the FS reads 4 input components instead of 5.
    let inputs = |s: &Shader| {
        let mut n = 0;
        s.for_each_inst(|i| {
            n += matches!(
                i.kind,
                InstKind::LoadInput { .. } | InstKind::LoadInterpolatedInput { .. }
            ) as usize;
        });
        n
    };
    assert_eq!(inputs(&p.consumer), 5);
    assert_eq!(inputs(&out.consumer), 4, "{}", varysat::text::print(&out));
}

#[test]
fn carry_borrow_and_extended_multiplies_import_as_alu_ops_and_exact_high_words() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in uvec2 a;
layout(location=1) in ivec2 b;
layout(location=0) flat out uvec4 v_u;
layout(location=1) flat out ivec2 v_i;
void main() {
  uint carry, borrow, hi, lo;
  uint s = uaddCarry(a.x, a.y, carry);
  uint d = usubBorrow(a.x, a.y, borrow);
  umulExtended(a.x, a.y, hi, lo);
  ivec2 ihi, ilo;
  imulExtended(b, b.yx, ihi, ilo);
  v_u = uvec4(s + carry, d + borrow, hi, lo);
  v_i = ihi + ilo;
  gl_Position = vec4(0.0);
}
";
    let fs = "#version 450
layout(location=0) flat in uvec4 v_u;
layout(location=1) flat in ivec2 v_i;
layout(location=0) out vec4 color;
void main() { color = vec4(v_u) + vec4(v_i, 0.0, 0.0); }
";
    let p = import("mul-extended", vs, fs);
    let names: Vec<String> = opaque_ops(&p.producer)
        .into_iter()
        .map(|(n, purity, _)| {
            assert_eq!(purity, Purity::Pure, "{n}");
            n
        })
        .collect();
    // Only the high words of the products are opaque: one per component.
    assert_eq!(
        names.iter().filter(|n| *n == "umulextended").count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| *n == "smulextended").count(),
        2,
        "{names:?}"
    );
    assert_eq!(names.len(), 3, "{names:?}");
    optimizes_equivalently(&p);
}

#[test]
fn core_extensions_and_amd_trinary_min_max_import() {
    if !tools() {
        return;
    }
    // GL_ARB_arrays_of_arrays (core in 4.30; glslang rejects the extension line)
    // in a 330 shader, and AMD's min3/mid3 (their own SPIR-V instruction set),
    // which are pure: computed from attributes only, they stay where they are or
    // move, and the interpreter gives them their real meaning.
    let vs = "#version 330
#extension GL_ARB_arrays_of_arrays : require
#extension GL_AMD_shader_trinary_minmax : require
layout(location=0) in vec4 pos;
layout(location=1) in ivec3 k;
out vec2 v_m;
void main() {
  float w[2][2] = float[2][2](float[2](pos.x, pos.y), float[2](pos.z, pos.w));
  v_m = vec2(mid3(w[0][0], w[0][1], w[1][0]), float(min3(k.x, k.y, k.z)));
  gl_Position = pos;
}
";
    let fs = "#version 150
#extension GL_ARB_shader_precision : require
#extension GL_ARB_texture_query_levels : require
uniform sampler2D t;
in vec2 v_m;
out vec4 color;
void main() { color = vec4(v_m, float(textureQueryLevels(t)), 1.0); }
";
    let p = import("core-ext", vs, fs);
    let ops = opaque_ops(&p.producer);
    let names: Vec<&str> = ops.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(
        names.contains(&"fmid3") && names.contains(&"smin3"),
        "{names:?}"
    );
    assert!(ops.iter().all(|(_, purity, code)| *purity == Purity::Pure
        && matches!(code, OpaqueCode::Ext(set, _) if set == "SPV_AMD_shader_trinary_minmax")));
    optimizes_equivalently(&p);
}

/// 16-bit uniform buffer members (std140: `a` at byte 0, `b` at 2, `c` at 4, the
/// `f16vec2` `d` at 8) import as the halves of the words holding them, the low half
/// at the lower address: `a` and `d.x` are `lo`, `b` and `d.y` are `hi`, `c` a whole
/// word. A member indexed dynamically whose half is not known is an error.
#[test]
fn sixteen_bit_ubo_members_import_as_halves_of_words() {
    use varysat::ir::Half;
    if !tools() {
        return;
    }
    let vs = include_str!("fixtures/f16_ubo.vert");
    let fs = include_str!("fixtures/f16_ubo.frag");
    let p = import("f16-ubo", vs, fs);
    let mut loads = std::collections::BTreeSet::new();
    let consts: std::collections::BTreeMap<_, _> = {
        let mut m = std::collections::BTreeMap::new();
        p.producer.for_each_inst(|i| {
            if let (InstKind::Const(k), Some(r)) = (&i.kind, i.result) {
                m.insert(r, *k);
            }
        });
        m
    };
    p.producer.for_each_inst(|i| {
        if let InstKind::LoadUbo { offset, half, .. } = &i.kind {
            loads.insert((consts.get(offset).copied(), *half));
        }
    });
    let want = [
        (Some(0), Half::Lo),
        (Some(0), Half::Hi),
        (Some(4), Half::Full),
        (Some(8), Half::Lo),
        (Some(8), Half::Hi),
    ];
    assert_eq!(
        loads,
        want.into_iter().collect(),
        "{}",
        varysat::text::print(&p)
    );
    let out = optimizes_equivalently(&p);
    // v_k is a uniform expression: propagated, its 16-bit loads now in the FS.
    let mut fs_halves = 0;
    out.consumer.for_each_inst(|i| {
        fs_halves +=
            matches!(i.kind, InstKind::LoadUbo { half, .. } if half != Half::Full) as usize;
    });
    assert_eq!(fs_halves, 2, "{}", varysat::text::print(&out));

    let dynamic = vs
        .replace(
            "uniform U { float16_t a; float16_t b; float c; f16vec2 d; } u;",
            "uniform U { f16vec4 e[4]; int i; } u;",
        )
        .replace("float(u.a) - float(u.b) + u.c", "float(u.e[u.i].y)")
        .replace("float(u.d.y - u.d.x)", "1.0");
    let err = import_with("f16-ubo-dyn", &dynamic, fs, &ImportOptions::default())
        .expect_err("a dynamically indexed 16-bit member is refused");
    assert!(
        err.contains("16-bit uniform buffer member indexed dynamically"),
        "{err}"
    );
}

/// Imports a two-stage GLSL pair with the given file names; the pipeline and the
/// import warnings.
fn import_named(name: &str, a: (&str, &str), b: (&str, &str)) -> (Pipeline, Vec<String>) {
    let p = files(name, &[a, b]);
    varysat::import::import_files_with_warnings(&p[0], &p[1], &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A GLSL 1.20 geometry shader of `GL_ARB_geometry_shader4`: `varying in/out`,
/// `gl_PositionIn`, `gl_VerticesIn` (a constant: it sizes an array),
/// `gl_PrimitiveIDIn`, the fixed-function `gl_FrontColorIn` and a redeclared
/// `gl_TexCoordIn`, writing `gl_FrontColor` and `gl_TexCoord[0]`.
const GS4_GS: &str = "#version 120
#extension GL_ARB_geometry_shader4 : enable
varying in float v_off[];
varying in vec4 gl_TexCoordIn[][2];
varying out float g_off;
varying float g_sum;
void main() {
  float w[gl_VerticesIn];
  for (int i = 0; i < gl_VerticesIn; i++)
    w[i] = v_off[i] * gl_TexCoordIn[i][1].y;
  for (int i = 0; i < gl_VerticesIn; i++) {
    g_off = w[i] + float(gl_PrimitiveIDIn);
    g_sum = w[0] + w[1] + w[2];
    gl_FrontColor = gl_FrontColorIn[i];
    gl_TexCoord[0] = gl_TexCoordIn[i][1] * 2.0;
    gl_Position = gl_PositionIn[i];
    EmitVertex();
  }
}
";

const GS4_VS: &str = "#version 120
attribute vec4 pos;
attribute float off;
varying float v_off;
void main() {
  gl_Position = pos;
  v_off = off;
  gl_FrontColor = pos.yxzw;
  gl_TexCoord[1] = pos * off;
}
";

/// `GL_ARB_geometry_shader4` geometry shaders (which glslang does not know) import
/// as the GLSL 1.50 shaders they mean, with the extension's initial program state
/// (triangles in, triangle strip out) since the input primitive is program state;
/// their fixed-function varyings land on the fixed-function slots on both sides.
#[test]
fn arb_geometry_shader4_shaders_import_with_the_initial_program_state() {
    if !tools() {
        return;
    }
    use varysat::ir::{Primitive, StageInfo};
    let (vs_gs, warnings) = import_named("gs4-vs", ("a.vert", GS4_VS), ("a.geom", GS4_GS));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`triangles`") && w.contains("`triangle_strip`")),
        "{warnings:?}"
    );
    let StageInfo::Geometry { input, output, .. } = vs_gs.consumer.info else {
        panic!("not a GS: {:?}", vs_gs.consumer.info)
    };
    assert_eq!(
        (input, output),
        (Primitive::Triangles, Primitive::TriangleStrip)
    );
    // The GS reads the VS's colour and texture coordinate 1 where the VS wrote them.
    let loaded = slots_used(&vs_gs.consumer, false);
    for s in ["COL0.x", "COL0.w", "TEX1.y", "TEX1.w", "POS.w"] {
        assert!(loaded.contains(&s.to_string()), "{s} not in {loaded:?}");
    }
    optimizes_equivalently(&vs_gs);
    let fs = "#version 110
varying float g_off;
varying float g_sum;
void main() { gl_FragColor = gl_Color * gl_TexCoord[0] + vec4(g_off, g_sum, 0.0, 0.0); }
";
    let (gs_fs, _) = import_named("gs4-fs", ("a.geom", GS4_GS), ("a.frag", fs));
    let stored = slots_used(&gs_fs.producer, true);
    for s in ["COL0.x", "TEX0.x", "TEX0.w", "POS.x"] {
        assert!(stored.contains(&s.to_string()), "{s} not in {stored:?}");
    }
    // Two generic varyings (g_off, g_sum) and nothing else generic.
    assert_eq!(
        stored.iter().filter(|s| s.starts_with("VAR")).count(),
        2,
        "{stored:?}"
    );
    optimizes_equivalently(&gs_fs);
}

/// GLSL 1.30 `GL_ARB_geometry_shader4` clip distances: a redeclared
/// `gl_ClipDistanceIn[3][2]` used whole (`length()`, passed to a function), read
/// from the VS's `gl_ClipDistance`.
#[test]
fn arb_geometry_shader4_clip_distance_inputs_are_whole_arrays() {
    if !tools() {
        return;
    }
    let vs = "#version 130
in vec4 pos;
out float gl_ClipDistance[2];
void main() { gl_Position = pos; gl_ClipDistance[0] = pos.x; gl_ClipDistance[1] = pos.y; }
";
    let gs = "#version 130
#extension GL_ARB_geometry_shader4: enable
in float gl_ClipDistanceIn[3][2];
flat out int n;
out float s;
float sum(float d[3][2]) { return d[0][1] + d[1][0] + d[2][1]; }
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_PositionIn[i];
    n = gl_ClipDistanceIn.length() * 10 + gl_ClipDistanceIn[0].length();
    s = sum(gl_ClipDistanceIn);
    EmitVertex();
  }
}
";
    let (p, _) = import_named("gs4-clip", ("a.vert", vs), ("a.geom", gs));
    let loaded = slots_used(&p.consumer, false);
    assert!(
        loaded.iter().any(|s| s.starts_with("CLIP_DIST")),
        "{loaded:?}"
    );
    // n is the constant 32 in every emitted vertex.
    let mut has_32 = false;
    p.consumer.for_each_inst(|i| {
        if let InstKind::Const(bits) = &i.kind {
            has_32 |= *bits == 32;
        }
    });
    assert!(has_32, "gl_ClipDistanceIn is not [3][2]");
    optimizes_equivalently(&p);
}

/// A GLSL 1.50 compatibility geometry shader reads the fixed-function varyings as
/// `gl_in[i].gl_FrontColor` / `gl_in[i].gl_TexCoord[j]` and writes `gl_FrontColor`,
/// `gl_TexCoord[]` and a `varying` (an output in a geometry shader).
#[test]
fn compatibility_geometry_shaders_carry_fixed_function_varyings() {
    if !tools() {
        return;
    }
    let vs = "#version 150 compatibility
void main() {
  gl_Position = gl_Vertex;
  gl_FrontColor = gl_Color;
  gl_TexCoord[2] = gl_MultiTexCoord0;
}
";
    let gs = "#version 150 compatibility
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
varying float v;
out vec4 gl_TexCoord[5];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    gl_FrontColor = gl_in[i].gl_FrontColor;
    gl_TexCoord[1] = gl_in[i].gl_TexCoord[2];
    gl_TexCoord[4] = gl_in[i].gl_TexCoord[2] * 4.0;
    v = gl_in[ (i + 1) % 3 ].gl_FrontColor.x;
    EmitVertex();
  }
}
";
    let fs = "#version 110
varying float v;
varying vec4 gl_TexCoord[5];
void main() { gl_FragColor = gl_Color + gl_TexCoord[4] + vec4(v); }
";
    let (vs_gs, _) = import_named("gs-ff-vs", ("a.vert", vs), ("a.geom", gs));
    let loaded = slots_used(&vs_gs.consumer, false);
    for s in ["COL0.x", "TEX2.x", "TEX2.w"] {
        assert!(loaded.contains(&s.to_string()), "{s} not in {loaded:?}");
    }
    assert!(loaded.iter().all(|s| !s.starts_with("VAR")), "{loaded:?}");
    optimizes_equivalently(&vs_gs);
    let (gs_fs, _) = import_named("gs-ff-fs", ("a.geom", gs), ("a.frag", fs));
    let stored = slots_used(&gs_fs.producer, true);
    for s in ["COL0.w", "TEX4.x", "VAR0.x"] {
        assert!(stored.contains(&s.to_string()), "{s} not in {stored:?}");
    }
    let fs_loads = slots_used(&gs_fs.consumer, false);
    assert!(fs_loads.contains(&"TEX4.x".to_string()), "{fs_loads:?}");
    optimizes_equivalently(&gs_fs);
}

/// Two dynamic indices into one I/O array (`v[i][j]`, an array of arrays) on both
/// sides: one indirect slot offset `i * 2 + j` over the whole outer array.
#[test]
fn two_dynamic_indices_into_one_io_array_import() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in ivec2 ij;
layout(location=0) out vec2 v[3][2];
void main() {
  gl_Position = pos;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      v[i][j] = pos.xy * float(i * 2 + j);
  v[k.x][k.y] = pos.zw;
}
";
    let fs = "#version 450
layout(location=0) in vec2 v[3][2];
layout(location=6) flat in ivec2 k;
layout(location=0) out vec4 c;
void main() { c = vec4(v[k.x][k.y], v[2 - k.x][1 - k.y]); }
";
    let vs = vs.replace(
        "layout(location=0) out vec2 v[3][2];",
        "layout(location=0) out vec2 v[3][2];\nlayout(location=6) flat out ivec2 k;",
    );
    // In-range indices (random attributes are not), so the reads see the stores.
    let vs = vs.replace(
        "gl_Position = pos;",
        "gl_Position = pos; k = ivec2(uint(ij.x) % 3u, uint(ij.y) % 2u);",
    );
    let p = import("two-dyn", &vs, fs);
    let mut indirect_lens = vec![];
    for s in [&p.producer, &p.consumer] {
        s.for_each_inst(|i| match &i.kind {
            InstKind::StoreOutput {
                indirect: Some(ind),
                ..
            }
            | InstKind::LoadInterpolatedInput {
                indirect: Some(ind),
                ..
            } => indirect_lens.push(ind.len),
            _ => {}
        });
    }
    // The VS's dynamic store and the FS's two dynamic reads, each over all six
    // locations of the outer array.
    assert!(indirect_lens.len() >= 3, "{indirect_lens:?}");
    assert!(indirect_lens.iter().all(|&n| n == 6), "{indirect_lens:?}");
    optimizes_equivalently(&p);
    // The same shaders over a flat `v[6]` indexed `v[i * 2 + j]` (one dynamic
    // index, the path imported before) behave identically in the interpreter: the
    // combined offset is the right slot.
    let flat = |s: &str| {
        s.replace("vec2 v[3][2]", "vec2 v[6]")
            .replace("v[i][j]", "v[i * 2 + j]")
            .replace("v[k.x][k.y]", "v[k.x * 2 + k.y]")
            .replace("v[2 - k.x][1 - k.y]", "v[(2 - k.x) * 2 + 1 - k.y]")
    };
    let q = import("two-dyn-flat", &flat(&vs), &flat(fs));
    let cfg = EquivConfig {
        runs: 8,
        ..EquivConfig::default()
    };
    check_equivalent(&p, &q, &cfg).unwrap_or_else(|e| panic!("{e}"));
}

/// Booleans in the default uniform block (a `bvec3` selecting between doubles,
/// as piglit's fp64 `mix` tests do) and in a uniform block are 32-bit words
/// compared with zero.
#[test]
fn boolean_uniforms_are_words_compared_with_zero() {
    if !tools() {
        return;
    }
    // `v` unlocated on both sides: GL does not link a located output to an
    // unlocated input of its name (and 4.00 has no locations on FS inputs).
    let vs = "#version 450
layout(location=0) in vec4 pos;
out vec4 v;
layout(std140, binding=0) uniform U { bool on; vec4 k; };
void main() { gl_Position = pos; v = on ? pos * k : k; }
";
    let fs = "#version 400
uniform dvec3 a;
uniform dvec3 b;
uniform bvec3 sel;
uniform bool flip;
in vec4 v;
out vec4 c;
void main() {
  dvec3 r = mix(a, b, sel);
  c = flip ? vec4(r, 1.0) * v : v;
}
";
    let p = import("bool-uniforms", vs, fs);
    let mut compared = 0;
    for s in [&p.producer, &p.consumer] {
        s.for_each_inst(|i| {
            if matches!(
                i.kind,
                InstKind::Alu {
                    op: varysat::ir::AluOp::INe,
                    ..
                }
            ) {
                compared += 1;
            }
        });
    }
    // on, sel.x/y/z and flip.
    assert!(compared >= 5, "{compared} comparisons");
    optimizes_equivalently(&p);
}

/// A loop whose body breaks from one branch of an `if` and carries a value
/// computed in the other branch's nested `if` back to its header: after spirv-opt
/// the back edge's phi reads an id the branch defines (`%N is used but not defined
/// where it is used` before phi operands counted as uses at their incoming block).
/// The colour the loop leaves is green; the interpreter must agree on the
/// imported pair, and the optimized pair must stay equivalent.
#[test]
fn a_value_a_branch_hands_to_the_loop_back_edge_imports() {
    if !tools() {
        return;
    }
    use varysat::interpreter::{Item, RunConfig};
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out vec4 colour;
void main() {
  gl_Position = pos;
  vec4 c = vec4(1.0, 0.0, 0.0, 1.0);
  int i = 0;
  int j = 0;
  do {
    i++;
    j++;
    if (i >= 3) {
      if (i == 3) {
        c = vec4(0.0, 1.0, 0.0, 1.0);
        j++;
        if (j != 6)
          c = vec4(1.0, 0.0, 1.0, 1.0);
      } else {
        c = vec4(1.0, 1.0, 0.0, 1.0);
      }
      break;
    } else if (i != 1) {
      j++;
    }
    if (i >= 5) {
      j++;
      break;
    } else if (i != 1) {
      j++;
    }
  } while (i < 4);
  colour = c;
}
";
    let fs = "#version 450
layout(location=0) in vec4 colour;
layout(location=0) out vec4 o;
void main() { o = colour; }
";
    let p = import("phi-back-edge", vs, fs);
    // i = 1: j = 1; i = 2: j = 2, 3, 4; i = 3: j = 5, 6 -> green, break.
    let o = varysat::interpreter::run(&p, &RunConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = 0;
    for (key, v) in &o.values {
        let Item::Output(slot) = key.item else {
            continue;
        };
        let want = match slot.to_string().as_str() {
            "DATA0.x" | "DATA0.z" => 0.0,
            "DATA0.y" | "DATA0.w" => 1.0,
            _ => continue,
        };
        assert_eq!(v.as_f32(), want, "{key:?}");
        seen += 1;
    }
    assert!(seen > 0, "no fragment output observed");
    optimizes_equivalently(&p);
}

/// Compatibility tessellation shaders: the TCS and TES read the fixed-function
/// varyings through `gl_in[i].gl_FrontColor`, and the TES writes `gl_FrontColor`
/// and `gl_TexCoord[]` onto the slots the FS reads.
#[test]
fn compatibility_tessellation_shaders_carry_fixed_function_varyings() {
    if !tools() {
        return;
    }
    let vs = "#version 150 compatibility
void main() { gl_Position = gl_Vertex; gl_FrontColor = gl_Color; }
";
    let tcs = "#version 150 compatibility
#extension GL_ARB_tessellation_shader: require
layout(vertices = 3) out;
out vec4 c[];
void main() {
  gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
  c[gl_InvocationID] = gl_in[gl_InvocationID].gl_FrontColor * 2.0;
  gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
  gl_TessLevelInner[0] = 1.0;
}
";
    let tes = "#version 150 compatibility
#extension GL_ARB_tessellation_shader: require
layout(triangles) in;
in vec4 c[];
void main() {
  gl_Position = gl_in[0].gl_Position * gl_TessCoord.x + gl_in[1].gl_Position * gl_TessCoord.y
              + gl_in[2].gl_Position * gl_TessCoord.z;
  gl_FrontColor = c[0] * gl_TessCoord.x + c[1] * gl_TessCoord.y + c[2] * gl_TessCoord.z;
  gl_TexCoord[1] = vec4(gl_TessCoord, 1.0);
}
";
    let fs = "#version 110
void main() { gl_FragColor = gl_Color + gl_TexCoord[1]; }
";
    let (vs_tcs, _) = import_named("tess-ff-vs", ("a.vert", vs), ("a.tesc", tcs));
    let loaded = slots_used(&vs_tcs.consumer, false);
    assert!(loaded.contains(&"COL0.x".to_string()), "{loaded:?}");
    assert!(loaded.iter().all(|s| !s.starts_with("VAR")), "{loaded:?}");
    optimizes_equivalently(&vs_tcs);
    let (tes_fs, _) = import_named("tess-ff-fs", ("a.tese", tes), ("a.frag", fs));
    let stored = slots_used(&tes_fs.producer, true);
    for s in ["COL0.x", "COL0.w", "TEX1.x", "TEX1.w"] {
        assert!(stored.contains(&s.to_string()), "{s} not in {stored:?}");
    }
    assert!(stored.iter().all(|s| !s.starts_with("VAR")), "{stored:?}");
    optimizes_equivalently(&tes_fs);
}

/// The FS outputs `DATA0.x..w` of every fragment the interpreter shades (seed 0).
fn fragment_colours(p: &Pipeline) -> Vec<[f32; 4]> {
    fragment_colours_with(p, &varysat::interpreter::RunConfig::default())
}

/// [`fragment_colours`] of a run with `cfg`.
fn fragment_colours_with(p: &Pipeline, cfg: &varysat::interpreter::RunConfig) -> Vec<[f32; 4]> {
    use varysat::interpreter::Item;
    let o = varysat::interpreter::run(p, cfg).unwrap_or_else(|e| panic!("{e}"));
    type Place = (Option<varysat::ir::Stage>, Vec<varysat::interpreter::Unit>);
    let mut by_fragment: std::collections::BTreeMap<Place, [f32; 4]> = Default::default();
    for (key, v) in &o.values {
        let Item::Output(slot) = key.item else {
            continue;
        };
        let name = slot.to_string();
        let Some(c) = name.strip_prefix("DATA0.") else {
            continue;
        };
        let i = "xyzw".find(c).expect("component");
        let place = (key.stage, key.path.clone());
        by_fragment.entry(place).or_default()[i] = v.as_f32();
    }
    by_fragment.into_values().collect()
}

/// The vertex shader of piglit's `layout-location-named-block-with-array` (GLSL
/// 4.20): `block` at location 0 and `block2` at location 4, four colours.
const BLOCKS_420_VS: &str = "#version 420

in vec4 piglit_vertex;

layout(location = 0) out block {
\tvec4 a[2];
} name;

layout(location = 4) out block2 {
\tvec4 a[2];
} name2;

void main()
{
\tname.a[0] = vec4(0.0, 1.0, 0.0, 1.0);
\tname.a[1] = vec4(0.0, 0.0, 1.0, 1.0);
\tname2.a[0] = vec4(0.0, 1.0, 1.0, 1.0);
\tname2.a[1] = vec4(1.0, 0.0, 0.0, 1.0);
\tgl_Position = piglit_vertex;
}
";

/// `layout(location)` on in/out blocks at `#version 420` (piglit's
/// `arb_separate_shader_objects/execution/layout-location-named-block-with-array`):
/// desktop GL accepts it from 4.10, glslang only from 4.40 or with
/// `GL_ARB_enhanced_layouts`, which the front end then enables. The FS sees the
/// colours the VS wrote; a 3.30 shader without `GL_ARB_separate_shader_objects`,
/// where GL has no output locations at all, is still refused.
#[test]
fn locations_on_io_blocks_below_4_40_compile() {
    if !tools() {
        return;
    }
    let vs = BLOCKS_420_VS;
    let fs = "#version 420

layout(location = 0) in block {
\tvec4 a[2];
} name;

layout(location = 4) in block2 {
\tvec4 a[2];
} name2;

out vec4 color;

void main()
{
\tcolor = name2.a[1] + name.a[1] * 0.5;
}
";
    let p = import("block-location-420", vs, fs);
    let colours = fragment_colours(&p);
    assert!(!colours.is_empty(), "no fragment output observed");
    for c in colours {
        assert_eq!(c, [1.0, 0.0, 0.5, 1.5]);
    }
    optimizes_equivalently(&p);
    // GLSL 3.30 has no output locations without GL_ARB_separate_shader_objects.
    let old = |s: &str| s.replace("#version 420", "#version 330");
    let err = import_with(
        "block-location-330",
        &old(vs),
        &old(fs),
        &ImportOptions::default(),
    )
    .expect_err("3.30 without separate shader objects");
    assert!(err.contains("a.vert:5:"), "{err}");
}

/// An array of uniform blocks indexed dynamically (piglit's
/// `arb_gpu_shader5/execution/ubo_array_indexing/gs-array-nonconst`, as a VS → FS
/// pair): each element is a UBO of its own, numbered consecutively; `arr[n]`
/// loads from every element and selects on `n`, while `color[m]` stays an indexed
/// load. With piglit's block contents bound as known uniforms, the interpreter
/// gives the colours piglit probes for; an `n` past the array (undefined in GLSL
/// and Vulkan) reads element 0.
#[test]
fn dynamically_indexed_arrays_of_uniform_blocks_import() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
uniform block {
  vec4 color[2];
} arr[4];
uniform int n;
uniform int m;
layout(location=0) flat out vec4 c;
void main() { gl_Position = pos; c = arr[n].color[m]; }
";
    let fs = "#version 450
uniform block {
  vec4 color[2];
} arr[4];
layout(location=0) flat in vec4 c;
layout(location=0) out vec4 o;
void main() { o = c + arr[2].color[1] * 0.5; }
";
    let p = import("ubo-array", vs, fs);
    // Four UBOs of two std140 vec4s; the default block's `m` and `n` are words 0, 1.
    assert_eq!(p.ubos.len(), 4);
    assert!(p.ubos.iter().all(|u| u.size == 32), "{:?}", p.ubos);
    // piglit's data: block i holds color[0], color[1].
    let data: [[[f32; 4]; 2]; 4] = [
        [[0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
        [[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]],
        [[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
        [[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0]],
    ];
    let mut known = varysat::ir::KnownUniforms::new();
    for (b, block) in data.iter().enumerate() {
        for (v, vec) in block.iter().enumerate() {
            for (k, x) in vec.iter().enumerate() {
                let offset = (v * 16 + k * 4) as u32;
                known = known.with_ubo(b as u32, offset, x.to_bits());
            }
        }
    }
    // arr[2].color[1] * 0.5, added by the FS.
    let fs_term = [0.0, 0.0, 0.5, 0.0];
    // piglit's (n, m) and probed colours, then an out-of-range n (element 0).
    let cases: [(i32, i32, [f32; 4]); 5] = [
        (0, 1, [1.0, 0.0, 0.0, 0.0]),
        (1, 0, [0.0, 1.0, 0.0, 0.0]),
        (2, 1, [0.0, 0.0, 1.0, 0.0]),
        (3, 0, [1.0, 1.0, 1.0, 1.0]),
        (7, 1, [1.0, 0.0, 0.0, 0.0]),
    ];
    for (n, m, want) in cases {
        let known = known
            .clone()
            .with_uniform(0, m as u32)
            .with_uniform(1, n as u32);
        let cfg = varysat::interpreter::RunConfig {
            known,
            ..Default::default()
        };
        let colours = fragment_colours_with(&p, &cfg);
        assert!(!colours.is_empty(), "no fragment output observed");
        let want: Vec<f32> = want.iter().zip(fs_term).map(|(a, b)| a + b).collect();
        for c in colours {
            assert_eq!(c.to_vec(), want, "n = {n}, m = {m}");
        }
    }
    optimizes_equivalently(&p);
}

/// GL links explicitly located varyings by location and component, whatever their
/// names (GL 4.6 §7.4.1): the VS's `a`/`b` at locations 0/1 are the FS's `b`/`a`,
/// the floats `c`/`d` at components 0/1 of location 2 are crossed the same way,
/// and the unlocated `e` still links by name. By name the colour would be
/// (0.5, 1.0, 0.125 + 0.5, 1.5) with `d`, `c` swapped; by location it is `b = red`,
/// `a = green`, `d = 0.25`, `c = 0.5`.
const VS_SWAPPED: &str = "#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 a;
layout(location = 1) out vec4 b;
layout(location = 2, component = 0) out float c;
layout(location = 2, component = 1) out float d;
out vec4 e;
void main() {
  gl_Position = pos;
  a = vec4(1.0, 0.0, 0.0, 1.0);
  b = vec4(0.0, 1.0, 0.0, 1.0);
  c = 0.25;
  d = 0.5;
  e = vec4(0.0, 0.0, 0.125, 0.0);
}
";

#[test]
fn explicitly_located_varyings_link_by_location_not_name() {
    if !tools() {
        return;
    }
    let fs = "#version 450
layout(location = 0) in vec4 b;
layout(location = 1) in vec4 a;
layout(location = 2, component = 0) in float d;
layout(location = 2, component = 1) in float c;
in vec4 e;
layout(location = 0) out vec4 color;
void main() { color = b + a * 0.5 + vec4(0.0, 0.0, d + c * 4.0, 0.0) + e; }
";
    let p = import("swapped-locations", VS_SWAPPED, fs);
    let want = [1.0, 0.5, 0.25 + 0.5 * 4.0 + 0.125, 1.5];
    let colours = fragment_colours(&p);
    assert!(!colours.is_empty(), "no fragment output observed");
    for c in colours {
        assert_eq!(c, want);
    }
    let opt = optimizes_equivalently(&p);
    for c in fragment_colours(&opt) {
        assert_eq!(c, want, "optimized");
    }
}

/// piglit's `arb_separate_shader_objects/execution/layout-location-named-block-with-array`
/// (GLSL 4.20): the VS's `block` at location 0 is the FS's `block2`, and the VS's
/// `block2` at location 4 the FS's `block`; the FS reads `name.a[1]`, which is the
/// VS's `name2.a[1]`, red (piglit probes for red).
#[test]
fn located_blocks_link_by_location_across_block_names() {
    if !tools() {
        return;
    }
    let vs = BLOCKS_420_VS;
    let fs = "#version 420

layout(location = 4) in block {
\tvec4 a[2];
} name;

layout(location = 0) in block2 {
\tvec4 a[2];
} name2;

out vec4 color;

void main()
{
\tcolor = name.a[1];
}
";
    let p = import("crossed-blocks", vs, fs);
    let colours = fragment_colours(&p);
    assert!(!colours.is_empty(), "no fragment output observed");
    for c in colours {
        assert_eq!(c, [1.0, 0.0, 0.0, 1.0]);
    }
    let opt = optimizes_equivalently(&p);
    for c in fragment_colours(&opt) {
        assert_eq!(c, [1.0, 0.0, 0.0, 1.0], "optimized");
    }
}

/// Members of a block that carry locations match located variables member by
/// member (piglit's `arb_enhanced_layouts/execution/block-member-locations/
/// sso-block-member-layout-location`, separable programs): `c` at location 2
/// (blue) reaches the FS's `c`, `d` after it at 3 (white) its `d`.
#[test]
fn block_members_with_locations_link_to_located_variables() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out block {
\tlayout(location = 2) vec4 c;
\tvec4 d;
\tlayout(location = 0) vec4 a;
\tvec4 b;
} name;
void main()
{
\tname.a = vec4(1.0, 0.0, 0.0, 1.0);
\tname.b = vec4(0.0, 1.0, 0.0, 1.0);
\tname.c = vec4(0.0, 0.0, 1.0, 1.0);
\tname.d = vec4(1.0, 1.0, 1.0, 1.0);
\tgl_Position = pos;
}
";
    let fs = "#version 450
layout(location = 0) in vec4 a;
layout(location = 1) in vec4 b;
layout(location = 2) in vec4 c;
layout(location = 3) in vec4 d;
layout(location = 0) out vec4 color;
void main() { color = c + d * 0.5 + b * 0.25 + a * 0.125; }
";
    let p = import("block-members", vs, fs);
    let want = [0.5 + 0.125, 0.5 + 0.25, 1.5, 1.875];
    let colours = fragment_colours(&p);
    assert!(!colours.is_empty(), "no fragment output observed");
    for c in colours {
        assert_eq!(c, want);
    }
    optimizes_equivalently(&p);
}

/// Two located varyings at one location must have the same type (a GL link
/// error, reported at the input's declaration); an unlocated input does not
/// match a located output of its name, nor an input at a component no output
/// starts at.
#[test]
fn located_varyings_of_other_types_or_places_do_not_link() {
    if !tools() {
        return;
    }
    let fs = "#version 450
layout(location = 0) in vec4 b;
layout(location = 1) in vec2 a;
layout(location = 0) out vec4 color;
void main() { color = b + a.xyxy; }
";
    let err = import_with("located-type", VS_SWAPPED, fs, &ImportOptions::default())
        .expect_err("vec2 against vec4 at location 1");
    assert!(
        err.contains("a.frag:3:30: error: link error: input `a` at location 1 is vec2")
            && err.contains("output `b`")
            && err.contains("vec4"),
        "{err}"
    );
    let unlocated = "#version 450
in vec4 a;
layout(location = 0) out vec4 color;
void main() { color = a; }
";
    let err = import_with(
        "located-name",
        VS_SWAPPED,
        unlocated,
        &ImportOptions::default(),
    )
    .expect_err("`a` is located in the VS only");
    assert!(
        err.contains("`a` (matched by name)") && err.contains("link error"),
        "{err}"
    );
    let component = "#version 450
layout(location = 2, component = 2) in float c;
layout(location = 0) out vec4 color;
void main() { color = vec4(c); }
";
    let err = import_with(
        "located-comp",
        VS_SWAPPED,
        component,
        &ImportOptions::default(),
    )
    .expect_err("nothing at location 2 component 2");
    assert!(err.contains("location 2 component 2"), "{err}");
    // Block members at other components (piglit's `arb_enhanced_layouts/linker/
    // component-layout/vs-to-fs-mismatch-ifc`, a link error there too).
    let vs = "#version 450
out TheBlock {
  layout(location = 0) vec3 a[2];
  layout(location = 0, component = 3) float b;
} blk;
void main() { blk.a[0] = vec3(1.0); blk.a[1] = vec3(0.5); blk.b = 0.5; gl_Position = vec4(0.0); }
";
    let fs = "#version 450
in TheBlock {
  layout(location = 0, component = 1) vec3 a[2];
  layout(location = 0, component = 0) float b;
} blk;
layout(location = 0) out vec4 color;
void main() { color = vec4(blk.b, blk.a[0]); }
";
    let err = import_with("located-members", vs, fs, &ImportOptions::default())
        .expect_err("members at other components");
    assert!(
        err.contains("`blk` (location 0 component 1)") && err.contains("link error"),
        "{err}"
    );
}

/// A GL atomic counter array (OpenGL SPIR-V's `AtomicCounter` storage class) is a
/// run of words of a storage buffer of its own: counters of one binding share it
/// at their offsets, apart from a storage block at the same binding number (GL
/// binds counter buffers and storage buffers separately; glslang allows counter
/// binding 0 only). A dynamically indexed
/// increment `c[n][m]` addresses word `offset/4 + 3n + m`: with `n = 1, m = 2`
/// bound it does exactly what `c[1][2]` does, with `n = 0` it does not.
#[test]
fn atomic_counter_arrays_are_words_of_a_counter_buffer() {
    if !tools() {
        return;
    }
    let vs = |index: &str| {
        format!(
            "#version 450
layout(location=0) in vec4 pos;
layout(binding=0, offset=8) uniform atomic_uint c[2][3];
layout(binding=0, offset=0) uniform atomic_uint d;
uniform int n;
uniform int m;
layout(location=0) flat out uint v;
void main() {{
  gl_Position = pos;
  atomicCounterIncrement(c[{index}]);
  v = atomicCounter(c[1][2]) + atomicCounter(d) + uint(n - m);
}}
"
        )
    };
    let fs = "#version 450
layout(binding=0, std430) buffer B { uint x; } b;
layout(location=0) flat in uint v;
layout(location=0) out vec4 color;
void main() { color = vec4(float(v + atomicAdd(b.x, 1u))); }
";
    let dynamic = import("counters-dyn", &vs("n][m"), fs);
    let fixed = import("counters-const", &vs("1][2"), fs);
    // The counters' buffer and constant word addresses; the storage block's buffer.
    let atomics = |s: &Shader| {
        let mut consts = std::collections::BTreeMap::new();
        s.for_each_inst(|i| {
            if let (Some(r), InstKind::Const(k)) = (i.result, &i.kind) {
                consts.insert(r, *k);
            }
        });
        let mut out = vec![];
        s.for_each_inst(|i| {
            if let InstKind::Opaque { op, srcs } = &i.kind {
                let addr = srcs.first().and_then(|a| consts.get(a).copied());
                out.push((op.name.clone(), op.purity, op.resource, addr));
            }
        });
        out
    };
    use varysat::ir::Resource;
    let (vs_ops, fs_ops) = (atomics(&dynamic.producer), atomics(&dynamic.consumer));
    let counter = Resource::Buffer(1);
    let load = |w| {
        (
            "atomicload".to_string(),
            Purity::Effect,
            Some(counter),
            Some(w),
        )
    };
    // c[1][2] is word 8/4 + 5, d word 0.
    assert!(vs_ops.contains(&load(7)), "{vs_ops:?}");
    assert!(vs_ops.contains(&load(0)), "{vs_ops:?}");
    let inc = (
        "atomiciincrement".to_string(),
        Purity::Effect,
        Some(counter),
        None,
    );
    assert!(vs_ops.contains(&inc), "{vs_ops:?}");
    let ssbo = (
        "atomiciadd".to_string(),
        Purity::Effect,
        Some(Resource::Buffer(0)),
        Some(0),
    );
    assert_eq!(fs_ops, vec![ssbo]);
    let inc_fixed = (
        "atomiciincrement".to_string(),
        Purity::Effect,
        Some(counter),
        Some(7),
    );
    assert!(atomics(&fixed.producer).contains(&inc_fixed));
    // The default block: `m` is word 0, `n` word 1.
    let with = |n: u32, m: u32| EquivConfig {
        runs: 4,
        run: varysat::interpreter::RunConfig {
            known: varysat::ir::KnownUniforms::new()
                .with_uniform(0, m)
                .with_uniform(1, n),
            ..Default::default()
        },
        ..EquivConfig::default()
    };
    check_equivalent(&dynamic, &fixed, &with(1, 2)).unwrap_or_else(|e| panic!("{e}"));
    assert!(check_equivalent(&dynamic, &fixed, &with(0, 2)).is_err());
    let out = optimizes_equivalently(&dynamic);
    let count = |s: &Shader, name: &str| opaque_ops(s).iter().filter(|o| o.0 == name).count();
    assert_eq!(count(&out.producer, "atomiciincrement"), 1);
    assert_eq!(count(&out.producer, "atomicload"), 2);
    // Export regenerates the stages from the IR: each counter word goes back to the
    // variable holding it (`c` at a dynamic index split into its two array indices,
    // `d`), valid OpenGL SPIR-V that imports back equivalent.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("varysat-import-features-counters-dyn");
    let (_, (pm, cm)) = varysat::import::import_files_with_modules(
        &dir.join("a.vert"),
        &dir.join("a.frag"),
        &ImportOptions::default(),
    )
    .expect("imports");
    let (vs_words, fs_words) =
        varysat::export::pipeline_to_spirv(&out, &pm, &cm).expect("counters export");
    let vs_bytes = varysat::export::to_bytes(&vs_words);
    let file = dir.join("exported.vert.spv");
    std::fs::write(&file, &vs_bytes).expect("write");
    let val = std::process::Command::new("spirv-val")
        .args(["--target-env", "opengl4.5"])
        .arg(&file)
        .output()
        .expect("spirv-val runs");
    assert!(
        val.status.success(),
        "{}",
        String::from_utf8_lossy(&val.stderr)
    );
    let back = varysat::import::import_spirv(
        &vs_bytes,
        &varysat::export::to_bytes(&fs_words),
        &ImportOptions::default(),
    )
    .expect("imports back");
    check_equivalent(&out, &back, &with(1, 2)).unwrap_or_else(|e| panic!("{e}"));
    check_equivalent(&out, &back, &with(0, 1)).unwrap_or_else(|e| panic!("{e}"));
    // Random uniforms index past the array (undefined in GLSL): the export still
    // addresses the word the IR did (piglit's fs-indirect-index pair found it).
    let random = EquivConfig {
        runs: 8,
        ..EquivConfig::default()
    };
    check_equivalent(&out, &back, &random).unwrap_or_else(|e| panic!("{e}"));
}

/// `imageAtomicExchange` (`OpImageTexelPointer`, then `OpAtomicExchange` on the
/// texel) is one effect on the image: its operands are the coordinate, the sample
/// and the atomic's scope, semantics and value. The interpreter's stand-in meaning
/// is deterministic and depends on every operand, so exchanging another value is
/// observably different; the optimizer keeps it in its stage. Export against the
/// original modules rebuilds its texel pointer (tests/export_spirv.rs checks the
/// output); the standalone export declares the image as a storage image of the
/// texel's format (tests/export_standalone.rs validates and re-imports it).
#[test]
fn image_atomic_exchange_is_an_effect_on_the_texel() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec2 uv;
layout(location=0) out float v;
void main() { gl_Position = pos; v = uv.x * 2.0 + uv.y; }
";
    let fs = |value: &str| {
        format!(
            "#version 450
layout(binding=0, r32f) uniform image2D img;
layout(location=0) in float v;
layout(location=0) out vec4 color;
void main() {{
  color = vec4(imageAtomicExchange(img, ivec2(gl_FragCoord.xy), {value}));
}}
"
        )
    };
    let p = import("image-xchg", vs, &fs("v"));
    let mut found = vec![];
    p.consumer.for_each_inst(|i| {
        if let InstKind::Opaque { op, srcs } = &i.kind {
            found.push((op.to_string(), srcs.len()));
        }
    });
    // Coordinate (2), sample, scope, semantics, value.
    let want = "imageatomicexchange effect op:229 f32 (args i32x2 u32 u32 u32 f32) (image 0)";
    assert_eq!(found, vec![(want.to_string(), 6)]);
    let cfg = EquivConfig {
        runs: 4,
        ..EquivConfig::default()
    };
    let other = import("image-xchg-other", vs, &fs("v + 1.0"));
    assert!(check_equivalent(&p, &other, &cfg).is_err());
    let run = varysat::interpreter::RunConfig::default();
    let colours = fragment_colours_with(&p, &run);
    assert!(!colours.is_empty());
    assert_eq!(colours, fragment_colours_with(&p, &run));
    let out = optimizes_equivalently(&p);
    let count = |s: &Shader| {
        let ops = opaque_ops(s);
        ops.iter().filter(|o| o.0 == "imageatomicexchange").count()
    };
    assert_eq!((count(&out.producer), count(&out.consumer)), (0, 1));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("varysat-import-features-image-xchg");
    let (_, (pm, cm)) = varysat::import::import_files_with_modules(
        &dir.join("a.vert"),
        &dir.join("a.frag"),
        &ImportOptions::default(),
    )
    .expect("imports");
    varysat::export::pipeline_to_spirv(&out, &pm, &cm).expect("exports with the modules");
    // Without them, the image is declared as an r32f storage image.
    let (_, fs) = varysat::export::standalone_to_spirv(&out).expect("exports standalone");
    let module = rspirv::dr::load_words(&fs).expect("loads");
    let storage = module.types_global_values.iter().any(|i| {
        i.class.opcode == rspirv::spirv::Op::TypeImage
            && i.operands.last()
                == Some(&rspirv::dr::Operand::ImageFormat(
                    rspirv::spirv::ImageFormat::R32f,
                ))
    });
    assert!(storage, "an r32f storage image");
}

/// Stores of `slot` in `s`.
fn stores_of(s: &Shader, slot: varysat::ir::Slot) -> usize {
    let mut n = 0;
    s.for_each_inst(|i| {
        if let InstKind::StoreOutput { slot: at, .. } = &i.kind {
            n += usize::from(at.slot == slot);
        }
    });
    n
}

#[test]
fn gl_viewport_mask_is_the_viewport_mask_slot_in_a_vs_and_a_gs() {
    if !tools() {
        return;
    }
    use varysat::ir::Slot;
    let fs = "#version 450
layout(location = 0) in vec4 col;
layout(location = 0) out vec4 o;
void main() { o = col + vec4(float(gl_ViewportIndex), float(gl_Layer), 0.0, 0.0); }
";
    let vs = "#version 450
#extension GL_NV_viewport_array2 : require
layout(location = 0) in vec4 pos;
layout(location = 1) in int mask;
layout(location = 0) out vec4 col;
layout(viewport_relative) out int gl_Layer;
void main() {
  gl_Position = pos;
  gl_ViewportMask[0] = mask;
  gl_Layer = 1;
  col = pos;
}
";
    let p = import("viewport-mask-vs", vs, fs);
    assert_eq!(stores_of(&p.producer, Slot::ViewportMask), 1);
    assert!(p.producer.layer_viewport_relative);
    let out = optimizes_equivalently(&p);
    assert_eq!(stores_of(&out.producer, Slot::ViewportMask), 1);
    assert!(out.producer.layer_viewport_relative);

    // A GS writing a different mask per primitive, without the layer flag.
    let gs = "#version 450
#extension GL_NV_viewport_array2 : require
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(location = 0) in vec4 v[];
layout(location = 0) out vec4 col;
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    gl_ViewportMask[0] = 3 << gl_PrimitiveIDIn;
    col = v[i];
    EmitVertex();
  }
}
";
    let vs = "#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 v;
void main() { gl_Position = pos; v = pos * 0.5; }
";
    let paths = files("viewport-mask-gs", &[("a.vert", vs), ("a.geom", gs)]);
    let vs_gs = import_files(&paths[0], &paths[1], &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(stores_of(&vs_gs.consumer, Slot::ViewportMask) >= 1);
    let paths = files("viewport-mask-gs-fs", &[("a.geom", gs), ("a.frag", fs)]);
    let gs_fs = import_files(&paths[0], &paths[1], &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(stores_of(&gs_fs.producer, Slot::ViewportMask) >= 1);
    assert!(!gs_fs.producer.layer_viewport_relative);
    optimizes_equivalently(&gs_fs);
}
