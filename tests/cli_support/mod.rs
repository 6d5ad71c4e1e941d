//! Helpers shared by the end-to-end tests of the `varysat` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the binary from the crate root, with the rule-check cache in a directory of
/// this test process (never the user's own cache).
pub fn varysat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varysat"))
        .args(args)
        .env("VARYSAT_CACHE_DIR", cache_dir())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the varysat binary runs")
}

/// Writes `text` to a fresh file under a per-process, per-test-binary directory.
pub fn temp_file(tag: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The rule-check cache directory `varysat` runs with here.
pub fn cache_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-rule-cache-{}", std::process::id()))
}
