//! Repeated re-extraction for the global search: the valid alternatives of every
//! (class, stage) are flattened once into arrays (own ALU cost, varying, child keys,
//! and the reverse indexes `super::reprice` walks), so a re-extraction under new
//! varying prices is a tight bottom-up fixed point instead of a walk over the e-graph.
//! Values are tree costs ordered by (cost, term size), hence a chosen entry's
//! children are strictly cheaper than its key and the choice is never cyclic. Same
//! passes and tie-breaking as the DAG extractor's greedy pass: among entries of least
//! value a key keeps the one that reached it first (pass, then entry index). That
//! moment is a function of the children's (`Table::best_entry`), so `super::reprice`
//! maintains it incrementally and reaches the full pass's very table. Selections stay
//! dense (one entry index per key) and are costed on the same arrays (`Table::cost`),
//! so the search builds a `Selection` map only for a result that beats the best so far.

use std::collections::BTreeMap;

use egg::{Id, Language};

use super::cost::Cost;
use super::dag::{
    alu_cost, child_ctx, dag_cost, valid, varying_cost, varying_key, xfer_estimate, Ctx, Problem,
    Selection, VaryingKey, VaryingKind,
};
use crate::egraph::VNode;
use crate::ir::InterpMode;

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

/// A key's tree-cost value: (cost, term size), compared in that order.
pub(crate) type Value = (Cost, u64);

/// Per key, what the full pass ends with: the least value, the pass (from 1) in which
/// it was reached and the entry that reached it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Best {
    /// The key's least value.
    pub(crate) value: Value,
    /// The pass of the full fixed point that first reached it.
    pub(crate) pass: u32,
    /// The entry that reached it then.
    pub(crate) entry: u32,
}

