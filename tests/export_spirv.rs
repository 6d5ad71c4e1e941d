//! SPIR-V export of every pair of the GLSL corpus, as imported (round trip) and
//! after optimization, must pass `spirv-val` for Vulkan 1.0 (OpenGL 4.5 for the
//! OpenGL-only pairs with loose uniforms); the CLI writes
//! `<input file name>.spv` into the `-o` directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use rspirv::spirv::Op;
use varysat::import::{import_files_with_modules, ImportOptions, GLSLANG};

mod export_support;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/glsl")
}

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG, "spirv-val"])
}

fn validate(words: &[u32], what: &str) -> Result<(), String> {
    validate_for(words, what, "vulkan1.0")
}

fn validate_for(words: &[u32], what: &str, env: &str) -> Result<(), String> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // One file per call: the tests of this file validate concurrently.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let f = dir.join(format!("m{n}.spv"));
    std::fs::write(&f, varysat::export::to_bytes(words)).map_err(|e| e.to_string())?;
    let o = Command::new("spirv-val")
        .args(["--target-env", env])
        .arg(&f)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        let _ = std::fs::remove_file(&f);
        return Ok(());
    }
    Err(format!(
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    ))
}

/// Writes a GLSL pair (file names say the stages) to a fresh scratch directory named
/// after `tag`, imports it with its original modules and optimizes it.
fn import_and_optimize(
    tag: &str,
    files: [(&str, &str); 2],
) -> (
    varysat::Pipeline,
    varysat::import::Modules,
    varysat::Outcome,
) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-export-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let [a, b] = files.map(|(name, text)| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write shader");
        path
    });
    let ((pipe, _), modules) =
        import_files_with_modules(&a, &b, &ImportOptions::default()).expect("imports");
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    (pipe, modules, outcome)
}

/// The pair as imported (`round trip`) and optimized, each exported against the
/// original modules and both modules passing `spirv-val`; `consumer` names the
/// consumer stage in messages.
fn exported_and_valid(
    pipe: &varysat::Pipeline,
    outcome: &varysat::Outcome,
    (pm, cm): (&[u8], &[u8]),
    consumer: &str,
) -> Vec<(&'static str, Vec<u32>, Vec<u32>)> {
    [("round trip", pipe), ("optimized", &outcome.pipeline)]
        .into_iter()
        .map(|(what, p)| {
            let (x, y) = varysat::export::pipeline_to_spirv(p, pm, cm)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            validate(&x, &format!("{what} vs")).unwrap_or_else(|e| panic!("{e}"));
            validate(&y, &format!("{what} {consumer}")).unwrap_or_else(|e| panic!("{e}"));
            (what, x, y)
        })
        .collect()
}

#[test]
fn every_corpus_pair_exports_valid_spirv() {
    if !tools() {
        return;
    }
    let text = std::fs::read_to_string(corpus().join("pairs.txt")).expect("pairs.txt");
    let mut failures = vec![];
    let mut exported = 0;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let mut w = line.split_whitespace();
        let (a, b) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
        let ((pipe, _), (pm, cm)) = import_files_with_modules(
            &corpus().join(a),
            &corpus().join(b),
            &ImportOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{a} + {b}: {e}"));
        let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
        for (what, p) in [("round trip", &pipe), ("optimized", &outcome.pipeline)] {
            match varysat::export::pipeline_to_spirv(p, &pm, &cm) {
                Ok((x, y)) => {
                    exported += 1;
                    for (words, side) in [(&x, a), (&y, b)] {
                        let what = format!("{a} + {b} {what} {side}");
                        if let Err(e) = validate_for(words, &what, environment(words)) {
                            failures.push(e);
                        }
                    }
                }
                Err(e) => failures.push(format!("{a} + {b} {what}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(exported >= 60, "only {exported} exports");
}

#[test]
fn cli_writes_both_stages_named_after_the_inputs() {
    if !tools() {
        return;
    }
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-emit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_varysat"))
        .arg("opt")
        .arg(corpus().join("fog.vert"))
        .arg(corpus().join("fog.frag"))
        .args(["--emit", "spirv", "-o"])
        .arg(&out)
        .output()
        .expect("runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    for name in ["fog.vert.spv", "fog.frag.spv"] {
        let bytes = std::fs::read(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&bytes[..4], &[0x03, 0x02, 0x23, 0x07], "{name} is SPIR-V");
    }
    assert_eq!(
        varysat::export::output_name(Path::new("dir/v.spv")),
        "v.spv"
    );
    assert_eq!(
        varysat::export::output_name(Path::new("a.vert")),
        "a.vert.spv"
    );
}

#[test]
fn the_sample_mask_input_exports_as_its_built_in() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out flat int v_bits;
void main() { gl_Position = pos; v_bits = 5; }
";
    let fs = "#version 450
layout(location=0) flat in int v_bits;
layout(location=0) out vec4 color;
void main() { color = vec4(float(gl_SampleMaskIn[0] & v_bits)); }
";
    let (_, (pm, cm), outcome) = import_and_optimize("mask", [("m.vert", vs), ("m.frag", fs)]);
    // The constant is propagated, so the exported FS reads the mask and nothing else.
    assert_eq!(outcome.report.after.components, 0, "{}", outcome.report);
    let (x, y) = varysat::export::pipeline_to_spirv(&outcome.pipeline, &pm, &cm).expect("exports");
    validate(&x, "vs").unwrap_or_else(|e| panic!("{e}"));
    validate(&y, "fs").unwrap_or_else(|e| panic!("{e}"));
    let dis = format!("{:?}", rspirv::dr::load_words(&y).expect("parses"));
    assert!(
        dis.contains("SampleMask"),
        "the FS reads the SampleMask built-in"
    );
}

/// 16-bit members of a uniform buffer import as halves of their words
/// (`load_ubo B %w lo|hi`), propagate as such into the FS, and export as a 32-bit
/// load narrowed by `OpUConvert` (after a shift for the high half): valid SPIR-V in
/// both stages. The import side is checked in tests/import_features.rs.
#[test]
fn sixteen_bit_ubo_members_export_as_narrowed_word_loads() {
    if !tools() {
        return;
    }
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("f16", [("h.vert", F16_UBO_VS), ("h.frag", F16_UBO_FS)]);
    let both = exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs");
    // The propagated 16-bit loads now run in the FS.
    let (_, _, y) = &both[1];
    let dis = format!("{:?}", rspirv::dr::load_words(y).expect("parses"));
    assert!(dis.contains("UConvert"), "the FS narrows its word loads");
}

/// A VS reading 16-bit members of a std140 block, and its FS (shared with
/// tests/import_features.rs).
const F16_UBO_VS: &str = include_str!("fixtures/f16_ubo.vert");

const F16_UBO_FS: &str = include_str!("fixtures/f16_ubo.frag");

/// Transform feedback: every captured component is exported with its buffer,
/// offset and the original stride (32, past the last capture's end at 20), also
/// the one the fragment shader does not read (`v_only`, kept `no_varying`) and
/// the position (a member of the `gl_PerVertex` block, captured through a
/// variable of its own), and the module keeps the `Xfb` execution mode.
#[test]
fn transform_feedback_outputs_export_with_their_captures() {
    if !tools() {
        return;
    }
    let vs = include_str!("fixtures/xfb.vert");
    let fs = include_str!("fixtures/xfb.frag");
    let (pipe, (pm, cm), outcome) = import_and_optimize("xfb", [("x.vert", vs), ("x.frag", fs)]);
    let want: std::collections::BTreeSet<(u32, u32, u32)> = [
        (0, 0, 16),
        (0, 4, 16),
        (0, 8, 16),
        (0, 12, 16),
        (1, 0, 32),
        (1, 4, 32),
        (1, 8, 32),
        (1, 16, 32),
    ]
    .into();
    for (what, x, _) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        assert_eq!(export_support::captures(&x), (want.clone(), true), "{what}");
    }
}

/// 16-bit captures (`tests/fixtures/xfb16.vert`): the importer gives each 16-bit
/// scalar its own 2 bytes (`f16vec2` at 0 and 2, `int16_t` at 8, `float16_t` at
/// 10 between 32-bit captures at 4 and 12; before, it counted 4 bytes a scalar
/// and the export refused 16-bit captures), and the export decorates each with
/// its offset and the original stride, round trip and optimized (where the
/// optimizer moves xfb-only 16-bit outputs into other slots' halves).
#[test]
fn sixteen_bit_captures_export_at_their_byte_offsets() {
    if !tools() {
        return;
    }
    let vs = include_str!("fixtures/xfb16.vert");
    let fs = include_str!("fixtures/xfb16.frag");
    let (pipe, (pm, cm), outcome) = import_and_optimize("xfb16", [("h.vert", vs), ("h.frag", fs)]);
    let mut offsets = vec![];
    pipe.producer.for_each_inst(|i| {
        if let varysat::ir::InstKind::StoreOutput { xfb: Some(x), .. } = &i.kind {
            offsets.push(x.offset);
        }
    });
    offsets.sort_unstable();
    assert_eq!(offsets, [0, 2, 4, 8, 10, 12]);
    let want: std::collections::BTreeSet<(u32, u32, u32)> =
        [0, 2, 4, 8, 10, 12].map(|o| (0, o, 20)).into();
    for (what, x, _) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        assert_eq!(export_support::captures(&x), (want.clone(), true), "{what}");
    }
}

/// Captures in the consumer: a VS -> GS pair whose GS captures its outputs to
/// the rasterizer (`tests/fixtures/xfb_gs.geom`: `gl_Position` through its
/// `gl_PerVertex` block in buffer 0, a `vec3` at 4, an `int` at 16 and an output
/// the FS never reads at 24 in buffer 1, stride 28). The import no longer refuses
/// the pair (the IR observes every consumer output, so it marks no capture
/// there); the export keeps the user outputs' variables with their decorations and
/// gives the regenerated `Position` variable the block member's capture (before,
/// the capture of `gl_Position` was lost). Round trip and optimized pass spirv-val
/// and keep the `Xfb` execution mode.
#[test]
fn consumer_captures_are_kept_as_the_original_declares_them() {
    if !tools() {
        return;
    }
    let vs = include_str!("fixtures/xfb_gs.vert");
    let gs = include_str!("fixtures/xfb_gs.geom");
    let (pipe, (pm, cm), outcome) = import_and_optimize("xfbgs", [("g.vert", vs), ("g.geom", gs)]);
    // One entry per captured variable: the kept `o_c`, `o_i`, `o_only` and the
    // regenerated `Position`.
    let want: std::collections::BTreeSet<(u32, u32, u32)> =
        [(0, 0, 16), (1, 4, 28), (1, 16, 28), (1, 24, 28)].into();
    for (what, _, y) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "gs") {
        assert_eq!(export_support::captures(&y), (want.clone(), true), "{what}");
    }
}

/// 64-bit attributes: the importer reads a `dvec3` attribute as six 32-bit
/// components over two locations (and a `double` varying as two flat words);
/// the export reads each word back out of the kept 64-bit attribute (`OpBitcast`
/// to `uvec2`), and rebuilds the 64-bit operands of the opaque conversions from
/// their words. Round trip and optimized pass `spirv-val`.
#[test]
fn sixty_four_bit_attributes_export_as_words_of_the_original() {
    if !tools() {
        return;
    }
    let vs = include_str!("fixtures/f64_attr.vert");
    let fs = include_str!("fixtures/f64_attr.frag");
    let (pipe, (pm, cm), outcome) = import_and_optimize("f64", [("d.vert", vs), ("d.frag", fs)]);
    for (what, x, _) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        use rspirv::dr::Operand;
        use rspirv::spirv::{Decoration, Op, StorageClass};
        let m = rspirv::dr::load_words(&x).expect("parses");
        // The attributes stay as they were: pos, the dvec3 (locations 1-2), the
        // float at 3.
        let inputs: Vec<u32> = m
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter(|i| i.operands.first() == Some(&Operand::StorageClass(StorageClass::Input)))
            .filter_map(|i| i.result_id)
            .collect();
        let mut locs: Vec<u32> = m
            .annotations
            .iter()
            .filter(|a| a.operands.get(1) == Some(&Operand::Decoration(Decoration::Location)))
            .filter(|a| matches!(a.operands[0], Operand::IdRef(id) if inputs.contains(&id)))
            .filter_map(|a| match a.operands.get(2) {
                Some(Operand::LiteralBit32(l)) => Some(*l),
                _ => None,
            })
            .collect();
        locs.sort_unstable();
        assert_eq!(locs, [0, 1, 3], "{what}");
        let ops: Vec<Op> = m
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .map(|i| i.class.opcode)
            .collect();
        assert!(
            ops.contains(&Op::FConvert),
            "{what}: the f64 -> f32 conversion"
        );
    }
}

