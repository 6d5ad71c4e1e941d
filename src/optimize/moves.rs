//! The per-move report: which cross-stage code motions the extracted solution made.
//! A *backward* move computes consumer work in the producer and sends its result (one
//! new varying replacing the original ones it consumed); a *forward* move lets the
//! consumer recompute an original varying from other transferred values. Each move
//! carries an estimated cost delta: the change of the varyings' model cost when its
//! varyings are swapped in (moves applied in order, each replaced varying charged to
//! the first move that claims it) plus the moved ALU work priced in its new stage
//! minus its old one.

use std::collections::{BTreeMap, BTreeSet};

use egg::{Id, Language};

use crate::egraph::lower::Lowered;
use crate::egraph::{VGraph, VNode};
use crate::extract::dag::{emit_runs, reachable, seed_from, varying_cost, varying_key};
use crate::extract::{Ctx, Problem, Selection, VaryingKey};
use crate::ir::IoSlot;

use super::report::term::term_text;
pub use super::report::{Direction, Move};

/// What the move finder needs from one optimization run.
pub struct MoveInput<'a> {
    /// The lowered pair.
    pub lowered: &'a Lowered,
    /// The saturated e-graph.
    pub egraph: &'a VGraph,
    /// The extracted selection.
    pub selection: &'a Selection,
    /// The extraction problem (roots, cost model).
    pub problem: &'a Problem<'a>,
    /// The slot each chosen varying was given.
    pub slots: &'a BTreeMap<VaryingKey, IoSlot>,
}

/// An original varying: its producer class, its slots as written and how it was read.
struct Original {
    slots: Vec<IoSlot>,
    key: Option<VaryingKey>,
}

fn originals(m: &MoveInput<'_>) -> BTreeMap<Id, Original> {
    let g = m.egraph;
    // Selection priced the as-written seed in this graph already.
    let computed;
    let seed = match &m.problem.seed {
        Some(seed) => seed,
        None => {
            computed = seed_from(g, &m.lowered.original);
            &computed
        }
    };
    let mut out: BTreeMap<Id, Original> = BTreeMap::new();
    for ld in &m.lowered.loads {
        let Some(out_class) = m.lowered.outputs.get(&ld.slot) else {
            continue;
        };
        let node = seed.choice.get(&(g.find(ld.class), Ctx::C));
        let key = node.and_then(|n| varying_key(g, n));
        let entry = out
            .entry(g.find(*out_class))
            .or_insert(Original { slots: vec![], key });
        if !entry.slots.contains(&ld.slot) {
            entry.slots.push(ld.slot);
        }
    }
    out
}

/// Classes a selection reaches from `(root, ctx)`, and the ALU cost delta of running
/// those nodes in `ctx` rather than in the other stage.
fn walk(m: &MoveInput<'_>, root: Id, ctx: Ctx) -> (BTreeSet<Id>, i64, BTreeSet<VaryingKey>) {
    let g = m.egraph;
    let model = m.problem.model;
    let stage = m.problem.consumer.stage();
    let weight = |c: Ctx| match c {
        Ctx::P => model.weight_producer,
        Ctx::C => model.consumer_weight(stage),
    };
    let other = match ctx {
        Ctx::P => Ctx::C,
        Ctx::C => Ctx::P,
    };
    // Work in a GS producer runs at every emit that reaches it: for a backward move,
    // the emits the moved expression's routing reaches; for a forward one, the work
    // the producer did before every emit.
    let gs_runs = m
        .problem
        .gs_emits
        .map(|n| (n, emit_runs(g, m.selection, &[root], n)));
    let runs = |c: Ctx, id: Id| -> i64 {
        match (c, &gs_runs) {
            (Ctx::P, Some((_, r))) if ctx == Ctx::P => {
                r.get(&id).copied().unwrap_or(1).max(1) as i64
            }
            (Ctx::P, Some((n, _))) => (*n).max(1) as i64,
            _ => 1,
        }
    };
    let (mut seen, mut stack) = (BTreeSet::new(), vec![g.find(root)]);
    let (mut delta, mut xfers) = (0i64, BTreeSet::new());
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(node) = m.selection.choice.get(&(id, ctx)) else {
            continue;
        };
        if let Some(k) = varying_key(g, node) {
            xfers.insert(k);
            continue;
        }
        let unit = match node {
            VNode::Alu { op, .. } => Some(model.alu(*op, 1).0 as i64),
            VNode::Op { op, .. } => Some(model.opaque(op) as i64),
            _ => None,
        };
        if let Some(unit) = unit {
            let here = unit * weight(ctx) as i64 * runs(ctx, id);
            delta += here - unit * weight(other) as i64 * runs(other, id);
        }
        stack.extend(node.children().iter().map(|c| g.find(*c)));
    }
    (seen, delta, xfers)
}

