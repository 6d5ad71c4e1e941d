//! Stage 6, packing: the final vec4 compaction (`crate::pack`) of the emitted pair,
//! with the report's slots moved along.

use std::collections::{BTreeMap, BTreeSet};

use super::count::count_varyings;
use super::emission::Emitted;
use super::fates::Account;
use super::options::Options;
use super::report::{Counts, Fate};
use super::saturation::Saturated;
use super::selection::Chosen;
use super::slots::SlotMap;
use crate::egraph::VGraph;
use crate::error::Error;
use crate::ir::{IoSlot, Pipeline, Stage};
use crate::pack::PackOptions;

/// The round's final pair with its account (slots moved along) and counts.
pub(crate) struct Packed {
    /// The final pair.
    pub pipeline: Pipeline,
    /// Fates and moves, in the final slots.
    pub account: Account,
    /// Its varying counts.
    pub after: Counts,
    /// Why emission failed (the pair is then the input, unpacked).
    pub fallback: Option<String>,
}

/// Packs an emitted pair when the options ask for packing and emission succeeded.
pub(crate) fn pack(
    emitted: Emitted,
    mut account: Account,
    opts: &Options,
    saturated: &Saturated,
    chosen: &Chosen<'_>,
    slots: &SlotMap,
) -> Result<Packed, Error> {
    let Emitted {
        pipeline, failure, ..
    } = emitted;
    // Emission keeps the stages (and a fallback is the input itself).
    let producer = pipeline.producer.stage();
    let convergent = convergent_slots(&saturated.egraph, &chosen.cost.varyings, slots, producer);
    let pipeline = match (&opts.packing, failure.is_none()) {
        (Some(packing), true) => pack_last(pipeline, packing, &convergent, &mut account)?,
        _ => pipeline,
    };
    Ok(Packed {
        after: count_varyings(&pipeline),
        pipeline,
        account,
        fallback: failure,
    })
}

/// Compacts the surviving varyings into vec4 slots (reference/000 §7) and moves the
/// report's slots along. The emitter's provisional layout is kept when it already
/// needs fewer vec4s (it never moves pinned slots, which the packer's rules may).
fn pack_last(
    pipeline: Pipeline,
    packing: &PackOptions,
    convergent: &BTreeSet<IoSlot>,
    report: &mut Account,
) -> Result<Pipeline, Error> {
    // The packer may only exploit convergence the optimizer itself established;
    // otherwise it would rewrite loads to flat that the next run could then fold,
    // and a second run would change the result.
    let packing = PackOptions {
        convergent: packing
            .convergent
            .clone()
            .or_else(|| Some(convergent.clone())),
        ..packing.clone()
    };
    // Only a pair emission validated gets here (a failed emission is not packed).
    let (packed, layout) = crate::pack::pack_valid(&pipeline, &packing)?;
    if count_varyings(&packed).slots > count_varyings(&pipeline).slots {
        return Ok(pipeline);
    }
    let moved = |s: &IoSlot| layout.map.get(s).copied().unwrap_or(*s);
    for v in &mut report.varyings {
        match &mut v.fate {
            Fate::Kept(slot) => *slot = moved(slot),
            Fate::MergedInto { slot, .. } => *slot = moved(slot),
            // The e-graph left it as written, but the packer relocated it (colours
            // rotate, pinned components join other vec4s): report where it went.
            Fate::Pinned(_) if moved(&v.slot) != v.slot => v.fate = Fate::Kept(moved(&v.slot)),
            _ => {}
        }
    }
    for m in &mut report.moves {
        for slot in &mut m.via {
            *slot = moved(slot);
        }
    }
    Ok(packed)
}

/// The new slots of the chosen varyings whose producer value the e-graph knows to be
/// the same at every vertex of a primitive (never for a GS producer, as promotion).
fn convergent_slots(
    g: &VGraph,
    varyings: &[crate::extract::VaryingKey],
    slots: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
    producer: Stage,
) -> BTreeSet<IoSlot> {
    if producer == Stage::Geometry {
        return BTreeSet::new();
    }
    varyings
        .iter()
        .filter(|k| g[k.value].data.convergent_p)
        .filter_map(|k| slots.get(k).copied())
        .collect()
}
