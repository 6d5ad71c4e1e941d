//! An extraction instance built from a pair exactly as `optimize` builds it (lowered,
//! saturated, with its roots and as-written seed), so benches and tests can run several
//! extractors on the same e-graph and compare their costs.

use egg::Id;

use super::lowering::analysis_for;
use super::options::Options;
use crate::egraph::lower::lower;
use crate::egraph::saturate::saturate_compiled;
use crate::egraph::VGraph;
use crate::error::Error;
use crate::extract::dag::{dag_cost, seed_from, Problem, Selection};
use crate::extract::Cost;
use crate::ir::Pipeline;

/// A saturated e-graph of one pair with what extraction needs.
pub struct Instance {
    /// The saturated e-graph.
    pub egraph: VGraph,
    /// Consumer roots (canonical classes).
    pub roots: Vec<Id>,
    /// The as-written selection.
    pub seed: Selection,
    /// The pair (for its consumer's stage parameters).
    pub pipeline: Pipeline,
    /// The options (for the cost model).
    pub options: Options,
    /// The GS producer's static emit count (see `Problem::gs_emits`).
    pub gs_emits: Option<usize>,
}

impl Instance {
    /// Validates, lowers and saturates `p` under `opts` (no xfb re-run).
    pub fn new(p: &Pipeline, opts: &Options) -> Result<Instance, Error> {
        crate::validate::validate(p)?;
        let rules = opts.rules.compiled()?;
        let lowered = lower(p, analysis_for(p, opts), false);
        let (egraph, _) =
            saturate_compiled(lowered.egraph, &rules.rewrites, &rules.reach, &opts.budgets);
        let seed = seed_from(&egraph, &lowered.original);
        let roots = lowered.roots.values().map(|r| egraph.find(*r)).collect();
        Ok(Instance {
            egraph,
            roots,
            seed,
            pipeline: p.clone(),
            options: opts.clone(),
            gs_emits: lowered.gs_emits,
        })
    }

    /// The extraction problem, seeded with the as-written selection.
    pub fn problem(&self) -> Problem<'_> {
        Problem {
            egraph: &self.egraph,
            roots: self.roots.clone(),
            model: &self.options.cost,
            consumer: &self.pipeline.consumer.info,
            seed: Some(self.seed.clone()),
            gs_emits: self.gs_emits,
            deadline: None,
        }
    }

    /// The whole-DAG cost of `sel` on this instance.
    pub fn cost(&self, sel: &Selection) -> Cost {
        dag_cost(&self.problem(), sel).total
    }

    /// The whole-DAG cost of the as-written selection.
    pub fn as_written(&self) -> Cost {
        self.cost(&self.seed)
    }
}
