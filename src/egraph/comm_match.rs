//! Matching rule left-hand sides modulo commutativity. The e-graph stores each
//! commutative op once, with its two operands in class-id order
//! (`VNode::update_children`), instead of saturating `(op a b) = (op b a)` laws; so a
//! pattern must be able to match a commutative op with its operands either way round.
//! [`CommPattern`] is an egg searcher that does exactly that by backtracking: at each
//! commutative pattern node it tries both operand orders of the e-node. The matches are
//! those a fully saturated commutativity law would give, without the twin nodes.

use egg::{ENodeOrVar, Id, Language, Pattern, PatternAst, SearchMatches, Searcher, Subst, Var};

use super::analysis::{VAnalysis, VGraph};
use super::lang::VNode;

/// A left-hand side whose commutative ops match in both operand orders.
#[derive(Clone, Debug)]
pub struct CommPattern {
    /// The pattern's nodes, children before parents, root last.
    ast: Vec<ENodeOrVar<VNode>>,
    /// The distinct variables, in first-occurrence order; bindings are indexed alike.
    vars: Vec<Var>,
    /// For each variable node of `ast`, its index in `vars`.
    slot: Vec<usize>,
    /// The pattern as egg writes it (the incremental scheduler reads its shape).
    pattern: PatternAst<VNode>,
}

/// Whether a node is a two-operand commutative ALU op.
pub fn is_commutative(node: &VNode) -> bool {
    match node {
        VNode::Alu { op, children, .. } => children.len() == 2 && op.is_commutative(),
        _ => false,
    }
}

impl CommPattern {
    /// The searcher for `p`, or `None` when `p` names no commutative op (egg's own
    /// pattern matcher is then exact and faster).
    pub fn new(p: &Pattern<VNode>) -> Option<CommPattern> {
        let ast: Vec<ENodeOrVar<VNode>> = p.ast.as_ref().to_vec();
        let any = ast
            .iter()
            .any(|n| matches!(n, ENodeOrVar::ENode(e) if is_commutative(e)));
        let vars = p.vars();
        let slot = ast
            .iter()
            .map(|n| match n {
                ENodeOrVar::Var(v) => vars.iter().position(|w| w == v).unwrap_or(0),
                ENodeOrVar::ENode(_) => 0,
            })
            .collect();
        any.then_some(CommPattern {
            ast,
            vars,
            slot,
            pattern: p.ast.clone(),
        })
    }

    /// Matches the pending `goals` (pattern node, class), last first, extending
    /// `bound`; calls `found` on each complete binding and stops when it returns
    /// false. Backtracks in place: on return `goals` and `bound` are as on entry.
    fn solve(
        &self,
        g: &VGraph,
        goals: &mut Vec<(usize, Id)>,
        bound: &mut [Option<Id>],
        found: &mut dyn FnMut(&[Option<Id>]) -> bool,
    ) -> bool {
        let Some((p, class)) = goals.pop() else {
            return found(bound);
        };
        let canon = g.find(class);
        let go_on = match &self.ast[p] {
            ENodeOrVar::Var(_) => {
                let i = self.slot[p];
                match bound[i] {
                    Some(b) if g.find(b) != canon => true,
                    Some(_) => self.solve(g, goals, bound, found),
                    None => {
                        bound[i] = Some(canon);
                        let go_on = self.solve(g, goals, bound, found);
                        bound[i] = None;
                        go_on
                    }
                }
            }
            ENodeOrVar::ENode(pn) => self.solve_node(g, pn, canon, goals, bound, found),
        };
        goals.push((p, class));
        go_on
    }

