//! Rule reachability: the rewrites that can match at all in one saturation run, found
//! before it starts, so the scheduler never visits the others.
//!
//! Why it is exact. A match maps every operator node of a left-hand side to an e-node
//! of the same [`Shape`]. During saturation e-nodes come from two places only: the
//! right-hand sides of rewrites that fired, and the analysis, which adds a constant to
//! each class it folds (`VAnalysis::modify`). So the shapes that can ever be in the
//! graph are the least fixed point of: every shape of the lowered graph, every constant,
//! and the right-hand-side shapes of every rewrite all of whose left-hand-side shapes
//! are in the set. A rewrite outside the fixed point finds nothing in any iteration,
//! so dropping it changes neither the matches nor their order, nor any backoff ban (a
//! rule that never matches is never banned): the run is the same, minus the visits.
//! A rewrite whose searcher or applier is not a pattern is kept, and one whose applier
//! is not a pattern makes every rewrite reachable (it could add anything).
//!
//! Conditions narrow it further, when the index knows them ([`Reach::with_conditions`]):
//! `(interpolated ?m)` holds only on a class holding an interpolating mode node, and
//! `(uninterpolated ?m)` only on one holding a `flat`, `vertex` or `patch` mode node,
//! so each needs some shape of that kind in the graph, as a left-hand-side operator
//! does; `(promotable ?p)` never holds when the producer is a GS (a fact of the run).
//! A rule whose condition can never pass applies nothing, so it is dropped with the
//! same argument. On a VS→GS pair no interpolating mode exists: the interpolation laws
//! and convergent promotion, about half of the matches such a run found, go.
//!
//! Most of the default set's ~1,100 rewrites name an op, or the `exact` form of one,
//! that a pair never uses; the scheduler skips such rules each iteration
//! ([`super::incremental`]), but only after looking them up every time.

use egg::{ENodeOrVar, Language, PatternAst, Rewrite};
use fxhash::FxHashMap;

use super::analysis::{VAnalysis, VGraph};
use super::lang::{Shape, VNode};
use super::rules::Cond;
use super::share::Groups;

/// What a condition needs of the graph, as a pseudo-shape id of the index (the first
/// ids, before any interned shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum Need {
    /// Some interpolating mode node (`(interpolated ?m)`).
    Interpolating = 0,
    /// Some `flat`, `vertex` or `patch` mode node (`(uninterpolated ?m)`).
    Uninterpolated = 1,
    /// A producer that is not a GS (`(promotable ?p)`).
    Promotable = 2,
}

const NEEDS: u32 = 3;

impl Need {
    /// The need a condition has, if any.
    fn of(cond: &Cond) -> Option<Need> {
        match cond {
            Cond::Interpolated(_) => Some(Need::Interpolating),
            Cond::Uninterpolated(_) => Some(Need::Uninterpolated),
            Cond::Promotable(_) => Some(Need::Promotable),
            _ => None,
        }
    }

    /// The need a node of this shape meets, if any.
    fn met_by(node: &VNode) -> Option<Need> {
        match node {
            VNode::Mode(m, _) if m.is_interpolated() => Some(Need::Interpolating),
            VNode::Mode(m, _) if m.is_uninterpolated() => Some(Need::Uninterpolated),
            _ => None,
        }
    }
}

/// What reachability needs of a rule list, computed once per list (a rule set caches
/// it with its rewrites): the shapes each rewrite's sides name, as dense ids.
#[derive(Debug, Default)]
pub struct Reach {
    /// Every non-constant shape some rewrite names, by id (after the [`Need`] ids).
    ids: FxHashMap<Shape, u32>,
    /// Per id, the need a node of that shape meets.
    meets: Vec<Option<u32>>,
    /// Per rewrite, the distinct shape ids of its left-hand side (empty when the
    /// searcher is not a pattern: always reachable).
    lhs: Vec<Box<[u32]>>,
    /// Per rewrite, those of its right-hand side; `None` when some applier is not a
    /// pattern, which makes every rewrite reachable.
    rhs: Option<Vec<Box<[u32]>>>,
    /// Per shape id, the rewrites whose left-hand side names it.
    users: Vec<Vec<u32>>,
    /// Per rewrite, its search group ([`Groups`]): computed here once per rule set
    /// rather than by every run's scheduler.
    groups: Vec<u32>,
}

impl Reach {
    /// The index of `rules`, whose conditions it does not know.
    pub fn new(rules: &[Rewrite<VNode, VAnalysis>]) -> Reach {
        Reach::with_conditions(rules, &[])
    }

