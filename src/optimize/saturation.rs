//! Stage 2, saturation: the rewrites run over a copy of the lowered e-graph under the
//! run's budgets (`egraph::saturate`).

use super::lowering::LoweredPair;
use crate::egraph::saturate::{saturate_compiled, SaturationStats};
use crate::egraph::{Budgets, Compiled, VGraph};

/// The saturated e-graph and how saturation went.
pub(crate) struct Saturated {
    /// The e-graph after saturation.
    pub egraph: VGraph,
    /// Sizes, iterations, stop reason and rule firings.
    pub stats: SaturationStats,
}

/// Saturates a copy of the lowered e-graph (the lowered one stays as written).
pub(crate) fn saturate_pair(l: &LoweredPair, rules: &Compiled, budgets: &Budgets) -> Saturated {
    let graph = l.lowered.egraph.clone();
    let (egraph, stats) = saturate_compiled(graph, &rules.rewrites, &rules.reach, budgets);
    Saturated { egraph, stats }
}
