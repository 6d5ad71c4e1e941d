//! Collects what both stages of a pair do with every scalar varying address: producer
//! stores (varying, xfb), TCS read-backs, consumer loads with their qualifiers, and the
//! components that must not move (indirectly indexed arrays, mixed-width accesses).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Half, Indirect, InstKind, InterpMode, IoSlot, Pipeline, Slot, Stage};

/// How the consumer reads a varying (before flexible-interpolation normalization).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Qual {
    /// Any interpolation mode (used when modes may share a vec4).
    AnyInterp,
    /// `load_interpolated_input` with this mode.
    Interp(InterpMode),
    /// `load_input` / `load_per_vertex_input`: no interpolation.
    Flat,
}

/// Everything the pair does with one scalar address, through direct accesses.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    /// Producer stores that feed the consumer (not `no_varying`).
    pub varying_stores: u32,
    /// Producer stores of any kind.
    pub stores: u32,
    /// Some store is captured by transform feedback.
    pub xfb: bool,
    /// The producer reads the output back (TCS `load_output`).
    pub readback: bool,
    /// Qualifiers of the consumer's loads; empty when the consumer never reads it.
    pub quals: BTreeSet<Qual>,
    /// FS front colours only: varying stores of the back colour, which two-sided
    /// selection returns to this address's loads on back faces.
    pub back_stores: u32,
}

impl Access {
    /// Whether a value crosses to the consumer through this address.
    pub fn live(&self) -> bool {
        (self.varying_stores > 0 || self.back_stores > 0) && !self.quals.is_empty()
    }
}

/// A vec4 component: slot and component index.
pub(crate) type Comp = (Slot, u8);

/// The pair's varying usage.
#[derive(Clone, Debug, Default)]
pub(crate) struct Varyings {
    /// Direct accesses per scalar address.
    pub access: BTreeMap<IoSlot, Access>,
    /// Components that keep their place (indirect arrays, mixed 16/32-bit access).
    pub fixed: BTreeSet<Comp>,
    /// Consumer load qualifiers per component, including indirect loads over their range.
    pub comp_quals: BTreeMap<Comp, BTreeSet<Qual>>,
    /// Components accessed as 16-bit halves somewhere.
    pub comp_half: BTreeSet<Comp>,
}

impl Varyings {
    /// Scans both shaders of the pair.
    pub fn collect(p: &Pipeline) -> Varyings {
        let mut v = Varyings::default();
        let mut full = BTreeSet::new();
        let mut note_width = |s: IoSlot, half: &mut BTreeSet<Comp>| {
            if s.half == Half::Full {
                full.insert((s.slot, s.comp));
            } else {
                half.insert((s.slot, s.comp));
            }
        };
        p.producer.for_each_inst(|inst| {
            if let Some(s) = v.producer_access(&inst.kind) {
                note_width(s, &mut v.comp_half);
            }
        });
        let fs = p.consumer.stage() == Stage::Fragment;
        p.consumer.for_each_inst(|inst| {
            if let Some(s) = v.consumer_access(&inst.kind, fs) {
                note_width(s, &mut v.comp_half);
            }
        });
        let mixed: Vec<Comp> = v.comp_half.intersection(&full).copied().collect();
        v.fixed.extend(mixed);
        if fs {
            v.share_colour_reads();
        }
        v
    }

    /// With two-sided lighting an FS read of COLn may return BFCn, so a stored back
    /// colour is live whenever its front colour is read (and is packed with it), and
    /// a read front colour is live whenever its back colour is stored.
    fn share_colour_reads(&mut self) {
        let reads: Vec<(IoSlot, BTreeSet<Qual>)> = self
            .access
            .iter()
            .filter_map(|(s, a)| match s.slot {
                Slot::Col(n) if !a.quals.is_empty() => Some((
                    IoSlot {
                        slot: Slot::Bfc(n),
                        ..*s
                    },
                    a.quals.clone(),
                )),
                _ => None,
            })
            .collect();
        for (back, quals) in reads {
            let Some(a) = self.access.get_mut(&back) else {
                continue;
            };
            a.quals.extend(quals);
            let stores = a.varying_stores;
            let front = IoSlot {
                slot: match back.slot {
                    Slot::Bfc(n) => Slot::Col(n),
                    s => s,
                },
                ..back
            };
            if let Some(f) = self.access.get_mut(&front) {
                f.back_stores = stores;
            }
        }
    }

    /// Whether an address keeps its place because its component is fixed.
    pub fn is_fixed(&self, s: IoSlot) -> bool {
        self.fixed.contains(&(s.slot, s.comp))
    }

    fn fix_range(&mut self, s: IoSlot, ind: &Indirect, qual: Option<Qual>) {
        for i in 0..u32::from(ind.len) {
            if let Some(slot) = s.slot.offset(i) {
                self.fixed.insert((slot, s.comp));
                if let Some(q) = qual {
                    self.comp_quals.entry((slot, s.comp)).or_default().insert(q);
                }
            }
        }
    }

    fn producer_access(&mut self, kind: &InstKind) -> Option<IoSlot> {
        let (slot, indirect, varying, xfb) = match kind {
            InstKind::StoreOutput {
                slot,
                indirect,
                xfb,
                no_varying,
                ..
            } => (*slot, indirect, !no_varying, xfb.is_some()),
            InstKind::StorePerVertexOutput { slot, indirect, .. } => (*slot, indirect, true, false),
            InstKind::LoadOutput { slot, indirect, .. } => {
                if let Some(ind) = indirect {
                    self.fix_range(*slot, ind, None);
                } else {
                    self.access.entry(*slot).or_default().readback = true;
                }
                return slot.slot.is_varying().then_some(*slot);
            }
            _ => return None,
        };
        if !slot.slot.is_varying() {
            return None;
        }
        if let Some(ind) = indirect {
            self.fix_range(slot, ind, None);
        } else {
            let a = self.access.entry(slot).or_default();
            a.stores += 1;
            a.varying_stores += u32::from(varying);
            a.xfb |= xfb;
        }
        Some(slot)
    }

    fn consumer_access(&mut self, kind: &InstKind, fs: bool) -> Option<IoSlot> {
        let (slot, indirect, qual) = match kind {
            InstKind::LoadInput { slot, indirect } => (*slot, indirect, Qual::Flat),
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                indirect,
                ..
            } if fs => (*slot, indirect, Qual::Interp(*mode)),
            InstKind::LoadPerVertexInput { slot, indirect, .. } => (*slot, indirect, Qual::Flat),
            _ => return None,
        };
        if !slot.slot.is_varying() {
            return None;
        }
        if let Some(ind) = indirect {
            self.fix_range(slot, ind, Some(qual));
        } else {
            self.access.entry(slot).or_default().quals.insert(qual);
            self.comp_quals
                .entry((slot.slot, slot.comp))
                .or_default()
                .insert(qual);
        }
        Some(slot)
    }
}
