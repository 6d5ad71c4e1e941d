//! Import of 64-bit numbers (issue 16): `double`, `int64_t` and `uint64_t` values are
//! carried as two 32-bit words, low word first; varyings take two components each
//! (a `dvec3` two locations) and are never interpolated; arithmetic on them is
//! opaque per result word, evaluated at full width by the interpreter. The tests
//! compare imported pairs against hand-written ones whose results are known, so a
//! wrong word order, a lost high word or single-precision arithmetic is caught.
//! GLSL sources are compiled by glslang (skipped outside CI when it is missing).

use std::path::PathBuf;

use varysat::import::{import_files, ImportOptions, GLSLANG};
use varysat::interpreter::{check_equivalent, EquivConfig, Item};
use varysat::ir::{InstKind, Pipeline, Shader};
use varysat::{optimize, Options};

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

fn import(name: &str, vs: &str, fs: &str) -> Result<Pipeline, String> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-import-wide-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let paths: Vec<PathBuf> = [("a.vert", vs), ("a.frag", fs)]
        .iter()
        .map(|(f, text)| {
            let p = dir.join(f);
            std::fs::write(&p, text).expect("write source");
            p
        })
        .collect();
    import_files(&paths[0], &paths[1], &ImportOptions::default()).map_err(|e| e.to_string())
}

fn cfg() -> EquivConfig {
    EquivConfig {
        runs: 4,
        ..EquivConfig::default()
    }
}

/// The varying components a shader reads or writes, as `VAR0.x`-style names.
fn io_slots(s: &Shader) -> Vec<String> {
    let mut out = vec![];
    s.for_each_inst(|i| {
        let slot = match &i.kind {
            InstKind::StoreOutput { slot, .. }
            | InstKind::LoadInput { slot, .. }
            | InstKind::LoadInterpolatedInput { slot, .. } => slot.to_string(),
            _ => return,
        };
        if slot.starts_with("VAR") && !out.contains(&slot) {
            out.push(slot);
        }
    });
    out.sort();
    out
}

fn parse(text: &str) -> Pipeline {
    varysat::text::parse(text, None).unwrap_or_else(|e| panic!("{e}"))
}

/// `(x * 3) / 3` in double precision is exactly `x` for every float `x` (the product
/// needs at most 26 significant bits): the imported pair must behave like a pair
/// that passes `pos.xy` through. Single-precision arithmetic, a swapped word or a
/// dropped high word would change the result.
#[test]
fn double_varyings_carry_exact_double_arithmetic() {
    if !tools() {
        return;
    }
    let vs = "#version 450
layout(location=0) in vec4 pos;
layout(location=0) flat out dvec3 v;
void main() {
  gl_Position = pos;
  v = dvec3(pos.xy, 1.0) * 3.0lf;
}
";
    let fs = "#version 450
layout(location=0) flat in dvec3 v;
layout(location=0) out vec4 color;
void main() { color = vec4(vec2(v.xy / 3.0lf), float(v.z), 1.0); }
";
    let p = import("exact", vs, fs).unwrap_or_else(|e| panic!("{e}"));
    // A dvec3 takes two locations: x and y fill VAR0, z the first half of VAR1.
    let written = io_slots(&p.producer);
    assert_eq!(
        written,
        ["VAR0.w", "VAR0.x", "VAR0.y", "VAR0.z", "VAR1.x", "VAR1.y"],
        "{written:?}"
    );
    let reference = parse(
        "(pair
  (producer vs
    (%x = load_input ATTR0.x) (%y = load_input ATTR0.y)
    (%z = load_input ATTR0.z) (%w = load_input ATTR0.w)
    (store_output POS.x %x) (store_output POS.y %y)
    (store_output POS.z %z) (store_output POS.w %w)
    (store_output VAR0.x %x) (store_output VAR0.y %y))
  (consumer fs
    (%a = load_input VAR0.x) (%b = load_input VAR0.y)
    (%three = const 32 3.0) (%one = const 32 1.0)
    (store_output DATA0.x %a) (store_output DATA0.y %b)
    (store_output DATA0.z %three) (store_output DATA0.w %one)))",
    );
    check_equivalent(&p, &reference, &cfg()).unwrap_or_else(|e| panic!("{e}"));
    // The check can fail: the same pair passing y where x belongs is told apart.
    let wrong = parse(
        &varysat::text::print(&reference)
            .replace("(store_output DATA0.x %a)", "(store_output DATA0.x %b)"),
    );
    assert!(check_equivalent(&p, &wrong, &cfg()).is_err());
    let out = optimize(&p, &Options::new()).expect("optimize");
    check_equivalent(&p, &out.pipeline, &cfg()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.report.before.components, 6);
    // Pure 64-bit ops may move into the VS (flat transfer is exact): never more
    // components than before.
    assert!(out.report.after.components <= 6, "{:?}", out.report.after);
}