fn price(m: &MoveInput<'_>, keys: &BTreeSet<VaryingKey>) -> i64 {
    let keys: Vec<VaryingKey> = keys.iter().copied().collect();
    varying_cost(m.problem.model, m.problem.consumer, &keys)
        .0
         .0 as i64
}

/// A move before pricing: the varyings it adds and removes, and its ALU delta.
struct Pending {
    mv: Move,
    added: Vec<VaryingKey>,
    removed: Vec<VaryingKey>,
    alu: i64,
}

/// The moves the selection made, backward ones first. Their cost deltas are priced in
/// sequence, starting from the original varyings (free ones excluded: they propagate
/// anyway): each move's varying change is priced against the set the earlier moves
/// left, so the deltas add up.
pub fn find_moves(m: &MoveInput<'_>, chosen: &[VaryingKey]) -> Vec<Move> {
    let g = m.egraph;
    let orig = originals(m);
    let carried: BTreeSet<Id> = chosen.iter().map(|k| k.value).collect();
    let mut claimed = BTreeSet::new();
    let mut pending = backward_moves(m, &orig, chosen, &carried, &mut claimed);
    pending.extend(forward_moves(m, &orig, &carried, &mut claimed));
    let mut state: BTreeSet<VaryingKey> = orig
        .values()
        .filter_map(|o| o.key)
        .filter(|k| !g[k.value].data.is_free())
        .collect();
    let mut out = vec![];
    for p in pending {
        let before = price(m, &state);
        for k in &p.removed {
            state.remove(k);
        }
        state.extend(p.added.iter().copied());
        let mut mv = p.mv;
        mv.cost_delta = price(m, &state) - before + p.alu;
        out.push(mv);
    }
    out
}

/// New varyings whose producer expression consumes original ones.
fn backward_moves(
    m: &MoveInput<'_>,
    orig: &BTreeMap<Id, Original>,
    chosen: &[VaryingKey],
    carried: &BTreeSet<Id>,
    claimed: &mut BTreeSet<Id>,
) -> Vec<Pending> {
    let g = m.egraph;
    let mut out = vec![];
    for k in chosen.iter().filter(|k| !orig.contains_key(&k.value)) {
        let (reached, alu, _) = walk(m, k.value, Ctx::P);
        let (mut gone, mut removed) = (vec![], vec![]);
        for (class, o) in orig {
            if reached.contains(class) && !carried.contains(class) {
                gone.push(o);
                if claimed.insert(*class) {
                    removed.extend(o.key);
                }
            }
        }
        if gone.is_empty() {
            continue;
        }
        out.push(Pending {
            mv: Move {
                direction: Direction::Backward,
                expr: term_text(g, m.selection, k.value, Ctx::P, 4),
                replaced: sorted(gone.iter().flat_map(|o| o.slots.iter().copied())),
                via: sorted(m.slots.get(k).copied()),
                cost_delta: 0,
            },
            added: vec![*k],
            removed,
            alu,
        });
    }
    out
}

fn sorted(it: impl IntoIterator<Item = IoSlot>) -> Vec<IoSlot> {
    let set: BTreeSet<IoSlot> = it.into_iter().collect();
    set.into_iter().collect()
}

/// Original varyings no longer transferred whose loads the consumer now computes from
/// other transferred values.
fn forward_moves(
    m: &MoveInput<'_>,
    orig: &BTreeMap<Id, Original>,
    carried: &BTreeSet<Id>,
    claimed: &mut BTreeSet<Id>,
) -> Vec<Pending> {
    let g = m.egraph;
    let live: BTreeSet<(Id, Ctx)> = reachable(m.problem, m.selection).into_iter().collect();
    let mut out = vec![];
    for (class, o) in orig {
        if carried.contains(class) || claimed.contains(class) {
            continue;
        }
        let computed = m.lowered.loads.iter().find_map(|ld| {
            let c = g.find(ld.class);
            let node = m.selection.choice.get(&(c, Ctx::C))?;
            let alu = matches!(node, VNode::Alu { .. } | VNode::Op { .. });
            (o.slots.contains(&ld.slot)
                && live.contains(&(c, Ctx::C))
                && alu
                && !g[c].data.is_free())
            .then_some(c)
        });
        let Some(c) = computed else { continue };
        claimed.insert(*class);
        let (_, alu, xfers) = walk(m, c, Ctx::C);
        out.push(Pending {
            mv: Move {
                direction: Direction::Forward,
                expr: term_text(g, m.selection, c, Ctx::C, 4),
                replaced: o.slots.clone(),
                via: sorted(xfers.iter().filter_map(|k| m.slots.get(k).copied())),
                cost_delta: 0,
            },
            added: xfers.into_iter().collect(),
            removed: o.key.into_iter().collect(),
            alu,
        });
    }
    out
}