/// Dynamically indexed varyings: a VS writes `v[i]` and the FS reads `v[j]` of a
/// `float v[3]` with computed indices; the importer addresses them as slots
/// `VAR1`-`VAR3` with a dynamic slot index, the export declares one array per
/// stage at location 1 and indexes it dynamically. Round trip and optimized
/// pass `spirv-val`, and each stage indexes its array with a computed value.
#[test]
fn dynamically_indexed_varyings_export_as_indexed_arrays() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec4 attr;
layout(location=0) out float v_k;
layout(location=1) out float v[3];
void main() {
  gl_Position = pos;
  int i = int(attr.w) & 1;
  v[0] = 0.0; v[1] = 0.0; v[2] = 0.0;
  v[i + 1] = attr.x;
  v_k = attr.y;
}
";
    let fs = "#version 450
layout(location=0) in float v_k;
layout(location=1) in float v[3];
layout(location=0) out vec4 color;
void main() { int j = int(v_k) & 3; color = vec4(v[j % 3], v_k, 0.0, 1.0); }
";
    let (pipe, (pm, cm), outcome) = import_and_optimize("ind", [("i.vert", vs), ("i.frag", fs)]);
    for (what, x, y) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        assert!(export_support::dynamic_access_chains(&x) >= 1, "{what} vs");
        assert!(export_support::dynamic_access_chains(&y) >= 1, "{what} fs");
    }
}

/// Struct-typed outputs outside the pair: a GS (the consumer of a VS -> GS pair)
/// writes an output block `Data { vec4 c; float f; }` at location 2 for the next
/// stage; the block is kept and each member component stored through it.
/// Round trip and optimized pass `spirv-val` (before: "attribute or output type
/// ... is not exported").
#[test]
fn struct_typed_outputs_outside_the_pair_export_through_their_block() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out vec4 v_c;
void main() { gl_Position = pos; v_c = pos * 2.0; }
";
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
layout(location=0) in vec4 v_c[];
layout(location=2) out Data { vec4 c; float f; } o;
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    o.c = v_c[i] + 1.0;
    o.f = v_c[i].x;
    EmitVertex();
  }
}
";
    let (pipe, (pm, cm), outcome) = import_and_optimize("block", [("s.vert", vs), ("s.geom", gs)]);
    exported_and_valid(&pipe, &outcome, (&pm, &cm), "gs");
}

/// `imulExtended` / `umulExtended`: the high word is an opaque op standing for
/// member 1 of the instruction's struct result (src/import/extended.rs), so the
/// export writes the instruction on a two-member struct and extracts that member.
/// Before, it wrote `OpSMulExtended %int`, which spirv-val rejects ("Expected a
/// struct as Result Type"); found on piglit `vs-imulExtended-only-msb` by
/// `scripts/radv_export.py --sample`.
#[test]
fn extended_multiplies_export_with_their_struct_result() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in ivec2 a;
layout(location=2) in uvec2 b;
layout(location=0) out flat ivec2 v_hi;
void main() {
    gl_Position = pos;
    ivec2 lo; ivec2 hi; uvec2 ulo; uvec2 uhi;
    imulExtended(a, a + 3, hi, lo);
    umulExtended(b, b * 7u, uhi, ulo);
    v_hi = hi + ivec2(uhi) + lo;
}
";
    let fs = "#version 450
layout(location=0) flat in ivec2 v_hi;
layout(location=0) out vec4 color;
void main() { color = vec4(v_hi, 0.0, 1.0); }
";
    let (pipe, (pm, cm), outcome) = import_and_optimize("mulext", [("x.vert", vs), ("x.frag", fs)]);
    for (what, x, _) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        let dis = format!("{:?}", rspirv::dr::load_words(&x).expect("parses"));
        for op in ["SMulExtended", "UMulExtended"] {
            assert!(dis.contains(op), "{what}: the VS keeps {op}");
        }
    }
}

