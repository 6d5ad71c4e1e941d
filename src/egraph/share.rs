//! Rewrites that search alike: left-hand sides equal up to the names of their
//! variables, grouped so that the incremental scheduler searches each group once per
//! iteration and hands the other members a copy of the matches under their own names.
//!
//! Many shipped rules share a left-hand side: the flat and interpolated motion laws of
//! one op (`flat-fmul-uf` and `interp-fmul-uf` both read `(fmul (xfer ?m ?a) ?u)` and
//! differ in their conditions), and the right-to-left forms of every law that moves a
//! commutative op (seven rules read `(xfer ?m (fmul ?a ?b))`). On real pairs these
//! searches were over half of saturation's instructions.
//!
//! Why a copy is what the member's own search would return. The rule compiler picks a
//! rule's searcher from its pattern alone ([`super::comm_match::CommPattern`] when it
//! names a commutative op, egg's pattern otherwise), and neither searcher looks at
//! variable names: `CommPattern` indexes variables by first occurrence, and egg's
//! compiler orders its instructions by the pattern's shape and numbers registers in
//! visiting order. So two patterns equal under a renaming of variables (a bijection,
//! since both are numbered by first occurrence) search the same classes in the same
//! order and find the same bindings in the same order, the renaming applied. The
//! graph does not change while rules search, so the copy holds for every member that
//! searches the same candidate classes with the same match limit in one iteration.

use std::borrow::Cow;

use egg::{ENodeOrVar, PatternAst, SearchMatches, Subst, Var};
use fxhash::FxHashMap;

use super::lang::VNode;

/// A pattern node with its variables numbered by first occurrence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Canon {
    Node(VNode),
    Var(usize),
}

/// Group numbers of the left-hand sides seen so far, by their canonical form.
#[derive(Debug, Default)]
pub struct Groups {
    by_pattern: FxHashMap<Vec<Canon>, u32>,
}

impl Groups {
    /// The group of a pattern (children before parents, root last, as egg stores it):
    /// equal for two patterns exactly when they are equal up to variable names.
    pub fn group_of(&mut self, nodes: &[ENodeOrVar<VNode>]) -> u32 {
        let mut vars = Vec::new();
        let key: Vec<Canon> = nodes
            .iter()
            .map(|n| match n {
                ENodeOrVar::ENode(e) => Canon::Node(e.clone()),
                ENodeOrVar::Var(v) => Canon::Var(first_occurrence(&mut vars, *v)),
            })
            .collect();
        let next = u32::try_from(self.by_pattern.len()).unwrap_or(u32::MAX);
        *self.by_pattern.entry(key).or_insert(next)
    }
}

/// The position of `v` among the variables seen so far, adding it when new.
fn first_occurrence(vars: &mut Vec<Var>, v: Var) -> usize {
    match vars.iter().position(|w| *w == v) {
        Some(i) => i,
        None => {
            vars.push(v);
            vars.len() - 1
        }
    }
}

/// A pattern's distinct variables in first-occurrence order.
pub fn vars_in_order(nodes: &[ENodeOrVar<VNode>]) -> Vec<Var> {
    let mut vars = Vec::new();
    for n in nodes {
        if let ENodeOrVar::Var(v) = n {
            first_occurrence(&mut vars, *v);
        }
    }
    vars
}

