//! Slot allocation for generated varyings. Each vec4 slot holds one class of values
//! (one type and one qualifier, as GLSL requires of variables sharing a location);
//! `skip` leaves free components behind so the packer has holes to fill. Indirectly
//! indexed arrays take whole slots from the top of the `VARn` range.

use std::collections::BTreeMap;

use super::recipe::{Family, Qual, Ty};
use crate::ir::{Half, IoSlot, Slot};

/// Highest number of non-patch vec4 slots one pair uses (FS reads at most 32).
pub(crate) const MAX_SLOTS: usize = 30;
/// `VARn` below this index hold scalar varyings; the rest hold arrays.
const ARRAY_BASE: u8 = 24;

#[derive(Clone, Copy, Debug)]
struct SlotUse {
    class: (Ty, Qual),
    /// Bit 2c = low half of component c used, bit 2c+1 = high half.
    halves: u8,
}

/// The slots taken so far.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    used: BTreeMap<Slot, SlotUse>,
    next_array: u8,
    /// The consumer is an FS, which cannot read `CLIP_VERTEX`.
    fs_consumer: bool,
}

impl Layout {
    /// An empty layout for a pair whose consumer is an FS or not.
    pub fn new(fs_consumer: bool) -> Layout {
        Layout {
            fs_consumer,
            ..Layout::default()
        }
    }
    fn counted_slots(&self) -> usize {
        let arrays = usize::from(self.next_array);
        arrays + self.used.keys().filter(|s| !s.is_patch()).count()
    }

    /// Takes a component (or half, for 16-bit) for a value of `ty` read with `qual`,
    /// leaving `skip` free positions before it. `None` when the family is full.
    pub fn alloc(
        &mut self,
        family: Family,
        patch: bool,
        ty: Ty,
        qual: Qual,
        skip: u8,
    ) -> Option<IoSlot> {
        let mut skip = skip;
        for slot in candidates(family, patch, ty, self.fs_consumer) {
            // COLn and BFCn are one FS input: one family per n, so that the FS reads
            // each COLn component one way.
            let partner = match slot {
                Slot::Col(n) => Some(Slot::Bfc(n)),
                Slot::Bfc(n) => Some(Slot::Col(n)),
                _ => None,
            };
            if partner.is_some_and(|s| self.used.contains_key(&s)) {
                continue;
            }
            let taken = match self.used.get(&slot) {
                Some(u) if u.class != (ty, qual) => continue,
                Some(u) => u.halves,
                None if !patch && self.counted_slots() >= MAX_SLOTS => continue,
                None => 0,
            };
            for (io, mask) in positions(slot, ty) {
                if taken & mask != 0 {
                    continue;
                }
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let entry = self.used.entry(slot).or_insert(SlotUse {
                    class: (ty, qual),
                    halves: 0,
                });
                entry.halves |= mask;
                return Some(io);
            }
        }
        None
    }

    /// Takes the one-component slot `slot` whole for a value of `ty` read with
    /// `qual`, when nothing holds it yet. `None` when it is taken or the budget is
    /// spent.
    pub fn claim(&mut self, slot: Slot, ty: Ty, qual: Qual) -> Option<IoSlot> {
        let full = !slot.is_patch() && self.counted_slots() >= MAX_SLOTS;
        if full || self.used.contains_key(&slot) {
            return None;
        }
        let class = (ty, qual);
        self.used.insert(
            slot,
            SlotUse {
                class,
                halves: 0xff,
            },
        );
        Some(IoSlot::new(slot, 0))
    }

    /// Takes `len` consecutive `VARn` slots for an indirectly indexed array.
    pub fn alloc_array(&mut self, len: u8) -> Option<Slot> {
        let start = ARRAY_BASE + self.next_array;
        let fits = u32::from(start) + u32::from(len) <= 32;
        if !fits || self.counted_slots() + usize::from(len) > MAX_SLOTS {
            return None;
        }
        self.next_array += len;
        Some(Slot::Var(start))
    }
}

