//! Counting the varyings of a pair by the optimizer's rules: the stored components that
//! reach the consumer (system values and tess levels only when read), two 16-bit halves
//! of one component counted once per slot component.

use std::collections::BTreeSet;

use super::emit::is_store;
use super::report::Counts;
use crate::egraph::lower::{role, Role};
use crate::ir::{InstKind, Pipeline, Slot, Stage};

/// Counts the varyings of a pipeline: stored components (without `no_varying`) that
/// reach the consumer.
pub fn count_varyings(p: &Pipeline) -> Counts {
    counts(&varying_components(p, &consumer_reads(p)))
}

/// Counts the varyings the consumer actually reads (what is left after dead-output
/// removal alone), by the same rules as [`count_varyings`].
pub fn count_live_varyings(p: &Pipeline) -> Counts {
    let read = consumer_reads(p);
    let live: BTreeSet<(Slot, u8)> = varying_components(p, &read)
        .intersection(&read)
        .copied()
        .collect();
    counts(&live)
}

fn counts(comps: &BTreeSet<(Slot, u8)>) -> Counts {
    let slots: BTreeSet<Slot> = comps.iter().map(|(s, _)| *s).collect();
    Counts {
        components: comps.len(),
        slots: slots.len(),
    }
}

/// Every (slot, component) the consumer may read, including whole indirect ranges.
fn consumer_reads(p: &Pipeline) -> BTreeSet<(Slot, u8)> {
    let mut read = BTreeSet::new();
    p.consumer.for_each_inst(|i| {
        let (slot, indirect) = match &i.kind {
            InstKind::LoadInput { slot, indirect }
            | InstKind::LoadInterpolatedInput { slot, indirect, .. }
            | InstKind::LoadPerVertexInput { slot, indirect, .. } => (*slot, indirect),
            _ => return,
        };
        let len = indirect.map_or(1, |ind| u32::from(ind.len));
        let slots = (0..len).filter_map(|k| slot.slot.offset(k));
        read.extend(slots.map(|s| (s, slot.comp)));
    });
    // Two-sided lighting: an FS read of COLn may return the back colour BFCn.
    if p.consumer.stage() == Stage::Fragment {
        let backs: Vec<(Slot, u8)> = read
            .iter()
            .filter_map(|(s, c)| match s {
                Slot::Col(n) => Some((Slot::Bfc(*n), *c)),
                _ => None,
            })
            .collect();
        read.extend(backs);
    }
    read
}

/// The stored producer components that count as varyings: system values and tess
/// levels only when the consumer reads them. A dynamically indexed store may write
/// any slot of its array, so each of them counts.
fn varying_components(p: &Pipeline, read: &BTreeSet<(Slot, u8)>) -> BTreeSet<(Slot, u8)> {
    let consumer = p.consumer.stage();
    let mut comps = BTreeSet::new();
    p.producer.for_each_inst(|i| {
        let Some((io, no_varying)) = is_store(&i.kind) else {
            return;
        };
        let len = match &i.kind {
            InstKind::StoreOutput {
                indirect: Some(ind),
                ..
            }
            | InstKind::StorePerVertexOutput {
                indirect: Some(ind),
                ..
            } => u32::from(ind.len),
            _ => 1,
        };
        for slot in (0..len).filter_map(|k| io.slot.offset(k)) {
            let counts = match role(slot, p.producer.stage(), consumer) {
                Role::NotVarying | Role::FixedFunction => false,
                Role::SysVal | Role::TessLevel => read.contains(&(slot, io.comp)),
                _ => true,
            };
            if counts && !no_varying {
                comps.insert((slot, io.comp));
            }
        }
    });
    comps
}
