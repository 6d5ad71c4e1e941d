//! Which extractor a run uses: the fast global search (default) or the exact
//! branch-and-bound with a time limit, and what the chosen one reports.

use std::time::Duration;

use super::dag::{Extractor, Problem, Selection};
use super::exact::ExactExtractor;
use super::global::GlobalExtractor;

/// The extraction mode of an optimization run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Extraction {
    /// Global set search over transferred values plus local search (near-optimal).
    #[default]
    Fast,
    /// Branch-and-bound that proves optimality unless `time_limit` is hit first.
    Exact {
        /// Wall-time limit of the search.
        time_limit: Duration,
    },
}

/// What an extraction produced.
#[derive(Clone, Debug)]
pub struct Extracted {
    /// The chosen node per needed (class, stage).
    pub selection: Selection,
    /// For the exact mode: whether the search completed (`None` for the fast mode).
    pub proved_optimal: Option<bool>,
    /// Whether the run's time budget ended during the search (its best selection so
    /// far was kept).
    pub deadline_hit: bool,
}

impl Extraction {
    /// The default time limit of the exact mode.
    pub const DEFAULT_EXACT_LIMIT: Duration = Duration::from_secs(10);

    /// The exact mode with the default time limit.
    pub fn exact() -> Extraction {
        Extraction::Exact {
            time_limit: Extraction::DEFAULT_EXACT_LIMIT,
        }
    }

    /// The mode's name as the CLI spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Extraction::Fast => "fast",
            Extraction::Exact { .. } => "exact",
        }
    }

    /// Extracts a selection for `p` with this mode.
    pub fn run(&self, p: &Problem<'_>) -> Extracted {
        let (selection, proved_optimal) = match self {
            Extraction::Fast => (GlobalExtractor::default().extract(p), None),
            Extraction::Exact { time_limit } => {
                let out = ExactExtractor::with_limit(*time_limit).solve(p);
                (out.selection, Some(out.proved_optimal))
            }
        };
        Extracted {
            selection,
            proved_optimal,
            deadline_hit: p.past_deadline(),
        }
    }
}
