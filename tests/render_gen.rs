//! Differential rendering of generated VS -> FS pairs on lavapipe: each pair is
//! exported without original modules (`export::standalone_to_spirv`) as generated
//! and after optimization, both are drawn with the same deterministic vertices,
//! push constants, buffers and textures, and every channel of every colour
//! attachment must agree (tolerance: `render_support::compare`). The generator is
//! restricted to what a driver can draw with a defined result
//! (`gen::render_safe`, each restriction documented there).
//!
//! `cargo test` draws a few cases; `VARYSAT_RENDER_CASES=N` draws N (the long
//! run), `VARYSAT_RENDER_FIRST=K` starts at case K (case i is drawn from seed i,
//! so one case can be re-run alone). A failing case's pair is written to
//! `target/tmp/render-gen/case-<i>.pair`.

mod render_support;

use std::time::Instant;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use render_support::harness::gpu;
use render_support::{captured_words, compare, coverage, Attachment, Gpu, Setup, Stages};
use varysat::internals::gen::{arb_recipe, build_for_rendering, describe, GenConfig};
use varysat::ir::{Half, InstKind, Primitive, Stage, StageInfo};
use varysat::Pipeline;

/// Cases drawn by a plain `cargo test` (about 0.12 s each on lavapipe).
const DEFAULT_CASES: usize = 24;

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The pair of case `i`: a recipe drawn from seed `i`, built for rendering.
fn case(i: usize) -> Pipeline {
    case_of((Stage::Vertex, Stage::Fragment), i)
}

/// Case `i` of a stage pair.
fn case_of(pair: (Stage, Stage), i: usize) -> Pipeline {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
    seed[8..16].copy_from_slice(b"rendrgen");
    seed[16] = pair.0 as u8;
    if pair.0 == Stage::Vertex {
        // VS -> FS seeds as they were before other pairs were drawn.
        seed[16] = 0;
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let cfg = GenConfig::for_pair(pair);
    let recipe = arb_recipe(cfg)
        .new_tree(&mut runner)
        .expect("a recipe")
        .current();
    build_for_rendering(&recipe)
}

fn topology(p: &Pipeline) -> ash::vk::PrimitiveTopology {
    match p.producer.info {
        StageInfo::Vertex {
            topology: Primitive::Lines,
        } => ash::vk::PrimitiveTopology::LINE_LIST,
        _ => ash::vk::PrimitiveTopology::TRIANGLE_LIST,
    }
}

/// What one case gave.
struct Drawn {
    covered: usize,
    /// Whether the pair captures and the capture buffers hold something.
    captured: bool,
    changed: bool,
}

fn check(gpu: &Gpu, pipe: &Pipeline) -> Result<Drawn, String> {
    let (v, f) = varysat::export::standalone_to_spirv(pipe).map_err(|e| format!("export: {e}"))?;
    let original = Stages {
        vert: v,
        frag: f,
        ..Default::default()
    };
    let outcome = varysat::optimize(pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
    let (v, f) = varysat::export::standalone_to_spirv(&outcome.pipeline)
        .map_err(|e| format!("optimized export: {e}"))?;
    let optimized = Stages {
        vert: v,
        frag: f,
        ..Default::default()
    };
    let setup = Setup::of(&[&original, &optimized], topology(pipe), 3);
    let want = gpu.render(&original, &setup)?;
    let got = gpu
        .render(&optimized, &setup)
        .map_err(|e| format!("optimized: {e}"))?;
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        if bad > 0 {
            return Err(msg);
        }
    }
    Ok(Drawn {
        covered: coverage(&want),
        captured: captured_words(&want) > 0,
        changed: outcome.pipeline != *pipe,
    })
}

/// `VARYSAT_RENDER_PAIR=FILE`: draws one `.pair` file (original and optimized)
/// and prints every differing channel, for investigating a failed case.
#[test]
fn render_one_pair_file() {
    let Some(path) = std::env::var_os("VARYSAT_RENDER_PAIR") else {
        return;
    };
    let Some(gpu) = gpu() else { return };
    let pipe = varysat::text::parse_file(std::path::Path::new(&path)).expect("pair file");
    let out = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    let (a, b) = (Stages::standalone(&pipe), Stages::standalone(&out.pipeline));
    let setup = Setup::of(&[&a, &b], topology(&pipe), 3);
    let want = gpu.render(&a, &setup).expect("renders");
    let got = gpu.render(&b, &setup).expect("renders");
    eprintln!("covered pixels: {}", coverage(&want));
    for (x, y) in want.iter().zip(&got) {
        for (i, (p, q)) in x.words.iter().zip(&y.words).enumerate() {
            if p != q {
                eprintln!(
                    "location {} pixel {} ({}, {}) channel {}: {:e} vs {:e}",
                    x.location,
                    i / 4,
                    (i / 4) % 32,
                    (i / 4) / 32,
                    i % 4,
                    f32::from_bits(*p),
                    f32::from_bits(*q)
                );
            }
        }
    }
}

#[test]
fn generated_vs_fs_pairs_render_identically() {
    let Some(gpu) = gpu() else { return };
    let n = env_usize("VARYSAT_RENDER_CASES").unwrap_or(DEFAULT_CASES);
    let first = env_usize("VARYSAT_RENDER_FIRST").unwrap_or(0);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-gen");
    let start = Instant::now();
    let (mut drawn, mut changed, mut pixels, mut captured) = (0, 0, 0, 0);
    let mut failures = vec![];
    for i in first..first + n {
        let pipe = case(i);
        if std::env::var_os("VARYSAT_RENDER_VERBOSE").is_some() {
            eprintln!("case {i}");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("case-{i}.pair")), describe(&pipe));
        }
        match check(&gpu, &pipe) {
            Ok(d) => {
                drawn += usize::from(d.covered > 0);
                captured += usize::from(d.captured);
                changed += usize::from(d.changed);
                pixels += d.covered;
            }
            Err(e) => {
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("case-{i}.pair"));
                let _ = std::fs::write(&path, describe(&pipe));
                eprintln!("case {i}: {e} ({})", path.display());
                failures.push(format!("case {i}: {e}"));
            }
        }
    }
    eprintln!(
        "render_gen: {n} cases from {first}, {} mismatching or failing, {drawn} drew pixels \
         ({pixels} covered pixels in all), {captured} captured, {changed} changed by the optimizer, {:.1} s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        drawn * 4 >= n * 3,
        "only {drawn} of {n} cases drew anything: the comparison would be vacuous"
    );
    assert!(changed > 0, "the optimizer changed none of the {n} pairs");
}

