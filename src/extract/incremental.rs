//! Incremental whole-DAG costing for the single-flip local search: the current
//! selection's (class, stage) keys carry reference counts from the roots, so changing
//! one key's node is priced by the part of the DAG it adds (keys whose count rises from
//! zero) and removes (keys whose count drops to zero), not by a whole-DAG pass.
//! A flip that would close a cycle is recognised before it is applied, by a walk from
//! the new node's children that skips every key lower in the DAG than the flipped one
//! (heights of the committed selection). The totals equal `dag::dag_cost` on the same
//! selection (a test checks every flip of generated pairs); a GS producer, whose ALU
//! cost depends on per-emit routing, keeps the whole-DAG evaluation.

use std::collections::BTreeMap;

use egg::{Id, Language};

use super::cost::Cost;
use super::dag::{alu_cost, child_ctx, varying_cost, varying_key, Ctx, Problem, Selection};
use super::VaryingKey;
use crate::egraph::VNode;

/// Dense index of a (canonical class, stage) key.
fn slot(id: Id, ctx: Ctx) -> usize {
    usize::from(id) * 2 + usize::from(ctx == Ctx::C)
}

/// A flip applied by [`Incremental::set`], to take back with [`Incremental::undo`].
pub struct Undo {
    key: (Id, Ctx),
    old: Option<VNode>,
}

/// The selection with reference counts and running totals.
pub struct Incremental<'a> {
    p: &'a Problem<'a>,
    /// The chosen node per key (canonical children), dense.
    choice: Vec<Option<VNode>>,
    /// How many chosen parents (and roots) use each key; > 0: the key is in the DAG.
    refs: Vec<u32>,
    /// Height of each key in the committed DAG (leaves 1); 0 when not in it.
    height: Vec<u32>,
    producer_alu: u128,
    consumer_alu: u128,
    /// How many keys in the DAG read each varying.
    varyings: BTreeMap<VaryingKey, u32>,
    /// Keys in the DAG without a chosen node (the selection is then invalid).
    missing: u32,
    /// The committed selection has a cycle (built from a cyclic selection).
    cyclic: bool,
}

