//! Incremental e-matching: a rewrite scheduler under which each rule searches only the
//! e-classes whose matches can have changed since that rule's last search, with egg's
//! exponential backoff on top.
//!
//! Why it is exact. A match of a left-hand side rooted at class `c` reads the e-nodes
//! of the classes at most `depth - 1` edges below `c` (the pattern's operator nodes),
//! the identity of the classes at `depth` edges (its variables), and, through the rule
//! conditions, the analysis data and e-nodes of the variables' classes. Between two
//! searches, a class is *touched* when its fingerprint (canonical e-nodes and analysis
//! data) changed or it is new; a merge changes the fingerprint of the surviving class
//! and of every parent whose child id it rewrites. So a root class none of whose
//! descendants within `depth` edges was touched has the same matches as at the rule's
//! last search, and those were all applied then: adding an existing e-node or uniting
//! equal classes changes nothing. Searching only the other classes (in the order egg's
//! own search visits them) therefore applies exactly the matches that change the graph,
//! in the same order, and the e-graph grows iteration by iteration as under a full
//! search. Analysis data is a lattice value that only moves up as classes merge, so a
//! condition evaluated mid-iteration reads the same data as at both ends when the ends
//! agree. A rule that was banned, or never searched, searches from its last completed
//! search, or everywhere.
//!
//! Two necessary conditions narrow the search further, both exact. A rule one of whose
//! pattern operators (an ALU op, `exact` or not, a mode, a leaf) has no e-node in the
//! graph has no match at all: it is not searched that iteration, and counts as
//! searched (with nothing found) for the next. Most of the default set's ~1,100
//! rewrites name an op a given pair never uses, or the `exact` form of one. And a root
//! class is searched only when one of its root-operator e-nodes has an e-node of the
//! pattern's operand operator below it ([`Guard`]); the narrowed lists keep egg's
//! order, so the matches and their order are those of the unnarrowed search.
//!
//! Within a dirty root class, a rule whose searcher is [`super::comm_match::CommPattern`]
//! reports only matches that read an e-node its class did not hold at the rule's last
//! search, or a variable class whose condition inputs changed since
//! ([`super::fresh`]): every other match existed then, with the same data for its
//! conditions, and was applied then. Such matches are most of a saturating run's: each
//! motion law puts its right-hand side into the class of the term it matched, which
//! makes the class dirty for every law rooted there. After each rebuild the graph is
//! the one the unfiltered search gives, with one difference that only a budget can
//! see: egg's memo is re-keyed at rebuild, so re-applying a match whose child class
//! merged earlier in the iteration adds a duplicate node the rebuild merges back, and
//! the node cap counts it; without those re-applications a run near its node budget
//! may stop at another point (no real pair reaches its budget).
//!
//! Rules whose left-hand sides are equal up to variable names ([`super::share`]: the
//! flat and interpolated motion laws of one op, the right-to-left forms of the laws
//! that move one op) search once per iteration and candidate list: the others of the
//! group take a renamed copy of the matches, which is what their own search finds.
//!
//! Saturated runs spend most iterations adding a few nodes at the frontier of what the
//! laws reached; a full search re-matches ~600 rewrites over every class of their root
//! operator each time, which is what this avoids.

use egg::{
    ENodeOrVar, Id, Language, Rewrite, RewriteScheduler, RunnerLimits, RunnerResult, SearchMatches,
};
use fxhash::FxHashMap;

use super::analysis::{VAnalysis, VGraph};
use super::clock::Deadline;
use super::fresh::{self, stamp, Freshness, Touched};
use super::lang::{Shape, VNode};
use super::share::{self, Groups};

pub use super::fresh::MAX_TRACKED_DEPTH;

/// egg's default initial match limit for backoff: a rule finding more matches than
/// this in one search is banned for a while.
pub const BACKOFF_MATCH_LIMIT: usize = 1_000;
/// egg's default initial ban length, in iterations.
pub const BACKOFF_BAN_LENGTH: usize = 5;

