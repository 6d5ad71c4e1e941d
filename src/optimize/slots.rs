//! Stage 4, slot choice: a provisional slot for every chosen varying (`assign`), dense
//! or as written, whichever touches fewer vec4s.

use std::collections::{BTreeMap, BTreeSet};

use super::lowering::LoweredPair;
use super::saturation::Saturated;
use super::selection::Chosen;
use crate::egraph::lower::{role, Lowered, Role};
use crate::egraph::VGraph;
use crate::error::Error;
use crate::extract::{Ctx, Selection, VaryingKey};
use crate::ir::{IoSlot, Pipeline, Slot};

/// The provisional slot of every chosen varying.
pub(crate) type SlotMap = BTreeMap<VaryingKey, IoSlot>;

/// Gives every chosen varying a slot clear of the slots original stores keep, near
/// the original slot its first load had.
pub(crate) fn assign(
    p: &Pipeline,
    lowered: &LoweredPair,
    saturated: &Saturated,
    chosen: &Chosen<'_>,
) -> Result<SlotMap, Error> {
    let l = &lowered.lowered;
    let occupied = occupied_slots(p, l);
    let hints = slot_hints(l, &saturated.egraph, &chosen.selection);
    choose_slots(l, &chosen.cost.varyings, &occupied, &hints)
}

/// Dense packing, unless keeping the original slots touches fewer vec4s (so the slot
/// count never grows around pinned slots or inputs that mixed qualifiers in a vec4).
fn choose_slots(
    l: &Lowered,
    varyings: &[crate::extract::VaryingKey],
    occupied: &BTreeSet<Slot>,
    hints: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
) -> Result<BTreeMap<crate::extract::VaryingKey, IoSlot>, Error> {
    use super::assign::{assign_slots, keep_original_slots, vec4_count};
    // A hint into a slot an original store keeps (an FS-read CLIP_DIST whose store
    // stays for the rasterizer) would put a second value there: no new varying goes
    // to an occupied slot.
    let hints: BTreeMap<_, _> = hints
        .iter()
        .filter(|(_, io)| !occupied.contains(&io.slot))
        .map(|(k, io)| (*k, *io))
        .collect();
    let hints = &hints;
    let dense = assign_slots(varyings, occupied, hints);
    // Components whose original stores stay (pinned, xfb, system values).
    let taken: BTreeSet<IoSlot> = l
        .stored
        .iter()
        .filter(|io| (l.pins.reason(**io).is_some() && l.needed.contains(io)) || l.xfb.contains(io))
        .copied()
        .collect();
    let kept = keep_original_slots(varyings, hints, &taken);
    match (dense, kept) {
        (Ok(d), Some(k)) if vec4_count(&k, occupied) < vec4_count(&d, occupied) => Ok(k),
        (Ok(d), _) => Ok(d),
        (Err(_), Some(k)) => Ok(k),
        (Err(e), None) => Err(e),
    }
}

/// For each chosen varying, the first original slot whose load became it.
fn slot_hints(
    l: &Lowered,
    g: &VGraph,
    sel: &Selection,
) -> BTreeMap<crate::extract::VaryingKey, IoSlot> {
    let mut loads: Vec<_> = l.loads.iter().collect();
    loads.sort_by_key(|ld| ld.slot);
    let mut hints = BTreeMap::new();
    for ld in loads {
        let node = sel.choice.get(&(g.find(ld.class), Ctx::C));
        if let Some(k) = node.and_then(|n| crate::extract::dag::varying_key(g, n)) {
            hints.entry(k).or_insert(ld.slot);
        }
    }
    hints
}

/// vec4 slots new varyings must avoid: any slot an original store or load keeps.
fn occupied_slots(p: &Pipeline, l: &Lowered) -> BTreeSet<Slot> {
    let consumer = p.consumer.stage();
    let mut out = BTreeSet::new();
    for io in &l.stored {
        let kept = (l.pins.reason(*io).is_some() && l.needed.contains(io))
            || l.xfb.contains(io)
            || matches!(
                role(io.slot, p.producer.stage(), consumer),
                Role::SysVal | Role::TessLevel
            );
        if kept {
            out.insert(io.slot);
        }
    }
    for io in &l.read {
        if l.pins.reason(*io).is_some() {
            out.insert(io.slot);
        }
    }
    out
}
