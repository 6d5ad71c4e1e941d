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
//! A rule one of whose pattern operators (an ALU op, `exact` or not, a mode, a leaf)
//! has no e-node in the graph has no match at all: it is not searched that iteration,
//! and counts as searched (with nothing found) for the next. Most of the default set's
//! ~1,100 rewrites name an op a given pair never uses, or the `exact` form of one.
//!
//! Saturated runs spend most iterations adding a few nodes at the frontier of what the
//! laws reached; a full search re-matches ~600 rewrites over every class of their root
//! operator each time, which is what this avoids.

use egg::{Id, Language, Rewrite, RewriteScheduler, SearchMatches, Symbol};
use fxhash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

use super::analysis::{VAnalysis, VGraph};
use super::lang::{Shape, VNode};

/// The deepest pattern the touched-distance table tracks; a deeper left-hand side
/// searches every class of its root operator (none of the shipped rules is that deep).
pub const MAX_TRACKED_DEPTH: usize = 7;

/// egg's default initial match limit for backoff: a rule finding more matches than
/// this in one search is banned for a while.
pub const BACKOFF_MATCH_LIMIT: usize = 1_000;
/// egg's default initial ban length, in iterations.
pub const BACKOFF_BAN_LENGTH: usize = 5;

/// What a rule's left-hand side needs the scheduler to know.
#[derive(Clone, Debug)]
struct Shape0 {
    /// The root operator's shape, `None` when the root is a variable.
    root: Option<Shape>,
    /// Edges from the root to the deepest pattern node.
    depth: usize,
    /// The distinct shapes of the pattern's operator nodes: a match maps each to an
    /// e-node of that shape, so while one of them is absent from the graph the rule has
    /// no match and is not searched (most of the default set's rewrites name an op, or
    /// an `exact` op, that a given pair never uses).
    needs: Vec<Shape>,
}

/// Per-rule scheduling state.
#[derive(Clone, Debug)]
struct RuleState {
    shape: Shape0,
    /// The iteration whose search this rule last completed (its matches applied).
    searched: Option<usize>,
    /// Iteration from which the rule may search again after a ban.
    banned_until: usize,
    times_banned: u32,
}

/// Incremental rule scheduling, with or without backoff.
#[derive(Debug)]
pub struct IncrementalScheduler {
    backoff: bool,
    rules: FxHashMap<Symbol, RuleState>,
    /// Class fingerprints at the start of the last search, by class id (0: none).
    fingerprints: Vec<u64>,
    /// Per class, for each distance `k`, the last iteration in which a class at most
    /// `k` edges below it was touched.
    /// Indexed by class id (ids are dense: egg numbers every e-node it adds).
    touched: Vec<[u32; MAX_TRACKED_DEPTH + 1]>,
    /// The iteration the touched table was last brought up to date for.
    prepared: Option<usize>,
    /// This iteration's dirty root classes by (root operator, pattern depth, last
    /// search): the graph does not change while egg searches, and hundreds of rules
    /// share a root operator (every motion law is rooted at `xfer`), so each list is
    /// filtered from the operator's classes once per iteration instead of per rule.
    dirty: FxHashMap<(Shape, usize, u32), Vec<Id>>,
    /// Tests only: pretend every left-hand side is this deep (a wrong, too shallow
    /// value must make the search miss matches, which shows the tests can see it).
    #[cfg(test)]
    depth_override: Option<usize>,
    /// Tests only: searches skipped because a pattern shape was absent.
    #[cfg(test)]
    skipped: std::rc::Rc<std::cell::Cell<usize>>,
}

impl IncrementalScheduler {
    /// A scheduler; `backoff` bans rules that match too often, as egg's
    /// `BackoffScheduler` does (same limits and ban lengths).
    pub fn new(backoff: bool) -> IncrementalScheduler {
        IncrementalScheduler {
            backoff,
            rules: FxHashMap::default(),
            fingerprints: Vec::new(),
            touched: Vec::new(),
            prepared: None,
            dirty: FxHashMap::default(),
            #[cfg(test)]
            depth_override: None,
            #[cfg(test)]
            skipped: Default::default(),
        }
    }