/// `matches` of a pattern whose variables are `from` (first-occurrence order), as the
/// matches of a pattern equal to it up to names whose variables are `to`, and whose
/// own pattern is `ast` (egg keeps a searcher's pattern with its matches when the
/// searcher gives one).
pub fn renamed<'a>(
    matches: &[SearchMatches<'_, VNode>],
    from: &[Var],
    to: &[Var],
    ast: Option<&'a PatternAst<VNode>>,
) -> Vec<SearchMatches<'a, VNode>> {
    matches
        .iter()
        .map(|m| SearchMatches {
            eclass: m.eclass,
            substs: m
                .substs
                .iter()
                .map(|s| {
                    let mut out = Subst::with_capacity(to.len());
                    for (f, t) in from.iter().zip(to) {
                        if let Some(id) = s.get(*f) {
                            out.insert(*t, *id);
                        }
                    }
                    out
                })
                .collect(),
            ast: m.ast.as_ref().and(ast).map(Cow::Borrowed),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::analysis::VAnalysis;
    use crate::egraph::comm_match::testing::{random_graph, Rng};
    use crate::egraph::comm_match::CommPattern;
    use egg::{Id, Pattern, Searcher};

    fn group(groups: &mut Groups, p: &str) -> u32 {
        let p: Pattern<VNode> = p.parse().unwrap();
        groups.group_of(p.ast.as_ref())
    }

    #[test]
    fn patterns_group_exactly_when_equal_up_to_names() {
        let mut g = Groups::default();
        let a = group(&mut g, "(fmul (xfer ?m ?a) ?u)");
        assert_eq!(a, group(&mut g, "(fmul (xfer ?q ?b) ?k)"));
        // The operands swapped: matched in another order, so another group.
        assert_ne!(a, group(&mut g, "(fmul ?u (xfer ?m ?a))"));
        // A repeated variable is not a fresh one.
        let rep = group(&mut g, "(fmul (xfer ?m ?a) ?a)");
        assert_ne!(a, rep);
        assert_ne!(rep, group(&mut g, "(fmul (xfer ?m ?a) ?m)"));
        // Another op, or its exact form.
        assert_ne!(a, group(&mut g, "(fadd (xfer ?m ?a) ?u)"));
        assert_ne!(a, group(&mut g, "(fmul.exact (xfer ?m ?a) ?u)"));
        // Two ways to rename onto one shape.
        let x = group(&mut g, "(xfer ?m (fadd ?a ?b))");
        assert_eq!(x, group(&mut g, "(xfer ?m (fadd ?u ?a))"));
    }

    #[test]
    fn renaming_keeps_positions_and_unbound_variables() {
        let (a, b, c, x, y) = (
            "?a".parse::<Var>().unwrap(),
            "?b".parse().unwrap(),
            "?c".parse().unwrap(),
            "?x".parse().unwrap(),
            "?y".parse().unwrap(),
        );
        let mut s = Subst::default();
        s.insert(b, Id::from(7));
        s.insert(a, Id::from(3));
        let m = SearchMatches {
            eclass: Id::from(1),
            substs: vec![s],
            ast: None,
        };
        let out = renamed(&[m], &[a, b, c], &[x, y, a], None);
        assert_eq!(out.len(), 1);
        let s = &out[0].substs[0];
        assert_eq!(s.get(x), Some(&Id::from(3)));
        assert_eq!(s.get(y), Some(&Id::from(7)));
        assert_eq!(s.get(a), None, "?c was unbound");
        assert_eq!(out[0].eclass, Id::from(1));
    }

    fn rows(matches: &[SearchMatches<'_, VNode>], vars: &[Var]) -> Vec<(Id, Vec<Option<Id>>)> {
        matches
            .iter()
            .flat_map(|m| {
                m.substs
                    .iter()
                    .map(|s| (m.eclass, vars.iter().map(|v| s.get(*v).copied()).collect()))
            })
            .collect()
    }

    /// The searcher the rule compiler would pick (`RuleSet::compile`).
    fn searcher(p: &Pattern<VNode>) -> Box<dyn Searcher<VNode, VAnalysis>> {
        match CommPattern::new(p) {
            Some(c) => Box::new(c),
            None => Box::new(p.clone()),
        }
    }

    /// A renamed copy of one pattern's matches is, order included, what the search of
    /// a pattern equal to it up to names finds, with both searchers, on random graphs.
    #[test]
    fn a_renamed_copy_is_the_other_patterns_own_search() {
        let pairs = [
            ("(fmul (fadd ?a ?b) ?c)", "(fmul (fadd ?x ?y) ?z)"),
            ("(fadd ?a ?b)", "(fadd ?b ?a)"),
            ("(fadd (fneg ?a) ?u)", "(fadd (fneg ?k) ?a)"),
            (
                "(fadd (fmul ?a ?b) (fmul ?a ?c))",
                "(fadd (fmul ?p ?q) (fmul ?p ?r))",
            ),
            ("(fsub (fneg ?a) ?b)", "(fsub (fneg ?q) ?p)"),
            ("(fsub ?a (fsub ?b ?a))", "(fsub ?c (fsub ?a ?c))"),
        ];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut compared = 0;
        for round in 0..150 {
            let g = random_graph(&mut rng, 10 + round % 12, round % 4);
            for (one, other) in pairs {
                let (p, q): (Pattern<VNode>, Pattern<VNode>) =
                    (one.parse().unwrap(), other.parse().unwrap());
                let mut groups = Groups::default();
                assert_eq!(
                    groups.group_of(p.ast.as_ref()),
                    groups.group_of(q.ast.as_ref())
                );
                let (vp, vq) = (vars_in_order(p.ast.as_ref()), vars_in_order(q.ast.as_ref()));
                let (sp, sq) = (searcher(&p), searcher(&q));
                let found = sp.search(&g);
                let copy = renamed(&found, &vp, &vq, Some(&q.ast));
                let own = sq.search(&g);
                assert_eq!(rows(&copy, &vq), rows(&own, &vq), "{one} / {other}");
                compared += rows(&own, &vq).len();
            }
        }
        assert!(compared > 1_000, "the graphs must give matches: {compared}");
    }
}
