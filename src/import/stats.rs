//! Varying statistics of a pair: components and vec4 slots the producer declares
//! (stores), and what remains once outputs the consumer never reads are dropped.
//! The column after full optimization is filled by the optimizer's caller.

use std::collections::BTreeSet;

use crate::ir::{Indirect, InstKind, IoSlot, Shader, Slot, SlotClass};
use crate::Pipeline;

/// Varying counts of one pair.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Scalar components the producer stores to generic, patch, texture and colour slots.
    pub declared_components: usize,
    /// vec4 slots those components occupy.
    pub declared_slots: usize,
    /// Components left when outputs that nothing reads (and no xfb captures) go.
    pub live_components: usize,
    /// vec4 slots those occupy.
    pub live_slots: usize,
}

/// Whether a slot carries an optimizable varying (not a position, clip distance or
/// other fixed-function output, nor a tessellation level).
fn counted(slot: Slot) -> bool {
    matches!(
        slot.class(),
        SlotClass::Generic | SlotClass::Patch | SlotClass::Tex | SlotClass::Color
    )
}

/// Every (slot, component) an access may touch: the base, or the whole indirect range.
fn touched(io: IoSlot, ind: &Option<Indirect>) -> Vec<(Slot, u8)> {
    match ind {
        None => vec![(io.slot, io.comp)],
        Some(i) => (0..i.len as u32)
            .filter_map(|k| io.slot.offset(k))
            .map(|s| (s, io.comp))
            .collect(),
    }
}

fn stores(s: &Shader) -> BTreeSet<(Slot, u8, bool)> {
    let mut out = BTreeSet::new();
    s.for_each_inst(|i| match &i.kind {
        InstKind::StoreOutput {
            slot,
            indirect,
            xfb,
            ..
        } => {
            out.extend(
                touched(*slot, indirect)
                    .into_iter()
                    .map(|(s, c)| (s, c, xfb.is_some())),
            );
        }
        InstKind::StorePerVertexOutput { slot, indirect, .. } => {
            out.extend(
                touched(*slot, indirect)
                    .into_iter()
                    .map(|(s, c)| (s, c, false)),
            );
        }
        _ => {}
    });
    out.into_iter().filter(|(s, _, _)| counted(*s)).collect()
}

fn reads(s: &Shader) -> BTreeSet<(Slot, u8)> {
    let mut out = BTreeSet::new();
    s.for_each_inst(|i| match &i.kind {
        InstKind::LoadInput { slot, indirect }
        | InstKind::LoadInterpolatedInput { slot, indirect, .. }
        | InstKind::LoadPerVertexInput { slot, indirect, .. }
        | InstKind::LoadOutput { slot, indirect, .. } => out.extend(touched(*slot, indirect)),
        _ => {}
    });
    out
}

/// Counts the pair's varyings as declared and after dead-output removal.
pub fn stats(p: &Pipeline) -> Stats {
    let st = stores(&p.producer);
    let mut rd = reads(&p.consumer);
    rd.extend(reads(&p.producer));
    let comps: BTreeSet<(Slot, u8)> = st.iter().map(|(s, c, _)| (*s, *c)).collect();
    let live: BTreeSet<(Slot, u8)> = st
        .iter()
        .filter(|(s, c, x)| *x || rd.contains(&(*s, *c)))
        .map(|(s, c, _)| (*s, *c))
        .collect();
    let slots =
        |set: &BTreeSet<(Slot, u8)>| set.iter().map(|(s, _)| *s).collect::<BTreeSet<_>>().len();
    Stats {
        declared_components: comps.len(),
        declared_slots: slots(&comps),
        live_components: live.len(),
        live_slots: slots(&live),
    }
}