/// Image atomics export as `OpImageTexelPointer` into the original image variable
/// (through a constant index into an array of images too) and the atomic on that
/// texel. Two identical atomics stay two: they are two side effects, which the
/// export's per-block cache of opaque instructions once merged into one (the
/// interpreter counts each effect's executions, so the re-import then differs; the
/// instructions are counted as well).
#[test]
fn image_atomics_export_through_texel_pointers_into_the_original_images() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec2 uv;
layout(location=0) out float v;
void main() { gl_Position = pos; v = uv.x * 2.0 + uv.y; }
";
    let fs = "#version 450
layout(binding=0, r32ui) uniform uimage2D counts;
layout(binding=1, r32f) uniform image2D planes[2];
layout(location=0) in float v;
layout(location=0) out vec4 color;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    uint a = imageAtomicAdd(counts, p, 1u);
    uint b = imageAtomicAdd(counts, p, 1u);
    float x = imageAtomicExchange(planes[1], p, v);
    color = vec4(float(a), float(b), x, v);
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("image-atomics", [("x.vert", vs), ("x.frag", fs)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        let count = |op| op_count(&y, op);
        assert_eq!(count(Op::AtomicIAdd), 2, "{what}: both adds are kept");
        assert_eq!(count(Op::AtomicExchange), 1, "{what}");
        assert_eq!(count(Op::ImageTexelPointer), 3, "{what}");
    }
}

/// An image atomic through a dynamic index into an array of images imports as one
/// atomic per element, each under the condition that the index selects it, the
/// result merged by phis; export writes each on its element's texel pointer. Both
/// the imported pair and its export behave as the original: the interpreter's
/// effect records name the image each atomic ran on.
#[test]
fn image_atomics_through_a_dynamic_index_select_among_guarded_atomics() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) flat out int k;
void main() { gl_Position = pos; k = gl_VertexIndex % 3; }
";
    let fs = "#version 450
layout(binding=0, r32ui) uniform uimage2D imgs[3];
layout(location=0) flat in int k;
layout(location=0) out vec4 color;
void main() {
    uint a = imageAtomicAdd(imgs[k], ivec2(gl_FragCoord.xy), 1u);
    color = vec4(float(a), 0.0, 0.0, 1.0);
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("image-atomics-dyn", [("x.vert", vs), ("x.frag", fs)]);
    let mut atomics = 0;
    pipe.consumer.for_each_inst(|i| {
        if let varysat::ir::InstKind::Opaque { op, .. } = &i.kind {
            atomics += usize::from(op.name == "imageatomiciadd");
        }
    });
    assert_eq!(atomics, 3, "one guarded atomic per image");
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        let count = |op| op_count(&y, op);
        assert_eq!(count(Op::AtomicIAdd), 3, "{what}");
    }
}

