//! [`Options`]: what one optimization run uses (rules, cost model, budgets, packing,
//! extraction mode), set builder-style.

use std::time::Duration;

use crate::egraph::{Budgets, Matching, RuleSet, Scheduler};
use crate::error::Error;
use crate::extract::{CostModel, Extraction};
use crate::ir::KnownUniforms;
use crate::pack::PackOptions;

/// Options of one optimization run (builder-style).
#[derive(Clone, Debug)]
pub struct Options {
    /// The rules to saturate with.
    pub rules: RuleSet,
    /// The cost model.
    pub cost: CostModel,
    /// Saturation budgets.
    pub budgets: Budgets,
    /// The final vec4 packing (`None` keeps the emitter's provisional slots).
    pub packing: Option<PackOptions>,
    /// Which extractor picks the terms (fast global search or exact).
    pub extraction: Extraction,
    /// Uniform words inlined before optimization (see [`crate::specialize`]).
    pub known: KnownUniforms,
    /// Treat every uniform and UBO as visible to both stages, whatever the pair's
    /// `(visible ...)` declarations say; the output then declares them so.
    pub assume_visible: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rules: RuleSet::default_set(),
            cost: CostModel::default(),
            budgets: Budgets::default(),
            packing: Some(PackOptions::default()),
            extraction: Extraction::Fast,
            known: KnownUniforms::new(),
            assume_visible: false,
        }
    }
}

impl Options {
    /// Sets the final packing options (`None`: keep the emitter's provisional slots).
    pub fn packing(mut self, packing: Option<PackOptions>) -> Options {
        self.packing = packing;
        self
    }

    /// Sets whether every resource counts as visible to both stages.
    pub fn assume_visible(mut self, yes: bool) -> Options {
        self.assume_visible = yes;
        self
    }

    /// Sets the extraction mode.
    pub fn extraction(mut self, extraction: Extraction) -> Options {
        self.extraction = extraction;
        self
    }

    /// The defaults: shipped rules, `amd-gfx10`, default budgets, AMD packing.
    pub fn new() -> Options {
        Options::default()
    }

    /// Replaces the rule set.
    pub fn rules(mut self, rules: RuleSet) -> Options {
        self.rules = rules;
        self
    }

    /// Adds the rules of a file to the current set (duplicate names are an error).
    pub fn extra_rules(mut self, file: &str, text: &str) -> Result<Options, Error> {
        self.rules.extend_from_text(file, text)?;
        Ok(self)
    }

    /// Sets the cost model.
    pub fn cost(mut self, cost: CostModel) -> Options {
        self.cost = cost;
        self
    }

    /// Sets all budgets.
    pub fn budgets(mut self, budgets: Budgets) -> Options {
        self.budgets = budgets;
        self
    }

    /// Sets the e-node limit: exactly `n`, not grown with the input.
    pub fn node_limit(mut self, n: usize) -> Options {
        self.budgets.nodes = n;
        self.budgets.nodes_per_lowered = 0;
        self
    }

    /// Sets the iteration limit.
    pub fn iter_limit(mut self, n: usize) -> Options {
        self.budgets.iterations = n;
        self
    }

    /// Sets the time limit.
    pub fn time_limit(mut self, t: Duration) -> Options {
        self.budgets.time = t;
        self
    }

    /// Specializes the pair on these known uniform words before optimizing it.
    pub fn known(mut self, known: KnownUniforms) -> Options {
        self.known = known;
        self
    }

    /// Sets the e-matching (incremental, the default, or egg's full re-search).
    pub fn matching(mut self, m: Matching) -> Options {
        self.budgets.matching = m;
        self
    }

    /// Sets the scheduler.
    pub fn scheduler(mut self, s: Scheduler) -> Options {
        self.budgets.scheduler = s;
        self
    }
}