/// `tests/opt/render_uniform_ubo_16bit.pair` and its optimized form, whose FS
/// makes the pair's 16-bit uniform and UBO loads (its VS's uniform expressions are
/// propagated; the file's expectations and interpreter check say so).
fn sixteen_bit_loads_pair() -> (Pipeline, Pipeline) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/opt/render_uniform_ubo_16bit.pair"
    );
    let pipe = varysat::text::parse_file(std::path::Path::new(path)).expect("pair file");
    let out = varysat::optimize(&pipe, &varysat::Options::new()).expect("optimizes");
    (pipe, out.pipeline)
}

/// Draws two pipelines with the same setup (the standalone export of each).
fn draw_both(gpu: &Gpu, a: &Pipeline, b: &Pipeline) -> (Vec<Attachment>, Vec<Attachment>) {
    let (x, y) = (Stages::standalone(a), Stages::standalone(b));
    let setup = Setup::of(&[&x, &y], topology(a), 3);
    let want = gpu.render(&x, &setup).expect("renders");
    let got = gpu.render(&y, &setup).expect("renders");
    (want, got)
}

/// The 16-bit uniform and UBO loads (`load_uniform N.lo|.hi`, `load_ubo B %o
/// lo|hi`) of `sixteen_bit_loads_pair` render identically on lavapipe as
/// written (loads in the VS, their values crossing as 32-bit floats) and
/// optimized (the four loads in the FS): every channel agrees, and the channels
/// that carry the halves alone (DATA0.y `f2f32(lo - hi)` of uniform word 0,
/// DATA0.z `f2f32(hi) - f2f32(lo)` of UBO word 2) are finite, non-zero and the
/// same on every covered pixel, as uniform values are.
#[test]
fn sixteen_bit_uniform_and_ubo_loads_render_identically() {
    let Some(gpu) = gpu() else { return };
    let (pipe, opt) = sixteen_bit_loads_pair();
    let mut fs_halves = 0;
    opt.consumer.for_each_inst(|i| {
        fs_halves += matches!(
            i.kind,
            InstKind::LoadUniform { half, .. } | InstKind::LoadUbo { half, .. } if half != Half::Full
        ) as usize;
    });
    assert_eq!(fs_halves, 4, "{}", varysat::text::print(&opt));
    let (want, got) = draw_both(&gpu, &pipe, &opt);
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        assert_eq!(bad, 0, "{msg}");
    }
    let covered: Vec<&[u32]> = want[0].words.chunks(4).filter(|p| p[0] != 0).collect();
    assert!(covered.len() > 100, "{} pixels covered", covered.len());
    for c in [1, 2] {
        let values: std::collections::BTreeSet<u32> = covered.iter().map(|p| p[c]).collect();
        let v = f32::from_bits(covered[0][c]);
        assert!(
            values.len() == 1 && v.is_finite() && v != 0.0,
            "channel {c}: {values:x?}"
        );
    }
}