/// Per-rule scheduling state, by the rule's position in the run's rule list. It holds
/// no heap data: everything else the scheduler needs is read from the rule's pattern
/// when it searches (a saturation run creates ~1,100 of these, and most runs are short).
#[derive(Clone, Debug, Default)]
struct RuleState {
    /// Edges from the root to the deepest pattern node (`None`: not yet computed).
    depth: Option<usize>,
    /// The iteration whose search this rule last completed (its matches applied).
    searched: Option<usize>,
    /// Its left-hand side's group in [`Groups`] (`None`: not yet computed).
    group: Option<u32>,
    /// Iteration from which the rule may search again after a ban.
    banned_until: usize,
    times_banned: u32,
}

/// A necessary condition on a root class, checked before the pattern is searched there:
/// one of its root-operator e-nodes has, at operand `pos`, a class with an e-node of
/// the operand pattern's operator. Most rewrites are the right-to-left motion laws,
/// rooted at `xfer` (`(xfer ?m (fmin ?a ?b))`): without it each of them searches every
/// dirty transfer class of the pair, whatever op the transferred value is.
#[derive(Clone, Copy, Debug)]
struct Guard<'p> {
    /// The root pattern node (only its operator is compared).
    root: &'p VNode,
    /// The operand checked; `None` for a commutative root, whose operands a pattern
    /// matches either way round (`comm_match`): then any operand may hold it.
    pos: Option<usize>,
    /// The operand pattern node (only its operator is compared).
    operand: &'p VNode,
}

impl Guard<'_> {
    /// Whether a match rooted at `class` is possible.
    fn admits(&self, g: &VGraph, class: Id) -> bool {
        let holds = |id: Id| g[id].nodes.iter().any(|n| self.operand.matches(n));
        g[class]
            .nodes
            .iter()
            .filter(|n| self.root.matches(n))
            .any(|n| match self.pos {
                Some(i) => n.children().get(i).is_some_and(|c| holds(*c)),
                None => n.children().iter().any(|c| holds(*c)),
            })
    }

    /// The cache key part: which operand, and its operator.
    fn key(&self) -> (Option<usize>, Shape) {
        (self.pos, self.operand.discriminant())
    }
}

/// Candidate root classes by (root operator, pattern depth, last search stamp; 0 for
/// every class of the operator).
type DirtyKey = (Shape, usize, u32);

/// A dirty list's key with a guard's operand position and operator.
type GuardedKey = (DirtyKey, (Option<usize>, Shape));

/// One search of an iteration that rules of the same group can share: the group, the
/// candidate classes' key and the match limit.
type ShareKey = (u32, DirtyKey, usize);

/// What the first rule of a group found for a [`ShareKey`] this iteration.
#[derive(Clone, Copy, Debug)]
enum Shared {
    /// Its matches, at this position of the iteration's rule list.
    Found(usize),
    /// More than the ban threshold: it was banned, and so is every rule that shares it.
    Exceeded,
}

