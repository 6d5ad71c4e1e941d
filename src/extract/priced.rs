//! Repeated re-extraction for the global search: the valid alternatives of every
//! (class, stage) are flattened once into arrays (own ALU cost, varying, child keys),
//! so each re-extraction under new varying prices is a tight bottom-up fixed point
//! instead of a walk over the e-graph. Same tie-breaking as the DAG extractor's greedy
//! pass (cost, then term size), hence never cyclic. Selections stay dense (one entry
//! index per key) and are costed on the same arrays (`Table::cost`), so the search
//! builds a `Selection` map only for a result that beats the best so far.

use std::collections::BTreeMap;

use egg::{Id, Language};

use super::cost::Cost;
use super::dag::{
    alu_cost, child_ctx, dag_cost, valid, varying_cost, varying_key, xfer_estimate, Ctx, Problem,
    Selection, VaryingKey,
};
use crate::egraph::VNode;

/// One valid alternative of one key.
struct Entry {
    key: u32,
    node: VNode,
    /// Tree-cost estimate of running it (`Problem::own_estimate`).
    own: Cost,
    /// Its ALU cost as the whole-DAG cost counts it (`alu_cost`).
    alu: Cost,
    /// The varying it reads (index into `Table::varyings`) and its stand-alone price.
    varying: Option<(u32, Cost)>,
    kids: Vec<u32>,
}

/// How a re-extraction treats one varying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Price {
    /// Its stand-alone price.
    Priced,
    /// Already paid for.
    Free,
    /// Unusable.
    Forbidden,
}

/// A selection as one entry index per key (`None`: no choice).
pub(crate) type Dense = Vec<Option<u32>>;

/// The flattened decision space of a problem.
pub(crate) struct Table {
    keys: Vec<(Id, Ctx)>,
    entries: Vec<Entry>,
    /// Every varying some entry reads, sorted.
    varyings: Vec<VaryingKey>,
    /// The keys of the problem's roots (consumer stage).
    roots: Vec<u32>,
    /// Whether whole-DAG costs need the GS per-emit accounting of `dag_cost`.
    gs: bool,
}

impl Table {
    /// Flattens every valid (class, stage, node) of `p`.
    pub(crate) fn new(p: &Problem<'_>) -> Table {
        let g = p.egraph;
        let mut classes: Vec<Id> = g.classes().map(|c| c.id).collect();
        classes.sort();
        // Class ids are dense enough to index directly: two keys per class.
        let slots = classes.last().map_or(0, |c| usize::from(*c) + 1);
        let mut index: Vec<[u32; 2]> = vec![[u32::MAX; 2]; slots];
        let mut keys = vec![];
        for &id in &classes {
            for ctx in [Ctx::P, Ctx::C] {
                index[usize::from(id)][ctx as usize] = keys.len() as u32;
                keys.push((id, ctx));
            }
        }
        let key_of = |id: Id, ctx: Ctx| {
            let k = index[usize::from(g.find(id))][ctx as usize];
            (k != u32::MAX).then_some(k)
        };
        let mut raw = vec![];
        let stage = p.consumer.stage();
        for (k, &(id, ctx)) in keys.iter().enumerate() {
            for node in g[id].nodes.iter().filter(|n| valid(g, id, n, ctx)) {
                let kids: Option<Vec<u32>> = node
                    .children()
                    .iter()
                    .enumerate()
                    .map(|(i, c)| key_of(*c, child_ctx(node, ctx, i)))
                    .collect();
                let Some(kids) = kids else {
                    continue;
                };
                let varying = varying_key(g, node).map(|v| (v, xfer_estimate(p, node)));
                raw.push((k as u32, node.clone(), ctx, varying, kids));
            }
        }
        let mut varyings: Vec<VaryingKey> = raw.iter().filter_map(|r| r.3.map(|v| v.0)).collect();
        varyings.sort();
        varyings.dedup();
        let var_index: BTreeMap<VaryingKey, u32> = varyings
            .iter()
            .enumerate()
            .map(|(i, v)| (*v, i as u32))
            .collect();
        let entries = raw
            .into_iter()
            .map(|(key, node, ctx, varying, kids)| Entry {
                key,
                own: p.own_estimate(&node, ctx),
                alu: alu_cost(p.model, stage, &node, ctx),
                varying: varying.map(|(v, price)| (var_index[&v], price)),
                node,
                kids,
            })
            .collect();
        let roots = p.roots.iter().filter_map(|r| key_of(*r, Ctx::C)).collect();
        Table {
            keys,
            entries,
            varyings,
            roots,
            gs: p.gs_emits.is_some(),
        }
    }

    /// Number of distinct varyings (their indices are `0..count`).
    pub(crate) fn varying_count(&self) -> usize {
        self.varyings.len()
    }

    /// The index of a varying, if some entry reads it.
    pub(crate) fn varying_index(&self, v: &VaryingKey) -> Option<u32> {
        self.varyings.binary_search(v).ok().map(|i| i as u32)
    }