/// Storage buffer atomics export on the buffer's word view: a `uint` pointer to the
/// word, the atomic in its `uint` form, and for signed atomics the values and the
/// result bitcast. Scope and semantics stay constants (spirv-val checks it), two
/// identical adds stay two, and the pair imports back equivalent.
#[test]
fn storage_buffer_atomics_export_on_the_word_view() {
    if !tools() {
        return;
    }
    let vs = FLAT_K_VS;
    let fs = "#version 450
layout(std430, binding=0) buffer Words { uint hits; int low; uint slots[8]; } b;
layout(location=0) flat in int k;
layout(location=0) out vec4 color;
void main() {
    uint h = atomicAdd(b.hits, 1u);
    uint h2 = atomicAdd(b.hits, 1u);
    int m = atomicMin(b.low, k);
    uint s = atomicExchange(b.slots[k & 7], uint(k));
    uint c = atomicCompSwap(b.slots[1], 5u, 6u);
    color = vec4(float(h), float(h2), float(m), float(s + c));
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("ssbo-atomics", [("x.vert", vs), ("x.frag", fs)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        let count = |op| op_count(&y, op);
        assert_eq!(count(Op::AtomicIAdd), 2, "{what}: both adds are kept");
        for op in [
            Op::AtomicSMin,
            Op::AtomicExchange,
            Op::AtomicCompareExchange,
        ] {
            assert_eq!(count(op), 1, "{what}: {op:?}");
        }
    }
}

/// A VS passing a flat `int k` (different per vertex, negative for some) to the FS.
const FLAT_K_VS: &str = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) flat out int k;
void main() { gl_Position = pos; k = gl_VertexIndex * 3 - 4; }
";

/// A float exchange on a storage buffer word (`GL_EXT_shader_atomic_float`'s
/// `atomicExchange`) moves bits without reading them as a number: it exports on the
/// buffer's `uint` word view like a signed atomic, the stored value and the result
/// bitcast, and imports back equivalent. A float add reads the word as a number: it
/// exports on a `float[]` view of the same buffer (a second variable at its set and
/// binding), valid and equivalent too.
#[test]
fn float_atomics_on_storage_buffer_words_export_on_word_views() {
    if !tools() {
        return;
    }
    let vs = FLAT_K_VS;
    let fs = "#version 450
#extension GL_EXT_shader_atomic_float : require
layout(std430, binding=0) buffer Words { uint hits; float f[8]; } b;
layout(location=0) flat in int k;
layout(location=0) out vec4 color;
void main() {
    uint h = atomicAdd(b.hits, 1u);
    float old = atomicExchange(b.f[k & 7], float(k) * 0.5);
    color = vec4(float(h), old, 0.0, 1.0);
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("ssbo-float-xchg", [("x.vert", vs), ("x.frag", fs)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        assert_eq!(op_count(&y, Op::AtomicExchange), 1, "{what}");
        assert!(
            op_count(&y, Op::Bitcast) >= 2,
            "{what}: value and result bitcast"
        );
    }
    let add = fs.replace("atomicExchange(", "atomicAdd(");
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("ssbo-float-add", [("x.vert", vs), ("x.frag", &add)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        assert_eq!(op_count(&y, Op::AtomicFAddEXT), 1, "{what}");
        assert_eq!(op_count(&y, Op::AtomicIAdd), 1, "{what}");
    }
    // Without the original modules the skeleton declares the float-add capability.
    let (x, y) = varysat::export::standalone_to_spirv(&pipe).expect("exports standalone");
    validate_for(&x, "standalone vs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
    validate_for(&y, "standalone fs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(op_count(&y, Op::AtomicFAddEXT), 1);
    assert_reimports_equivalent(&pipe, "standalone", &x, &y);
}

/// 64-bit atomics on storage buffer members (`GL_EXT_shader_atomic_int64`): each
/// works on two words, which import records by the low word's address (a signed one
/// as unsigned, like 32-bit atomics); export runs them on a `uint64_t[]` view of the
/// buffer at the address halved. Valid, and imported back equivalent.
#[test]
fn sixty_four_bit_atomics_on_storage_buffers_export_on_a_wide_view() {
    if !tools() {
        return;
    }
    let fs = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(std430, binding=0) buffer Words { uint hits; uint pad; uint64_t w[8]; int64_t s[8]; } b;
layout(location=0) flat in int k;
layout(location=0) out uvec4 color;
void main() {
    uint h = atomicAdd(b.hits, 1u);
    uint64_t a = atomicAdd(b.w[k & 7], uint64_t(k) << 33);
    int64_t m = atomicMin(b.s[k & 7], int64_t(k));
    color = uvec4(h, uint(a >> 32), uint(m), uint(m >> 32));
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("ssbo-int64", [("x.vert", FLAT_K_VS), ("x.frag", fs)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "fs") {
        assert_eq!(op_count(&y, Op::AtomicIAdd), 2, "{what}");
        assert_eq!(op_count(&y, Op::AtomicSMin), 1, "{what}");
        assert!(
            op_count(&y, Op::ShiftRightLogical) >= 2,
            "{what}: word addresses halved"
        );
    }
    // Without the original modules the skeleton declares `Int64Atomics`.
    let (x, y) = varysat::export::standalone_to_spirv(&pipe).expect("exports standalone");
    validate_for(&x, "standalone vs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
    validate_for(&y, "standalone fs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
    assert_reimports_equivalent(&pipe, "standalone", &x, &y);
}

/// An optimization that gains nothing at the varying interface (here the FS reads
/// the one varying as written; only the VS's own arithmetic is cleaned up) gets the
/// original modules back from `export::to_spirv`, word for word: regenerating the
/// bodies would only cost instructions. One that changes the interface (the
/// constant varying of the second pair is propagated) is regenerated.
#[test]
fn an_interface_that_gains_nothing_exports_the_original_modules() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out vec4 v_col;
void main() { gl_Position = pos; v_col = pos * 2.0 + 0.0; }
";
    let fs = "#version 450
layout(location=0) in vec4 v_col;
layout(location=0) out vec4 color;
void main() { color = v_col; }
";
    let (_, (pm, cm), outcome) = import_and_optimize("same", [("s.vert", vs), ("s.frag", fs)]);
    assert!(
        varysat::export::interface_gains_nothing(&outcome.report),
        "{}",
        outcome.report
    );
    let (x, y) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
    let words = |b: &[u8]| -> Vec<u32> {
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    assert_eq!(x, words(&pm), "the producer is the original module");
    assert_eq!(y, words(&cm), "the consumer is the original module");

    let vs = vs.replace("v_col = pos * 2.0 + 0.0;", "v_col = vec4(0.5);");
    let (_, (pm, cm), outcome) = import_and_optimize("changed", [("c.vert", &vs), ("c.frag", fs)]);
    assert!(!varysat::export::interface_gains_nothing(&outcome.report));
    let (x, y) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
    validate(&x, "vs").unwrap_or_else(|e| panic!("{e}"));
    validate(&y, "fs").unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(y, words(&cm), "the consumer now computes the constant");
}

/// `Location` of each named `Input`/`Output` variable of a module.
fn varying_locations(words: &[u32]) -> std::collections::BTreeMap<String, u32> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Op};
    let m = rspirv::dr::load_words(words).expect("parses");
    let name = |id: u32| {
        m.debug_names
            .iter()
            .find_map(|i| match (i.class.opcode, &i.operands[..]) {
                (Op::Name, [Operand::IdRef(t), Operand::LiteralString(s)]) if *t == id => {
                    Some(s.clone())
                }
                _ => None,
            })
    };
    m.annotations
        .iter()
        .filter_map(|i| match &i.operands[..] {
            [Operand::IdRef(t), Operand::Decoration(Decoration::Location), Operand::LiteralBit32(l)] => {
                Some((name(*t)?, *l))
            }
            _ => None,
        })
        .collect()
}

/// glslang's automatic locations can link a GLSL pair otherwise than GL does
/// (fixtures `auto_loc_*`): an unlocated output lands on an explicit one's location
/// (`mixed`: not a valid Vulkan interface), or two stages declaring their unlocated
/// varyings in different orders cross them (`crossed`). The pairs gain nothing at
/// the interface, so `export::to_spirv` hands the imported modules back; those must
/// pass `spirv-val` and put each varying on one location in both stages, apart
/// from the other (`import_files_with_modules` re-assigns their locations).
#[test]
fn glslang_auto_locations_are_reassigned_as_linked() {
    if !tools() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    // The defect exists in glslang's own output, compiled as the importer does.
    let raw =
        varysat::import::compile_glsl(&dir.join("auto_loc_mixed.vert"), true).expect("compiles");
    let words: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let err = validate(&words, "glslang's VS").unwrap_err();
    assert!(err.contains("conflicting output location"), "{err}");
    // Given glslang's own modules, `to_spirv` regenerates the export instead.
    let [a, b] = ["vert", "frag"].map(|s| dir.join(format!("auto_loc_mixed.{s}")));
    let ((pipe, _), _) =
        import_files_with_modules(&a, &b, &ImportOptions::default()).expect("imports");
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    let [rp, rc] = [&a, &b].map(|f| varysat::import::compile_glsl(f, true).expect("compiles"));
    let (x, y) = varysat::export::to_spirv(&outcome, &rp, &rc).expect("exports");
    validate(&x, "regenerated vs").unwrap_or_else(|e| panic!("{e}"));
    validate(&y, "regenerated fs").unwrap_or_else(|e| panic!("{e}"));
    for pair in ["mixed", "crossed"] {
        let [a, b] = ["vert", "frag"].map(|s| dir.join(format!("auto_loc_{pair}.{s}")));
        let ((pipe, _), (pm, cm)) =
            import_files_with_modules(&a, &b, &ImportOptions::default()).expect("imports");
        let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
        assert!(
            varysat::export::interface_gains_nothing(&outcome.report),
            "{pair}: {}",
            outcome.report
        );
        let (x, y) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
        validate(&x, &format!("{pair} vs")).unwrap_or_else(|e| panic!("{e}"));
        validate(&y, &format!("{pair} fs")).unwrap_or_else(|e| panic!("{e}"));
        let (vs, fs) = (varying_locations(&x), varying_locations(&y));
        for v in ["a", "b"] {
            assert_eq!(vs.get(v), fs.get(v), "{pair}: `{v}` links by name");
        }
        assert_ne!(vs.get("a"), vs.get("b"), "{pair}: {vs:?}");
    }
}

/// The re-located modules of a TCS -> TES pair (unlocated per-vertex and per-patch
/// varyings in crossed orders, one per-vertex varying on an explicit location
/// glslang numbers its neighbour onto) pass `spirv-val` and link by name: per-patch
/// varyings are placed after the per-vertex ones, which Vulkan numbers alike.
#[test]
fn relocated_tessellation_modules_link_by_name() {
    if !tools() {
        return;
    }
    let tcs = "#version 450
layout(vertices = 3) out;
layout(location = 0) in vec4 vin[];
out vec4 q[];
layout(location = 0) out vec4 r[];
patch out vec4 pb;
patch out vec4 pa;
void main() {
    q[gl_InvocationID] = vin[gl_InvocationID] * vin[gl_InvocationID].x;
    r[gl_InvocationID] = vin[gl_InvocationID].yxzw * vin[gl_InvocationID].y;
    pa = vin[0] * vin[1];
    pb = vin[1] * vin[2];
    gl_TessLevelOuter[0] = 1.0;
    gl_TessLevelOuter[1] = 1.0;
    gl_TessLevelOuter[2] = 1.0;
    gl_TessLevelInner[0] = 1.0;
    gl_out[gl_InvocationID].gl_Position = vin[gl_InvocationID];
}
";
    let tes = "#version 450
layout(triangles) in;
patch in vec4 pa;
patch in vec4 pb;
layout(location = 0) in vec4 r[];
in vec4 q[];
layout(location = 0) out vec4 o;
void main() {
    o = q[0] * r[1] * q[2].x + pa * pb * gl_TessCoord.x;
    gl_Position = gl_in[0].gl_Position;
}
";
    let (_, (pm, cm), _) = import_and_optimize("tess-loc", [("t.tesc", tcs), ("t.tese", tes)]);
    let words = |b: &[u8]| -> Vec<u32> {
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let (x, y) = (words(&pm), words(&cm));
    validate(&x, "tcs").unwrap_or_else(|e| panic!("{e}"));
    validate(&y, "tes").unwrap_or_else(|e| panic!("{e}"));
    let (p, c) = (varying_locations(&x), varying_locations(&y));
    for v in ["q", "r", "pa", "pb"] {
        assert_eq!(p.get(v), c.get(v), "`{v}` links by name: {p:?} {c:?}");
    }
    let mut at: Vec<_> = ["q", "r", "pa", "pb"].map(|v| p.get(v)).to_vec();
    at.sort();
    at.dedup();
    assert_eq!(at.len(), 4, "four locations: {p:?}");
}

/// OpenGL GLSL with default-block uniforms compiles to OpenGL SPIR-V, whose loose
/// uniforms the export reads through access chains into their variables. The
/// optimizer propagates the VS's uniform-only varyings into the FS, so the FS export
/// declares copies of the VS's uniforms (same name, type and `Location`, as GL links
/// them). Both modules pass `spirv-val` for OpenGL 4.5, and the exported pair,
/// imported again, is interpreter-equivalent to the original. Before, the export
/// refused such pairs ("default-block uniforms (OpenGL SPIR-V) are not exported").
#[test]
fn opengl_default_block_uniforms_export_and_import_back_equivalent() {
    if !tools() {
        return;
    }
    let (pipe, vs, fs) = exported_fixture(
        "gl_loose.vert",
        "gl_loose.frag",
        "the uniform-only varyings are propagated",
    );
    assert_eq!(
        (environment(&vs), environment(&fs)),
        ("opengl4.5", "opengl4.5")
    );
    let fs_uniforms = loose_uniform_names(&fs);
    for name in ["light", "rot", "scale", "flip"] {
        assert!(
            fs_uniforms.contains(name),
            "FS declares `{name}`: {fs_uniforms:?}"
        );
    }
    assert_reimports_equivalent(&pipe, "optimized", &vs, &fs);
}

/// Imports the GLSL pair `producer` / `consumer` of tests/fixtures with its
/// modules, optimizes it (asserting that it gains components: `why`), exports both
/// stages and validates each for its environment.
fn exported_fixture(
    producer: &str,
    consumer: &str,
    why: &str,
) -> (varysat::Pipeline, Vec<u32>, Vec<u32>) {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let ((pipe, _), (pm, cm)) = import_files_with_modules(
        &fx.join(producer),
        &fx.join(consumer),
        &ImportOptions::default(),
    )
    .expect("imports");
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    assert!(
        outcome.report.after.components < outcome.report.before.components,
        "{why}"
    );
    let (x, y) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
    validate_for(&x, producer, environment(&x)).unwrap_or_else(|e| panic!("{e}"));
    validate_for(&y, consumer, environment(&y)).unwrap_or_else(|e| panic!("{e}"));
    (pipe, x, y)
}

/// Imports the two exported modules again and checks them against the original
/// pair with the interpreter.
fn assert_reimports_equivalent(
    pipe: &varysat::Pipeline,
    what: &str,
    producer: &[u32],
    consumer: &[u32],
) {
    let back = varysat::import::import_spirv(
        &varysat::export::to_bytes(producer),
        &varysat::export::to_bytes(consumer),
        &ImportOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{what}: the export imports again: {e}"));
    let cfg = varysat::interpreter::EquivConfig {
        runs: 16,
        ..Default::default()
    };
    varysat::interpreter::check_equivalent(pipe, &back, &cfg)
        .unwrap_or_else(|e| panic!("{what}: exported pair differs from the original: {e}"));
}

/// The environment a module is for: OpenGL 4.5 when it has loose uniforms
/// (`UniformConstant` variables of data types, which Vulkan does not allow), else
/// Vulkan 1.0.
fn environment(words: &[u32]) -> &'static str {
    use rspirv::dr::Operand::IdRef;
    use rspirv::spirv::Op;
    let m = rspirv::dr::load_words(words).expect("loads");
    let mut opaque = std::collections::BTreeSet::new();
    let mut loose = false;
    for i in &m.types_global_values {
        let id = i.result_id.unwrap_or(0);
        match (i.class.opcode, i.operands.as_slice()) {
            (Op::TypeImage | Op::TypeSampler | Op::TypeSampledImage, _) => {
                opaque.insert(id);
            }
            (Op::TypeArray | Op::TypeRuntimeArray, [IdRef(e), ..]) if opaque.contains(e) => {
                opaque.insert(id);
            }
            (Op::TypePointer, [rspirv::dr::Operand::StorageClass(c), IdRef(t)]) => {
                loose |= *c == rspirv::spirv::StorageClass::UniformConstant && !opaque.contains(t);
            }
            _ => {}
        }
    }
    if loose {
        "opengl4.5"
    } else {
        "vulkan1.0"
    }
}

/// Names of the `UniformConstant` variables of a module that hold data (not images).
fn loose_uniform_names(words: &[u32]) -> std::collections::BTreeSet<String> {
    let m = rspirv::dr::load_words(words).expect("loads");
    let names: std::collections::BTreeMap<u32, String> = m
        .debug_names
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Name)
        .filter_map(|i| match (&i.operands[0], &i.operands[1]) {
            (rspirv::dr::Operand::IdRef(id), rspirv::dr::Operand::LiteralString(s)) => {
                Some((*id, s.clone()))
            }
            _ => None,
        })
        .collect();
    m.types_global_values
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Variable)
        .filter(|i| {
            i.operands.first()
                == Some(&rspirv::dr::Operand::StorageClass(
                    rspirv::spirv::StorageClass::UniformConstant,
                ))
        })
        .filter_map(|i| i.result_id.and_then(|id| names.get(&id).cloned()))
        .collect()
}

/// A GS consumer's compatibility-profile colour output (`gl_FrontColor`, the
/// importer's `varysat_COL0` variable, slot `COL0`) stays the original variable when
/// the export regenerates the GS. Before, the export looked the GS's outputs up by
/// location only and refused the optimized pair: "COL0.x has no variable in the
/// original module" (2 of the 989 real pairs of `scripts/export_corpus.sh`).
#[test]
fn geometry_consumer_fixed_function_colour_output_exports() {
    if !tools() {
        return;
    }
    let (pipe, vs, gs) = exported_fixture(
        "ff_gs.vert",
        "ff_gs.geom",
        "the constant colour is propagated, so the GS is regenerated",
    );
    let outputs = output_names(&gs);
    assert!(
        outputs.contains("varysat_COL0"),
        "the GS keeps its colour output: {outputs:?}"
    );
    assert_reimports_equivalent(&pipe, "optimized", &vs, &gs);
}

/// Names of the `Output` variables of a module.
fn output_names(words: &[u32]) -> std::collections::BTreeSet<String> {
    use rspirv::dr::Operand::{IdRef, LiteralString, StorageClass};
    let m = rspirv::dr::load_words(words).expect("loads");
    let outputs: std::collections::BTreeSet<u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == rspirv::spirv::Op::Variable)
        .filter(|i| i.operands.first() == Some(&StorageClass(rspirv::spirv::StorageClass::Output)))
        .filter_map(|i| i.result_id)
        .collect();
    m.debug_names
        .iter()
        .filter_map(|i| match (i.operands.first(), i.operands.get(1)) {
            (Some(IdRef(id)), Some(LiteralString(s))) if outputs.contains(id) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// An OpenGL `bool` default-block uniform stays the `UniformConstant` boolean glslang
/// declares (the FS export declares a copy of it, with its `Location`): a `uint` in its
/// place would change the uniform's GL type. The SPIR-V working group allows booleans
/// in `UniformConstant` (SPIRV-Registry issue 72; SPIRV-Tools accepts them since
/// 2023, PR 5237), but older validators (Debian 12's SPIRV-Tools v2023.1) reject them
/// in glslang's own module too. So the check is differential: the export has no
/// validation error that glslang's original VS module does not have, and it is clean
/// on a validator that has the fix. docs/export.md, "`bool` loose uniforms".
#[test]
fn opengl_bool_uniform_exports_as_glslang_declares_it() {
    if !tools() {
        return;
    }
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let ((pipe, _), (pm, cm)) = import_files_with_modules(
        &fx.join("gl_bool.vert"),
        &fx.join("gl_bool.frag"),
        &ImportOptions::default(),
    )
    .expect("imports");
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    assert_eq!(outcome.report.after.components, 0, "`shade` is propagated");
    let (vs, fs) = varysat::export::to_spirv(&outcome, &pm, &cm).expect("exports");
    assert!(
        loose_uniform_names(&fs).contains("flip"),
        "FS declares `flip`"
    );
    assert_eq!(
        uniform_bool_locations(&fs),
        vec![0],
        "`flip` is a UniformConstant bool at location 0"
    );
    let original: Vec<u32> = pm
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let glslang = validate_for(&original, "original vs", "opengl4.5").err();
    for (what, words) in [("vs", &vs), ("fs", &fs)] {
        match (validate_for(words, what, "opengl4.5"), &glslang) {
            (Ok(()), _) => {}
            (Err(e), Some(g)) => assert_eq!(
                first_error(&e),
                first_error(g),
                "the export fails only as glslang's module does"
            ),
            (Err(e), None) => panic!("{e}"),
        }
    }
    assert_reimports_equivalent(&pipe, "optimized", &vs, &fs);
}

/// The message of spirv-val's first error, without the stage prefix and line number.
fn first_error(log: &str) -> String {
    let line = log.lines().find(|l| l.contains("error:")).unwrap_or(log);
    let msg = line.split("error:").nth(1).unwrap_or(line);
    msg.split_once(": ")
        .map_or(msg, |(_, m)| m)
        .trim()
        .to_string()
}

/// The `Location`s of the `UniformConstant` boolean variables of a module.
fn uniform_bool_locations(words: &[u32]) -> Vec<u32> {
    use rspirv::dr::Operand::{Decoration, IdRef, LiteralBit32, StorageClass};
    use rspirv::spirv::{Op, StorageClass as Class};
    let m = rspirv::dr::load_words(words).expect("loads");
    let find = |op: Op, ok: &dyn Fn(&rspirv::dr::Instruction) -> bool| -> Vec<u32> {
        m.types_global_values
            .iter()
            .filter(|i| i.class.opcode == op && ok(i))
            .filter_map(|i| i.result_id)
            .collect()
    };
    let bools = find(Op::TypeBool, &|_| true);
    let ptrs = find(Op::TypePointer, &|i| {
        i.operands.first() == Some(&StorageClass(Class::UniformConstant))
            && matches!(i.operands.get(1), Some(IdRef(t)) if bools.contains(t))
    });
    let vars = find(Op::Variable, &|i| {
        i.result_type.is_some_and(|t| ptrs.contains(&t))
    });
    let mut locs: Vec<u32> = m
        .annotations
        .iter()
        .filter_map(|i| match i.operands.as_slice() {
            [IdRef(v), Decoration(rspirv::spirv::Decoration::Location), LiteralBit32(l)]
                if vars.contains(v) =>
            {
                Some(*l)
            }
            _ => None,
        })
        .collect();
    locs.sort_unstable();
    locs
}

/// The little-endian words of a module's bytes.
/// How many instructions of opcode `op` a module has.
fn op_count(words: &[u32], op: Op) -> usize {
    let m = rspirv::dr::load_words(words).expect("parses");
    m.all_inst_iter().filter(|i| i.class.opcode == op).count()
}

fn le_words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The pair, exported as imported and optimized (`exported_and_valid`), imported
/// again from the exported words: interpreter-equivalent to `pipe`.
fn exports_import_back_equivalent(
    pipe: &varysat::Pipeline,
    outcome: &varysat::Outcome,
    (pm, cm): (&[u8], &[u8]),
    consumer: &str,
) -> Vec<(&'static str, Vec<u32>, Vec<u32>)> {
    let out = exported_and_valid(pipe, outcome, (pm, cm), consumer);
    for (what, x, y) in &out {
        assert_reimports_equivalent(pipe, what, x, y);
    }
    out
}

/// A TCS consumer whose patch outputs (to a TES outside the pair) glslang numbers
/// behind a 31-location per-vertex block, at 31..60 (piglit's
/// `tcs-output-array` tests): import moves them into `PATCH0..29`, and export
/// finds each by that slot and writes it back at its own location. Before, import
/// refused them ("beyond the 32 generic slots"); with import alone changed,
/// export failed ("PATCH0.x has no variable in the original module").
#[test]
fn outer_patch_varyings_behind_the_generic_slots_export_at_their_locations() {
    if !tools() {
        return;
    }
    let vs = "#version 150
in vec4 pos;
out vec4 w;
void main() { gl_Position = pos; w = pos * 2.0; }
";
    let tcs = "#version 150
#extension GL_ARB_tessellation_shader : require
layout(vertices = 4) out;
in vec4 w[];
out block { float m1[16]; float m2[15]; } blk[];
patch out float p1[16];
patch out float p2[14];
void main() {
  blk[gl_InvocationID].m1[3] = w[gl_InvocationID].x;
  blk[gl_InvocationID].m2[14] = w[gl_InvocationID].y;
  p1[0] = w[0].z;
  p1[15] = w[1].w + w[2].x;
  p2[0] = w[3].y;
  p2[13] = 5.0;
  gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
  gl_TessLevelOuter = float[4](1.0, 1.0, 1.0, 1.0);
  gl_TessLevelInner = float[2](1.0, 1.0);
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("patch-outer", [("a.vert", vs), ("a.tesc", tcs)]);
    assert_eq!(varying_locations(&le_words(&cm)).get("p1"), Some(&31));
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "tcs") {
        let at = varying_locations(&y);
        assert_eq!(
            (at.get("p1"), at.get("p2")),
            (Some(&31), Some(&47)),
            "{what}: {at:?}"
        );
    }
}

/// `Location` of each member of the struct type named `name`.
fn member_locations(words: &[u32], name: &str) -> Vec<(u32, u32)> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Op};
    let m = rspirv::dr::load_words(words).expect("parses");
    let ty = m.debug_names.iter().find_map(|i| match &i.operands[..] {
        [Operand::IdRef(t), Operand::LiteralString(s)]
            if i.class.opcode == Op::Name && s == name =>
        {
            Some(*t)
        }
        _ => None,
    });
    m.annotations
        .iter()
        .filter_map(|i| match &i.operands[..] {
            [Operand::IdRef(t), Operand::LiteralBit32(k), Operand::Decoration(Decoration::Location), Operand::LiteralBit32(l)]
                if Some(*t) == ty =>
            {
                Some((*k, *l))
            }
            _ => None,
        })
        .collect()
}

/// SPIR-V (glslang `-V`, without `--aml`, whose block variable `Location` beside
/// member ones `spirv-val` refuses) of a GLSL source file named `name`.
fn compile_plain(name: &str, src: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-export-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (path, spv) = (dir.join(name), dir.join(format!("{name}.spv")));
    std::fs::write(&path, src).expect("write shader");
    let o = Command::new(GLSLANG)
        .arg("-V")
        .arg(&path)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("runs glslang");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    std::fs::read(&spv).expect("read module")
}

/// A per-patch output block outside the pair whose members carry `Location`s
/// past the 32 slots and whose `Patch` decorations are on its members, as glslang
/// writes a `patch out` block. Import moves it into `PATCH0..20` (members in their
/// places relative to the first); export laid members out at their absolute
/// locations and took the block as per-vertex (its variable has no `Patch`), so it
/// found no variable for `PATCH0.x`.
#[test]
fn an_outer_patch_block_with_member_locations_exports_in_place() {
    if !tools() {
        return;
    }
    let vs = compile_plain(
        "b.vert",
        "#version 450
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 v;
void main() { gl_Position = pos; v = pos * 2.0; }
",
    );
    let tcs = compile_plain(
        "b.tesc",
        "#version 450
layout(vertices = 4) out;
layout(location = 0) in vec4 v[];
layout(location = 0) out block { float m1[16]; float m2[15]; } blk[];
layout(location = 31) patch out PB { float p[16]; layout(location = 50) vec4 q; float r; } pb;
void main() {
  blk[gl_InvocationID].m1[3] = v[gl_InvocationID].x;
  pb.p[0] = v[0].z;
  pb.p[15] = v[1].w + v[0].x;
  pb.q = v[2];
  pb.r = v[3].y;
  gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
  gl_TessLevelOuter = float[4](1.0, 1.0, 1.0, 1.0);
  gl_TessLevelInner = float[2](1.0, 1.0);
}
",
    );
    let pipe = varysat::import::import_spirv(&vs, &tcs, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    let original = member_locations(&le_words(&tcs), "PB");
    assert_eq!(original, [(0, 31), (1, 50), (2, 51)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&vs, &tcs), "tcs") {
        assert_eq!(member_locations(&y, "PB"), original, "{what}");
    }
}

#[test]
fn compatibility_colours_export_under_names_the_import_maps_back() {
    if !tools() {
        return;
    }
    let (pipe, vs, fs) = exported_fixture(
        "ff_two_sided.vert",
        "ff_two_sided.frag",
        "the uniform-only varying is propagated, so both stages are regenerated",
    );
    let outputs = output_names(&vs);
    for name in ["varysat_COL0_x", "varysat_COL1_w", "varysat_BFC1_z"] {
        assert!(outputs.contains(name), "VS writes `{name}`: {outputs:?}");
    }
    // Read as generic varyings, the clamp of the front colour and the FS's choice
    // of the back secondary colour on back faces would be lost.
    assert_reimports_equivalent(&pipe, "optimized", &vs, &fs);
}

/// A dynamically indexed OpenGL uniform array of structs (`lights[pick].power`):
/// the IR reads it as a dynamic word of the synthesized buffer, and the export
/// reads every member of the element at the word clamped into it and selects the
/// one holding the word (SPIR-V cannot index a struct dynamically). Before, the
/// export refused it ("a dynamically indexed OpenGL uniform array of structs is not
/// exported", 3 of the 989 real pairs of `scripts/export_corpus.sh`).
#[test]
fn dynamically_indexed_uniform_structs_export_as_member_selects() {
    if !tools() {
        return;
    }
    let (pipe, vs, fs) = exported_fixture(
        "gl_struct_array.vert",
        "gl_struct_array.frag",
        "the uniform-only varying is propagated, so both stages are regenerated",
    );
    assert_reimports_equivalent(&pipe, "optimized", &vs, &fs);
}

/// A GS consumer writes `out vec4 o[4]` and `out float f[3]` (to the FS, outside
/// the pair) with computed indices: the export indexes the original arrays
/// dynamically (the index added to the element step of each scalar's path).
/// Before: "dynamically indexed VAR1.x outside the pair's varyings is not exported".
#[test]
fn dynamic_indices_into_varyings_outside_the_pair_export_into_the_original_arrays() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out vec4 v_c;
layout(location=1) out vec4 v_k;
void main() { gl_Position = pos; v_c = pos * 2.0; v_k = vec4(1.0, 2.0, 3.0, 4.0); }
";
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
layout(location=0) in vec4 v_c[];
layout(location=1) in vec4 v_k[];
layout(location=1) out vec4 o[4];
layout(location=5) out float f[3];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    int k = int(v_c[i].w) & 3;
    o[0] = vec4(0.0); o[1] = vec4(1.0); o[2] = vec4(2.0); o[3] = v_k[i];
    o[k] = v_c[i];
    o[(k + 1) & 3].y = v_c[i].x;
    f[0] = 0.0; f[1] = 1.0; f[2] = 2.0;
    f[k % 3] = v_c[i].z + v_k[i].y;
    EmitVertex();
  }
}
";
    let (pipe, (pm, cm), outcome) =
        import_and_optimize("outer-ind", [("o.vert", vs), ("o.geom", gs)]);
    for (what, _, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), "gs") {
        assert!(export_support::dynamic_access_chains(&y) >= 1, "{what} gs");
    }
}

/// The number of `OpAccessChain`s into the variable named `name` with an index
/// that is not a constant.
fn dynamic_chains_into(words: &[u32], name: &str) -> usize {
    use rspirv::dr::Operand::{IdRef, LiteralString};
    use rspirv::spirv::Op;
    let m = rspirv::dr::load_words(words).expect("loads");
    let vars: std::collections::BTreeSet<u32> = m
        .debug_names
        .iter()
        .filter_map(|i| match i.operands.as_slice() {
            [IdRef(id), LiteralString(n)] if n == name => Some(*id),
            _ => None,
        })
        .collect();
    let constants: std::collections::BTreeSet<u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode != Op::Variable)
        .filter_map(|i| i.result_id)
        .collect();
    m.functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
        .filter(|i| i.class.opcode == Op::AccessChain)
        .filter(|i| matches!(i.operands.first(), Some(IdRef(v)) if vars.contains(v)))
        .filter(|i| {
            i.operands[1..]
                .iter()
                .any(|o| matches!(o, IdRef(id) if !constants.contains(id)))
        })
        .count()
}

/// A pair whose stage `indexing` (0 producer, 1 consumer) indexes the original
/// variables `names` of varyings outside the pair dynamically: exported as
/// imported and optimized, both modules pass `spirv-val`, import back
/// interpreter-equivalent, and the stage indexes each variable with a computed id.
fn outer_dynamic_pair(
    tag: &str,
    files: [(&str, &str); 2],
    consumer: &str,
    indexing: usize,
    names: &[&str],
) {
    let (pipe, (pm, cm), outcome) = import_and_optimize(tag, files);
    for (what, x, y) in exports_import_back_equivalent(&pipe, &outcome, (&pm, &cm), consumer) {
        let words = if indexing == 0 { &x } else { &y };
        for name in names {
            assert!(
                dynamic_chains_into(words, name) >= 1,
                "{what}: `{name}` is indexed dynamically in {}",
                files[indexing].0
            );
        }
    }
}

/// The FS behind a TES producer of the tests below.
const TES_FS: &str = "#version 450
layout(location=0) in vec4 o;
layout(location=1) flat in int n;
layout(location=0) out vec4 c;
void main() { c = o * float(n); }
";

/// The VS before a GS consumer of the tests below.
const GS_VS: &str = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) out vec4 v_c;
void main() { gl_Position = pos; v_c = pos * 2.0; }
";

/// Arrays of matrices (and a matrix, by column) outside the pair, indexed
/// dynamically: a TES reading its TCS's `patch in mat4 pm[2]` and per-vertex
/// `in mat3 vm[]` (TES -> FS pair), and a GS writing `out mat3 om[2]` to its FS
/// (VS -> GS pair). Each element takes 4 (3) locations: the exported index is
/// the element (slot index / 4) and the column (the rest). Before, the export
/// refused both: "dynamically indexed PATCH0.x: an array of matrices is not
/// exported" and "VAR8.x: a variable that is no array".
#[test]
fn dynamically_indexed_matrix_arrays_outside_the_pair_export() {
    if !tools() {
        return;
    }
    let tes = "#version 450
layout(triangles) in;
layout(location=0) patch in mat4 pm[2];
layout(location=8) in mat3 vm[];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  int j = int(gl_TessCoord.y * 4.0) & 3;
  int v = int(gl_TessCoord.z * 3.0) % 3;
  o = pm[k][j] + pm[1 - k][2] * pm[k][j].w + vec4(vm[v][j % 3], vm[2 - v][1].y);
  n = k + j;
  gl_Position = o;
}
";
    outer_dynamic_pair(
        "outer-mat-tes",
        [("m.tese", tes), ("m.frag", TES_FS)],
        "fs",
        0,
        &["pm", "vm"],
    );
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
layout(location=0) in vec4 v_c[];
layout(location=1) out mat3 om[2];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    int k = int(v_c[i].w) & 1;
    int j = int(v_c[i].z) & 3;
    om[0] = mat3(0.0); om[1] = mat3(1.0);
    om[k] = mat3(v_c[i].xyz, v_c[i].yzw, v_c[i].zwx);
    om[1 - k][j % 3] = v_c[i].xxy;
    om[k][(j + 1) % 3].z = v_c[i].w;
    EmitVertex();
  }
}
";
    outer_dynamic_pair(
        "outer-mat-gs",
        [("m.vert", GS_VS), ("m.geom", gs)],
        "gs",
        1,
        &["om"],
    );
}