/// Incremental rule scheduling, with or without backoff.
#[derive(Debug)]
pub struct IncrementalScheduler {
    backoff: bool,
    /// By position in the rule list egg passes every iteration (always the same list).
    rules: Vec<RuleState>,
    /// What was touched when, and when each e-node was first seen ([`super::fresh`]).
    fresh: Freshness,
    /// The iteration the touched table was last brought up to date for.
    prepared: Option<usize>,
    /// This iteration's dirty root classes by (root operator, pattern depth, last
    /// search): the graph does not change while egg searches, and hundreds of rules
    /// share a root operator (every motion law is rooted at `xfer`), so each list is
    /// filtered from the operator's classes once per iteration instead of per rule.
    dirty: FxHashMap<DirtyKey, Vec<Id>>,
    /// The same lists narrowed by a guard (its operand position and operator): the
    /// motion laws for one op (flat and interpolated, each operand placement) share one.
    guarded: FxHashMap<GuardedKey, Vec<Id>>,
    /// The left-hand sides' groups: rules of a group search alike ([`super::share`]).
    groups: Groups,
    /// The run's time budget, checked between rule searches ([`super::clock`]).
    deadline: Option<Deadline>,
    /// Tests only: pretend every left-hand side is this deep (a wrong, too shallow
    /// value must make the search miss matches, which shows the tests can see it).
    #[cfg(test)]
    depth_override: Option<usize>,
    /// Tests only: searches skipped because a pattern shape was absent.
    #[cfg(test)]
    skipped: std::rc::Rc<std::cell::Cell<usize>>,
    /// Tests only: searches run (not copied from another rule of the group).
    #[cfg(test)]
    searches: std::rc::Rc<std::cell::Cell<usize>>,
    /// Tests only: every rule searches for itself.
    #[cfg(test)]
    no_sharing: bool,
    /// Tests only: report every match, also those found at the rule's last search.
    #[cfg(test)]
    no_filter: bool,
    /// Tests only: matches reported by searches (copies included).
    #[cfg(test)]
    found: std::rc::Rc<std::cell::Cell<usize>>,
}

impl IncrementalScheduler {
    /// A scheduler; `backoff` bans rules that match too often, as egg's
    /// `BackoffScheduler` does (same limits and ban lengths).
    pub fn new(backoff: bool) -> IncrementalScheduler {
        IncrementalScheduler {
            backoff,
            rules: Vec::new(),
            fresh: Freshness::default(),
            prepared: None,
            dirty: FxHashMap::default(),
            guarded: FxHashMap::default(),
            groups: Groups::default(),
            deadline: None,
            #[cfg(test)]
            depth_override: None,
            #[cfg(test)]
            skipped: Default::default(),
            #[cfg(test)]
            searches: Default::default(),
            #[cfg(test)]
            no_sharing: false,
            #[cfg(test)]
            no_filter: false,
            #[cfg(test)]
            found: Default::default(),
        }
    }

    /// The scheduler stopping the run with egg's time-limit reason once `deadline`
    /// passed (read every [`super::clock::RULES_PER_CHECK`] rule searches).
    pub fn with_deadline(mut self, deadline: Deadline) -> IncrementalScheduler {
        self.deadline = Some(deadline);
        self
    }

    /// The search group of every rule of the list egg will pass, in its order (the
    /// rule set's index computes them once: [`super::reach::Reach`]), so that no run
    /// groups the rules again.
    pub fn with_groups(mut self, groups: Vec<u32>) -> IncrementalScheduler {
        self.rules = groups
            .into_iter()
            .map(|group| RuleState {
                group: Some(group),
                ..RuleState::default()
            })
            .collect();
        self
    }

    /// Brings the touched table up to date with the graph at the start of `iteration`.
    fn prepare(&mut self, iteration: usize, g: &VGraph) {
        if self.prepared == Some(iteration) {
            return;
        }
        self.prepared = Some(iteration);
        self.dirty.clear();
        self.guarded.clear();
        self.fresh.update(g, stamp(iteration));
    }

