//! Helpers shared by the fuzz targets: input capping and the small, bounded
//! interpreter settings every target that runs a pair uses.

use varysat::interpreter::RunConfig;

/// Inputs longer than this are skipped: the targets look for crashes and hangs in
/// the logic, not for the (linear) cost of scanning megabytes of text.
pub const MAX_INPUT: usize = 64 * 1024;

/// The fuzzer's bytes as text, or `None` when they are too long. Invalid UTF-8 is
/// replaced rather than rejected so that byte-level mutations still reach the parser
/// (a `.pair` file is read as UTF-8 text before parsing).
pub fn text(data: &[u8]) -> Option<String> {
    if data.len() > MAX_INPUT {
        return None;
    }
    Some(String::from_utf8_lossy(data).into_owned())
}

/// Interpreter settings small enough that one run of any valid pair stays fast:
/// one primitive, two fragments or tess coords, short loops.
pub fn small_run() -> RunConfig {
    RunConfig {
        seed: 1,
        fragments_per_primitive: 2,
        max_primitives: 1,
        loop_limit: 16,
        tess_coords_per_patch: 2,
        signed_zeros: false,
        ..RunConfig::default()
    }
}

/// Saturation budgets small enough for thousands of runs a second yet large enough
/// that several rounds of rewriting happen.
pub fn small_budgets() -> varysat::internals::egraph::Budgets {
    varysat::internals::egraph::Budgets {
        nodes: 2_000,
        iterations: 8,
        time: std::time::Duration::from_millis(500),
        ..varysat::internals::egraph::Budgets::default()
    }
}