    /// Tree-cost extraction where each varying is priced as `prices` says.
    pub(crate) fn extract(&self, prices: &[Price]) -> Dense {
        let mut best: Vec<Option<((Cost, u64), u32)>> = vec![None; self.keys.len()];
        loop {
            let mut changed = false;
            for (i, e) in self.entries.iter().enumerate() {
                let extra = match e.varying {
                    Some((v, price)) => match prices[v as usize] {
                        Price::Forbidden => continue,
                        Price::Free => Cost(0),
                        Price::Priced => price,
                    },
                    None => Cost(0),
                };
                let mut total = (e.own + extra, 1u64);
                let mut ok = true;
                for k in &e.kids {
                    match best[*k as usize] {
                        Some(((c, n), _)) => total = (total.0 + c, total.1.saturating_add(n)),
                        None => {
                            ok = false;
                            break;
                        }
                    }
                }
                if !ok {
                    continue;
                }
                let slot = &mut best[e.key as usize];
                if slot.is_none_or(|(old, _)| total < old) {
                    *slot = Some((total, i as u32));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        best.into_iter().map(|b| b.map(|(_, i)| i)).collect()
    }

    /// The chosen node per key of a dense selection.
    pub(crate) fn selection(&self, dense: &[Option<u32>]) -> Selection {
        let mut sel = Selection::default();
        for (k, e) in dense.iter().enumerate() {
            if let Some(e) = e {
                let entry = &self.entries[*e as usize];
                sel.choice.insert(self.keys[k], entry.node.clone());
            }
        }
        sel
    }

    /// The whole-DAG cost of a dense selection (as `dag_cost` computes it) and the
    /// varyings it reads, sorted: one walk from the roots over the flattened entries.
    pub(crate) fn cost(&self, p: &Problem<'_>, dense: &[Option<u32>]) -> (Cost, Vec<u32>) {
        if self.gs {
            // GS producer work is priced per emit over the chosen terms: the general
            // evaluator does that.
            let c = dag_cost(p, &self.selection(dense));
            let used = c.varyings.iter().filter_map(|v| self.varying_index(v));
            return (c.total, used.collect());
        }
        // 0 unvisited, 1 on the walk's stack, 2 done.
        let mut state = vec![0u8; self.keys.len()];
        let mut alu = Cost(0);
        let mut used = vec![];
        let mut stack: Vec<(u32, bool)> = self.roots.iter().rev().map(|r| (*r, false)).collect();
        while let Some((k, leaving)) = stack.pop() {
            let s = &mut state[k as usize];
            if leaving {
                *s = 2;
                continue;
            }
            match *s {
                2 => continue,
                1 => return (Cost::INFINITE, used),
                _ => *s = 1,
            }
            let Some(e) = dense[k as usize] else {
                return (Cost::INFINITE, used);
            };
            let e = &self.entries[e as usize];
            alu += e.alu;
            if let Some((v, _)) = e.varying {
                used.push(v);
            }
            stack.push((k, true));
            stack.extend(e.kids.iter().rev().map(|c| (*c, false)));
        }
        used.sort_unstable();
        used.dedup();
        let keys: Vec<VaryingKey> = used.iter().map(|v| self.varyings[*v as usize]).collect();
        let (vcost, _) = varying_cost(p.model, p.consumer, &keys);
        (vcost + alu, used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::lower::lower;
    use crate::egraph::saturate::{saturate, Budgets};
    use crate::egraph::{RuleSet, VAnalysis};
    use crate::extract::CostModel;

    /// The dense walk prices every re-extraction exactly as the general whole-DAG
    /// evaluator prices the same selection, under every pricing of the varyings.
    #[test]
    fn dense_cost_agrees_with_dag_cost() {
        let text = include_str!("../../examples/pairs/vs_fs_shared_inputs.pair");
        let pair = crate::text::parse(text, Some("t.pair")).unwrap();
        let lowered = lower(&pair, VAnalysis::default(), false);
        let rules = RuleSet::default_set().rewrites().unwrap();
        let (g, _) = saturate(lowered.egraph.clone(), &rules, &Budgets::default());
        let model = CostModel::default();
        let roots = lowered.roots.values().map(|r| g.find(*r)).collect();
        let p = Problem::new(&g, roots, &model, &pair.consumer.info);
        let table = Table::new(&p);
        assert!(table.varying_count() >= 2, "the pair has varyings to price");
        for v in 0..=table.varying_count() {
            for price in [Price::Free, Price::Forbidden] {
                let mut prices = vec![Price::Priced; table.varying_count()];
                if let Some(slot) = prices.get_mut(v) {
                    *slot = price;
                }
                let dense = table.extract(&prices);
                let (cost, used) = table.cost(&p, &dense);
                let general = dag_cost(&p, &table.selection(&dense));
                assert_eq!(cost, general.total);
                let keys: Vec<VaryingKey> =
                    used.iter().map(|u| table.varyings[*u as usize]).collect();
                if cost < Cost::INFINITE {
                    assert_eq!(keys, general.varyings);
                }
            }
        }
    }
}
