//! Whether the external tools an integration test needs (glslang, spirv-val) are
//! installed. In CI a missing tool is a failure, since `scripts/setup.sh` installs
//! them; elsewhere the test is skipped with a note.

use varysat::import::tool_available;

/// Whether every tool of `tools` is installed; panics in CI when one is missing.
pub fn installed(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !tool_available(t))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let list = missing.join(", ");
    assert!(
        !std::env::var("CI").is_ok_and(|v| !v.is_empty()),
        "{list} missing in CI: run scripts/setup.sh"
    );
    eprintln!("skipping: {list} not installed (run scripts/setup.sh)");
    false
}