/// Arrays of structs outside the pair, indexed dynamically: a TES reading its
/// TCS's `patch in S ps[2]` (S { vec4 a; float b; mat2 c; }, 4 locations) at an
/// element and, inside the member `c`, a column; a GS writing `out S os[2]` to
/// its FS likewise. The exported index is the element (slot index / 4) with the
/// member kept and the column the rest past the member's offset. Before, the
/// export refused both: "an array of structs is not exported".
#[test]
fn dynamically_indexed_struct_arrays_outside_the_pair_export() {
    if !tools() {
        return;
    }
    let tes = "#version 450
layout(triangles) in;
struct S { vec4 a; float b; mat2 c; };
layout(location=0) patch in S ps[2];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  int j = int(gl_TessCoord.y * 4.0) & 1;
  o = ps[k].a * ps[1 - k].b + vec4(ps[k].c[j], ps[1 - k].c[1 - j]);
  n = k + j;
  gl_Position = o;
}
";
    outer_dynamic_pair(
        "outer-struct-tes",
        [("s.tese", tes), ("s.frag", TES_FS)],
        "fs",
        0,
        &["ps"],
    );
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
struct S { vec4 a; float b; mat2 c; };
layout(location=0) in vec4 v_c[];
layout(location=1) out S os[2];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    int k = int(v_c[i].w) & 1;
    int j = int(v_c[i].z) & 1;
    os[0] = S(vec4(0.0), 1.0, mat2(2.0));
    os[1] = S(vec4(3.0), 4.0, mat2(5.0));
    os[k].a = v_c[i];
    os[1 - k].b = v_c[i].x;
    os[k].c[j] = v_c[i].yz;
    EmitVertex();
  }
}
";
    outer_dynamic_pair(
        "outer-struct-gs",
        [("s.vert", GS_VS), ("s.geom", gs)],
        "gs",
        1,
        &["os"],
    );
}

