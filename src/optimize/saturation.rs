//! Stage 2, saturation: the rewrites run over a copy of the lowered e-graph under the
//! run's budgets (`egraph::saturate`).

use super::lowering::LoweredPair;
use crate::egraph::analysis::VAnalysis;
use crate::egraph::saturate::{saturate, SaturationStats};
use crate::egraph::{Budgets, VGraph, VNode};

/// The saturated e-graph and how saturation went.
pub(crate) struct Saturated {
    /// The e-graph after saturation.
    pub egraph: VGraph,
    /// Sizes, iterations, stop reason and rule firings.
    pub stats: SaturationStats,
}

/// Saturates a copy of the lowered e-graph (the lowered one stays as written).
pub(crate) fn saturate_pair(
    l: &LoweredPair,
    rewrites: &[egg::Rewrite<VNode, VAnalysis>],
    budgets: &Budgets,
) -> Saturated {
    let (egraph, stats) = saturate(l.lowered.egraph.clone(), rewrites, budgets);
    Saturated { egraph, stats }
}