/// The comparison sees which half a 16-bit load reads: the optimized
/// `sixteen_bit_loads_pair` with one FS load reading the other half of its word
/// (the uniform's, then the UBO's) must mismatch at the channel it feeds.
#[test]
fn a_swapped_sixteen_bit_half_is_a_mismatch() {
    let Some(gpu) = gpu() else { return };
    let (pipe, opt) = sixteen_bit_loads_pair();
    for ubo in [false, true] {
        let mut wrong = opt.clone();
        let mut swapped = false;
        wrong.consumer.for_each_inst_mut(|i| {
            let half = match &mut i.kind {
                InstKind::LoadUniform { half, .. } if !ubo => half,
                InstKind::LoadUbo { half, .. } if ubo => half,
                _ => return,
            };
            if !swapped && *half != Half::Full {
                *half = if *half == Half::Lo {
                    Half::Hi
                } else {
                    Half::Lo
                };
                swapped = true;
            }
        });
        assert!(swapped, "no 16-bit load to swap (ubo: {ubo})");
        let (want, got) = draw_both(&gpu, &pipe, &wrong);
        let (bad, msg) = compare(&want[0], &got[0]);
        assert!(bad > 0, "a swapped half went unnoticed (ubo: {ubo})");
        // Channel 1 carries the uniform's halves, channel 2 the UBO's: the
        // swapped one differs, the other does not.
        let (fed, other) = if ubo { (2, 1) } else { (1, 2) };
        let pixels = || want[0].words.chunks(4).zip(got[0].words.chunks(4));
        assert!(pixels().any(|(x, y)| x[fed] != y[fed]), "{msg}");
        assert!(pixels().all(|(x, y)| x[other] == y[other]), "{msg}");
        eprintln!("ubo: {ubo}: {msg}");
    }
}

/// The comparison catches a wrong pipeline: the optimized pair of case 0 with
/// its first fragment output overwritten by a constant must not pass.
#[test]
fn a_changed_output_is_a_mismatch() {
    let Some(gpu) = gpu() else { return };
    let pipe = case(0);
    let mut wrong = varysat::optimize(&pipe, &varysat::Options::new())
        .expect("optimizes")
        .pipeline;
    let fs = &mut wrong.consumer;
    let k = fs.add_value("wrong", varysat::ir::BitSize::B32);
    let mut replaced = false;
    varysat::ir::for_each_inst_mut(&mut fs.body, |i| {
        if let varysat::ir::InstKind::StoreOutput { value, .. } = &mut i.kind {
            if !replaced {
                *value = k;
                replaced = true;
            }
        }
    });
    assert!(replaced, "the fragment shader stores no output");
    fs.body.insert(
        0,
        varysat::ir::Stmt::Inst(varysat::ir::Inst {
            result: Some(k),
            kind: varysat::ir::InstKind::Const(1234.5f32.to_bits()),
            loc: None,
        }),
    );
    let (a, b) = (Stages::standalone(&pipe), Stages::standalone(&wrong));
    let setup = Setup::of(&[&a, &b], topology(&pipe), 3);
    let want = gpu.render(&a, &setup).expect("renders");
    let got = gpu.render(&b, &setup).expect("renders");
    assert!(coverage(&want) > 0, "case 0 draws nothing");
    let bad: usize = want.iter().zip(&got).map(|(x, y)| compare(x, y).0).sum();
    assert!(bad > 0, "a constant fragment output went unnoticed");
}

