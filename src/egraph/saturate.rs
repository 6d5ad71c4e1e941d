//! Bounded saturation: the budgets (named, documented constants overridable through
//! `Options`), the scheduler choice, and the reason a run stopped.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use egg::{BackoffScheduler, Rewrite, Runner, SimpleScheduler, StopReason};

use super::analysis::{VAnalysis, VGraph};
use super::clock::{self, Deadline, Timed};
use super::incremental::IncrementalScheduler;
use super::lang::VNode;
use super::reach::Reach;

/// Default e-node budget floor: pairs of real shaders lower to a few hundred nodes;
/// ten thousand leaves room for the code-motion laws without risking memory.
pub const DEFAULT_NODE_LIMIT: usize = 10_000;
/// Default growth of the node budget with the input: saturation may reach this many
/// times the nodes lowering produced. Saturated runs end at 1-2x the lowered size
/// (commutativity is built into the graph, so no law doubles every op), so 8x lets a
/// pair of any size saturate instead of stopping after one iteration once it lowers
/// to more than `DEFAULT_NODE_LIMIT` nodes, while still bounding memory linearly.
pub const DEFAULT_NODES_PER_LOWERED: usize = 8;
/// Default iteration budget: the shipped laws reach a fixed point in well under ten.
pub const DEFAULT_ITER_LIMIT: usize = 30;
/// Default wall-clock budget for saturation.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(5);

/// How rules are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Backoff: a rule that matches too often is banned for a while (egg's
    /// `BackoffScheduler` limits), which keeps associativity from crowding out the
    /// other rules.
    Backoff,
    /// Every rule on every match, every iteration.
    Simple,
}

/// How rules search the e-graph each iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matching {
    /// Each rule searches only the classes whose matches can have changed since its
    /// last search ([`super::incremental`]); the graph grows exactly as under a full
    /// search with the same bans.
    Incremental,
    /// egg's own search: every rule re-searches every class of its root operator each
    /// iteration. The yardstick the incremental search is tested and measured against.
    Full,
}

/// Saturation budgets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budgets {
    /// E-node limit (the floor when `nodes_per_lowered` is set).
    pub nodes: usize,
    /// The node limit grows to this many times the lowered graph's nodes when that is
    /// above `nodes` (0: `nodes` is the limit however large the input).
    pub nodes_per_lowered: usize,
    /// Iteration limit.
    pub iterations: usize,
    /// Time limit.
    pub time: Duration,
    /// Scheduler.
    pub scheduler: Scheduler,
    /// E-matching.
    pub matching: Matching,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            nodes: DEFAULT_NODE_LIMIT,
            nodes_per_lowered: DEFAULT_NODES_PER_LOWERED,
            iterations: DEFAULT_ITER_LIMIT,
            time: DEFAULT_TIME_LIMIT,
            scheduler: Scheduler::Backoff,
            matching: Matching::Incremental,
        }
    }
}

/// Why saturation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// No rule had anything left to add: the e-graph is saturated.
    Saturated,
    /// The iteration budget ran out.
    IterationLimit(usize),
    /// The node budget ran out.
    NodeLimit(usize),
    /// The time budget ran out.
    TimeLimit(Duration),
    /// Something else (an egg hook).
    Other(String),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Saturated => f.write_str("saturated"),
            Stop::IterationLimit(n) => write!(f, "iteration-limit ({n})"),
            Stop::NodeLimit(n) => write!(f, "node-limit ({n})"),
            Stop::TimeLimit(t) => write!(f, "time-limit ({:.3}s)", t.as_secs_f64()),
            Stop::Other(s) => write!(f, "other ({s})"),
        }
    }
}

/// What a saturation run did.
#[derive(Clone, Debug)]
pub struct SaturationStats {
    /// Why it stopped.
    pub stop: Stop,
    /// Iterations run.
    pub iterations: usize,
    /// E-nodes at the end.
    pub nodes: usize,
    /// E-classes at the end.
    pub classes: usize,
    /// Successful applications per rewrite name (`NAME`, `NAME.rev`, `NAME.exact`),
    /// summed over the iterations; rewrites that never applied are absent.
    pub applied: BTreeMap<String, usize>,
}

impl Budgets {
    /// The node limit for a graph that lowered to `lowered` nodes.
    pub fn node_limit(&self, lowered: usize) -> usize {
        self.nodes
            .max(lowered.saturating_mul(self.nodes_per_lowered))
    }
}

/// Runs the rules on `egraph` within `budgets` and returns the saturated graph. Only
/// the rules that can match in this run are handed to egg ([`super::reach`]): the run
/// is the same as with all of them.
pub fn saturate(
    egraph: VGraph,
    rules: &[Rewrite<VNode, VAnalysis>],
    budgets: &Budgets,
) -> (VGraph, SaturationStats) {
    saturate_compiled(egraph, rules, &Reach::new(rules), budgets)
}

