//! A fixed sample of the third-party corpus (`scripts/third_party_corpus.sh` runs all
//! of it): glmark2's shader pairs, as Debian's `glmark2-data` installs them
//! (`scripts/setup.sh` does in CI). Each must import, validate, optimize and stay
//! interpreter-equivalent. Outside CI, a missing package or tool skips the test.

use std::path::Path;

use varysat::import::{import_glsl, tool_available, ImportOptions, GLSLANG};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::{optimize, Options};

const DIR: &str = "/usr/share/glmark2/shaders";

/// Stems with a `.vert` and a `.frag`: complete shaders (the other glmark2 files are
/// templates whose `$...$` placeholders and light constants the benchmark fills in).
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

fn available() -> bool {
    if tool_available(GLSLANG) && Path::new(DIR).is_dir() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| !v.is_empty()) {
        panic!("glslang or glmark2-data missing in CI: run scripts/setup.sh");
    }
    eprintln!("skipping: needs {GLSLANG} and {DIR} (run scripts/setup.sh)");
    false
}

#[test]
fn glmark2_sample_imports_optimizes_and_stays_equivalent() {
    if !available() {
        return;
    }
    let mut failures = vec![];
    for stem in SAMPLE {
        let (a, b) = (
            Path::new(DIR).join(format!("{stem}.vert")),
            Path::new(DIR).join(format!("{stem}.frag")),
        );
        let p = match import_glsl(&a, &b, &ImportOptions::default()) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{stem}: import: {e}"));
                continue;
            }
        };
        let out = match optimize(&p, &Options::new()) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{stem}: optimize: {e}"));
                continue;
            }
        };
        if let Some(why) = &out.report.fallback {
            failures.push(format!("{stem}: optimizer fell back: {why}"));
        }
        let cfg = EquivConfig {
            runs: 2,
            ..EquivConfig::default()
        };
        if let Err(e) = check_equivalent(&p, &out.pipeline, &cfg) {
            failures.push(format!("{stem}: not equivalent: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