/// Arrays of arrays outside the pair, indexed dynamically at either level or
/// both (the importer adds the two scaled indices into one slot index): a TES
/// reading its TCS's `patch in vec2 pa[2][3]`, a GS writing `out float oa[2][3]`
/// to its FS. The exported indices are slot index / 3 and the rest. Before,
/// the export refused both: "an array of arrays is not exported".
#[test]
fn dynamically_indexed_arrays_of_arrays_outside_the_pair_export() {
    if !tools() {
        return;
    }
    let tes = "#version 450
layout(triangles) in;
layout(location=0) patch in vec2 pa[2][3];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  int j = int(gl_TessCoord.y * 3.0) % 3;
  o = vec4(pa[k][j], pa[1][j]) + vec4(pa[k][2], pa[1 - k][(j + 1) % 3]);
  n = k + j;
  gl_Position = o;
}
";
    outer_dynamic_pair(
        "outer-aoa-tes",
        [("a.tese", tes), ("a.frag", TES_FS)],
        "fs",
        0,
        &["pa"],
    );
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
layout(location=0) in vec4 v_c[];
layout(location=1) out float oa[2][3];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    int k = int(v_c[i].w) & 1;
    int j = int(v_c[i].z) % 3;
    oa = float[2][3](float[3](0.0, 1.0, 2.0), float[3](3.0, 4.0, 5.0));
    oa[k][j] = v_c[i].x;
    oa[1][(j + 1) % 3] = v_c[i].y;
    oa[1 - k][2] = v_c[i].z;
    EmitVertex();
  }
}
";
    outer_dynamic_pair(
        "outer-aoa-gs",
        [("a.vert", GS_VS), ("a.geom", gs)],
        "gs",
        1,
        &["oa"],
    );
}