/// [`saturate`] with the rules' reachability index built beforehand (a rule set's
/// [`super::rules::Compiled`]), which the optimizer does once per rule set.
pub fn saturate_compiled(
    egraph: VGraph,
    rules: &[Rewrite<VNode, VAnalysis>],
    reach: &Reach,
    budgets: &Budgets,
) -> (VGraph, SaturationStats) {
    let (reachable, groups) = reach.reachable_with_groups(&egraph, rules);
    clock::uncalibrated(|| run(egraph, reachable, Some(groups), budgets))
}

/// [`saturate`] over exactly these rules, in this order.
#[cfg(test)]
pub(crate) fn saturate_with(
    egraph: VGraph,
    rules: Vec<&Rewrite<VNode, VAnalysis>>,
    budgets: &Budgets,
) -> (VGraph, SaturationStats) {
    clock::uncalibrated(|| run(egraph, rules, None, budgets))
}

/// The hook's stop once the time budget is spent (mapped back to [`Stop::TimeLimit`]).
const TIME_SPENT: &str = "time budget spent";

/// [`saturate_with`] on egg's mocked clock, keeping the time budget on std's.
/// `groups`: each rule's search group, when the rule set's index knows them.
fn run(
    egraph: VGraph,
    rules: Vec<&Rewrite<VNode, VAnalysis>>,
    groups: Option<Vec<u32>>,
    budgets: &Budgets,
) -> (VGraph, SaturationStats) {
    let deadline = Deadline::after(budgets.time);
    let node_limit = budgets.node_limit(egraph.total_number_of_nodes());
    let mut egraph = egraph;
    if egraph.analysis.forward_gate {
        super::sharing::seed(&mut egraph);
        super::recompute::seed(&mut egraph);
    }
    egraph.analysis.node_cap = Some(node_limit);
    egraph.analysis.capped = false;
    let runner: Runner<VNode, VAnalysis> = Runner::default()
        .with_egraph(egraph)
        .with_node_limit(node_limit)
        .with_iter_limit(budgets.iterations)
        // egg's clock is mocked (`clock`): the deadline below keeps the budget.
        .with_time_limit(Duration::MAX)
        // Once the cap refused a match the graph is at its budget: searching the
        // rules again would only be refused again.
        .with_hook(move |r| match r.egraph.analysis.capped {
            true => Err("node cap".into()),
            false if deadline.passed() => Err(TIME_SPENT.into()),
            false => Ok(()),
        });
    let backoff = budgets.scheduler == Scheduler::Backoff;
    let runner = match (budgets.matching, budgets.scheduler) {
        (Matching::Incremental, _) => {
            let scheduler = IncrementalScheduler::new(backoff).with_deadline(deadline);
            let scheduler = match groups {
                Some(groups) => scheduler.with_groups(groups),
                None => scheduler,
            };
            runner.with_scheduler(scheduler)
        }
        (Matching::Full, Scheduler::Backoff) => runner.with_scheduler(Timed {
            inner: BackoffScheduler::default(),
            deadline,
        }),
        (Matching::Full, Scheduler::Simple) => runner.with_scheduler(Timed {
            inner: SimpleScheduler,
            deadline,
        }),
    };
    let runner = runner.run(rules);
    let stop = match &runner.stop_reason {
        // Matches the cap refused leave egg no work: it stopped at the node budget.
        _ if runner.egraph.analysis.capped => Stop::NodeLimit(node_limit),
        Some(StopReason::Saturated) | None => Stop::Saturated,
        // egg reports what it saw; the report names the budget that was exceeded.
        Some(StopReason::IterationLimit(_)) => Stop::IterationLimit(budgets.iterations),
        Some(StopReason::NodeLimit(_)) => Stop::NodeLimit(node_limit),
        Some(StopReason::TimeLimit(_)) => Stop::TimeLimit(budgets.time),
        Some(StopReason::Other(s)) if s == TIME_SPENT => Stop::TimeLimit(budgets.time),
        Some(StopReason::Other(s)) => Stop::Other(s.clone()),
    };
    let mut applied = BTreeMap::new();
    for it in &runner.iterations {
        for (name, n) in &it.applied {
            if *n > 0 {
                *applied.entry(name.to_string()).or_insert(0) += n;
            }
        }
    }
    let mut egraph = runner.egraph;
    egraph.analysis.node_cap = None;
    egraph.rebuild();
    let stats = SaturationStats {
        stop,
        iterations: runner.iterations.len(),
        nodes: egraph.total_number_of_nodes(),
        classes: egraph.number_of_classes(),
        applied,
    };
    (egraph, stats)
}