    /// Brings the touched table up to date with the graph at the start of `iteration`.
    fn prepare(&mut self, iteration: usize, g: &VGraph) {
        if self.prepared == Some(iteration) {
            return;
        }
        self.prepared = Some(iteration);
        self.dirty.clear();
        let stamp = stamp(iteration);
        let ids = g.nodes().len();
        let mut next = vec![0; ids];
        self.touched.resize(ids, [0; MAX_TRACKED_DEPTH + 1]);
        let mut frontier = Vec::new();
        for class in g.classes() {
            let i = usize::from(class.id);
            // Never 0, which marks a class the last search did not see.
            let fp = fingerprint(class) | 1;
            if self.fingerprints.get(i) != Some(&fp) {
                frontier.push(class.id);
            }
            next[i] = fp;
        }
        self.fingerprints = next;
        // Breadth-first up the parent links: distance d is reached from distance d - 1,
        // so each class gets the shortest distance to something touched.
        for d in 0..=MAX_TRACKED_DEPTH {
            let mut up = Vec::new();
            for id in frontier {
                let row = &mut self.touched[usize::from(id)];
                if row[d] == stamp {
                    continue;
                }
                for slot in &mut row[d..] {
                    *slot = stamp;
                }
                if d < MAX_TRACKED_DEPTH {
                    up.extend(g[id].parents().map(|p| g.find(p)));
                }
            }
            frontier = up;
        }
    }

    /// A rule's state, created on its first search.
    fn state<'s>(
        rules: &'s mut FxHashMap<Symbol, RuleState>,
        rw: &Rewrite<VNode, VAnalysis>,
        #[cfg(test)] depth_override: Option<usize>,
    ) -> &'s mut RuleState {
        rules.entry(rw.name).or_insert_with(|| RuleState {
            shape: {
                #[allow(unused_mut)]
                let mut shape = shape_of(rw);
                #[cfg(test)]
                if let Some(d) = depth_override {
                    shape.depth = d;
                }
                shape
            },
            searched: None,
            banned_until: 0,
            times_banned: 0,
        })
    }
}

/// Iterations are stored shifted by one so that 0 means "never touched".
fn stamp(iteration: usize) -> u32 {
    u32::try_from(iteration + 1).unwrap_or(u32::MAX)
}

/// A hash of a class's canonical e-nodes and analysis data.
fn fingerprint(class: &egg::EClass<VNode, super::analysis::VData>) -> u64 {
    let mut h = FxHasher::default();
    class.nodes.len().hash(&mut h);
    for n in &class.nodes {
        n.hash(&mut h);
    }
    class.data.hash(&mut h);
    h.finish()
}

fn shape_of(rw: &Rewrite<VNode, VAnalysis>) -> Shape0 {
    let Some(ast) = rw.searcher.get_pattern_ast() else {
        return Shape0 {
            root: None,
            depth: usize::MAX,
            needs: vec![],
        };
    };
    let nodes = ast.as_ref();
    let mut needs: Vec<Shape> = vec![];
    for n in nodes {
        if let egg::ENodeOrVar::ENode(n) = n {
            let shape = n.discriminant();
            if !needs.contains(&shape) {
                needs.push(shape);
            }
        }
    }
    // Children come before parents in a RecExpr: one forward pass gives heights.
    let mut height = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        height[i] = n
            .children()
            .iter()
            .map(|c| height[usize::from(*c)] + 1)
            .max()
            .unwrap_or(0);
    }
    let root = match nodes.last() {
        Some(egg::ENodeOrVar::ENode(n)) => Some(n.discriminant()),
        _ => None,
    };
    Shape0 {
        root,
        depth: height.last().copied().unwrap_or(0),
        needs,
    }
}

