//! Exact extraction by branch-and-bound over the same decision space as the DAG cost:
//! one node per needed (class, stage). Keys are decided depth-first from the roots; a
//! partial choice is bounded below by its ALU cost, the cheapest own cost of every key
//! still needed (each needed key is paid exactly once, so the sum is admissible) and
//! the packed-slot cost of the varyings already used plus those that needed keys cannot
//! avoid (the slot cost only grows as varyings are added). The incumbent starts as the
//! global extractor's result, so a run cut short by its time limit is never worse than
//! the fast mode; the outcome says whether optimality was proved.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use egg::{Id, Language};

use super::cost::Cost;
use super::dag::{
    alu_cost, child_ctx, dag_cost, valid, varying_cost, varying_key, Ctx, Extractor, Problem,
    Selection, VaryingKey,
};
use super::global::GlobalExtractor;
use crate::egraph::VNode;

type Key = (Id, Ctx);

/// Branch-and-bound extraction with a time limit.
#[derive(Clone, Copy, Debug)]
pub struct ExactExtractor {
    /// Wall-time limit of the search (the incumbent is returned when it is hit).
    pub time_limit: Duration,
    /// The fast extractor that provides the first incumbent.
    pub start: GlobalExtractor,
}

impl Default for ExactExtractor {
    fn default() -> ExactExtractor {
        ExactExtractor::with_limit(Duration::from_secs(10))
    }
}

/// The result of an exact run.
#[derive(Clone, Debug)]
pub struct ExactOutcome {
    /// The best selection found.
    pub selection: Selection,
    /// Its whole-DAG cost.
    pub cost: Cost,
    /// Whether the search completed, so that no selection is cheaper.
    pub proved_optimal: bool,
    /// Search nodes visited.
    pub nodes: u64,
}

/// One alternative of a key, with what the search needs to know about it.
struct Alt {
    node: VNode,
    own: Cost,
    varying: Option<VaryingKey>,
    kids: Vec<Key>,
}

/// The decision space: deduplicated alternatives, cheapest own cost and unavoidable
/// varying per key.
struct Space {
    alts: BTreeMap<Key, Vec<Alt>>,
    min_own: BTreeMap<Key, Cost>,
    forced: BTreeMap<Key, VaryingKey>,
}

fn build_space(p: &Problem<'_>, incumbent: &Selection) -> Space {
    let g = p.egraph;
    let mut space = Space {
        alts: BTreeMap::new(),
        min_own: BTreeMap::new(),
        forced: BTreeMap::new(),
    };
    for class in g.classes() {
        for ctx in [Ctx::P, Ctx::C] {
            let key = (class.id, ctx);
            let mut seen = BTreeSet::new();
            let mut alts = vec![];
            for node in class.nodes.iter().filter(|n| valid(g, class.id, n, ctx)) {
                let mut kids: Vec<Key> = node
                    .children()
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (g.find(*c), child_ctx(node, ctx, i)))
                    .collect();
                kids.sort();
                kids.dedup();
                if kids.contains(&key) {
                    continue;
                }
                let own = alu_cost(p.model, p.consumer.stage(), node, ctx);
                let varying = varying_key(g, node);
                // Nodes with the same cost, varying and children (a*b and b*a) are
                // interchangeable: keeping one removes symmetric subtrees.
                if !seen.insert((own, varying, kids.clone())) {
                    continue;
                }
                alts.push(Alt {
                    node: node.clone(),
                    own,
                    varying,
                    kids,
                });
            }
            // The incumbent's choice first, then cheap and small ones: good solutions
            // early make the bound bite.
            let first = incumbent.choice.get(&key);
            alts.sort_by_key(|a| (Some(&a.node) != first, a.own, a.kids.len()));
            if let Some(m) = alts.iter().map(|a| a.own).min() {
                space.min_own.insert(key, m);
            }
            let vars: BTreeSet<Option<VaryingKey>> = alts.iter().map(|a| a.varying).collect();
            if let (1, Some(Some(v))) = (vars.len(), vars.first()) {
                space.forced.insert(key, *v);
            }
            space.alts.insert(key, alts);
        }
    }
    space
}

