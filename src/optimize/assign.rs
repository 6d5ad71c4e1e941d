//! Provisional slot assignment for the varyings extraction kept: dense numbering from
//! VAR0 (PATCH0 for patch varyings), one qualifier per vec4, flat apart from
//! interpolated, two 16-bit values per component. The packer replaces this step.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::extract::{VaryingKey, VaryingKind};
use crate::ir::{BitSize, Half, IoSlot, Slot};

/// Which varyings may share a vec4: flat apart from interpolated, fp16 interpolation
/// apart from fp32; qualifiers may mix (AMD flexible interpolation).
fn group(k: &VaryingKey) -> (u8, bool) {
    match k.kind {
        VaryingKind::Flat => (0, false),
        VaryingKind::Interp(_) => (1, k.bits == BitSize::B16),
        VaryingKind::PerVertex => (2, false),
        VaryingKind::Patch => (3, false),
    }
}

/// Gives each varying a slot, skipping vec4 slots in `occupied` (pinned or kept
/// stores). Within a group varyings keep the order of `hints` (an original slot each
/// came from), so an unchanged varying keeps its place. Fails when a family (VAR0-31,
/// PATCH0-31) runs out.
pub fn assign_slots(
    varyings: &[VaryingKey],
    occupied: &BTreeSet<Slot>,
    hints: &BTreeMap<VaryingKey, IoSlot>,
) -> Result<BTreeMap<VaryingKey, IoSlot>, Error> {
    let mut groups: BTreeMap<(u8, bool), Vec<VaryingKey>> = BTreeMap::new();
    for k in varyings {
        groups.entry(group(k)).or_default().push(*k);
    }
    let mut out = BTreeMap::new();
    let (mut next_var, mut next_patch) = (0u32, 0u32);
    for ((family, _), mut list) in groups {
        // 32-bit first so 16-bit halves pair up at the end of the group.
        list.sort_by_key(|k| (k.bits == BitSize::B16, hints.get(k).copied(), *k));
        let patch = family == 3;
        let (base, next) = if patch {
            (Slot::Patch(0), &mut next_patch)
        } else {
            (Slot::Var(0), &mut next_var)
        };
        let mut units = 0u32; // half-components used in the current vec4
        let mut slot = next_free(base, next, occupied)?;
        for k in list {
            let need = if k.bits == BitSize::B16 { 1 } else { 2 };
            if k.bits == BitSize::B32 && units % 2 == 1 {
                units += 1;
            }
            if units + need > 8 {
                *next += 1;
                slot = next_free(base, next, occupied)?;
                units = 0;
            }
            let comp = (units / 2) as u8;
            let half = match (k.bits, units % 2) {
                (BitSize::B16, 0) => Half::Lo,
                (BitSize::B16, _) => Half::Hi,
                _ => Half::Full,
            };
            out.insert(k, IoSlot::half(slot, comp, half));
            units += need;
        }
        *next += 1;
    }
    Ok(out)
}

/// The alternative to dense packing: every varying stays at the original slot it came
/// from (`hints`). Used when dense packing would need more vec4s than the input did,
/// e.g. around pinned slots or where the input mixed qualifiers in one vec4. `None`
/// when a varying has no original slot, two share one, or one is in `taken`.
pub fn keep_original_slots(
    varyings: &[VaryingKey],
    hints: &BTreeMap<VaryingKey, IoSlot>,
    taken: &BTreeSet<IoSlot>,
) -> Option<BTreeMap<VaryingKey, IoSlot>> {
    let mut out = BTreeMap::new();
    let mut used = BTreeSet::new();
    for k in varyings {
        let io = *hints.get(k)?;
        if taken.contains(&io) || !used.insert(io) {
            return None;
        }
        out.insert(*k, io);
    }
    Some(out)
}

/// Number of distinct vec4 slots an assignment touches together with `occupied`.
pub fn vec4_count(a: &BTreeMap<VaryingKey, IoSlot>, occupied: &BTreeSet<Slot>) -> usize {
    let mut all: BTreeSet<Slot> = occupied.clone();
    all.extend(a.values().map(|io| io.slot));
    all.len()
}