    /// Tries every e-node of `class` with `pn`'s operator, commutative ones in both
    /// operand orders.
    fn solve_node(
        &self,
        g: &VGraph,
        pn: &VNode,
        class: Id,
        goals: &mut Vec<(usize, Id)>,
        bound: &mut [Option<Id>],
        found: &mut dyn FnMut(&[Option<Id>]) -> bool,
    ) -> bool {
        let kids = pn.children();
        let commutative = is_commutative(pn);
        for n in g[class].nodes.iter().filter(|n| pn.matches(n)) {
            let ch = n.children();
            let orders = if commutative && ch[0] != ch[1] { 2 } else { 1 };
            for swapped in 0..orders {
                let base = goals.len();
                for (i, k) in kids.iter().enumerate() {
                    let c = if swapped == 1 { ch[1 - i] } else { ch[i] };
                    goals.push((usize::from(*k), c));
                }
                let go_on = self.solve(g, goals, bound, found);
                goals.truncate(base);
                if !go_on {
                    return false;
                }
            }
        }
        true
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
        let mut goals = Vec::with_capacity(self.ast.len());
        goals.push((root, eclass));
        let mut bound = vec![None; self.vars.len()];
        let mut found = Found::new(self.vars.len());
        self.solve(g, &mut goals, &mut bound, &mut |b| {
            found.insert(b);
            found.len() < limit
        });
        if found.len() == 0 {
            return None;
        }
        let substs = found
            .rows()
            .map(|b| {
                let mut s = Subst::with_capacity(self.vars.len());
                for (v, id) in self.vars.iter().zip(b) {
                    if let Some(id) = id {
                        s.insert(*v, *id);
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

    fn get_pattern_ast(&self) -> Option<&PatternAst<VNode>> {
        Some(&self.pattern)
    }
}

/// The distinct bindings found in one class, in the order found. Both operand orders
/// of a symmetric sub-pattern can bind alike, so duplicates are dropped. The rows sit
/// in one flat vector (one allocation per search instead of two per match); a class
/// has a few matches as a rule, so a scan of the rows finds a duplicate, and past
/// [`Found::SCAN_MAX`] rows a hash set of them does (a class can have thousands of
/// matches, and a scan per match would be quadratic).
struct Found {
    width: usize,
    rows: Vec<Option<Id>>,
    count: usize,
    seen: Option<fxhash::FxHashSet<Vec<Option<Id>>>>,
}

impl Found {
    /// Rows a duplicate is looked for by scanning; past it, by hashing.
    const SCAN_MAX: usize = 16;

    fn new(width: usize) -> Found {
        Found {
            width,
            rows: vec![],
            count: 0,
            seen: None,
        }
    }

    fn len(&self) -> usize {
        self.count
    }

    fn rows(&self) -> impl Iterator<Item = &[Option<Id>]> {
        (0..self.count).map(|i| &self.rows[i * self.width..(i + 1) * self.width])
    }

    /// Appends `b` unless an equal row is already there.
    fn insert(&mut self, b: &[Option<Id>]) {
        let new = match &mut self.seen {
            Some(seen) => seen.insert(b.to_vec()),
            None => !self.rows().any(|r| r == b),
        };
        if !new {
            return;
        }
        self.rows.extend_from_slice(b);
        self.count += 1;
        if self.seen.is_none() && self.count > Found::SCAN_MAX {
            self.seen = Some(self.rows().map(<[Option<Id>]>::to_vec).collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: usize, b: usize) -> [Option<Id>; 2] {
        [Some(Id::from(a)), Some(Id::from(b))]
    }

    /// Duplicates are dropped and the order found is kept, both while the rows are
    /// scanned and once they are hashed.
    #[test]
    fn found_keeps_the_first_of_each_binding_in_order() {
        let mut f = Found::new(2);
        let n = Found::SCAN_MAX * 2;
        for i in 0..n {
            f.insert(&row(i, i + 1));
            f.insert(&row(i, i + 1));
            f.insert(&row(0, 1));
        }
        let rows: Vec<Vec<Option<Id>>> = f.rows().map(<[_]>::to_vec).collect();
        let want: Vec<Vec<Option<Id>>> = (0..n).map(|i| row(i, i + 1).to_vec()).collect();
        assert_eq!(f.len(), n);
        assert_eq!(rows, want);
    }

    /// A pattern without variables has one binding, the empty one.
    #[test]
    fn found_without_variables_has_one_row() {
        let mut f = Found::new(0);
        f.insert(&[]);
        f.insert(&[]);
        assert_eq!(f.len(), 1);
        assert_eq!(f.rows().count(), 1);
    }
}