    /// The index of `rules`, with the conditions of each (by position; a rule past
    /// the end of `conds` counts as unconditional).
    pub fn with_conditions(rules: &[Rewrite<VNode, VAnalysis>], conds: &[Vec<Cond>]) -> Reach {
        let mut reach = Reach {
            users: vec![Vec::new(); NEEDS as usize],
            meets: vec![None; NEEDS as usize],
            ..Reach::default()
        };
        let mut rhs = Some(Vec::with_capacity(rules.len()));
        let mut groups = Groups::default();
        for (i, rule) in rules.iter().enumerate() {
            let ast = rule.searcher.get_pattern_ast();
            reach
                .groups
                .push(groups.group_of(ast.map_or(&[], |p| p.as_ref())));
            let mut lhs = ast.map(|p| reach.intern(p)).unwrap_or_default().into_vec();
            for need in conds.get(i).into_iter().flatten().filter_map(Need::of) {
                if !lhs.contains(&(need as u32)) {
                    lhs.push(need as u32);
                }
            }
            let lhs = lhs.into_boxed_slice();
            for &s in lhs.iter() {
                reach.users[s as usize].push(i as u32);
            }
            reach.lhs.push(lhs);
            let right = rule.applier.get_pattern_ast().map(|p| reach.intern(p));
            rhs = rhs.zip(right).map(|(mut all, r)| {
                all.push(r);
                all
            });
        }
        reach.rhs = rhs;
        reach
    }

    /// The distinct non-constant shape ids of a pattern, interned (the analysis can add
    /// any constant to the graph, so constants never make a rule unreachable).
    fn intern(&mut self, ast: &PatternAst<VNode>) -> Box<[u32]> {
        let mut out: Vec<u32> = Vec::new();
        for node in ast.as_ref() {
            let ENodeOrVar::ENode(n) = node else { continue };
            if matches!(n, VNode::Const { .. }) {
                continue;
            }
            let next = self.users.len() as u32;
            let id = *self.ids.entry(n.discriminant()).or_insert(next);
            if id == next {
                self.users.push(Vec::new());
                self.meets.push(Need::met_by(n).map(|need| need as u32));
            }
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out.into_boxed_slice()
    }

    /// The rewrites of `rules` (the list this index was built from) that can match in
    /// a run on `egraph`, in their order.
    pub fn reachable<'r>(
        &self,
        egraph: &VGraph,
        rules: &'r [Rewrite<VNode, VAnalysis>],
    ) -> Vec<&'r Rewrite<VNode, VAnalysis>> {
        self.reachable_with_groups(egraph, rules).0
    }

    /// [`Reach::reachable`] with each rewrite's search group, in the same order.
    pub fn reachable_with_groups<'r>(
        &self,
        egraph: &VGraph,
        rules: &'r [Rewrite<VNode, VAnalysis>],
    ) -> (Vec<&'r Rewrite<VNode, VAnalysis>>, Vec<u32>) {
        debug_assert_eq!(rules.len(), self.lhs.len(), "the index of another list");
        let live = self.live(egraph);
        rules
            .iter()
            .zip(&self.groups)
            .zip(live)
            .filter_map(|(r, l)| l.then_some(r))
            .unzip()
    }

    /// Per rewrite, whether it is in the fixed point of the module comment.
    fn live(&self, egraph: &VGraph) -> Vec<bool> {
        let Some(rhs) = &self.rhs else {
            return vec![true; self.lhs.len()];
        };
        let mut present = vec![false; self.users.len()];
        for class in egraph.classes() {
            for n in &class.nodes {
                if let Some(need) = Need::met_by(n) {
                    present[need as usize] = true;
                }
                if let Some(&id) = self.ids.get(&n.discriminant()) {
                    present[id as usize] = true;
                }
            }
        }
        present[Need::Promotable as usize] = !egraph.analysis.producer_is_gs;
        let mut missing: Vec<usize> = self
            .lhs
            .iter()
            .map(|l| l.iter().filter(|&&s| !present[s as usize]).count())
            .collect();
        let mut ready: Vec<usize> = (0..missing.len()).filter(|&i| missing[i] == 0).collect();
        let mut live = vec![false; self.lhs.len()];
        while let Some(i) = ready.pop() {
            live[i] = true;
            for &s in rhs[i].iter() {
                let needs = self.meets[s as usize];
                for s in std::iter::once(s).chain(needs) {
                    if std::mem::replace(&mut present[s as usize], true) {
                        continue;
                    }
                    for &j in &self.users[s as usize] {
                        missing[j as usize] -= 1;
                        if missing[j as usize] == 0 {
                            ready.push(j as usize);
                        }
                    }
                }
            }
        }
        live
    }
}