/// Arrays of 64-bit vectors over two locations outside the pair, indexed
/// dynamically: a TES reading its TCS's `patch in dvec4 pd[2]` and
/// `patch in dvec3 pt[2]`, a GS writing `flat out dvec3 od[2]` to its FS. The
/// exported index is slot index / 2, the component the place's own. Before, the
/// export refused both: "an array of 64-bit vectors of two locations each is
/// not exported".
#[test]
fn dynamically_indexed_wide_vector_arrays_outside_the_pair_export() {
    if !tools() {
        return;
    }
    let tes = "#version 450
layout(triangles) in;
layout(location=0) patch in dvec4 pd[2];
layout(location=4) patch in dvec3 pt[2];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  o = vec4(pd[k].z, pd[1 - k].y, pt[k].z, pt[1 - k].x);
  n = int(pd[k].w);
  gl_Position = o;
}
";
    outer_dynamic_pair(
        "outer-dvec-tes",
        [("d.tese", tes), ("d.frag", TES_FS)],
        "fs",
        0,
        &["pd", "pt"],
    );
    let gs = "#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices=3) out;
layout(location=0) in vec4 v_c[];
layout(location=1) flat out dvec3 od[2];
void main() {
  for (int i = 0; i < 3; i++) {
    gl_Position = gl_in[i].gl_Position;
    int k = int(v_c[i].w) & 1;
    od[0] = dvec3(0.0); od[1] = dvec3(1.0);
    od[k] = dvec3(v_c[i].xyz);
    od[1 - k].z = double(v_c[i].w);
    EmitVertex();
  }
}
";
    outer_dynamic_pair(
        "outer-dvec-gs",
        [("d.vert", GS_VS), ("d.geom", gs)],
        "gs",
        1,
        &["od"],
    );
}