/// int64 arithmetic wraps at 64 bits: `(a << 40) >> 40` (arithmetic shift) restores a
/// 24-bit signed value, which a 32-bit shift would not. Uniform-block doubles are
/// read as two words at the member's offset.
#[test]
fn int64_and_uniform_doubles_import_and_optimize() {
    if !tools() {
        return;
    }
    let vs = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(location=0) in vec4 pos;
layout(location=1) in ivec2 id;
layout(binding=0, std140) uniform U { double scale; dmat2 m; } u;
layout(location=0) flat out int64_t big;
layout(location=1) flat out double d;
layout(location=2) out vec2 uv;
void main() {
  gl_Position = pos;
  big = (int64_t(id.x & 0xffffff) << 40) >> 40;
  dvec2 t = u.m * dvec2(pos.xy);
  d = t.x * u.scale + t.y;
  uv = pos.zw;
}
";
    let fs = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(location=0) flat in int64_t big;
layout(location=1) flat in double d;
layout(location=2) in vec2 uv;
layout(location=0) out vec4 color;
void main() { color = vec4(float(big), float(d), uv); }
";
    let p = import("int64", vs, fs).unwrap_or_else(|e| panic!("{e}"));
    let mut ubo_offsets = vec![];
    p.producer.for_each_inst(|i| {
        if let InstKind::LoadUbo { .. } = i.kind {
            ubo_offsets.push(i.result);
        }
    });
    // scale (2 words) and the four doubles of m (8 words).
    assert_eq!(ubo_offsets.len(), 10, "{ubo_offsets:?}");
    let out = optimize(&p, &Options::new()).expect("optimize");
    check_equivalent(&p, &out.pipeline, &cfg()).unwrap_or_else(|e| panic!("{e}"));
    let reference = parse(
        "(pair
  (producer vs
    (%x = load_input ATTR0.x) (%y = load_input ATTR0.y)
    (%z = load_input ATTR0.z) (%w = load_input ATTR0.w)
    (%i = load_input ATTR1.x)
    (%mask = const 32 0xffffff) (%m = iand %i %mask)
    (%eight = const 32 8) (%up = ishl %m %eight) (%s = ishr %up %eight)
    (store_output POS.x %x) (store_output POS.y %y)
    (store_output POS.z %z) (store_output POS.w %w)
    (store_output VAR0.x %s) (store_output VAR1.x %z) (store_output VAR1.y %w))
  (consumer fs
    (%s = load_input VAR0.x) (%f = i2f32 %s)
    (%u = load_interpolated_input VAR1.x persp center)
    (%v = load_interpolated_input VAR1.y persp center)
    (store_output DATA0.x %f) (store_output DATA0.z %u) (store_output DATA0.w %v)))",
    );
    // The reference lacks the uniform block, so only the components it computes
    // are compared: x (the int64) and the interpolated z, w.
    for seed in 0..4 {
        let run = |p: &Pipeline| {
            let cfg = varysat::interpreter::RunConfig {
                seed,
                ..Default::default()
            };
            varysat::interpreter::run(p, &cfg).unwrap_or_else(|e| panic!("{e}"))
        };
        let (got, want) = (run(&p), run(&reference));
        let mut compared = 0;
        for (key, v) in &want.values {
            let Item::Output(slot) = key.item else {
                continue;
            };
            if ["DATA0.x", "DATA0.z", "DATA0.w"].contains(&slot.to_string().as_str()) {
                assert_eq!(got.values.get(key), Some(v), "{key:?}");
                compared += 1;
            }
        }
        assert!(compared > 0, "no fragment was compared");
    }
}
