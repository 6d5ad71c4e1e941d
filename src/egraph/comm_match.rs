//! Matching rule left-hand sides modulo commutativity. The e-graph stores each
//! commutative op once, with its two operands in class-id order
//! (`VNode::update_children`), instead of saturating `(op a b) = (op b a)` laws; so a
//! pattern must be able to match a commutative op with its operands either way round.
//! [`CommPattern`] is an egg searcher that does exactly that by backtracking: at each
//! commutative pattern node it tries both operand orders of the e-node. The matches are
//! those a fully saturated commutativity law would give, without the twin nodes.

use egg::{ENodeOrVar, Id, Language, Pattern, PatternAst, SearchMatches, Searcher, Subst, Var};
use fxhash::FxHasher;
use std::hash::{Hash, Hasher};

use super::analysis::{VAnalysis, VGraph};
use super::fresh;
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

/// One token of a pattern's canonical form ([`canonical`]): an operator node (its
/// children dropped), a variable, or the end of an operator node's operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Token {
    /// An operator or leaf node, its operands written after it.
    Node(VNode),
    /// A pattern variable.
    Var(Var),
    /// The end of the last `Node`'s operands.
    End,
}

/// A pattern written out in prefix order with the two operands of every commutative op
/// in sorted order: two patterns with the same canonical form match the same
/// substitutions (under [`CommPattern`]) and, as right-hand sides, add the same
/// e-nodes (the graph stores commutative operands in class-id order). Tokens, not
/// text: the rule set compares the forms of ~1,100 rewrites at every start.
pub fn canonical(ast: &PatternAst<VNode>) -> Vec<Token> {
    fn write(nodes: &[ENodeOrVar<VNode>], i: usize, out: &mut Vec<Token>) {
        match &nodes[i] {
            ENodeOrVar::Var(v) => out.push(Token::Var(*v)),
            ENodeOrVar::ENode(n) => {
                out.push(Token::Node(n.clone().map_children(|_| Id::from(0))));
                let operand = |c: &Id| {
                    let mut form = Vec::new();
                    write(nodes, usize::from(*c), &mut form);
                    form
                };
                let mut operands: Vec<Vec<Token>> = n.children().iter().map(operand).collect();
                if is_commutative(n) {
                    operands.sort();
                }
                out.extend(operands.into_iter().flatten());
                out.push(Token::End);
            }
        }
    }
    let nodes = ast.as_ref();
    let mut out = Vec::new();
    if !nodes.is_empty() {
        write(nodes, nodes.len() - 1, &mut out);
    }
    out
}