    /// Searches rule `index` (what egg's `search_rewrite` does for one rule). A rule
    /// whose group already searched the same candidates with the same limit this
    /// iteration takes a renamed copy of those matches (`done`, by rule position)
    /// instead of searching again.
    fn search_one<'a>(
        &mut self,
        index: usize,
        iteration: usize,
        egraph: &VGraph,
        rewrites: &[&'a Rewrite<VNode, VAnalysis>],
        shared: &mut FxHashMap<ShareKey, Shared>,
        done: &[Vec<SearchMatches<'a, VNode>>],
    ) -> Vec<SearchMatches<'a, VNode>> {
        self.prepare(iteration, egraph);
        if self.rules.len() <= index {
            self.rules.resize(index + 1, RuleState::default());
        }
        let rewrite = rewrites[index];
        if iteration < self.rules[index].banned_until {
            return vec![];
        }
        let nodes: &[ENodeOrVar<VNode>] = pattern_of(rewrite);
        if !names_only_present_ops(egraph, nodes) {
            // What a search would find: nothing (so no ban either).
            self.rules[index].searched = Some(iteration);
            #[cfg(test)]
            self.skipped.set(self.skipped.get() + 1);
            return vec![];
        }
        let groups = &mut self.groups;
        let state = &mut self.rules[index];
        let threshold = match self.backoff {
            true => BACKOFF_MATCH_LIMIT
                .checked_shl(state.times_banned)
                .unwrap_or(usize::MAX),
            false => usize::MAX - 1,
        };
        let limit = threshold.saturating_add(1);
        let (matches, share) = match nodes.last() {
            Some(ENodeOrVar::ENode(root)) => {
                #[allow(unused_mut)]
                let mut depth = *state.depth.get_or_insert_with(|| height(nodes));
                #[cfg(test)]
                if let Some(d) = self.depth_override {
                    depth = d;
                }
                // Never searched (or too deep to track): every class of the operator,
                // as egg's own search visits them.
                let key = match state.searched {
                    Some(last) if depth <= MAX_TRACKED_DEPTH => {
                        (root.discriminant(), depth, stamp(last))
                    }
                    _ => (root.discriminant(), 0, 0),
                };
                let group = *state.group.get_or_insert_with(|| groups.group_of(nodes));
                let share = (group, key.clone(), limit);
                #[cfg(test)]
                if self.no_sharing {
                    shared.clear();
                }
                let matches = match shared.get(&share) {
                    Some(Shared::Found(first)) => {
                        let from = pattern_of(rewrites[*first]);
                        share::renamed(
                            &done[*first],
                            &share::vars_in_order(from),
                            &share::vars_in_order(nodes),
                            rewrite.searcher.get_pattern_ast(),
                        )
                    }
                    Some(Shared::Exceeded) => return self.ban(index, iteration),
                    None => {
                        #[cfg(test)]
                        self.searches.set(self.searches.get() + 1);
                        let (_, depth, since) = key;
                        // Never searched before: every match is new.
                        let unfiltered = since == 0 || self.unfiltered();
                        let classes = candidates(
                            egraph,
                            &self.fresh.touched,
                            &mut self.dirty,
                            &mut self.guarded,
                            key,
                            guard_of(nodes),
                        );
                        let search =
                            || search_classes(rewrite, egraph, classes.iter().copied(), limit);
                        if unfiltered {
                            search()
                        } else {
                            let fresh = std::mem::take(&mut self.fresh);
                            let (found, fresh) = fresh::filtering(fresh, since, depth, search);
                            self.fresh = fresh;
                            found
                        }
                    }
                };
                (matches, Some(share))
            }
            _ => (rewrite.search_with_limit(egraph, limit), None),
        };
        let found: usize = matches.iter().map(|m| m.substs.len()).sum();
        #[cfg(test)]
        self.found.set(self.found.get() + found);
        let exceeded = found > threshold;
        if let Some(share) = share {
            let what = match exceeded {
                true => Shared::Exceeded,
                false => Shared::Found(index),
            };
            shared.entry(share).or_insert(what);
        }
        if exceeded {
            return self.ban(index, iteration);
        }
        self.rules[index].searched = Some(iteration);
        matches
    }

    /// Whether searches report every match (tests compare with and without the filter).
    fn unfiltered(&self) -> bool {
        #[cfg(test)]
        return self.no_filter;
        #[cfg(not(test))]
        false
    }

    /// Bans rule `index` from `iteration` on for its next ban length (egg's backoff).
    fn ban<'a>(&mut self, index: usize, iteration: usize) -> Vec<SearchMatches<'a, VNode>> {
        let state = &mut self.rules[index];
        let ban = BACKOFF_BAN_LENGTH
            .checked_shl(state.times_banned)
            .unwrap_or(usize::MAX / 2);
        state.times_banned += 1;
        state.banned_until = iteration.saturating_add(ban);
        vec![]
    }
}

