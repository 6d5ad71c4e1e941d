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
//! Most of the default set's ~1,100 rewrites name an op, or the `exact` form of one,
//! that a pair never uses; the scheduler skips such rules each iteration
//! ([`super::incremental`]), but only after looking them up every time.

use egg::{ENodeOrVar, Language, PatternAst, Rewrite};
use fxhash::FxHashMap;

use super::analysis::{VAnalysis, VGraph};
use super::lang::{Shape, VNode};

/// What reachability needs of a rule list, computed once per list (a rule set caches
/// it with its rewrites): the shapes each rewrite's sides name, as dense ids.
#[derive(Debug, Default)]
pub struct Reach {
    /// Every non-constant shape some rewrite names, by id.
    ids: FxHashMap<Shape, u32>,
    /// Per rewrite, the distinct shape ids of its left-hand side (empty when the
    /// searcher is not a pattern: always reachable).
    lhs: Vec<Box<[u32]>>,
    /// Per rewrite, those of its right-hand side; `None` when some applier is not a
    /// pattern, which makes every rewrite reachable.
    rhs: Option<Vec<Box<[u32]>>>,
    /// Per shape id, the rewrites whose left-hand side names it.
    users: Vec<Vec<u32>>,
}

impl Reach {
    /// The index of `rules`.
    pub fn new(rules: &[Rewrite<VNode, VAnalysis>]) -> Reach {
        let mut reach = Reach::default();
        let mut rhs = Some(Vec::with_capacity(rules.len()));
        for (i, rule) in rules.iter().enumerate() {
            let lhs = rule.searcher.get_pattern_ast().map(|p| reach.intern(p));
            let lhs = lhs.unwrap_or_default();
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
            let next = self.ids.len() as u32;
            let id = *self.ids.entry(n.discriminant()).or_insert(next);
            if id == next {
                self.users.push(Vec::new());
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
        debug_assert_eq!(rules.len(), self.lhs.len(), "the index of another list");
        let live = self.live(egraph);
        rules
            .iter()
            .zip(live)
            .filter_map(|(r, l)| l.then_some(r))
            .collect()
    }

    /// Per rewrite, whether it is in the fixed point of the module comment.
    fn live(&self, egraph: &VGraph) -> Vec<bool> {
        let Some(rhs) = &self.rhs else {
            return vec![true; self.lhs.len()];
        };
        let mut present = vec![false; self.users.len()];
        for class in egraph.classes() {
            for n in &class.nodes {
                if let Some(&id) = self.ids.get(&n.discriminant()) {
                    present[id as usize] = true;
                }
            }
        }
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
    /// rewrite that applied was judged reachable.
    #[test]
    fn pruned_runs_equal_full_runs() {
        let rules = RuleSet::default_set().rewrites().unwrap();
        let pairs = crate::gen::sample_pairs();
        assert!(pairs.len() > 20, "{} pairs", pairs.len());
        let mut pruned_total = 0;
        for pair in pairs {
            let g = crate::egraph::lower::lower(&pair, VAnalysis::default(), false).egraph;
            let live = reachable(&g, &rules);
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
    }
}
