//! The report's per-varying part: the fate of every original varying component under
//! the chosen selection and slots, and the varyings a code motion replaced.

use std::collections::{BTreeMap, BTreeSet};

use egg::Id;

use super::lowering::LoweredPair;
use super::moves::{find_moves, MoveInput};
use super::report::term::term_text;
use super::report::{Fate, Move, VaryingReport};
use super::saturation::Saturated;
use super::selection::Chosen;
use super::slots::SlotMap;
use crate::egraph::lower::{role, Lowered, Role};
use crate::egraph::{VGraph, VNode};
use crate::extract::dag::reachable;
use crate::extract::{Ctx, Problem, Selection};
use crate::ir::{IoSlot, Pipeline, Slot};

/// The report's account of a round that emitted: per original varying its fate, and
/// the code motions made.
#[derive(Default)]
pub(crate) struct Account {
    /// Per original varying component, sorted by slot.
    pub varyings: Vec<VaryingReport>,
    /// The cross-stage code motions.
    pub moves: Vec<Move>,
}

/// The fates of the original varyings and the moves the emitted selection makes.
pub(crate) fn account(
    p: &Pipeline,
    lowered: &LoweredPair,
    saturated: &Saturated,
    chosen: &Chosen<'_>,
    slots: &SlotMap,
) -> Account {
    let (l, g, sel, prob) = (
        &lowered.lowered,
        &saturated.egraph,
        &chosen.selection,
        &chosen.problem,
    );
    let varyings = fates(p, l, g, sel, prob, slots);
    let input = MoveInput {
        lowered: l,
        egraph: g,
        selection: sel,
        problem: prob,
        slots,
    };
    let moves = find_moves(&input, &chosen.cost.varyings);
    let mut account = Account { varyings, moves };
    mark_moved(&mut account);
    account
}

/// Varyings a move replaced are reported as moved rather than unused / propagated.
fn mark_moved(report: &mut Account) {
    for v in &mut report.varyings {
        let by = report.moves.iter().find(|m| m.replaced.contains(&v.slot));
        let replaceable = matches!(v.fate, Fate::Removed(_) | Fate::Propagated(_));
        if let (Some(m), true) = (by, replaceable) {
            v.fate = Fate::Moved(m.direction);
        }
    }
}

fn fates(
    p: &Pipeline,
    l: &Lowered,
    g: &VGraph,
    sel: &Selection,
    prob: &Problem<'_>,
    slots: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
) -> Vec<VaryingReport> {
    let consumer = p.consumer.stage();
    let live: BTreeSet<(Id, Ctx)> = reachable(prob, sel).into_iter().collect();
    let mut owners: BTreeMap<IoSlot, IoSlot> = BTreeMap::new();
    let all: BTreeSet<IoSlot> = l.stored.iter().chain(l.read.iter()).copied().collect();
    let mut out = vec![];
    for io in all {
        let r = role(io.slot, p.producer.stage(), consumer);
        if r == Role::NotVarying {
            continue;
        }
        let fate = if matches!(r, Role::SysVal | Role::TessLevel)
            && l.stored.contains(&io)
            && !l.read.contains(&io)
        {
            Fate::NoVarying("not read by the consumer".into())
        } else if l.stored.contains(&io) && !l.needed.contains(&io) {
            if l.xfb.contains(&io) {
                Fate::NoVarying("transform feedback only".into())
            } else {
                Fate::Removed("not read by the consumer".into())
            }
        } else if let Some(why) = l.pins.reason(io) {
            Fate::Pinned(why.to_string())
        } else {
            load_fate(l, g, sel, &live, slots, &mut owners, io)
        };
        out.push(VaryingReport { slot: io, fate });
    }
    out
}

/// Whether the producer stores `io`, or for a front colour its back colour (which
/// two-sided selection returns to the read).
fn stored_or_back(l: &Lowered, io: IoSlot) -> bool {
    let back = match io.slot {
        Slot::Col(n) => Some(IoSlot {
            slot: Slot::Bfc(n),
            ..io
        }),
        _ => None,
    };
    l.stored.contains(&io) || back.is_some_and(|b| l.stored.contains(&b))
}

fn load_fate(
    l: &Lowered,
    g: &VGraph,
    sel: &Selection,
    live: &BTreeSet<(Id, Ctx)>,
    slots: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
    owners: &mut BTreeMap<IoSlot, IoSlot>,
    io: IoSlot,
) -> Fate {
    let mut best: Option<Fate> = None;
    for load in l.loads.iter().filter(|ld| ld.slot == io) {
        let key = (g.find(load.class), Ctx::C);
        let fate = match sel.choice.get(&key) {
            _ if !live.contains(&key) => Fate::Removed("its value is not used".into()),
            Some(node @ VNode::Xfer(_)) => {
                match crate::extract::dag::varying_key(g, node).and_then(|k| slots.get(&k)) {
                    Some(new) => {
                        let owner = *owners.entry(*new).or_insert(io);
                        if owner == io {
                            Fate::Kept(*new)
                        } else {
                            Fate::MergedInto {
                                slot: *new,
                                with: owner,
                            }
                        }
                    }
                    None => Fate::Removed("no slot".into()),
                }
            }
            _ if !stored_or_back(l, io) => Fate::Propagated(format!(
                "{} (never written)",
                term_text(g, sel, load.class, Ctx::C, 3)
            )),
            _ => Fate::Propagated(term_text(g, sel, load.class, Ctx::C, 3)),
        };
        let rank = |f: &Fate| match f {
            Fate::Kept(_) | Fate::MergedInto { .. } => 0,
            Fate::Propagated(_) => 1,
            _ => 2,
        };
        if best.as_ref().is_none_or(|b| rank(&fate) < rank(b)) {
            best = Some(fate);
        }
    }
    best.unwrap_or_else(|| Fate::Removed("not read by the consumer".into()))
}
