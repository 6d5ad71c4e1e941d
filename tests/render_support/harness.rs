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

/// The oldest lavapipe (Mesa release) the tests expect: `LAVAPIPE_MIN` of
/// scripts/setup.sh, which installs it. An older one is a failure in CI.
pub const MESA_MIN: (u32, u32) = (25, 0);

/// lavapipe and glslang, or `None` after saying why (a failure in CI).
pub fn gpu() -> Option<Gpu> {
    if !tool_available(GLSLANG) {
        assert!(!in_ci(), "{GLSLANG} is missing in CI: run scripts/setup.sh");
        eprintln!("skipping: {GLSLANG} not installed (run scripts/setup.sh)");
        return None;
    }
    match Gpu::lavapipe() {
        Ok(g) => {
            let (major, minor, patch) = g.version;
            assert!(
                !in_ci() || (major, minor) >= MESA_MIN,
                "lavapipe {major}.{minor}.{patch} is older than {}.{} in CI: run scripts/setup.sh",
                MESA_MIN.0,
                MESA_MIN.1
            );
            Some(g)
        }
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

/// Whether a test can draw what needs `feature`: true when the driver has it
/// (`have`); otherwise a skip that names the feature, or a failure when the driver
/// is one known to have it (`expected`), so a lost feature cannot pass as a skip.
pub fn has_feature(gpu: &Gpu, have: bool, feature: &str, expected: bool) -> bool {
    let (major, minor, patch) = gpu.version;
    assert!(
        have || !expected,
        "lavapipe {major}.{minor}.{patch} lacks {feature}, which it is known to have"
    );
    if !have {
        eprintln!("skipping: lavapipe {major}.{minor}.{patch} lacks {feature}");
    }
    have
}
