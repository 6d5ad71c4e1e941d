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
use render_support::{compare, coverage, Gpu, Setup, Stages};
use varysat::internals::gen::{arb_recipe, build_for_rendering, describe, GenConfig};
use varysat::ir::{Primitive, Stage, StageInfo};
use varysat::Pipeline;

/// Cases drawn by a plain `cargo test` (about 0.12 s each on lavapipe).
const DEFAULT_CASES: usize = 24;

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The pair of case `i`: a recipe drawn from seed `i`, built for rendering.
fn case(i: usize) -> Pipeline {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
    seed[8..16].copy_from_slice(b"rendrgen");
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let cfg = GenConfig::for_pair((Stage::Vertex, Stage::Fragment));
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
        changed: outcome.pipeline != *pipe,
    })
}

#[test]
fn generated_vs_fs_pairs_render_identically() {
    let Some(gpu) = gpu() else { return };
    let n = env_usize("VARYSAT_RENDER_CASES").unwrap_or(DEFAULT_CASES);
    let first = env_usize("VARYSAT_RENDER_FIRST").unwrap_or(0);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-gen");
    let start = Instant::now();
    let (mut drawn, mut changed, mut pixels) = (0, 0, 0);
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
         ({pixels} covered pixels in all), {changed} changed by the optimizer, {:.1} s",
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