impl<'a> Incremental<'a> {
    /// The counts and totals of `sel` over the problem's roots.
    pub fn new(p: &'a Problem<'a>, sel: &Selection) -> Incremental<'a> {
        let g = p.egraph;
        let n = g
            .classes()
            .map(|c| usize::from(c.id) + 1)
            .max()
            .unwrap_or(0);
        let mut choice = vec![None; n * 2];
        for ((id, ctx), node) in &sel.choice {
            let canon = g.find(*id);
            if let Some(c) = choice.get_mut(slot(canon, *ctx)) {
                *c = Some(node.clone());
            }
        }
        let mut inc = Incremental {
            p,
            choice,
            refs: vec![0; n * 2],
            height: vec![0; n * 2],
            producer_alu: 0,
            consumer_alu: 0,
            varyings: BTreeMap::new(),
            missing: 0,
            cyclic: false,
        };
        for r in &p.roots {
            inc.add_ref(g.find(*r), Ctx::C);
        }
        inc.commit();
        inc
    }

    /// The whole-DAG cost of the current selection (`dag_cost(..).total`).
    pub fn total(&self) -> Cost {
        if self.missing > 0 || self.cyclic {
            return Cost::INFINITE;
        }
        let vars: Vec<VaryingKey> = self.varyings.keys().copied().collect();
        let (vcost, _) = varying_cost(self.p.model, self.p.consumer, &vars);
        let clamp = |x: u128| Cost(x.min(u64::MAX as u128) as u64);
        vcost + clamp(self.producer_alu) + clamp(self.consumer_alu)
    }

    /// The current selection's varyings in packed components (`dag::packed_components`).
    pub fn components(&self) -> u64 {
        let vars: Vec<VaryingKey> = self.varyings.keys().copied().collect();
        super::dag::packed_components(&vars)
    }

    /// Whether `key` is in the DAG of the current selection.
    pub fn in_dag(&self, key: (Id, Ctx)) -> bool {
        self.refs.get(slot(key.0, key.1)).is_some_and(|r| *r > 0)
    }

    /// Makes `node` the choice of `key`. `None` when that would close a cycle in the
    /// DAG (nothing is changed; the whole-DAG cost would be infinite).
    pub fn set(&mut self, key: (Id, Ctx), node: VNode) -> Option<Undo> {
        let k = slot(key.0, key.1);
        if self.in_dag(key) && self.closes_cycle(key, &node) {
            return None;
        }
        let old = self.choice[k].take();
        if self.in_dag(key) {
            if let Some(o) = &old {
                self.unprice(o, key.1);
            } else {
                self.missing -= 1;
            }
            self.price(&node, key.1);
            self.choice[k] = Some(node.clone());
            // Add before removing, so children both nodes use stay in the DAG.
            self.for_children(&node, key.1, Self::add_ref);
            if let Some(o) = &old {
                self.for_children(o, key.1, Self::remove_ref);
            }
        } else {
            self.choice[k] = Some(node);
        }
        Some(Undo { key, old })
    }

    /// Takes back a flip (the last one applied and not committed).
    pub fn undo(&mut self, u: Undo) {
        let (key, k) = (u.key, slot(u.key.0, u.key.1));
        let new = self.choice[k].take();
        if self.in_dag(key) {
            if let Some(n) = &new {
                self.unprice(n, key.1);
            }
            match &u.old {
                Some(o) => self.price(o, key.1),
                None => self.missing += 1,
            }
            self.choice[k] = u.old.clone();
            if let Some(o) = &u.old {
                self.for_children(o, key.1, Self::add_ref);
            }
            if let Some(n) = &new {
                self.for_children(n, key.1, Self::remove_ref);
            }
        } else {
            self.choice[k] = u.old;
        }
    }

    /// Keeps the applied flips: recomputes the heights the cycle test prunes with (and
    /// notes a cycle, possible only in a selection built as cyclic).
    pub fn commit(&mut self) {
        self.height.iter_mut().for_each(|h| *h = 0);
        self.cyclic = false;
        let g = self.p.egraph;
        let roots: Vec<Id> = self.p.roots.iter().map(|r| g.find(*r)).collect();
        // Post-order over an explicit stack; 0 = not seen, u32::MAX = on the stack.
        for r in roots {
            let mut stack = vec![((r, Ctx::C), false)];
            while let Some(((id, ctx), leaving)) = stack.pop() {
                let k = slot(id, ctx);
                if leaving {
                    let h = self.children(k, ctx).map(|c| self.height[c.0]).max();
                    self.height[k] = h.unwrap_or(0).saturating_add(1);
                    continue;
                }
                match self.height[k] {
                    u32::MAX => {
                        self.cyclic = true;
                        continue;
                    }
                    0 => {}
                    _ => continue,
                }
                self.height[k] = u32::MAX;
                stack.push(((id, ctx), true));
                let kids: Vec<(usize, (Id, Ctx))> = self.children(k, ctx).collect();
                for (_, key) in kids.into_iter().rev() {
                    stack.push((key, false));
                }
            }
        }
        if self.cyclic {
            self.height.iter_mut().for_each(|h| *h = 0);
        }
    }

    /// The chosen node's children of dense key `k` in `ctx`, as (dense, key) pairs.
    fn children(&self, k: usize, ctx: Ctx) -> impl Iterator<Item = (usize, (Id, Ctx))> + '_ {
        let g = self.p.egraph;
        let node = self.choice[k].as_ref();
        node.into_iter().flat_map(move |n| {
            n.children().iter().enumerate().map(move |(i, c)| {
                let key = (g.find(*c), child_ctx(n, ctx, i));
                (slot(key.0, key.1), key)
            })
        })
    }

    fn for_children(&mut self, node: &VNode, ctx: Ctx, f: fn(&mut Self, Id, Ctx)) {
        let g = self.p.egraph;
        for (i, c) in node.children().iter().enumerate() {
            f(self, g.find(*c), child_ctx(node, ctx, i));
        }
    }

    /// One more user of `(id, ctx)`; entering the DAG prices it and its children.
    fn add_ref(&mut self, id: Id, ctx: Ctx) {
        let mut stack = vec![(id, ctx)];
        while let Some((id, ctx)) = stack.pop() {
            let k = slot(id, ctx);
            self.refs[k] += 1;
            if self.refs[k] > 1 {
                continue;
            }
            match self.choice[k].clone() {
                Some(node) => {
                    self.price(&node, ctx);
                    let g = self.p.egraph;
                    for (i, c) in node.children().iter().enumerate() {
                        stack.push((g.find(*c), child_ctx(&node, ctx, i)));
                    }
                }
                None => self.missing += 1,
            }
        }
    }

    /// One user fewer; leaving the DAG takes its price and its children's uses back.
    fn remove_ref(&mut self, id: Id, ctx: Ctx) {
        let mut stack = vec![(id, ctx)];
        while let Some((id, ctx)) = stack.pop() {
            let k = slot(id, ctx);
            self.refs[k] -= 1;
            if self.refs[k] > 0 {
                continue;
            }
            match self.choice[k].clone() {
                Some(node) => {
                    self.unprice(&node, ctx);
                    let g = self.p.egraph;
                    for (i, c) in node.children().iter().enumerate() {
                        stack.push((g.find(*c), child_ctx(&node, ctx, i)));
                    }
                }
                None => self.missing -= 1,
            }
        }
    }

    fn own(&self, node: &VNode, ctx: Ctx) -> (u128, Option<VaryingKey>) {
        let c = alu_cost(self.p.model, self.p.consumer.stage(), node, ctx);
        (c.0 as u128, varying_key(self.p.egraph, node))
    }

    fn price(&mut self, node: &VNode, ctx: Ctx) {
        let (c, v) = self.own(node, ctx);
        match ctx {
            Ctx::P => self.producer_alu += c,
            Ctx::C => self.consumer_alu += c,
        }
        if let Some(v) = v {
            *self.varyings.entry(v).or_insert(0) += 1;
        }
    }

    fn unprice(&mut self, node: &VNode, ctx: Ctx) {
        let (c, v) = self.own(node, ctx);
        match ctx {
            Ctx::P => self.producer_alu -= c,
            Ctx::C => self.consumer_alu -= c,
        }
        if let Some(v) = v {
            if let Some(n) = self.varyings.get_mut(&v) {
                *n -= 1;
                if *n == 0 {
                    self.varyings.remove(&v);
                }
            }
        }
    }

    /// Whether choosing `node` for `key` (in the DAG) makes a cycle: some child of
    /// `node` reaches `key`. Keys in the DAG no higher than `key` cannot reach it (a
    /// path down strictly lowers the height), so the walk skips them; keys outside
    /// the DAG are walked through their choices, and a cycle among them counts too
    /// (the whole-DAG cost of such a selection is infinite as well).
    fn closes_cycle(&self, key: (Id, Ctx), node: &VNode) -> bool {
        let g = self.p.egraph;
        let target = slot(key.0, key.1);
        let limit = self.height[target];
        let mut state: BTreeMap<usize, bool> = BTreeMap::new(); // false: on stack, true: done
        let mut stack: Vec<((Id, Ctx), bool)> = node
            .children()
            .iter()
            .enumerate()
            .map(|(i, c)| ((g.find(*c), child_ctx(node, key.1, i)), false))
            .collect();
        while let Some(((id, ctx), leaving)) = stack.pop() {
            let k = slot(id, ctx);
            if leaving {
                state.insert(k, true);
                continue;
            }
            if k == target {
                return true;
            }
            if self.refs[k] > 0 && self.height[k] <= limit {
                continue;
            }
            match state.get(&k) {
                Some(true) => continue,
                Some(false) => return true,
                None => {}
            }
            state.insert(k, false);
            stack.push(((id, ctx), true));
            for (_, child) in self.children(k, ctx) {
                stack.push((child, false));
            }
        }
        false
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::egraph::lower::lower;
    use crate::egraph::{saturate::saturate, Budgets, RuleSet, VAnalysis};
    use crate::extract::dag::{dag_cost, reachable, valid, DagExtractor, Ties};
    use crate::extract::CostModel;
    use crate::ir::Pipeline;

    /// The shipped pairs (examples and file tests) and generated pairs of several stage
    /// pairs and sizes, saturated with the default rules. (A GS producer's per-emit
    /// pricing is not part of these problems: `Problem::new` sets no emit count.)
    pub(crate) fn graphs() -> Vec<(Pipeline, crate::egraph::VGraph, Vec<Id>)> {
        let rules = RuleSet::default_set().rewrites().unwrap();
        let analysis = VAnalysis {
            propagation_limit: Some(12),
            ..Default::default()
        };
        crate::gen::sample_pairs()
            .into_iter()
            .map(|p| {
                let l = lower(&p, analysis.clone(), false);
                let (g, _) = saturate(l.egraph.clone(), &rules, &Budgets::default());
                let roots = l.roots.values().map(|r| g.find(*r)).collect();
                (p, g, roots)
            })
            .collect()
    }

    /// Every single flip of the search's start, priced incrementally, equals the
    /// whole-DAG cost of the flipped selection; improving flips are kept (so later
    /// flips start from changed selections) and the others taken back, after which
    /// the totals agree again.
    #[test]
    fn every_flip_agrees_with_whole_dag_evaluation() {
        let model = CostModel::default();
        let mut flips = 0;
        for (pair, g, roots) in graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let mut sel = crate::extract::dag::greedy_priced(&p, &|n| {
                Some(crate::extract::dag::xfer_estimate(&p, n))
            });
            let mut inc = Incremental::new(&p, &sel);
            let mut cost = dag_cost(&p, &sel).total;
            assert_eq!(inc.total(), cost);
            for key in reachable(&p, &sel) {
                let alts: Vec<VNode> = g[key.0]
                    .nodes
                    .iter()
                    .filter(|n| valid(&g, key.0, n, key.1) && sel.choice.get(&key) != Some(n))
                    .cloned()
                    .collect();
                for alt in alts {
                    flips += 1;
                    let mut flipped = sel.clone();
                    flipped.choice.insert(key, alt.clone());
                    let full = dag_cost(&p, &flipped).total;
                    let Some(undo) = inc.set(key, alt) else {
                        assert_eq!(full, Cost::INFINITE, "a refused flip closes a cycle");
                        continue;
                    };
                    assert_eq!(inc.total(), full, "flip of {key:?}");
                    if full < cost {
                        (sel, cost) = (flipped, full);
                        inc.commit();
                    } else {
                        inc.undo(undo);
                        assert_eq!(inc.total(), cost, "undo of {key:?}");
                    }
                }
            }
        }
        // A floor against a graph set that offers (almost) no alternatives; 396 since
        // integer associativity only regroups (it was 600+ when it enumerated every
        // bracketing of the chains in tests/opt).
        assert!(flips > 300, "the pairs offer alternatives ({flips} flips)");
    }

    /// The incremental local search ends where the whole-DAG one does, with ties
    /// refused and with ties broken by components.
    #[test]
    fn local_search_matches_the_whole_dag_search() {
        let model = CostModel::default();
        for (pair, g, roots) in graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let start = crate::extract::dag::greedy_priced(&p, &|n| {
                Some(crate::extract::dag::xfer_estimate(&p, n))
            });
            let x = DagExtractor::default();
            let fast = x.local_search(&p, start.clone());
            let full = x.local_search_full(&p, start.clone(), Ties::Refused);
            assert_eq!(fast, full);
            let fast = x.polish_components(&p, start.clone());
            let full = x.local_search_full(&p, start, Ties::FewerComponents);
            assert_eq!(fast, full);
        }
    }
}
