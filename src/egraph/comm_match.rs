//! Matching rule left-hand sides modulo commutativity. The e-graph stores each
//! commutative op once, with its two operands in class-id order
//! (`VNode::update_children`), instead of saturating `(op a b) = (op b a)` laws; so a
//! pattern must be able to match a commutative op with its operands either way round.
//! [`CommPattern`] is an egg searcher that does exactly that by backtracking: at each
//! commutative pattern node it tries both operand orders of the e-node. The matches are
//! those a fully saturated commutativity law would give, without the twin nodes.

use egg::{ENodeOrVar, Id, Language, Pattern, SearchMatches, Searcher, Subst, Var};

use super::analysis::{VAnalysis, VGraph};
use super::lang::VNode;

/// A left-hand side whose commutative ops match in both operand orders.
#[derive(Clone, Debug)]
pub struct CommPattern {
    /// The pattern's nodes, children before parents, root last.
    ast: Vec<ENodeOrVar<VNode>>,
    /// The distinct variables, in first-occurrence order; bindings are indexed alike.
    vars: Vec<Var>,
}

/// Whether a node is a two-operand commutative ALU op.
pub fn is_commutative(node: &VNode) -> bool {
    match node {
        VNode::Alu { op, children, .. } => children.len() == 2 && op.is_commutative(),
        _ => false,
    }
}

/// A match in progress: pattern nodes still to match against classes, and bindings.
#[derive(Clone)]
struct State {
    goals: Vec<(usize, Id)>,
    bound: Vec<Option<Id>>,
}

impl CommPattern {
    /// The searcher for `p`, or `None` when `p` names no commutative op (egg's own
    /// pattern matcher is then exact and faster).
    pub fn new(p: &Pattern<VNode>) -> Option<CommPattern> {
        let ast: Vec<ENodeOrVar<VNode>> = p.ast.as_ref().to_vec();
        let any = ast
            .iter()
            .any(|n| matches!(n, ENodeOrVar::ENode(e) if is_commutative(e)));
        any.then(|| CommPattern {
            vars: p.vars(),
            ast,
        })
    }

    fn var_index(&self, v: &Var) -> usize {
        self.vars.iter().position(|w| w == v).unwrap_or(0)
    }

    /// Finds every match of the pattern rooted at `class`, calling `found` on each
    /// binding vector; stops when `found` returns false.
    fn solve(&self, g: &VGraph, mut st: State, found: &mut dyn FnMut(&[Option<Id>]) -> bool) -> bool {
        let Some((p, class)) = st.goals.pop() else {
            return found(&st.bound);
        };
        let class = g.find(class);
        match &self.ast[p] {
            ENodeOrVar::Var(v) => {
                let i = self.var_index(v);
                match st.bound[i] {
                    Some(b) if g.find(b) != class => true,
                    Some(_) => self.solve(g, st, found),
                    None => {
                        st.bound[i] = Some(class);
                        self.solve(g, st, found)
                    }
                }
            }
            ENodeOrVar::ENode(pn) => {
                let kids = pn.children();
                for n in g[class].nodes.iter().filter(|n| pn.matches(n)) {
                    let ch = n.children();
                    let swap_too = is_commutative(pn) && ch[0] != ch[1];
                    for swapped in [false, true].into_iter().take(1 + swap_too as usize) {
                        let mut next = st.clone();
                        for (i, k) in kids.iter().enumerate() {
                            let c = if swapped { ch[ch.len() - 1 - i] } else { ch[i] };
                            next.goals.push((usize::from(*k), c));
                        }
                        if !self.solve(g, next, found) {
                            return false;
                        }
                    }
                }
                true
            }
        }
    }
}

impl Searcher<VNode, VAnalysis> for CommPattern {
    fn search_with_limit(&self, g: &VGraph, limit: usize) -> Vec<SearchMatches<'_, VNode>> {
        let root = match self.ast.last() {
            Some(ENodeOrVar::ENode(n)) => n.discriminant(),
            _ => return vec![],
        };
        let Some(classes) = g.classes_for_op(&root) else {
            return vec![];
        };
        let mut out = vec![];
        let mut left = limit;
        for class in classes {
            if left == 0 {
                break;
            }
            if let Some(m) = self.search_eclass_with_limit(g, class, left) {
                left -= m.substs.len();
                out.push(m);
            }
        }
        out
    }

    fn search_eclass_with_limit(
        &self,
        g: &VGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<SearchMatches<'_, VNode>> {
        let root = self.ast.len().checked_sub(1)?;
        let start = State {
            goals: vec![(root, eclass)],
            bound: vec![None; self.vars.len()],
        };
        let mut found: Vec<Vec<Option<Id>>> = vec![];
        self.solve(g, start, &mut |b| {
            // Both operand orders of a symmetric sub-pattern can bind alike.
            if !found.iter().any(|f| f == b) {
                found.push(b.to_vec());
            }
            found.len() < limit
        });
        if found.is_empty() {
            return None;
        }
        let substs = found
            .into_iter()
            .map(|b| {
                let mut s = Subst::with_capacity(self.vars.len());
                for (v, id) in self.vars.iter().zip(b) {
                    if let Some(id) = id {
                        s.insert(*v, id);
                    }
                }
                s
            })
            .collect();
        Some(SearchMatches {
            eclass: g.find(eclass),
            substs,
            ast: None,
        })
    }

    fn vars(&self) -> Vec<Var> {
        self.vars.clone()
    }
}