/// Regression (long-run case 1141): the optimizer may leave a flat and an
/// interpolated component in one vec4 slot (the IR's AMD model interpolates per
/// component); the export must give them separate locations, because lavapipe,
/// like GLSL's rule for location aliases, applies one interpolation per location.
/// The pair with the two components in one slot must draw as the pair with them
/// in two slots.
#[test]
fn flat_and_interpolated_components_of_one_slot_draw_as_in_two_slots() {
    let Some(gpu) = gpu() else { return };
    let text = |w_slot: &str| {
        format!(
            "(pair
              (producer vs
                (%a = load_input ATTR8.x)
                (%b = load_input ATTR8.y)
                (%c = load_input ATTR0.x)
                (%one = const 32 1.0)
                (store_output POS.x %a)
                (store_output POS.y %b)
                (store_output POS.z %one)
                (store_output POS.w %one)
                (store_output VAR1.x %c)
                (store_output {w_slot} %c))
              (consumer fs
                (%x = load_input VAR1.x)
                (%w = load_interpolated_input {w_slot} persp center)
                (store_output DATA0.x %x)
                (store_output DATA0.y %w)))"
        )
    };
    let export = |t: &str| Stages::standalone(&varysat::text::parse(t, None).expect("parses"));
    let (mixed, apart) = (export(&text("VAR1.w")), export(&text("VAR2.w")));
    let setup = Setup::of(
        &[&mixed, &apart],
        ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        3,
    );
    let want = gpu.render(&apart, &setup).expect("renders");
    let got = gpu.render(&mixed, &setup).expect("renders");
    assert!(coverage(&want) > 0);
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        assert_eq!(bad, 0, "{msg}");
    }
}

/// The pass-through VS in front of a generated GS -> FS pair: attribute n to
/// location n (the GS's per-vertex `VARn` inputs, `vec4`s in the standalone
/// convention) for n < 8, the position from attribute 8.
const PASS_THROUGH_VS: &str = "#version 450
layout(location = 0) in vec4 a0;
layout(location = 1) in vec4 a1;
layout(location = 2) in vec4 a2;
layout(location = 3) in vec4 a3;
layout(location = 4) in vec4 a4;
layout(location = 5) in vec4 a5;
layout(location = 6) in vec4 a6;
layout(location = 7) in vec4 a7;
layout(location = 8) in vec4 pos;
layout(location = 0) out vec4 v0;
layout(location = 1) out vec4 v1;
layout(location = 2) out vec4 v2;
layout(location = 3) out vec4 v3;
layout(location = 4) out vec4 v4;
layout(location = 5) out vec4 v5;
layout(location = 6) out vec4 v6;
layout(location = 7) out vec4 v7;
void main() {
    v0 = a0; v1 = a1; v2 = a2; v3 = a3; v4 = a4; v5 = a5; v6 = a6; v7 = a7;
    gl_Position = pos;
}
";

fn pass_through_vs() -> Vec<u32> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let f = dir.join(format!("render-gen-pass-{}.vert", std::process::id()));
    std::fs::write(&f, PASS_THROUGH_VS).expect("writes the VS");
    let bytes = varysat::import::compile_glsl(&f, false).expect("the pass-through VS compiles");
    let _ = std::fs::remove_file(&f);
    render_support::harness::words(&bytes)
}

fn gs_topology(p: &Pipeline) -> ash::vk::PrimitiveTopology {
    use ash::vk::PrimitiveTopology as T;
    match p.producer.info {
        StageInfo::Geometry {
            input: Primitive::Points,
            ..
        } => T::POINT_LIST,
        StageInfo::Geometry {
            input: Primitive::Lines,
            ..
        } => T::LINE_LIST,
        _ => T::TRIANGLE_LIST,
    }
}

fn check_gs(gpu: &Gpu, vs: &[u32], pipe: &Pipeline) -> Result<Drawn, String> {
    let stages = |p: &Pipeline| -> Result<Stages, String> {
        let (g, f) = varysat::export::standalone_to_spirv(p).map_err(|e| e.to_string())?;
        Ok(Stages {
            vert: vs.to_vec(),
            geom: Some(g),
            frag: f,
            ..Default::default()
        })
    };
    let original = stages(pipe).map_err(|e| format!("export: {e}"))?;
    let outcome = varysat::optimize(pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
    let optimized = stages(&outcome.pipeline).map_err(|e| format!("optimized export: {e}"))?;
    let setup = Setup::of(&[&original, &optimized], gs_topology(pipe), 3);
    let want = gpu.render(&original, &setup)?;
    let got = gpu
        .render(&optimized, &setup)
        .map_err(|e| format!("optimized: {e}"))?;
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        if bad > 0 {
            return Err(msg);
        }
    }
    Ok(Drawn {
        covered: coverage(&want),
        captured: captured_words(&want) > 0,
        changed: outcome.pipeline != *pipe,
    })
}