/// A rewrite's left-hand side as egg stores it (empty when its searcher has none).
fn pattern_of(rewrite: &Rewrite<VNode, VAnalysis>) -> &[ENodeOrVar<VNode>] {
    match rewrite.searcher.get_pattern_ast() {
        Some(ast) => ast.as_ref(),
        None => &[],
    }
}

/// Whether the graph holds an e-node of the shape of every operator node of the
/// pattern. A match maps each of them to an e-node of that shape (shapes are equal
/// exactly when `matches` holds), so otherwise the rule has no match. Most of the
/// default set's rewrites name an op, or an `exact` op, that a given pair never uses.
/// egg's operator index is current while rules search: the runner rebuilds before each
/// search phase.
fn names_only_present_ops(egraph: &VGraph, nodes: &[ENodeOrVar<VNode>]) -> bool {
    nodes.iter().all(|n| match n {
        ENodeOrVar::ENode(n) => egraph
            .classes_for_op(&n.discriminant())
            .is_some_and(|c| c.len() > 0),
        ENodeOrVar::Var(_) => true,
    })
}

/// Edges from the root (the last node) to the deepest node of a pattern.
fn height(nodes: &[ENodeOrVar<VNode>]) -> usize {
    // Children come before parents in a RecExpr: one forward pass gives heights.
    let mut h = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        h[i] = n
            .children()
            .iter()
            .map(|c| h[usize::from(*c)] + 1)
            .max()
            .unwrap_or(0);
    }
    h.last().copied().unwrap_or(0)
}

/// The guard of a pattern: its root's first operator operand, preferring one that is
/// not a transfer mode (a mode class holds nothing else, so it narrows little).
fn guard_of(nodes: &[ENodeOrVar<VNode>]) -> Option<Guard<'_>> {
    let ENodeOrVar::ENode(root) = nodes.last()? else {
        return None;
    };
    let operand = |i: usize| match &nodes[usize::from(root.children()[i])] {
        ENodeOrVar::ENode(n) => Some((i, n)),
        ENodeOrVar::Var(_) => None,
    };
    let arity = root.children().len();
    let (pos, operand) = (0..arity)
        .filter_map(operand)
        .find(|(_, n)| !matches!(n, VNode::Mode(..)))
        .or_else(|| (0..arity).find_map(operand))?;
    let pos = match super::comm_match::is_commutative(root) {
        true => None,
        false => Some(pos),
    };
    Some(Guard { root, pos, operand })
}

impl RewriteScheduler<VNode, VAnalysis> for IncrementalScheduler {
    fn can_stop(&mut self, iteration: usize) -> bool {
        // As egg's backoff: with rules still banned, fast-forward the earliest bans to
        // now and go on, so a saturated run has tried every rule.
        let Some(first) = self
            .rules
            .iter()
            .filter(|s| s.banned_until > iteration)
            .map(|s| s.banned_until)
            .min()
        else {
            return true;
        };
        let delta = first - iteration;
        for s in self.rules.iter_mut() {
            if s.banned_until > iteration {
                s.banned_until -= delta;
            }
        }
        false
    }

    /// egg's loop over the rules (a search each, the limits checked after each), with
    /// the rule's position passed on: the state is a vector indexed by it.
    fn search_rewrites<'a>(
        &mut self,
        iteration: usize,
        egraph: &VGraph,
        rewrites: &[&'a Rewrite<VNode, VAnalysis>],
        limits: &RunnerLimits,
    ) -> RunnerResult<Vec<Vec<SearchMatches<'a, VNode>>>> {
        let mut matches = Vec::with_capacity(rewrites.len());
        let mut shared = FxHashMap::default();
        for index in 0..rewrites.len() {
            let found = self.search_one(index, iteration, egraph, rewrites, &mut shared, &matches);
            matches.push(found);
            limits.check_limits(iteration, egraph)?;
            if let Some(d) = &self.deadline {
                d.check(index + 1)?;
            }
        }
        Ok(matches)
    }
}