/// The rewrites of `rules` that can match in a run on `egraph`, in their order.
pub fn reachable<'r>(
    egraph: &VGraph,
    rules: &'r [Rewrite<VNode, VAnalysis>],
) -> Vec<&'r Rewrite<VNode, VAnalysis>> {
    Reach::new(rules).reachable(egraph, rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::saturate::assert_same_runs;
    use crate::egraph::{RuleSet, VAnalysis};
    use egg::RecExpr;
    use fxhash::FxHashSet;

    fn graph(text: &str) -> VGraph {
        let expr: RecExpr<VNode> = text.parse().unwrap();
        let mut g = VGraph::new(VAnalysis::default());
        g.add_expr(&expr);
        g.rebuild();
        g
    }

    fn names(rules: &[&Rewrite<VNode, VAnalysis>]) -> Vec<String> {
        rules.iter().map(|r| r.name.to_string()).collect()
    }

    const CHAIN: &str = "
        (rule a-to-b (fneg (fneg ?x)) (fabs ?x))
        (rule b-to-c (fabs ?x) (fsqrt ?x))
        (rule never (fexp2 ?x) (fneg ?x))
        (rule consts (fmul ?x 0f32) 0f32)";

    #[test]
    fn a_rule_is_reachable_through_what_another_adds() {
        let rules = RuleSet::parse("chain.rules", CHAIN)
            .unwrap()
            .rewrites()
            .unwrap();
        let g = graph("(fneg (fneg uniform:0))");
        let live = names(&reachable(&g, &rules));
        // `b-to-c` needs `fabs`, which only `a-to-b` adds; `consts` needs `fmul`, which
        // nothing adds; `never` needs `fexp2`.
        assert!(live.iter().any(|n| n == "a-to-b"), "{live:?}");
        assert!(live.iter().any(|n| n == "b-to-c"), "{live:?}");
        assert!(!live.iter().any(|n| n.starts_with("never")), "{live:?}");
        assert!(!live.iter().any(|n| n.starts_with("consts")), "{live:?}");
    }

    #[test]
    fn constants_never_make_a_rule_unreachable() {
        let rules = RuleSet::parse("chain.rules", CHAIN)
            .unwrap()
            .rewrites()
            .unwrap();
        let g = graph("(fmul uniform:0 uniform:1)");
        let live = names(&reachable(&g, &rules));
        assert!(live.iter().any(|n| n == "consts"), "{live:?}");
    }

    /// The yardstick: on the shipped example pairs, the file-test pairs and synthetic
    /// pairs, saturating with the reachable rewrites only is the same run as with all of
    /// them (the same applications per rewrite, iterations and graph size), and every
    /// rewrite that applied was judged reachable. The index is the default set's own,
    /// which knows the conditions, and each pair's analysis says whether its producer
    /// is a GS.
    #[test]
    fn pruned_runs_equal_full_runs() {
        let set = RuleSet::default_set();
        let compiled = set.compiled().unwrap();
        let rules = &compiled.rewrites;
        let pairs = crate::gen::sample_pairs();
        assert!(pairs.len() > 20, "{} pairs", pairs.len());
        let (mut pruned_total, mut gs_producers) = (0, 0);
        for pair in pairs {
            let producer_is_gs = pair.producer.stage() == crate::ir::Stage::Geometry;
            gs_producers += usize::from(producer_is_gs);
            let analysis = VAnalysis {
                producer_is_gs,
                ..VAnalysis::default()
            };
            let g = crate::egraph::lower::lower(&pair, analysis, false).egraph;
            let live = compiled.reach.reachable(&g, rules);
            pruned_total += rules.len() - live.len();
            let names: FxHashSet<String> = names(&live).into_iter().collect();
            let full = assert_same_runs(&g, rules.iter().collect(), live);
            for name in full.applied.keys() {
                assert!(
                    names.contains(name),
                    "{name} applied but was judged unreachable"
                );
            }
        }
        assert!(pruned_total > 0, "the comparison saw rules dropped");
        assert!(gs_producers > 0, "the comparison saw a GS producer");
    }

    const MODES: &str = "
        (rule lin (fadd (xfer ?m ?a) (xfer ?m ?b)) (xfer ?m (fadd ?a ?b)) (if (interpolated ?m)))
        (rule promote (xfer ?m ?p) (xfer flat ?p) (if (interpolated ?m) (promotable ?p)))
        (rule take (fneg (xfer ?m ?a)) (xfer ?m (fneg ?a)) (if (uninterpolated ?m)))";

    fn live_in(text: &str, producer_is_gs: bool) -> Vec<String> {
        let set = RuleSet::parse("modes.rules", MODES).unwrap();
        let compiled = set.compiled().unwrap();
        let mut g = graph(text);
        g.analysis.producer_is_gs = producer_is_gs;
        names(&compiled.reach.reachable(&g, &compiled.rewrites))
    }

    /// A condition on a mode needs a mode node of that kind, in the graph or added by a
    /// reachable rewrite; promotion needs a producer that is not a GS.
    #[test]
    fn conditions_on_modes_need_such_a_mode() {
        // Per-vertex transfers only (a GS consumer): no interpolating mode, and `flat`
        // (which `promote` would add) is not needed by `take`, which `vertex` meets.
        let per_vertex = "(fneg (xfer (vertex 0i32) uniform:0))";
        assert_eq!(live_in(per_vertex, false), ["take"]);
        // A smooth transfer: the interpolation law and promotion; promotion adds
        // `flat`, which makes `take` reachable too.
        let smooth = "(fneg (xfer persp.center uniform:0))";
        let live = live_in(smooth, false);
        assert!(live.iter().any(|n| n == "promote"), "{live:?}");
        assert!(live.iter().any(|n| n == "take"), "{live:?}");
        // With a GS producer promotion never passes, so nothing adds `flat`.
        assert_eq!(live_in(smooth, true), Vec::<String>::new());
    }
}