/// A TES (TES -> FS pair) reading its TCS's per-vertex inputs at a dynamic
/// vertex (`v[n]`) and at a dynamic vertex and array index (`w[n][k]`): the
/// vertex index stays the first index of the access chain, the array index the
/// slot index. Checked by hand when those exports came in; now a test.
#[test]
fn tes_per_vertex_inputs_from_the_tcs_export_at_dynamic_vertices_and_indices() {
    if !tools() {
        return;
    }
    let tes = "#version 450
layout(triangles) in;
layout(location=0) in vec4 v[];
layout(location=1) in vec4 w[][2];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  int i = int(gl_TessCoord.z * 3.0) % 3;
  o = v[i] + w[i][k] + w[2 - i][1] * v[0].x;
  n = k + i;
  gl_Position = o;
}
";
    outer_dynamic_pair(
        "outer-tes-vertex",
        [("v.tese", tes), ("v.frag", TES_FS)],
        "fs",
        0,
        &["v", "w"],
    );
}

/// An array of blocks outside the pair whose members carry `Location`s (GLSL
/// forbids them on an arrayed block's members, SPIR-V tools accept them): a
/// TES reading `patch in Blk { vec4 a; float b; } pb[2]` of its TCS at a dynamic
/// element, the module's `Location` of `pb` replaced by member `Location`s (0
/// and 1). The importer lays out every element's members one after the other
/// and reads member `Location`s only on a variable's own block; the export does
/// the same and indexes the element by slot index / 2. Before, the export
/// refused the dynamic index ("an array of structs"), and its layout put both
/// elements' members at the absolute locations 0 and 1.
#[test]
fn block_arrays_with_member_locations_outside_the_pair_index_like_plain_structs() {
    use rspirv::binary::Assemble;
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Op};
    if !tools() {
        return;
    }
    let tes = compile_plain(
        "pb.tese",
        "#version 450
layout(triangles) in;
layout(location=0) patch in Blk { vec4 a; float b; } pb[2];
layout(location=0) out vec4 o;
layout(location=1) flat out int n;
void main() {
  int k = int(gl_TessCoord.x * 2.0) & 1;
  o = pb[k].a * pb[1 - k].b + vec4(pb[k].b);
  n = k;
  gl_Position = o;
}
",
    );
    let fs = compile_plain("pb.frag", TES_FS);
    let mut m = rspirv::dr::load_bytes(&tes).expect("loads");
    let named = |name: &str| {
        m.debug_names
            .iter()
            .find_map(|i| match i.operands.as_slice() {
                [Operand::IdRef(id), Operand::LiteralString(n)] if n == name => Some(*id),
                _ => None,
            })
            .unwrap_or_else(|| panic!("`{name}` is named"))
    };
    let (pb, blk) = (named("pb"), named("Blk"));
    let before = m.annotations.len();
    m.annotations.retain(|i| {
        !matches!(
            i.operands.as_slice(),
            [Operand::IdRef(v), Operand::Decoration(Decoration::Location), ..] if *v == pb
        )
    });
    assert_eq!(m.annotations.len(), before - 1, "`pb` had a Location");
    for member in 0..2 {
        m.annotations.push(rspirv::dr::Instruction::new(
            Op::MemberDecorate,
            None,
            None,
            vec![
                Operand::IdRef(blk),
                Operand::LiteralBit32(member),
                Operand::Decoration(Decoration::Location),
                Operand::LiteralBit32(member),
            ],
        ));
    }
    let tes = varysat::export::to_bytes(&m.assemble());
    validate(&le_words(&tes), "the TES with member locations").unwrap_or_else(|e| panic!("{e}"));
    let pipe = varysat::import::import_spirv(&tes, &fs, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    for (what, x, _) in exports_import_back_equivalent(&pipe, &outcome, (&tes, &fs), "fs") {
        assert!(
            dynamic_chains_into(&x, "pb") >= 1,
            "{what}: `pb` is indexed dynamically"
        );
    }
}

#[test]
fn viewport_mask_and_a_viewport_relative_layer_export_valid_spirv() {
    if !tools() {
        return;
    }
    let vs = "#version 450
#extension GL_NV_viewport_array2 : require
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 col;
layout(viewport_relative) out int gl_Layer;
void main() {
  gl_Position = pos;
  gl_ViewportMask[0] = 5;
  gl_Layer = 2;
  col = pos * 2.0;
}
";
    let fs = "#version 450
layout(location = 0) in vec4 col;
layout(location = 0) out vec4 o;
void main() { o = col + vec4(float(gl_ViewportIndex), float(gl_Layer), 0.0, 0.0); }
";
    let (pipe, (pm, cm), outcome) = import_and_optimize("vpmask", [("a.vert", vs), ("a.frag", fs)]);
    assert!(pipe.producer.layer_viewport_relative);
    for (what, x, _) in exported_and_valid(&pipe, &outcome, (&pm, &cm), "fs") {
        use rspirv::binary::Disassemble;
        let text = rspirv::dr::load_words(&x).expect("loads").disassemble();
        for needle in [
            "ShaderViewportMaskNV",
            "BuiltIn ViewportMaskNV",
            "ViewportRelativeNV",
        ] {
            assert!(text.contains(needle), "{what}: no {needle} in\n{text}");
        }
    }
    // The pair alone (no original modules) exports valid SPIR-V too.
    let (x, y) = varysat::export::standalone_to_spirv(&outcome.pipeline).expect("exports");
    // Standalone modules are SPIR-V 1.3 (Vulkan 1.1), as tests/export_standalone.rs.
    validate_for(&x, "standalone vs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
    validate_for(&y, "standalone fs", "vulkan1.1").unwrap_or_else(|e| panic!("{e}"));
}