/// The root classes a rule searches, in egg's order: the dirty classes of its key,
/// narrowed by its guard. Both lists are built once per iteration and key.
fn candidates<'c>(
    egraph: &VGraph,
    touched: &[Touched],
    dirty: &'c mut FxHashMap<DirtyKey, Vec<Id>>,
    guarded: &'c mut FxHashMap<GuardedKey, Vec<Id>>,
    key: DirtyKey,
    guard: Option<Guard<'_>>,
) -> &'c [Id] {
    let all = dirty
        .entry(key.clone())
        .or_insert_with_key(|(root, depth, since)| {
            dirty_classes(egraph, touched, root, *depth, *since)
        });
    let Some(guard) = guard else {
        return all;
    };
    guarded.entry((key, guard.key())).or_insert_with(|| {
        all.iter()
            .copied()
            .filter(|c| guard.admits(egraph, *c))
            .collect()
    })
}

/// The classes of `root`'s operator, in egg's order, with something touched at most
/// `depth` edges below them since the iteration stamped `since` (every class for 0).
fn dirty_classes(
    egraph: &VGraph,
    touched: &[Touched],
    root: &Shape,
    depth: usize,
    since: u32,
) -> Vec<Id> {
    egraph
        .classes_for_op(root)
        .into_iter()
        .flatten()
        .filter(|c| {
            since == 0
                || touched
                    .get(usize::from(*c))
                    .is_some_and(|row| row[depth] > since)
        })
        .collect()
}

