//! The clock saturation runs on, and the time budget it keeps.
//!
//! egg times its runs and rebuilds with `quanta`, whose first reading in a process
//! calibrates the CPU's time-stamp counter against the OS clock by busy-waiting: at
//! least 500 rounds of 1 µs, up to 200 ms when the readings do not settle (a loaded
//! machine). That is more than optimizing a typical real pair takes, and every
//! `varysat opt` process, like the first `optimize` of a compiler embedding the
//! library, paid it. So egg runs under a mock quanta clock ([`uncalibrated`]): no
//! calibration, and egg's own timings read zero (varysat reads none of them). egg's
//! time limit then never fires, so the time budget is kept here, on std's clock: a
//! [`Deadline`] checked before every iteration (the runner's hook) and every
//! [`RULES_PER_CHECK`] rule searches within one ([`Timed`] for egg's schedulers, and
//! the incremental scheduler itself).

use std::time::{Duration, Instant};

use egg::{Rewrite, RewriteScheduler, RunnerLimits, RunnerResult, SearchMatches, StopReason};

use super::analysis::{VAnalysis, VGraph};
use super::lang::VNode;

/// Rule searches between two readings of the clock within an iteration: a reading
/// costs about as much as skipping a rule that cannot match, and a search of a rule
/// that can is bounded by the node budget.
pub const RULES_PER_CHECK: usize = 16;

/// Runs `f` with egg's clock mocked, so that no quanta calibration runs.
pub fn uncalibrated<T>(f: impl FnOnce() -> T) -> T {
    let (clock, _mock) = quanta::Clock::mock();
    quanta::with_clock(&clock, f)
}

/// When a saturation run must stop (`None`: a budget too long to represent).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Option<Instant>,
    budget: Duration,
}

impl Deadline {
    /// `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline {
            at: Instant::now().checked_add(budget),
            budget,
        }
    }

    /// Whether it has passed.
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// The runner's verdict after `searched` rule searches of an iteration: egg's
    /// time-limit stop once the deadline passed, read every [`RULES_PER_CHECK`]th.
    pub fn check(&self, searched: usize) -> RunnerResult<()> {
        if searched.is_multiple_of(RULES_PER_CHECK) && self.passed() {
            return Err(StopReason::TimeLimit(self.budget.as_secs_f64()));
        }
        Ok(())
    }
}

/// One of egg's schedulers with the deadline checked between rule searches, as egg
/// checks its own limits.
pub struct Timed<S> {
    /// The scheduler that searches and applies.
    pub inner: S,
    /// Checked every [`RULES_PER_CHECK`] searches.
    pub deadline: Deadline,
}

impl<S: RewriteScheduler<VNode, VAnalysis>> RewriteScheduler<VNode, VAnalysis> for Timed<S> {
    fn can_stop(&mut self, iteration: usize) -> bool {
        self.inner.can_stop(iteration)
    }

    fn search_rewrite<'a>(
        &mut self,
        iteration: usize,
        egraph: &VGraph,
        rewrite: &'a Rewrite<VNode, VAnalysis>,
    ) -> Vec<SearchMatches<'a, VNode>> {
        self.inner.search_rewrite(iteration, egraph, rewrite)
    }

    fn search_rewrites<'a>(
        &mut self,
        iteration: usize,
        egraph: &VGraph,
        rewrites: &[&'a Rewrite<VNode, VAnalysis>],
        limits: &RunnerLimits,
    ) -> RunnerResult<Vec<Vec<SearchMatches<'a, VNode>>>> {
        let mut matches = Vec::with_capacity(rewrites.len());
        for (i, rw) in rewrites.iter().enumerate() {
            matches.push(self.inner.search_rewrite(iteration, egraph, rw));
            limits.check_limits(iteration, egraph)?;
            self.deadline.check(i + 1)?;
        }
        Ok(matches)
    }

    fn apply_rewrite(
        &mut self,
        iteration: usize,
        egraph: &mut VGraph,
        rewrite: &Rewrite<VNode, VAnalysis>,
        matches: Vec<SearchMatches<VNode>>,
    ) -> usize {
        self.inner
            .apply_rewrite(iteration, egraph, rewrite, matches)
    }
}
