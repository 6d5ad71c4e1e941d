//! How many glslang processes a GLSL import starts (issue 16, the corpus run's
//! cost): a stage with default-block uniforms compiles as OpenGL SPIR-V in one run
//! (no Vulkan attempt bound to fail), and with a compiled-stage cache
//! (`ImportOptions::glsl_cache`) a stage seen before runs no glslang at all, failed
//! stages included, with the same result as without the cache.
//!
//! glslang is found through `PATH`; this binary puts a logging wrapper first in it,
//! so its tests run one after another in a single test function.

use std::path::{Path, PathBuf};

use varysat::import::{import_files, tool_available, ImportOptions, GLSLANG};

/// Default-block uniforms (and a sampler): the Vulkan attempt fails on `m`.
const VS_LOOSE: &str = "#version 450
uniform mat4 m;
uniform sampler2D unused_tex;
in vec4 p;
out vec4 c;
void main() { c = p * 2.0; gl_Position = m * p; }
";

/// Only a uniform block: Vulkan SPIR-V.
const FS_BLOCK: &str = "#version 450
layout(binding = 0) uniform Params { float k; };
in vec4 c;
layout(location = 0) out vec4 o;
void main() { o = c * k; }
";

const FS_BROKEN: &str = "#version 450
in vec4 c;
layout(location = 0) out vec4 o;
void main() { o = c * undeclared_k; }
";

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("varysat-glslang-runs-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Puts a `glslangValidator` first in `PATH` that appends its arguments to a log
/// and runs the real one; returns the log's path.
fn wrap_glslang() -> Option<PathBuf> {
    let real = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(GLSLANG))
            .find(|p| p.is_file())
    })?;
    let d = dir("bin");
    let log = d.join("runs.log");
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    let wrapper = d.join(GLSLANG);
    std::fs::write(&wrapper, script).expect("write wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let joined =
        std::env::join_paths(std::iter::once(d).chain(std::env::split_paths(&path))).expect("PATH");
    std::env::set_var("PATH", joined);
    Some(log)
}

/// The glslang runs logged since the last call (their arguments, one a line).
fn runs(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_owned).collect()
}

fn pair(name: &str, vs: &str, fs: &str) -> (PathBuf, PathBuf) {
    let d = dir(name);
    let (a, b) = (d.join("a.vert"), d.join("a.frag"));
    std::fs::write(&a, vs).expect("write");
    std::fs::write(&b, fs).expect("write");
    (a, b)
}

#[test]
fn glslang_runs_per_import() {
    if !tool_available(GLSLANG) {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty()),
            "{GLSLANG} is missing in CI: run scripts/setup.sh"
        );
        eprintln!("skipping: {GLSLANG} not installed (run scripts/setup.sh)");
        return;
    }
    let log = wrap_glslang().expect("glslangValidator on PATH");
    let (vs, fs) = pair("ok", VS_LOOSE, FS_BLOCK);
    let plain = ImportOptions::default();
    let reference = varysat::text::print(&import_files(&vs, &fs, &plain).expect("imports"));
    // The VS in one OpenGL run, the FS in one Vulkan run: no doomed `-V` first.
    let first_args: Vec<String> = runs(&log)
        .iter()
        .map(|r| r.split(' ').next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(first_args, ["-G", "-V"]);

    let cached = ImportOptions {
        glsl_cache: Some(dir("cache")),
        ..ImportOptions::default()
    };
    for round in 0..2 {
        let p = import_files(&vs, &fs, &cached).expect("imports with a cache");
        assert_eq!(varysat::text::print(&p), reference, "round {round}");
        let n = runs(&log).len();
        assert_eq!(n, if round == 0 { 2 } else { 0 }, "round {round}");
    }
    // The same sources under other names hit the cache too.
    let (vs2, fs2) = pair("renamed", VS_LOOSE, FS_BLOCK);
    let p = import_files(&vs2, &fs2, &cached).expect("imports with a cache");
    assert_eq!(
        varysat::text::print(&p),
        reference.replace("varysat-glslang-runs-ok", "varysat-glslang-runs-renamed")
    );
    assert_eq!(runs(&log).len(), 0);

    // A failing stage is cached as a failure, reported for the file at hand.
    let (vs, fs) = pair("broken", VS_LOOSE, FS_BROKEN);
    let expected = import_files(&vs, &fs, &plain).expect_err("undeclared");
    runs(&log);
    let mut errors = vec![];
    for _ in 0..2 {
        errors.push(
            import_files(&vs, &fs, &cached)
                .expect_err("undeclared")
                .to_string(),
        );
    }
    assert!(runs(&log).len() > 1, "the first cached import compiles");
    let (vs3, fs3) = pair("broken2", VS_LOOSE, FS_BROKEN);
    let renamed = import_files(&vs3, &fs3, &cached)
        .expect_err("undeclared")
        .to_string();
    assert!(runs(&log).is_empty(), "the failure came from the cache");
    assert_eq!(errors, [expected.to_string(), expected.to_string()]);
    assert!(renamed.starts_with(&fs3.display().to_string()), "{renamed}");
    assert!(expected.to_string().contains("undeclared_k"), "{expected}");
    assert_eq!(
        renamed,
        expected.to_string().replace("runs-broken", "runs-broken2")
    );
}