/// egg's per-class search loop over a chosen list of classes.
fn search_classes<'a>(
    rewrite: &'a Rewrite<VNode, VAnalysis>,
    egraph: &VGraph,
    classes: impl Iterator<Item = Id>,
    mut limit: usize,
) -> Vec<SearchMatches<'a, VNode>> {
    let mut out = vec![];
    for class in classes {
        if limit == 0 {
            break;
        }
        if let Some(m) = rewrite
            .searcher
            .search_eclass_with_limit(egraph, class, limit)
        {
            limit -= m.substs.len().min(limit);
            out.push(m);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::VAnalysis;
    use egg::{Pattern, RecExpr, Runner, SimpleScheduler};

    fn rw(name: &str, l: &str, r: &str) -> Rewrite<VNode, VAnalysis> {
        let l: Pattern<VNode> = l.parse().unwrap();
        let r: Pattern<VNode> = r.parse().unwrap();
        Rewrite::new(name, l, r).unwrap()
    }

    /// `(fabs u1)` gains an `fneg` node in the first iteration without changing its id,
    /// which gives the depth-2 rule a new match at the root `fadd` in the second: the
    /// root itself is not touched, only a class one edge below it.
    fn run(s: Option<IncrementalScheduler>) -> (usize, usize) {
        let rules = [
            rw("grow", "(fabs ?x)", "(fneg (fneg ?x))"),
            rw("deep", "(fadd ?y (fneg ?z))", "(fmul ?y ?z)"),
        ];
        let expr: RecExpr<VNode> = "(fadd uniform:0 (fabs uniform:1))".parse().unwrap();
        let runner = Runner::<VNode, VAnalysis>::default().with_expr(&expr);
        let runner = match s {
            Some(s) => runner.with_scheduler(s).run(&rules),
            None => runner.with_scheduler(SimpleScheduler).run(&rules),
        };
        (runner.egraph.total_size(), runner.iterations.len())
    }

    #[test]
    fn incremental_search_finds_what_a_full_search_finds() {
        let full = run(None);
        assert_eq!(run(Some(IncrementalScheduler::new(false))), full);
        assert_eq!(run(Some(IncrementalScheduler::new(true))), full);
    }

    /// Two rules whose left-hand sides differ only in variable names, and one whose
    /// differs in the operand order: per iteration the first two search once.
    fn run_alike(s: IncrementalScheduler) -> (usize, usize) {
        let rules = [
            rw("grow", "(fabs ?x)", "(fneg (fneg ?x))"),
            rw("one", "(fadd ?y (fneg ?z))", "(fsub ?y ?z)"),
            rw("two", "(fadd ?p (fneg ?q))", "(fmul ?p ?q)"),
            rw("three", "(fadd (fneg ?q) ?p)", "(fmin ?p ?q)"),
        ];
        let expr: RecExpr<VNode> = "(fadd (fneg uniform:2) (fadd uniform:0 (fabs uniform:1)))"
            .parse()
            .unwrap();
        let full = Runner::<VNode, VAnalysis>::default()
            .with_expr(&expr)
            .with_scheduler(SimpleScheduler)
            .run(&rules);
        let runner = Runner::<VNode, VAnalysis>::default()
            .with_expr(&expr)
            .with_scheduler(s)
            .run(&rules);
        let size = |g: &VGraph| (g.total_size(), g.number_of_classes());
        assert_eq!(size(&runner.egraph), size(&full.egraph));
        // 7 lowered nodes and 2 of `grow`: the others must add some.
        assert!(runner.egraph.total_size() > 9, "the rules must fire");
        (runner.egraph.total_size(), runner.iterations.len())
    }

    #[test]
    fn rules_alike_up_to_names_search_once() {
        let shared = IncrementalScheduler::new(false);
        let searches = shared.searches.clone();
        let with = run_alike(shared);
        let mut alone = IncrementalScheduler::new(false);
        alone.no_sharing = true;
        let unshared = alone.searches.clone();
        assert_eq!(run_alike(alone), with);
        // `two` copies `one`'s search every iteration it searches.
        assert!(
            searches.get() < unshared.get(),
            "{} / {}",
            searches.get(),
            unshared.get()
        );
    }

    #[test]
    fn a_too_shallow_cone_misses_the_deep_match() {
        let mut shallow = IncrementalScheduler::new(false);
        shallow.depth_override = Some(0);
        let (nodes, _) = run(Some(shallow));
        assert!(nodes < run(None).0, "the fmul node must be missing");
    }

    /// `deep` names `fneg`, which only `grow` adds (in the first iteration): the
    /// first search of `deep` is skipped, and the match appears once `fneg` does.
    #[test]
    fn a_rule_naming_an_absent_op_is_skipped_until_the_op_occurs() {
        let s = IncrementalScheduler::new(false);
        let skipped = s.skipped.clone();
        assert_eq!(run(Some(s)), run(None));
        // Iteration 0: `deep` (no fneg yet). Not `grow`, and not `deep` later.
        assert_eq!(skipped.get(), 1);
    }

    /// The default rules on the sample pairs: leaving out the matches a rule found at
    /// its last search ([`super::super::fresh`]) changes nothing the run does (the same
    /// applications per rule and iteration, the same graph size) and reports fewer
    /// matches.
    #[test]
    fn matches_found_at_the_last_search_are_not_reported_again() {
        let set = crate::egraph::RuleSet::default_set();
        let compiled = set.compiled().unwrap();
        let (mut filtered, mut all) = (0, 0);
        for (i, g) in crate::egraph::lower::sample_graphs()
            .into_iter()
            .enumerate()
        {
            let (rules, groups) = compiled.reach.reachable_with_groups(&g, &compiled.rewrites);
            let go = |filter: bool| {
                let mut s = IncrementalScheduler::new(true).with_groups(groups.clone());
                s.no_filter = !filter;
                let found = s.found.clone();
                let runner = Runner::<VNode, VAnalysis>::default()
                    .with_egraph(g.clone())
                    .with_iter_limit(30)
                    .with_node_limit(200_000)
                    .with_time_limit(std::time::Duration::from_secs(3_600))
                    .with_scheduler(s)
                    .run(rules.iter().copied());
                let applied: Vec<Vec<(String, usize)>> = runner
                    .iterations
                    .iter()
                    .map(|it| {
                        it.applied
                            .iter()
                            .map(|(k, v)| (k.to_string(), *v))
                            .collect()
                    })
                    .collect();
                let size = (
                    runner.egraph.total_size(),
                    runner.egraph.number_of_classes(),
                );
                ((applied, size), found.get())
            };
            let (with, found_with) = go(true);
            let (without, found_without) = go(false);
            assert_eq!(with, without, "sample pair {i}");
            assert!(found_with <= found_without);
            filtered += found_with;
            all += found_without;
        }
        assert!(
            filtered < all,
            "{filtered} of {all}: the filter must leave some out"
        );
    }

    fn pattern(lhs: &str) -> Pattern<VNode> {
        lhs.parse().unwrap()
    }

    #[test]
    fn guards_name_the_root_operand_the_pattern_needs() {
        // A transfer's value operand (position 1), not its mode.
        let p = pattern("(xfer ?m (fadd ?a ?a))");
        let g = guard_of(p.ast.as_ref()).expect("operand");
        assert_eq!(g.pos, Some(1));
        assert!(matches!(g.operand, VNode::Alu { .. }));
        // A commutative root: either operand.
        let p = pattern("(fadd (xfer ?m ?a) ?a)");
        let g = guard_of(p.ast.as_ref()).expect("operand");
        assert_eq!(g.pos, None);
        assert!(matches!(g.operand, VNode::Xfer(_)));
        // No operator operand, or no operator at all: no guard.
        assert!(guard_of(pattern("(fneg ?a)").ast.as_ref()).is_none());
        assert!(guard_of(pattern("?a").ast.as_ref()).is_none());
    }

    #[test]
    fn a_guard_admits_exactly_the_classes_with_the_operand() {
        let expr: RecExpr<VNode> =
            "(fadd (xfer flat (fneg uniform:0)) (xfer flat (fabs uniform:1)))"
                .parse()
                .unwrap();
        let mut g = VGraph::new(VAnalysis::default());
        let root = g.add_expr(&expr);
        g.rebuild();
        let xfers: Vec<Id> = g.classes_for_op(&Shape::Xfer).expect("transfers").collect();
        let p = pattern("(xfer ?m (fneg ?a))");
        let neg = guard_of(p.ast.as_ref()).expect("operand");
        let admitted = xfers.iter().filter(|c| neg.admits(&g, **c)).count();
        assert_eq!(admitted, 1, "only the transfer of the fneg");
        // The mode operand never holds an fneg: a guard on the wrong operand admits
        // nothing (tests/incremental_matching.rs would then miss every such match).
        let wrong = Guard {
            pos: Some(0),
            ..neg
        };
        assert!(xfers.iter().all(|c| !wrong.admits(&g, *c)));
        // A commutative root, its operand wherever class-id order put it.
        let p = pattern("(fadd ?a (xfer ?m ?b))");
        assert!(guard_of(p.ast.as_ref()).expect("operand").admits(&g, root));
    }

    #[test]
    fn pattern_heights_and_present_ops() {
        let p = pattern("(fadd ?y (fneg ?z))");
        assert_eq!(height(p.ast.as_ref()), 2);
        assert_eq!(height(pattern("?x").ast.as_ref()), 0);
        let expr: RecExpr<VNode> = "(fadd uniform:0 (fabs uniform:1))".parse().unwrap();
        let mut g = VGraph::new(VAnalysis::default());
        g.add_expr(&expr);
        g.rebuild();
        assert!(!names_only_present_ops(&g, p.ast.as_ref()), "no fneg");
        let q = pattern("(fadd ?y (fabs ?z))");
        assert!(names_only_present_ops(&g, q.ast.as_ref()));
    }
}