/// A hash of a pattern's canonical form ([`canonical`]): patterns with equal forms hash
/// alike (a commutative op combines its operands' hashes in sorted order). Different
/// forms may collide, so equal hashes are only a reason to compare the forms.
pub fn canonical_hash(ast: &PatternAst<VNode>) -> u64 {
    fn hash(nodes: &[ENodeOrVar<VNode>], i: usize) -> u64 {
        let mut h = FxHasher::default();
        match &nodes[i] {
            ENodeOrVar::Var(v) => (0u8, v).hash(&mut h),
            ENodeOrVar::ENode(n) => {
                (1u8, n.clone().map_children(|_| Id::from(0))).hash(&mut h);
                let mut operands: smallvec::SmallVec<[u64; 3]> = n
                    .children()
                    .iter()
                    .map(|c| hash(nodes, usize::from(*c)))
                    .collect();
                if is_commutative(n) {
                    operands.sort_unstable();
                }
                operands.hash(&mut h);
            }
        }
        h.finish()
    }
    let nodes = ast.as_ref();
    match nodes.len() {
        0 => 0,
        len => hash(nodes, len - 1),
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
        w: &mut Walk<'_>,
        goals: &mut Vec<(usize, Id)>,
        bound: &mut [Option<Id>],
        found: &mut dyn FnMut(&[Option<Id>]) -> bool,
    ) -> bool {
        let Some((p, class)) = goals.pop() else {
            // With a filter, only a binding that reads something new is reported.
            return match (&w.view, w.new) {
                (Some(_), 0) => true,
                _ => found(bound),
            };
        };
        let canon = w.g.find(class);
        let go_on = match &self.ast[p] {
            ENodeOrVar::Var(_) => {
                let i = self.slot[p];
                match bound[i] {
                    Some(b) if w.g.find(b) != canon => true,
                    Some(_) => self.solve(w, goals, bound, found),
                    None => {
                        let new = usize::from(w.view.as_ref().is_some_and(|v| !v.old_class(canon)));
                        bound[i] = Some(canon);
                        w.new += new;
                        let go_on = self.solve(w, goals, bound, found);
                        w.new -= new;
                        bound[i] = None;
                        go_on
                    }
                }
            }
            ENodeOrVar::ENode(pn) => {
                let root = p + 1 == self.ast.len();
                self.solve_node(w, pn, canon, root, goals, bound, found)
            }
        };
        goals.push((p, class));
        go_on
    }

    /// Tries every e-node of `class` with `pn`'s operator, commutative ones in both
    /// operand orders; at the `root`, not those whose every match the rule found at
    /// its last search ([`fresh::View::stale_root`]).
    #[allow(clippy::too_many_arguments)]
    fn solve_node(
        &self,
        w: &mut Walk<'_>,
        pn: &VNode,
        class: Id,
        root: bool,
        goals: &mut Vec<(usize, Id)>,
        bound: &mut [Option<Id>],
        found: &mut dyn FnMut(&[Option<Id>]) -> bool,
    ) -> bool {
        let kids = pn.children();
        let commutative = is_commutative(pn);
        let g = w.g;
        let nodes = g[class].nodes.iter().enumerate();
        for (index, n) in nodes.filter(|(_, n)| pn.matches(n)) {
            let new = match &w.view {
                Some(v) if root && v.stale_root(class, index, n) => continue,
                Some(v) => usize::from(!v.old_node(class, index)),
                None => 0,
            };
            w.new += new;
            let ch = n.children();
            let orders = if commutative && ch[0] != ch[1] { 2 } else { 1 };
            for swapped in 0..orders {
                let base = goals.len();
                for (i, k) in kids.iter().enumerate() {
                    let c = if swapped == 1 { ch[1 - i] } else { ch[i] };
                    goals.push((usize::from(*k), c));
                }
                let go_on = self.solve(w, goals, bound, found);
                goals.truncate(base);
                if !go_on {
                    w.new -= new;
                    return false;
                }
            }
            w.new -= new;
        }
        true
    }
}