impl RewriteScheduler<VNode, VAnalysis> for IncrementalScheduler {
    fn can_stop(&mut self, iteration: usize) -> bool {
        // As egg's backoff: with rules still banned, fast-forward the earliest bans to
        // now and go on, so a saturated run has tried every rule.
        let Some(first) = self
            .rules
            .values()
            .filter(|s| s.banned_until > iteration)
            .map(|s| s.banned_until)
            .min()
        else {
            return true;
        };
        let delta = first - iteration;
        for s in self.rules.values_mut() {
            if s.banned_until > iteration {
                s.banned_until -= delta;
            }
        }
        false
    }

    fn search_rewrite<'a>(
        &mut self,
        iteration: usize,
        egraph: &VGraph,
        rewrite: &'a Rewrite<VNode, VAnalysis>,
    ) -> Vec<SearchMatches<'a, VNode>> {
        self.prepare(iteration, egraph);
        // One look-up of the rule's state; the touched table is only read.
        let state = Self::state(
            &mut self.rules,
            rewrite,
            #[cfg(test)]
            self.depth_override,
        );
        if iteration < state.banned_until {
            return vec![];
        }
        if !state.shape.needs.iter().all(|s| occurs(egraph, s)) {
            // What a search would find: nothing (so no ban either).
            state.searched = Some(iteration);
            #[cfg(test)]
            self.skipped.set(self.skipped.get() + 1);
            return vec![];
        }
        let threshold = match self.backoff {
            true => BACKOFF_MATCH_LIMIT
                .checked_shl(state.times_banned)
                .unwrap_or(usize::MAX),
            false => usize::MAX - 1,
        };
        let limit = threshold.saturating_add(1);
        let matches = match (&state.shape.root, state.searched) {
            (Some(root), Some(last)) if state.shape.depth <= MAX_TRACKED_DEPTH => {
                let key = (root.clone(), state.shape.depth, stamp(last));
                let touched = &self.touched;
                let dirty = self
                    .dirty
                    .entry(key)
                    .or_insert_with_key(|(root, depth, since)| {
                        dirty_classes(egraph, touched, root, *depth, *since)
                    });
                search_classes(rewrite, egraph, dirty.iter().copied(), limit)
            }
            _ => rewrite.search_with_limit(egraph, limit),
        };
        let found: usize = matches.iter().map(|m| m.substs.len()).sum();
        if found > threshold {
            let ban = BACKOFF_BAN_LENGTH
                .checked_shl(state.times_banned)
                .unwrap_or(usize::MAX / 2);
            state.times_banned += 1;
            state.banned_until = iteration.saturating_add(ban);
            return vec![];
        }
        state.searched = Some(iteration);
        matches
    }
}

/// Whether the graph holds an e-node of this shape (egg's operator index is current
/// while rules search: the runner rebuilds before each search phase).
fn occurs(egraph: &VGraph, shape: &Shape) -> bool {
    egraph.classes_for_op(shape).is_some_and(|c| c.len() > 0)
}

/// The classes of `root`'s operator, in egg's order, with something touched at most
/// `depth` edges below them since the iteration stamped `since`.
fn dirty_classes(
    egraph: &VGraph,
    touched: &[[u32; MAX_TRACKED_DEPTH + 1]],
    root: &Shape,
    depth: usize,
    since: u32,
) -> Vec<Id> {
    egraph
        .classes_for_op(root)
        .into_iter()
        .flatten()
        .filter(|c| {
            touched
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

    #[test]
    fn pattern_shapes() {
        let s = shape_of(&rw("deep", "(fadd ?y (fneg ?z))", "(fmul ?y ?z)"));
        assert_eq!(s.depth, 2);
        assert!(matches!(s.root, Some(Shape::Alu(..))));
        let v = shape_of(&rw("var", "?x", "(fneg (fneg ?x))"));
        assert_eq!((v.root, v.depth), (None, 0));
        let fneg = VNode::Alu {
            op: crate::ir::AluOp::FNeg,
            exact: false,
            children: vec![Id::from(0)],
        };
        assert_eq!(s.needs.len(), 2, "fadd and fneg");
        assert_eq!(s.needs[0], fneg.discriminant(), "children first");
    }
}