/// Generated GS -> FS pairs behind a pass-through VS (the VS/GS/FS pipeline):
/// the GS's positions are its input vertices' (`gen::build_for_rendering`).
/// `VARYSAT_RENDER_CASES` / `VARYSAT_RENDER_FIRST` as for VS -> FS; a failing
/// case is written to `target/tmp/render-gen/gs-case-<i>.pair`.
#[test]
fn generated_gs_fs_pairs_render_identically() {
    let Some(gpu) = gpu() else { return };
    let vs = pass_through_vs();
    let n = env_usize("VARYSAT_RENDER_CASES").unwrap_or(DEFAULT_CASES / 2);
    let first = env_usize("VARYSAT_RENDER_FIRST").unwrap_or(0);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-gen");
    let start = Instant::now();
    let (mut drawn, mut changed, mut captured) = (0, 0, 0);
    let mut failures = vec![];
    for i in first..first + n {
        let pipe = case_of((Stage::Geometry, Stage::Fragment), i);
        if std::env::var_os("VARYSAT_RENDER_VERBOSE").is_some() {
            eprintln!("gs case {i}");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("gs-case-{i}.pair")), describe(&pipe));
        }
        match check_gs(&gpu, &vs, &pipe) {
            Ok(d) => {
                drawn += usize::from(d.covered > 0);
                captured += usize::from(d.captured);
                changed += usize::from(d.changed);
            }
            Err(e) => {
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("gs-case-{i}.pair"));
                let _ = std::fs::write(&path, describe(&pipe));
                eprintln!("gs case {i}: {e} ({})", path.display());
                failures.push(format!("gs case {i}: {e}"));
            }
        }
    }
    eprintln!(
        "render_gen GS: {n} cases from {first}, {} mismatching or failing, {drawn} drew pixels, {captured} captured, \
         {changed} changed by the optimizer, {:.1} s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(drawn * 2 >= n, "only {drawn} of {n} cases drew anything");
    assert!(changed > 0, "the optimizer changed none of the {n} pairs");
}

/// A TCS passing the pass-through VS's `vec4`s on to a generated TES: control
/// point i's `VARn` to output `VARn` for each location the TES reads, per-patch
/// `PATCHn` (at the standalone convention's location, after the per-vertex ones)
/// from control point 0's position, fixed tessellation levels.
fn pass_through_tcs(pipe: &Pipeline) -> Result<Vec<u32>, String> {
    use varysat::ir::{InstKind, Slot};
    let StageInfo::TessEval { input_vertices, .. } = pipe.producer.info else {
        return Err("not a TES producer".into());
    };
    let (mut vars, mut patches) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    pipe.producer.for_each_inst(|i| match &i.kind {
        InstKind::LoadPerVertexInput { slot, .. } => {
            if let Slot::Var(n) = slot.slot {
                vars.insert(u32::from(n));
            }
        }
        InstKind::LoadInput { slot, .. } => {
            if let Slot::Patch(n) = slot.slot {
                patches.insert(u32::from(n));
            }
        }
        _ => {}
    });
    let patch_base = varysat::export::OUTER_PATCH_BASE;
    let mut src = format!("#version 450\nlayout(vertices = {input_vertices}) out;\n");
    let mut body = String::new();
    for n in &vars {
        src += &format!("layout(location = {n}) in vec4 v{n}[];\n");
        src += &format!("layout(location = {n}) out vec4 o{n}[];\n");
        body += &format!("    o{n}[gl_InvocationID] = v{n}[gl_InvocationID];\n");
    }
    for n in &patches {
        src += &format!(
            "layout(location = {}) patch out vec4 p{n};\n",
            patch_base + n
        );
        body += &format!("    p{n} = gl_in[0].gl_Position + vec4({n}.0);\n");
    }
    src += "void main() {\n";
    src += &body;
    src += "    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;\n";
    src += "    gl_TessLevelOuter[0] = 2.0; gl_TessLevelOuter[1] = 3.0;\n";
    src += "    gl_TessLevelOuter[2] = 2.0; gl_TessLevelOuter[3] = 4.0;\n";
    src += "    gl_TessLevelInner[0] = 2.0; gl_TessLevelInner[1] = 2.0;\n}\n";
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let f = dir.join(format!("render-gen-pass-{}.tesc", std::process::id()));
    std::fs::write(&f, &src).map_err(|e| e.to_string())?;
    let bytes = varysat::import::compile_glsl(&f, false).map_err(|e| format!("{e}\n{src}"))?;
    let _ = std::fs::remove_file(&f);
    Ok(render_support::harness::words(&bytes))
}

