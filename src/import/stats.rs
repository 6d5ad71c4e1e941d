//! Varying statistics of a pair: components and vec4 slots the producer declares
//! (stores), and what remains once outputs the consumer never reads are dropped.
//! Both columns count by the optimizer's own rules (`optimize::count_varyings`), so
//! they compare directly with an optimization report; the column after full
//! optimization is the report's `after`.

use crate::optimize::count::{count_live_varyings, count_varyings};
use crate::Pipeline;

/// Varying counts of one pair.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Scalar components the producer stores as varyings.
    pub declared_components: usize,
    /// vec4 slots those components occupy.
    pub declared_slots: usize,
    /// Components left when outputs that nothing reads go.
    pub live_components: usize,
    /// vec4 slots those occupy.
    pub live_slots: usize,
}

/// The declared and live varying counts of `p`.
pub fn stats(p: &Pipeline) -> Stats {
    let declared = count_varyings(p);
    let live = count_live_varyings(p);
    Stats {
        declared_components: declared.components,
        declared_slots: declared.slots,
        live_components: live.components,
        live_slots: live.slots,
    }
}
