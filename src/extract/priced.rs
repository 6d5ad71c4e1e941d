//! Repeated re-extraction for the global search: the valid alternatives of every
//! (class, stage) are flattened once into arrays (own ALU cost, varying, child slots),
//! so each re-extraction under new varying prices is a tight bottom-up fixed point
//! instead of a walk over the e-graph. Same tie-breaking as the DAG extractor's greedy
//! pass (cost, then term size), hence never cyclic.

use std::collections::{BTreeMap, BTreeSet};

use egg::{Id, Language};

use super::cost::Cost;
use super::dag::{
    child_ctx, valid, varying_key, xfer_estimate, Ctx, Problem, Selection, VaryingKey,
};
use crate::egraph::VNode;

/// One valid alternative of one key.
struct Entry {
    key: usize,
    node: VNode,
    own: Cost,
    /// The varying it reads and that varying's stand-alone price.
    varying: Option<(VaryingKey, Cost)>,
    kids: Vec<usize>,
}

/// The flattened decision space of a problem.
pub(crate) struct Table {
    keys: Vec<(Id, Ctx)>,
    entries: Vec<Entry>,
}

impl Table {
    /// Flattens every valid (class, stage, node) of `p`.
    pub(crate) fn new(p: &Problem<'_>) -> Table {
        let g = p.egraph;
        let mut classes: Vec<Id> = g.classes().map(|c| c.id).collect();
        classes.sort();
        let mut index = BTreeMap::new();
        let mut keys = vec![];
        for &id in &classes {
            for ctx in [Ctx::P, Ctx::C] {
                index.insert((id, ctx), keys.len());
                keys.push((id, ctx));
            }
        }
        let mut entries = vec![];
        for (k, &(id, ctx)) in keys.iter().enumerate() {
            for node in g[id].nodes.iter().filter(|n| valid(g, id, n, ctx)) {
                let kids: Option<Vec<usize>> = node
                    .children()
                    .iter()
                    .enumerate()
                    .map(|(i, c)| index.get(&(g.find(*c), child_ctx(node, ctx, i))).copied())
                    .collect();
                let Some(kids) = kids else {
                    continue;
                };
                entries.push(Entry {
                    key: k,
                    node: node.clone(),
                    own: p.own_estimate(node, ctx),
                    varying: varying_key(g, node).map(|v| (v, xfer_estimate(p, node))),
                    kids,
                });
            }
        }
        Table { keys, entries }
    }

    /// Every varying some alternative reads.
    pub(crate) fn candidates(&self) -> BTreeSet<VaryingKey> {
        self.entries
            .iter()
            .filter_map(|e| e.varying.map(|(v, _)| v))
            .collect()
    }

    /// Tree-cost extraction where `free` varyings cost nothing, `forbidden` ones cannot
    /// be used and the others carry their stand-alone price.
    pub(crate) fn extract(
        &self,
        free: &BTreeSet<VaryingKey>,
        forbidden: &BTreeSet<VaryingKey>,
    ) -> Selection {
        let mut best: Vec<Option<((Cost, u64), usize)>> = vec![None; self.keys.len()];
        loop {
            let mut changed = false;
            for (i, e) in self.entries.iter().enumerate() {
                let extra = match e.varying {
                    Some((v, _)) if forbidden.contains(&v) => continue,
                    Some((v, _)) if free.contains(&v) => Cost(0),
                    Some((_, price)) => price,
                    None => Cost(0),
                };
                let mut total = (e.own + extra, 1u64);
                let mut ok = true;
                for k in &e.kids {
                    match best.get(*k).copied().flatten() {
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
                if let Some(slot) = best.get_mut(e.key) {
                    if slot.is_none_or(|(old, _)| total < old) {
                        *slot = Some((total, i));
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut sel = Selection::default();
        for (k, b) in best.iter().enumerate() {
            if let (Some((_, i)), Some(key)) = (b, self.keys.get(k)) {
                if let Some(e) = self.entries.get(*i) {
                    sel.choice.insert(*key, e.node.clone());
                }
            }
        }
        sel
    }
}