/// Tests: saturates `g` once with `a` and once with `b` and asserts that the two runs
/// are the same: applications per rewrite, iterations, stop reason and graph size.
#[cfg(test)]
pub(crate) fn assert_same_runs(
    g: &VGraph,
    a: Vec<&Rewrite<VNode, VAnalysis>>,
    b: Vec<&Rewrite<VNode, VAnalysis>>,
) -> SaturationStats {
    let budgets = Budgets::default();
    let (a_g, a) = saturate_with(g.clone(), a, &budgets);
    let (b_g, b) = saturate_with(g.clone(), b, &budgets);
    assert_eq!(a.applied, b.applied);
    assert_eq!(a.iterations, b.iterations);
    assert_eq!(a.stop, b.stop);
    assert_eq!(a_g.total_number_of_nodes(), b_g.total_number_of_nodes());
    assert_eq!(a_g.number_of_classes(), b_g.number_of_classes());
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::{RuleSet, VAnalysis};
    use egg::RecExpr;

    /// An `iand` chain over 16 uniforms: unrestricted integer associativity with
    /// commutative matching gives a class per subset of operands (2^16), far beyond
    /// any budget. (The shipped law only regroups; this test states the unrestricted
    /// one, `UNGATED_ASSOC`, to have a graph that outgrows any budget.)
    fn chain_graph() -> VGraph {
        let mut text = "uniform:0".to_string();
        for i in 1..16 {
            text = format!("(iand {text} uniform:{i})");
        }
        let expr: RecExpr<VNode> = text.parse().unwrap();
        let mut g = VGraph::new(VAnalysis::default());
        g.add_expr(&expr);
        g.rebuild();
        g
    }

    /// The search groups the rule set's index computes once give the same runs as the
    /// scheduler grouping the rules itself: same applications, iterations and graph.
    #[test]
    fn groups_from_the_index_run_as_groups_the_scheduler_computes() {
        let set = RuleSet::default_set();
        let compiled = set.compiled().unwrap();
        let mut shared = 0;
        for g in crate::egraph::lower::sample_graphs() {
            let (rules, groups) = compiled.reach.reachable_with_groups(&g, &compiled.rewrites);
            let mut distinct = groups.clone();
            distinct.sort_unstable();
            distinct.dedup();
            shared += groups.len() - distinct.len();
            let budgets = Budgets::default();
            let known =
                clock::uncalibrated(|| run(g.clone(), rules.clone(), Some(groups), &budgets));
            let lazy = clock::uncalibrated(|| run(g.clone(), rules, None, &budgets));
            assert_eq!(known.1.applied, lazy.1.applied);
            assert_eq!(known.1.iterations, lazy.1.iterations);
            assert_eq!(
                known.0.total_number_of_nodes(),
                lazy.0.total_number_of_nodes()
            );
        }
        assert!(shared > 0, "some rules of the set share a group");
    }

    const UNGATED_ASSOC: &str = "(rule iand-assoc (iand (iand ?a ?b) ?c) (iand ?a (iand ?b ?c)))";

    /// egg runs on a mocked clock (`clock`), so its own time limit never fires: the
    /// time budget stops a run that would outgrow any other budget long before, under
    /// every scheduler.
    #[test]
    fn the_time_budget_stops_every_scheduler() {
        let rules = RuleSet::parse("cap.rules", UNGATED_ASSOC)
            .unwrap()
            .rewrites()
            .unwrap();
        for (matching, scheduler) in [
            (Matching::Incremental, Scheduler::Backoff),
            (Matching::Full, Scheduler::Backoff),
            (Matching::Full, Scheduler::Simple),
        ] {
            let budgets = Budgets {
                nodes: 2_000_000,
                nodes_per_lowered: 1,
                iterations: 1_000,
                time: Duration::from_millis(20),
                matching,
                scheduler,
            };
            let (_, stats) = saturate(chain_graph(), &rules, &budgets);
            assert_eq!(
                stats.stop,
                Stop::TimeLimit(budgets.time),
                "{matching:?} {scheduler:?}"
            );
        }
    }

    #[test]
    fn the_node_cap_stops_an_iteration_at_the_budget() {
        let rules = RuleSet::parse("cap.rules", UNGATED_ASSOC)
            .unwrap()
            .rewrites()
            .unwrap();
        let budgets = Budgets {
            nodes: 2_000,
            nodes_per_lowered: 1,
            ..Budgets::default()
        };
        let (g, stats) = saturate(chain_graph(), &rules, &budgets);
        assert_eq!(stats.stop, Stop::NodeLimit(2_000));
        // Refused from the first match past the cap on: at most one right-hand side
        // (a few nodes) over it, where one unbounded iteration of `iand-assoc` on
        // this chain adds thousands.
        assert!(g.total_size() <= 2_000 + 8, "{} nodes", g.total_size());
        assert!(g.analysis.node_cap.is_none(), "the cap ends with the run");
    }
}
