//! The whole-run budget flags shared by `opt`, `stats` and `experiment`: one node, one
//! iteration and one time limit that together bound lowering, saturation, extraction,
//! emission and packing (see `Options::time_limit`).

use std::time::Duration;

use varysat::internals::egraph::Budgets;

/// `--node-limit`, `--iter-limit`, `--time-limit`.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct BudgetArgs {
    /// Most e-nodes saturation may grow the e-graph to.
    #[arg(long = "node-limit", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub node_limit: Option<u64>,
    /// Most saturation iterations.
    #[arg(long = "iter-limit", value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub iter_limit: Option<u64>,
    /// Wall-time budget of the whole optimization, in seconds; when it runs out the
    /// best valid result found so far is returned (at worst the input, unchanged).
    #[arg(long = "time-limit", value_name = "SECONDS", value_parser = crate::opt::seconds)]
    pub time_limit: Option<Duration>,
}

impl BudgetArgs {
    /// `budgets` with the limits given on the command line.
    pub fn apply(&self, mut budgets: Budgets) -> Budgets {
        // The parsers bound both counts far below `usize::MAX` on every target.
        if let Some(n) = self.node_limit {
            budgets.nodes = n as usize;
        }
        if let Some(n) = self.iter_limit {
            budgets.iterations = n as usize;
        }
        if let Some(t) = self.time_limit {
            budgets.time = t;
        }
        budgets
    }
}