fn check_tes(gpu: &Gpu, vs: &[u32], pipe: &Pipeline) -> Result<Drawn, String> {
    let tcs = pass_through_tcs(pipe)?;
    let StageInfo::TessEval { input_vertices, .. } = pipe.producer.info else {
        return Err("not a TES producer".into());
    };
    let stages = |p: &Pipeline| -> Result<Stages, String> {
        let (e, f) = varysat::export::standalone_to_spirv(p).map_err(|e| e.to_string())?;
        Ok(Stages {
            vert: vs.to_vec(),
            tesc: Some(tcs.clone()),
            tese: Some(e),
            frag: f,
            ..Default::default()
        })
    };
    let original = stages(pipe).map_err(|e| format!("export: {e}"))?;
    let outcome = varysat::optimize(pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
    let optimized = stages(&outcome.pipeline).map_err(|e| format!("optimized export: {e}"))?;
    let setup = Setup::of(
        &[&original, &optimized],
        ash::vk::PrimitiveTopology::PATCH_LIST,
        u32::from(input_vertices),
    );
    let want = gpu.render(&original, &setup)?;
    let got = gpu
        .render(&optimized, &setup)
        .map_err(|e| format!("optimized: {e}"))?;
    for (x, y) in want.iter().zip(&got) {
        let (bad, msg) = compare(x, y);
        if bad > 0 {
            return Err(msg);
        }
    }
    Ok(Drawn {
        covered: coverage(&want),
        captured: captured_words(&want) > 0,
        changed: outcome.pipeline != *pipe,
    })
}

/// Generated TES -> FS pairs behind a pass-through VS and TCS (the VS/TCS/TES/FS
/// pipeline): the TES's positions are its first control point's, moved by the
/// tessellation coordinate (`gen::build_for_rendering`). `VARYSAT_RENDER_CASES`
/// / `VARYSAT_RENDER_FIRST` as for VS -> FS; a failing case is written to
/// `target/tmp/render-gen/tes-case-<i>.pair`.
#[test]
fn generated_tes_fs_pairs_render_identically() {
    let Some(gpu) = gpu() else { return };
    let vs = pass_through_vs();
    let n = env_usize("VARYSAT_RENDER_CASES").unwrap_or(DEFAULT_CASES / 2);
    let first = env_usize("VARYSAT_RENDER_FIRST").unwrap_or(0);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-gen");
    let start = Instant::now();
    let (mut drawn, mut changed, mut captured) = (0, 0, 0);
    let mut failures = vec![];
    for i in first..first + n {
        let pipe = case_of((Stage::TessEval, Stage::Fragment), i);
        if std::env::var_os("VARYSAT_RENDER_VERBOSE").is_some() {
            eprintln!("tes case {i}");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("tes-case-{i}.pair")), describe(&pipe));
        }
        match check_tes(&gpu, &vs, &pipe) {
            Ok(d) => {
                drawn += usize::from(d.covered > 0);
                captured += usize::from(d.captured);
                changed += usize::from(d.changed);
            }
            Err(e) => {
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("tes-case-{i}.pair"));
                let _ = std::fs::write(&path, describe(&pipe));
                eprintln!("tes case {i}: {e} ({})", path.display());
                failures.push(format!("tes case {i}: {e}"));
            }
        }
    }
    eprintln!(
        "render_gen TES: {n} cases from {first}, {} mismatching or failing, {drawn} drew pixels, {captured} captured, \
         {changed} changed by the optimizer, {:.1} s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(drawn * 2 >= n, "only {drawn} of {n} cases drew anything");
    assert!(changed > 0, "the optimizer changed none of the {n} pairs");
}
