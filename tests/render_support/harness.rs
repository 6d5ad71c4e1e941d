//! What both rendering tests need before they draw: the GLSL corpus folder,
//! whether this is CI (where a missing tool is a failure, not a skip), the loaded
//! driver, and SPIR-V bytes as words.

use std::path::{Path, PathBuf};

use varysat::import::{tool_available, GLSLANG};

use super::Gpu;

/// `tests/corpus/glsl`.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/glsl")
}

/// True under CI (`CI` set and not empty).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty())
}

/// lavapipe and glslang, or `None` after saying why (a failure in CI).
pub fn gpu() -> Option<Gpu> {
    if !tool_available(GLSLANG) {
        assert!(!in_ci(), "{GLSLANG} is missing in CI: run scripts/setup.sh");
        eprintln!("skipping: {GLSLANG} not installed (run scripts/setup.sh)");
        return None;
    }
    match Gpu::lavapipe() {
        Ok(g) => Some(g),
        Err(e) if in_ci() => panic!("lavapipe is missing in CI ({e}): run scripts/setup.sh"),
        Err(e) => {
            eprintln!("skipping: {e} (run scripts/setup.sh)");
            None
        }
    }
}

/// Little-endian SPIR-V bytes as words.
pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