/// Lists of `u32` per index, flattened (compressed rows).
pub(crate) struct Rows {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Rows {
    /// Rows `0..n` holding the items of `pairs` (row, item), in the pairs' order.
    fn new(n: usize, pairs: &[(u32, u32)]) -> Rows {
        let mut start = vec![0u32; n + 1];
        for (r, _) in pairs {
            start[*r as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0; pairs.len()];
        for (r, x) in pairs {
            items[fill[*r as usize] as usize] = *x;
            fill[*r as usize] += 1;
        }
        Rows { start, items }
    }

    /// The items of row `r`.
    pub(crate) fn row(&self, r: u32) -> &[u32] {
        &self.items[self.start[r as usize] as usize..self.start[r as usize + 1] as usize]
    }
}

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
    /// Each key's entries are `key_start[k]..key_start[k + 1]` (entries are in key
    /// order).
    key_start: Vec<u32>,
    /// Per key: the entries with it among their children (each entry once), in
    /// entry order.
    users: Rows,
    /// Per varying: the entries that read it, in entry order.
    readers: Rows,
    /// Per varying: the index of its interpolation qualifier among those of the
    /// table's varyings (`None`: not interpolated).
    qualifiers: Vec<Option<u32>>,
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
        let entries: Vec<Entry> = raw
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
        let mut key_start = vec![0u32; keys.len() + 1];
        for e in &entries {
            key_start[e.key as usize + 1] += 1;
        }
        for k in 0..keys.len() {
            key_start[k + 1] += key_start[k];
        }
        let mut uses = vec![];
        let mut reads = vec![];
        for (i, e) in entries.iter().enumerate() {
            let mut kids = e.kids.clone();
            kids.sort_unstable();
            kids.dedup();
            uses.extend(kids.into_iter().map(|k| (k, i as u32)));
            if let Some((v, _)) = e.varying {
                reads.push((v, i as u32));
            }
        }
        Table {
            qualifiers: qualifier_indices(&varyings),
            users: Rows::new(keys.len(), &uses),
            readers: Rows::new(varyings.len(), &reads),
            key_start,
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

    /// Number of (class, stage) keys (their indices are `0..count`).
    pub(crate) fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// The key an entry belongs to.
    pub(crate) fn key_of_entry(&self, e: u32) -> u32 {
        self.entries[e as usize].key
    }

    /// The entries with key `k` among their children.
    pub(crate) fn users(&self, k: u32) -> &[u32] {
        self.users.row(k)
    }

    /// The entries that read varying `v`.
    pub(crate) fn readers(&self, v: u32) -> &[u32] {
        self.readers.row(v)
    }

    /// The keys of the problem's roots.
    pub(crate) fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// Whether whole-DAG costs need the GS per-emit accounting, which only the
    /// general evaluator does (`Table::cost` hands them over to it).
    pub(crate) fn prices_emits(&self) -> bool {
        self.gs
    }

    /// The child keys of entry `e`, in operand order.
    pub(crate) fn kids(&self, e: u32) -> &[u32] {
        &self.entries[e as usize].kids
    }

    /// Entry `e`'s ALU cost as the whole-DAG cost counts it.
    pub(crate) fn alu(&self, e: u32) -> Cost {
        self.entries[e as usize].alu
    }

    /// The varying entry `e` reads, if any.
    pub(crate) fn reads(&self, e: u32) -> Option<u32> {
        self.entries[e as usize].varying.map(|(v, _)| v)
    }

    /// Varying `v`'s key.
    pub(crate) fn varying(&self, v: u32) -> &VaryingKey {
        &self.varyings[v as usize]
    }

    /// The index of varying `v`'s interpolation qualifier (`None`: not interpolated);
    /// indices are `0..qualifier_count()`.
    pub(crate) fn qualifier(&self, v: u32) -> Option<u32> {
        self.qualifiers[v as usize]
    }

    /// Number of distinct interpolation qualifiers among the varyings.
    pub(crate) fn qualifier_count(&self) -> usize {
        self.qualifiers
            .iter()
            .flatten()
            .map(|q| *q as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// The value of entry `e` under `prices` given its children's `values`; `None`
    /// when it is forbidden or a child has no value.
    fn entry_value(&self, e: &Entry, prices: &[Price], best: &[Option<Best>]) -> Option<Value> {
        let extra = match e.varying {
            Some((v, price)) => match prices[v as usize] {
                Price::Forbidden => return None,
                Price::Free => Cost(0),
                Price::Priced => price,
            },
            None => Cost(0),
        };
        let mut total = (e.own + extra, 1u64);
        for k in &e.kids {
            let (c, n) = best[*k as usize]?.value;
            total = (total.0 + c, total.1.saturating_add(n));
        }
        Some(total)
    }

    /// Key `k`'s state at the end of the full pass given its children's (`best`):
    /// its least entry value, and of the entries that have it the one the full pass
    /// meets first. Entry `i` reaches its value in the first pass where it sees every
    /// child's final value: a child settled in pass `q` by an entry before `i` is seen
    /// in pass `q` already, one settled by a later entry only in pass `q + 1`.
    pub(crate) fn best_entry(
        &self,
        k: u32,
        prices: &[Price],
        best: &[Option<Best>],
    ) -> Option<Best> {
        let range = self.key_start[k as usize]..self.key_start[k as usize + 1];
        let mut found: Option<Best> = None;
        for i in range {
            let e = &self.entries[i as usize];
            let Some(value) = self.entry_value(e, prices, best) else {
                continue;
            };
            // Every child has a value here (`entry_value` checked).
            let pass = e
                .kids
                .iter()
                .filter_map(|c| best[*c as usize])
                .map(|b| b.pass + u32::from(b.entry > i))
                .fold(1, u32::max);
            if found.is_none_or(|f| (value, pass) < (f.value, f.pass)) {
                found = Some(Best {
                    value,
                    pass,
                    entry: i,
                });
            }
        }
        found
    }

    /// Tree-cost extraction where each varying is priced as `prices` says: the full
    /// fixed point, the reference `super::reprice` is checked against.
    pub(crate) fn extract(&self, prices: &[Price]) -> Dense {
        self.extract_best(prices)
            .into_iter()
            .map(|b| b.map(|b| b.entry))
            .collect()
    }

    /// [`Table::extract`] with each key's value and the pass that reached it.
    /// Passes visit the entries in order and see the values set earlier in the same
    /// pass; a key changes only to a strictly smaller value.
    pub(crate) fn extract_best(&self, prices: &[Price]) -> Vec<Option<Best>> {
        let mut best: Vec<Option<Best>> = vec![None; self.keys.len()];
        let mut pass = 1;
        loop {
            let mut changed = false;
            for (i, e) in self.entries.iter().enumerate() {
                let Some(value) = self.entry_value(e, prices, &best) else {
                    continue;
                };
                let slot = &mut best[e.key as usize];
                if slot.is_none_or(|old| value < old.value) {
                    *slot = Some(Best {
                        value,
                        pass,
                        entry: i as u32,
                    });
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            pass += 1;
        }
        best
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

/// Per varying, the index of its interpolation qualifier among the distinct ones
/// of `varyings` (in qualifier order).
fn qualifier_indices(varyings: &[VaryingKey]) -> Vec<Option<u32>> {
    let qualifier = |v: &VaryingKey| match v.kind {
        VaryingKind::Interp(m) => Some(m),
        _ => None,
    };
    let mut distinct: Vec<InterpMode> = varyings.iter().filter_map(qualifier).collect();
    distinct.sort();
    distinct.dedup();
    varyings
        .iter()
        .map(|v| {
            let m = qualifier(v)?;
            distinct.binary_search(&m).ok().map(|i| i as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::lower::lower;
    use crate::egraph::saturate::{saturate, Budgets};
    use crate::egraph::{RuleSet, VAnalysis};
    use crate::extract::CostModel;

    /// With every varying at its stand-alone price the table's pass is the DAG
    /// extractor's greedy pass over the e-graph: the global search takes its starts
    /// from the table instead.
    #[test]
    fn all_priced_is_the_greedy_pass() {
        let model = CostModel::default();
        for (pair, g, roots) in crate::extract::incremental::tests::graphs() {
            let p = Problem::new(&g, roots, &model, &pair.consumer.info);
            let t = Table::new(&p);
            let dense = t.extract(&vec![Price::Priced; t.varying_count()]);
            let greedy = crate::extract::dag::greedy_priced(&p, &|n| {
                Some(crate::extract::dag::xfer_estimate(&p, n))
            });
            assert_eq!(t.selection(&dense), greedy);
        }
    }

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