struct Search<'a, 'p> {
    p: &'a Problem<'p>,
    space: &'a Space,
    assign: BTreeMap<Key, usize>,
    todo: BTreeSet<Key>,
    alu: Cost,
    varyings: BTreeMap<VaryingKey, u32>,
    best_cost: Cost,
    best: Option<BTreeMap<Key, usize>>,
    nodes: u64,
    deadline: Instant,
    timed_out: bool,
}

/// One decided key on the search stack: the next alternative to try and what the
/// current one changed.
struct Frame {
    key: Key,
    next: usize,
    undo: Option<Undo>,
}

/// What choosing one alternative added to the search state.
struct Undo {
    own: Cost,
    varying: Option<VaryingKey>,
    added: Vec<Key>,
}

impl Search<'_, '_> {
    fn alts(&self, key: &Key) -> &[Alt] {
        self.space.alts.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    fn lower_bound(&self) -> Cost {
        let mut vars: BTreeSet<VaryingKey> = self.varyings.keys().copied().collect();
        let mut pending = Cost(0);
        for k in &self.todo {
            pending += self.space.min_own.get(k).copied().unwrap_or(Cost::INFINITE);
            vars.extend(self.space.forced.get(k));
        }
        let vars: Vec<VaryingKey> = vars.into_iter().collect();
        self.alu + pending + varying_cost(self.p.model, self.p.consumer, &vars).0
    }

    /// Whether `target` is reachable from `from` through decided keys.
    fn reaches(&self, from: Key, target: Key) -> bool {
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(k) = stack.pop() {
            if k == target {
                return true;
            }
            if !seen.insert(k) {
                continue;
            }
            if let Some(a) = self.assign.get(&k).and_then(|i| self.alts(&k).get(*i)) {
                stack.extend(a.kids.iter().copied());
            }
        }
        false
    }

    /// The undecided key with the fewest alternatives (fail first).
    fn next_key(&self) -> Option<Key> {
        self.todo.iter().copied().min_by_key(|k| self.alts(k).len())
    }

    /// The depth-first search, with an explicit stack of decided keys (one frame per
    /// key, as deep as the selection is large): the same order, bounds and results
    /// as a recursive search, without a stack overflow on large graphs.
    fn run(&mut self) {
        let mut stack: Vec<Frame> = vec![];
        self.visit(&mut stack);
        while !self.timed_out {
            let Some(frame) = stack.last_mut() else {
                return;
            };
            let key = frame.key;
            if let Some(undo) = frame.undo.take() {
                self.undo(key, undo);
            }
            let i = frame.next;
            frame.next += 1;
            let Some(alt) = self.alts(&key).get(i) else {
                stack.pop();
                continue;
            };
            let (own, varying, kids) = (alt.own, alt.varying, alt.kids.clone());
            if kids
                .iter()
                .any(|k| self.assign.contains_key(k) && self.reaches(*k, key))
            {
                continue;
            }
            self.todo.remove(&key);
            self.assign.insert(key, i);
            self.alu += own;
            if let Some(v) = varying {
                *self.varyings.entry(v).or_default() += 1;
            }
            let added: Vec<Key> = kids
                .iter()
                .filter(|k| !self.assign.contains_key(k) && self.todo.insert(**k))
                .copied()
                .collect();
            if let Some(frame) = stack.last_mut() {
                frame.undo = Some(Undo {
                    own,
                    varying,
                    added,
                });
            }
            if self.lower_bound() < self.best_cost {
                self.visit(&mut stack);
            }
        }
    }

    /// One search node: a complete assignment is scored, otherwise the next key to
    /// decide gets a frame.
    fn visit(&mut self, stack: &mut Vec<Frame>) {
        self.nodes += 1;
        // Checked on the first node too, so a spent limit stops at once.
        if self.nodes % 64 == 1 && Instant::now() >= self.deadline {
            self.timed_out = true;
            return;
        }
        match self.next_key() {
            Some(key) => stack.push(Frame {
                key,
                next: 0,
                undo: None,
            }),
            None => {
                let total = self.leaf_cost();
                if total < self.best_cost {
                    self.best_cost = total;
                    self.best = Some(self.assign.clone());
                }
            }
        }
    }

    /// Takes back the alternative a frame tried for `key`.
    fn undo(&mut self, key: Key, undo: Undo) {
        for k in &undo.added {
            self.todo.remove(k);
        }
        if let Some(v) = undo.varying {
            self.release(v);
        }
        self.alu = Cost(self.alu.0.saturating_sub(undo.own.0));
        self.assign.remove(&key);
        self.todo.insert(key);
    }

    /// The cost of a complete assignment: the bound itself (every node paid once),
    /// except for a GS producer, whose work is paid per emit that reaches it — which
    /// only the whole-DAG evaluation knows; the bound stays a lower bound.
    fn leaf_cost(&self) -> Cost {
        if self.p.gs_emits.is_none() {
            return self.lower_bound();
        }
        let mut sel = Selection::default();
        for (key, i) in &self.assign {
            if let Some(a) = self.alts(key).get(*i) {
                sel.choice.insert(*key, a.node.clone());
            }
        }
        dag_cost(self.p, &sel).total
    }

    fn release(&mut self, v: VaryingKey) {
        if let Some(n) = self.varyings.get_mut(&v) {
            *n -= 1;
            if *n == 0 {
                self.varyings.remove(&v);
            }
        }
    }
}

impl ExactExtractor {
    /// An exact extractor with the given time limit.
    pub fn with_limit(time_limit: Duration) -> ExactExtractor {
        ExactExtractor {
            time_limit,
            start: GlobalExtractor::default(),
        }
    }