fn next_free(base: Slot, next: &mut u32, occupied: &BTreeSet<Slot>) -> Result<Slot, Error> {
    loop {
        let slot = base
            .offset(*next)
            .ok_or_else(|| Error::Limit(format!("more than 32 {base} slots needed")))?;
        if !occupied.contains(&slot) {
            return Ok(slot);
        }
        *next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::InterpMode;
    use egg::Id;

    fn key(kind: VaryingKind, v: usize, bits: BitSize) -> VaryingKey {
        VaryingKey {
            kind,
            value: Id::from(v),
            bits,
        }
    }

    #[test]
    fn dense_with_groups_apart_and_occupied_skipped() {
        let pc = VaryingKind::Interp(InterpMode::PERSP_CENTER);
        let vars = [
            key(VaryingKind::Flat, 0, BitSize::B32),
            key(pc, 1, BitSize::B32),
            key(pc, 2, BitSize::B32),
            key(VaryingKind::Patch, 3, BitSize::B32),
            key(VaryingKind::Flat, 4, BitSize::B16),
            key(VaryingKind::Flat, 5, BitSize::B16),
        ];
        let occupied: BTreeSet<Slot> = [Slot::Var(1)].into();
        let a = assign_slots(&vars, &occupied, &BTreeMap::new()).unwrap();
        assert_eq!(a[&vars[0]], IoSlot::var(0, 0));
        assert_eq!(a[&vars[4]], IoSlot::half(Slot::Var(0), 1, Half::Lo));
        assert_eq!(a[&vars[5]], IoSlot::half(Slot::Var(0), 1, Half::Hi));
        // VAR1 is occupied, so the interpolated group starts at VAR2.
        assert_eq!(a[&vars[1]], IoSlot::var(2, 0));
        assert_eq!(a[&vars[2]], IoSlot::var(2, 1));
        assert_eq!(a[&vars[3]], IoSlot::new(Slot::Patch(0), 0));
    }

    #[test]
    fn keeping_original_slots_needs_distinct_free_origins() {
        let pc = VaryingKind::Interp(InterpMode::PERSP_CENTER);
        let vars = [key(pc, 1, BitSize::B32), key(pc, 2, BitSize::B32)];
        let hints: BTreeMap<VaryingKey, IoSlot> =
            [(vars[0], IoSlot::var(0, 1)), (vars[1], IoSlot::var(4, 0))].into();
        let kept = keep_original_slots(&vars, &hints, &BTreeSet::new()).unwrap();
        assert_eq!(kept[&vars[0]], IoSlot::var(0, 1));
        let occupied: BTreeSet<Slot> = [Slot::Var(0)].into();
        assert_eq!(vec4_count(&kept, &occupied), 2);
        let taken: BTreeSet<IoSlot> = [IoSlot::var(4, 0)].into();
        assert!(keep_original_slots(&vars, &hints, &taken).is_none());
        assert!(keep_original_slots(&vars, &BTreeMap::new(), &BTreeSet::new()).is_none());
    }

    #[test]
    fn running_out_is_an_error() {
        let vars: Vec<VaryingKey> = (0..33 * 4)
            .map(|i| key(VaryingKind::Flat, i, BitSize::B32))
            .collect();
        assert!(matches!(
            assign_slots(&vars, &BTreeSet::new(), &BTreeMap::new()),
            Err(Error::Limit(_))
        ));
    }

    #[test]
    fn hints_keep_the_original_order() {
        let pc = VaryingKind::Interp(InterpMode::PERSP_CENTER);
        let vars = [key(pc, 1, BitSize::B32), key(pc, 2, BitSize::B32)];
        let hints: BTreeMap<VaryingKey, IoSlot> =
            [(vars[0], IoSlot::var(3, 1)), (vars[1], IoSlot::var(3, 0))].into();
        let a = assign_slots(&vars, &BTreeSet::new(), &hints).unwrap();
        assert_eq!(a[&vars[1]], IoSlot::var(0, 0));
        assert_eq!(a[&vars[0]], IoSlot::var(0, 1));
    }
}
