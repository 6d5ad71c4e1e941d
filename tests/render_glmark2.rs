//! Differential rendering of real third-party shaders on lavapipe: a fixed
//! sample of glmark2's VS -> FS pairs (Debian `glmark2-data`, installed by
//! `scripts/setup.sh`; the pairs of `tests/third_party_sample.rs`) drawn as
//! imported and after optimization, every channel compared
//! (`render_support::compare`).
//!
//! glmark2's shaders are OpenGL GLSL (default-block uniforms, attributes and
//! varyings without locations): no Vulkan driver takes them as compiled, so
//! both pipelines are written by the standalone export
//! (`export::standalone_to_spirv`): the original is the imported pair as the IR
//! holds it, the other its optimization. Without glslang, glmark2-data or
//! lavapipe the test skips locally and fails in CI.

mod render_support;

use std::path::Path;

use render_support::harness::{gpu, in_ci};
use render_support::{compare, coverage, Gpu, Setup, Stages};
use varysat::import::{import_glsl, ImportOptions};
use varysat::Pipeline;

const DIR: &str = "/usr/share/glmark2/shaders";

/// Complete glmark2 VS/FS pairs (the other files are templates the benchmark
/// fills in at run time).
const SAMPLE: &[&str] = &[
    "buffer-wireframe",
    "depth",
    "desktop",
    "gradient",
    "ideas-lamp-lit",
    "ideas-logo",
    "ideas-logo-flat",
    "ideas-paper",
    "ideas-table",
    "jellyfish",
    "text-renderer",
];

fn stages(p: &Pipeline) -> Result<Stages, String> {
    let (vert, frag) = varysat::export::standalone_to_spirv(p).map_err(|e| e.to_string())?;
    Ok(Stages {
        vert,
        frag,
        ..Default::default()
    })
}

/// Renders one pair as imported and optimized; the covered pixel count.
fn check(gpu: &Gpu, stem: &str) -> Result<usize, String> {
    let (a, b) = (
        Path::new(DIR).join(format!("{stem}.vert")),
        Path::new(DIR).join(format!("{stem}.frag")),
    );
    let pipe =
        import_glsl(&a, &b, &ImportOptions::default()).map_err(|e| format!("import: {e}"))?;
    let out = varysat::optimize(&pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
    let original = stages(&pipe).map_err(|e| format!("export: {e}"))?;
    let optimized = stages(&out.pipeline).map_err(|e| format!("optimized export: {e}"))?;
    let setup = Setup::of(
        &[&original, &optimized],
        ash::vk::PrimitiveTopology::TRIANGLE_LIST,
        3,
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
    Ok(coverage(&want))
}

#[test]
fn glmark2_sample_renders_identically_after_optimization() {
    if !Path::new(DIR).is_dir() {
        assert!(!in_ci(), "{DIR} missing in CI: run scripts/setup.sh");
        eprintln!("skipping: {DIR} missing (run scripts/setup.sh)");
        return;
    }
    let Some(gpu) = gpu() else { return };
    let mut failures = vec![];
    let mut drawn = 0;
    for stem in SAMPLE {
        match check(&gpu, stem) {
            Ok(px) => {
                eprintln!("{stem}: identical, {px} pixels covered");
                drawn += usize::from(px > 0);
            }
            Err(e) => failures.push(format!("{stem}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        drawn * 2 >= SAMPLE.len(),
        "only {drawn} of {} pairs drew anything",
        SAMPLE.len()
    );
}