/// One class search's context: the graph, the scheduler's filter when one is set
/// ([`fresh::with_view`]), and how many of the e-nodes and variable classes of the
/// partial match are new to the filter.
struct Walk<'g> {
    g: &'g VGraph,
    view: Option<fresh::View<'g>>,
    new: usize,
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
        fresh::with_view(|view| {
            let mut walk = Walk { g, view, new: 0 };
            self.solve(&mut walk, &mut goals, &mut bound, &mut |b| {
                found.insert(b);
                found.len() < limit
            });
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

/// Random e-graphs for the matcher tests (here and in [`super::share`]).
#[cfg(test)]
pub(crate) mod testing {
    use std::str::FromStr;

    use egg::{Id, Language};

    use crate::egraph::analysis::{VAnalysis, VGraph};
    use crate::egraph::lang::VNode;
    use crate::ir::AluOp;

    /// A deterministic xorshift generator.
    pub struct Rng(pub u64);

    impl Rng {
        /// A number below `n` (`n > 0`).
        pub fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Three uniforms, `ops` random `fadd`/`fmul` (commutative), `fsub` and `fneg`
    /// nodes over earlier classes, then `unions` random merges: classes with several
    /// nodes, shared children and both operand orders of `fsub`.
    pub fn random_graph(rng: &mut Rng, ops: usize, unions: usize) -> VGraph {
        let mut g = VGraph::new(VAnalysis::default());
        let mut ids: Vec<Id> = (0..3)
            .map(|i| g.add_expr(&format!("uniform:{i}").parse().unwrap()))
            .collect();
        for _ in 0..ops {
            let name = ["fadd", "fmul", "fsub", "fneg"][rng.below(4)];
            let op = AluOp::from_str(name).unwrap();
            let children = (0..op.arity()).map(|_| ids[rng.below(ids.len())]).collect();
            let node = VNode::Alu {
                op,
                exact: false,
                children,
            };
            ids.push(g.add(node));
        }
        for _ in 0..unions {
            let (a, b) = (ids[rng.below(ids.len())], ids[rng.below(ids.len())]);
            g.union(a, b);
        }
        g.rebuild();
        debug_assert!(g.classes().all(|c| c.nodes.iter().all(|n| n.len() <= 2)));
        g
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn canonical_forms_sort_only_commutative_operands() {
        let canon = |t: &str| canonical(&t.parse::<Pattern<VNode>>().unwrap().ast);
        assert_eq!(canon("(fmul ?a (fneg ?b))"), canon("(fmul (fneg ?b) ?a)"));
        assert_eq!(
            canon("(fadd (fmul ?a ?b) ?c)"),
            canon("(fadd ?c (fmul ?b ?a))")
        );
        assert_ne!(canon("(fsub ?a ?b)"), canon("(fsub ?b ?a)"));
        assert_ne!(canon("(fmul ?a ?b)"), canon("(fmul ?a ?c)"));
        // Equal forms hash alike (twin detection buckets by the hash).
        let hash = |t: &str| canonical_hash(&t.parse::<Pattern<VNode>>().unwrap().ast);
        assert_eq!(hash("(fmul ?a (fneg ?b))"), hash("(fmul (fneg ?b) ?a)"));
        assert_eq!(
            hash("(fadd (fmul ?a ?b) ?c)"),
            hash("(fadd ?c (fmul ?b ?a))")
        );
        assert_ne!(hash("(fsub ?a ?b)"), hash("(fsub ?b ?a)"));
    }
    use super::testing::{random_graph, Rng};
    use super::*;
    use std::collections::BTreeSet;

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

    /// Whether pattern node `p` matches `class` under the full binding `b` (indexed by
    /// `slot`), by the definition: some e-node of the class has the operator, and its
    /// operands match in order or, for a commutative op, swapped.
    fn holds(pat: &CommPattern, g: &VGraph, p: usize, class: Id, b: &[Id]) -> bool {
        match &pat.ast[p] {
            ENodeOrVar::Var(_) => g.find(b[pat.slot[p]]) == g.find(class),
            ENodeOrVar::ENode(pn) => g[class].nodes.iter().any(|n| {
                if !pn.matches(n) {
                    return false;
                }
                let (k, c) = (pn.children(), n.children());
                let in_order = k
                    .iter()
                    .zip(c)
                    .all(|(k, c)| holds(pat, g, usize::from(*k), *c, b));
                let swapped = is_commutative(pn)
                    && holds(pat, g, usize::from(k[0]), c[1], b)
                    && holds(pat, g, usize::from(k[1]), c[0], b);
                in_order || swapped
            }),
        }
    }

    /// Every binding of the pattern's variables to classes that matches at `class`.
    fn brute_force(pat: &CommPattern, g: &VGraph, class: Id) -> BTreeSet<Vec<Id>> {
        let classes: Vec<Id> = g.classes().map(|c| c.id).collect();
        let n = pat.vars.len();
        let mut out = BTreeSet::new();
        let total = classes.len().pow(u32::try_from(n).unwrap());
        for mut code in 0..total {
            let b: Vec<Id> = (0..n)
                .map(|_| {
                    let id = classes[code % classes.len()];
                    code /= classes.len();
                    id
                })
                .collect();
            if holds(pat, g, pat.ast.len() - 1, class, &b) {
                out.insert(b);
            }
        }
        out
    }

    /// The backtracking search finds exactly the bindings of the definition, each
    /// once, on random e-graphs (both operand orders, repeated variables, nested
    /// commutative ops, a constant leaf).
    #[test]
    fn search_finds_exactly_the_brute_force_bindings() {
        let patterns = [
            "(fadd ?a ?b)",
            "(fadd ?a ?a)",
            "(fadd (fneg ?a) ?b)",
            "(fmul (fadd ?a ?b) ?c)",
            "(fmul (fadd ?a ?b) ?a)",
            "(fsub (fadd ?a ?b) ?b)",
            "(fadd (fmul ?a ?b) (fmul ?a ?c))",
            "(fneg (fadd ?a uniform:0))",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut matched = 0;
        for round in 0..120 {
            let g = random_graph(&mut rng, 6 + round % 10, round % 5);
            for text in patterns {
                let p: Pattern<VNode> = text.parse().unwrap();
                let pat = CommPattern::new(&p).expect("a commutative op");
                for class in g.classes().map(|c| c.id) {
                    let want = brute_force(&pat, &g, class);
                    let got: Vec<Vec<Id>> = pat
                        .search_eclass_with_limit(&g, class, usize::MAX)
                        .map(|m| m.substs)
                        .unwrap_or_default()
                        .iter()
                        .map(|s| pat.vars.iter().map(|v| s[*v]).collect())
                        .collect();
                    let set: BTreeSet<Vec<Id>> = got.iter().cloned().collect();
                    assert_eq!(set.len(), got.len(), "{text}: a binding found twice");
                    assert_eq!(set, want, "{text} at {class} in round {round}");
                    matched += want.len();
                }
            }
        }
        assert!(matched > 1_000, "the graphs must give matches: {matched}");
    }
}