fn candidates(family: Family, patch: bool, ty: Ty, fs_consumer: bool) -> Vec<Slot> {
    if patch {
        return (0..32).map(Slot::Patch).collect();
    }
    let mut out: Vec<Slot> = match (family, ty) {
        (Family::Tex, Ty::F32) => (0..8).map(Slot::Tex).collect(),
        (Family::Col, Ty::F32) => (0..2).map(Slot::Col).collect(),
        (Family::Bfc, Ty::F32) => (0..2).map(Slot::Bfc).collect(),
        // CLIP_VERTEX first when it may be read: its vec4 holds the most values, so
        // the family reaches it as often as it reaches anything.
        (Family::SysVal, _) if !fs_consumer => vec![
            Slot::ClipVertex,
            Slot::ClipDist(false),
            Slot::CullDist(true),
            Slot::Psiz,
            Slot::Layer,
            Slot::Viewport,
        ],
        (Family::SysVal, _) => vec![
            Slot::ClipDist(false),
            Slot::CullDist(true),
            Slot::Psiz,
            Slot::Layer,
            Slot::Viewport,
        ],
        (Family::Fogc, Ty::F32) => vec![Slot::Fogc],
        _ => vec![],
    };
    // A full family spills into VARn rather than dropping the varying.
    out.extend((0..ARRAY_BASE).map(Slot::Var));
    out
}

/// The addresses a value of `ty` may take in `slot`, each with its half mask.
fn positions(slot: Slot, ty: Ty) -> Vec<(IoSlot, u8)> {
    let mut out = vec![];
    for comp in 0..slot.num_components() {
        let lo = 1u8 << (2 * comp);
        let hi = lo << 1;
        match ty {
            Ty::F16 => {
                out.push((IoSlot::half(slot, comp, Half::Lo), lo));
                out.push((IoSlot::half(slot, comp, Half::Hi), hi));
            }
            _ => out.push((IoSlot::new(slot, comp), lo | hi)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_do_not_share_a_slot() {
        let mut l = Layout::default();
        let a = l.alloc(Family::Var, false, Ty::F32, Qual::SMOOTH, 0);
        let b = l.alloc(Family::Var, false, Ty::F32, Qual::Flat, 0);
        let c = l.alloc(Family::Var, false, Ty::F32, Qual::SMOOTH, 0);
        assert_eq!(a, Some(IoSlot::var(0, 0)));
        assert_eq!(b, Some(IoSlot::var(1, 0)));
        assert_eq!(c, Some(IoSlot::var(0, 1)));
    }

    #[test]
    fn halves_and_skips() {
        let mut l = Layout::default();
        let a = l.alloc(Family::Var, false, Ty::F16, Qual::Flat, 0);
        let b = l.alloc(Family::Var, false, Ty::F16, Qual::Flat, 1);
        assert_eq!(a, Some(IoSlot::half(Slot::Var(0), 0, Half::Lo)));
        assert_eq!(b, Some(IoSlot::half(Slot::Var(0), 1, Half::Lo)));
        let fog = l.alloc(Family::Fogc, false, Ty::F32, Qual::Flat, 0);
        assert_eq!(fog, Some(IoSlot::new(Slot::Fogc, 0)));
        // FOGC has one component; the next one falls back to VARn.
        let next = l.alloc(Family::Fogc, false, Ty::F32, Qual::Flat, 0);
        assert_eq!(next, Some(IoSlot::var(1, 0)));
    }

    #[test]
    fn slot_budget_is_enforced() {
        let mut l = Layout::default();
        let mut slots = std::collections::BTreeSet::new();
        while let Some(io) = l.alloc(Family::Var, false, Ty::I32, Qual::Flat, 3) {
            slots.insert(io.slot);
        }
        assert_eq!(slots.len(), usize::from(ARRAY_BASE));
        assert!(l.alloc_array(4).is_some());
        assert!(l.alloc_array(4).is_none(), "24 + 4 + 4 > 30");
        assert!(l.alloc_array(2).is_some());
    }
}