    /// Runs the branch-and-bound and reports whether it proved optimality.
    pub fn solve(&self, p: &Problem<'_>) -> ExactOutcome {
        // The whole run's deadline, when earlier, bounds the search too.
        let own = Instant::now() + self.time_limit;
        let deadline = p.deadline.map_or(own, |d| d.min(own));
        let incumbent = self.start.extract(p);
        let incumbent_cost = dag_cost(p, &incumbent).total;
        let space = build_space(p, &incumbent);
        let roots: BTreeSet<Key> = p
            .roots
            .iter()
            .map(|r| (p.egraph.find(*r), Ctx::C))
            .collect();
        let mut s = Search {
            p,
            space: &space,
            assign: BTreeMap::new(),
            todo: roots,
            alu: Cost(0),
            varyings: BTreeMap::new(),
            best_cost: incumbent_cost,
            best: None,
            nodes: 0,
            deadline,
            timed_out: false,
        };
        s.run();
        let (timed_out, nodes) = (s.timed_out, s.nodes);
        let mut selection = incumbent;
        if let Some(best) = s.best {
            for (key, i) in best {
                if let Some(a) = space.alts.get(&key).and_then(|v| v.get(i)) {
                    selection.choice.insert(key, a.node.clone());
                }
            }
        }
        let cost = dag_cost(p, &selection).total;
        ExactOutcome {
            selection,
            cost,
            proved_optimal: !timed_out,
            nodes,
        }
    }
}

impl Extractor for ExactExtractor {
    fn extract(&self, p: &Problem<'_>) -> Selection {
        self.solve(p).selection
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::VAnalysis;
    use crate::egraph::VGraph;
    use crate::extract::{CostModel, DagExtractor};
    use crate::ir::{AluOp, Stage, StageInfo};
    use egg::RecExpr;

    const OPS: [&str; 5] = ["fadd", "fmul", "fsub", "fmin", "fmax"];

    /// Five roots `op(x, y)` over two flat inputs, each also available as one flat
    /// varying of `op(x, y)` computed in the producer (flat transfer commutes with
    /// every pure op, so the union is sound).
    fn five_roots() -> (VGraph, Vec<Id>) {
        let mut g = VGraph::new(VAnalysis::default());
        let mut roots = vec![];
        for op in OPS {
            let consumer = format!("({op} (xfer flat in:ATTR0.x) (xfer flat in:ATTR1.x))");
            let producer = format!("(xfer flat ({op} in:ATTR0.x in:ATTR1.x))");
            let a = g.add_expr(&consumer.parse::<RecExpr<VNode>>().unwrap());
            let b = g.add_expr(&producer.parse::<RecExpr<VNode>>().unwrap());
            g.union(a, b);
            roots.push(a);
        }
        g.rebuild();
        let roots = roots.into_iter().map(|r| g.find(r)).collect();
        (g, roots)
    }

    /// Consumer work as cheap as producer work, so only the varyings decide.
    fn model() -> CostModel {
        CostModel {
            weight_fs: 1,
            ..CostModel::amd_gfx10()
        }
    }

    #[test]
    fn exact_finds_the_optimum_where_greedy_and_single_flips_do_not() {
        let (g, roots) = five_roots();
        let model = model();
        let fs = StageInfo::default_for(Stage::Fragment);
        let p = Problem::new(&g, roots, &model, &fs);
        let ops: u64 = OPS
            .iter()
            .map(|o| o.parse::<AluOp>().unwrap().default_cost() as u64)
            .sum();
        let (comp, slot) = (model.flat_component, model.fs_slot);
        // Two shared flat inputs in one vec4, every op in the FS (weight 1).
        let shared = 2 * comp + slot + ops * model.weight_fs;
        // Five flat results: five components need two vec4s; ops in the producer.
        let moved = 5 * comp + 2 * slot + ops * model.weight_producer;
        assert!(shared < moved);
        let greedy = dag_cost(&p, &DagExtractor::default().extract(&p)).total;
        assert_eq!(
            greedy,
            Cost(moved),
            "greedy estimates each use of a varying apart"
        );
        let out = ExactExtractor::with_limit(Duration::from_secs(30)).solve(&p);
        assert!(out.proved_optimal);
        assert_eq!(out.cost, Cost(shared));
        assert_eq!(dag_cost(&p, &out.selection).total, Cost(shared));
        let fast = dag_cost(&p, &GlobalExtractor::default().extract(&p)).total;
        assert_eq!(
            fast,
            Cost(shared),
            "the drop path crosses the one-slot plateau"
        );
    }

    #[test]
    fn exact_agrees_with_enumeration_on_a_small_graph() {
        // Two roots; each class offers two alternatives, so 2^k selections can be
        // enumerated directly and the minimum compared with the branch-and-bound.
        let (g, roots) = five_roots();
        let roots: Vec<Id> = roots.into_iter().take(2).collect();
        let model = CostModel::amd_gfx10();
        let fs = StageInfo::default_for(Stage::Fragment);
        let p = Problem::new(&g, roots.clone(), &model, &fs);
        let base = DagExtractor::default().extract(&p);
        let mut best = Cost::INFINITE;
        for mask in 0..(1u32 << roots.len()) {
            let mut sel = base.clone();
            for (i, r) in roots.iter().enumerate() {
                let want_xfer = mask & (1 << i) != 0;
                let node = g[*r]
                    .nodes
                    .iter()
                    .find(|n| matches!(n, VNode::Xfer(_)) == want_xfer)
                    .unwrap()
                    .clone();
                sel.choice.insert((*r, Ctx::C), node);
                // The producer side of a moved root and the inputs of a computed one.
                for k in g[*r].nodes.iter().flat_map(|n| n.children()) {
                    for ctx in [Ctx::P, Ctx::C] {
                        let key = (g.find(*k), ctx);
                        if let Some(n) = g[key.0].nodes.iter().find(|n| valid(&g, key.0, n, ctx)) {
                            sel.choice.entry(key).or_insert_with(|| n.clone());
                        }
                    }
                }
            }
            best = best.min(dag_cost(&p, &sel).total);
        }
        let out = ExactExtractor::default().solve(&p);
        assert!(out.proved_optimal);
        assert_eq!(out.cost, best);
    }

    #[test]
    fn a_spent_time_limit_keeps_the_fast_result() {
        let (g, roots) = five_roots();
        let model = model();
        let fs = StageInfo::default_for(Stage::Fragment);
        let p = Problem::new(&g, roots, &model, &fs);
        let out = ExactExtractor::with_limit(Duration::ZERO).solve(&p);
        assert!(!out.proved_optimal);
        assert_eq!(out.nodes, 1);
        let fast = dag_cost(&p, &GlobalExtractor::default().extract(&p)).total;
        assert_eq!(out.cost, fast);
        assert_eq!(dag_cost(&p, &out.selection).total, out.cost);
    }
}
