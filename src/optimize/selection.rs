//! Stage 3, selection: extraction's choice, kept only when it does not grow the
//! varyings (estimated together with the pinned varyings they share vec4s with).

use std::collections::BTreeMap;

use egg::Id;

use super::count::count_varyings;
use super::lowering::{problem, LoweredPair};
use super::options::Options;
use super::report::Counts;
use super::saturation::Saturated;
use crate::egraph::lower::{role, Lowered, Role};
use crate::extract::dag::{dag_cost, packed_components, seed_from};
use crate::extract::{DagCost, Problem, Selection};
use crate::ir::{InstKind, IoSlot, Pipeline, Stage};

/// The selection a round emits, with the problem it was chosen in.
pub(crate) struct Chosen<'a> {
    /// The extraction problem (roots, cost model, as-written seed).
    pub problem: Problem<'a>,
    /// The chosen node per needed (class, stage).
    pub selection: Selection,
    /// Its whole-DAG cost and the varyings it reads.
    pub cost: DagCost,
    /// Exact mode only: whether extraction proved its choice optimal.
    pub proved_optimal: Option<bool>,
    /// Whether the run's deadline ended the extraction's search.
    pub deadline_hit: bool,
    /// Whether the selection transfers exactly the values the input as written
    /// transfers, and the input packs them as tightly as estimated: emitting it could
    /// only give back the input's varyings.
    pub transfers_as_written: bool,
}

/// Extracts from the saturated graph and keeps the as-written selection instead when
/// the extracted one would grow the varyings (or when `as_written` asks for it).
pub(crate) fn select<'a>(
    p: &'a Pipeline,
    opts: &'a Options,
    lowered: &LoweredPair,
    saturated: &'a Saturated,
    as_written: bool,
    deadline: Option<std::time::Instant>,
) -> Chosen<'a> {
    let (g, l) = (&saturated.egraph, &lowered.lowered);
    let seed = seed_from(g, &l.original);
    let mut prob = problem(g, l, p, opts, Some(seed.clone()));
    prob.deadline = deadline;
    let extracted = opts.extraction.run(&prob);
    let counts = count_varyings(p);
    let limit = counts.components.saturating_sub(kept_outside(p, l));
    let pinned = pinned_varyings(p, l);
    let seed_cost = dag_cost(&prob, &seed);
    let extracted_kept = (!as_written)
        .then(|| {
            let extracted = extracted.selection.clone();
            prefer_fewer_varyings(&prob, extracted, &seed_cost, limit, &pinned)
        })
        .flatten();
    let (selection, cost) = match extracted_kept {
        Some(kept) => kept,
        None => {
            let folded = with_constants_folded(g, seed);
            let cost = dag_cost(&prob, &folded);
            (folded, cost)
        }
    };
    let transfers_as_written =
        cost.varyings == seed_cost.varyings && packed_as_estimated(&prob, &cost, &pinned, counts);
    Chosen {
        transfers_as_written,
        problem: prob,
        selection,
        cost,
        proved_optimal: extracted.proved_optimal,
        deadline_hit: extracted.deadline_hit,
    }
}

/// Whether the input's varyings (`counts`) take no more components and slots than the
/// estimate for the selection's varyings with the `pinned` ones: values transferred
/// twice that share a class in the saturated graph, or 16-bit halves that could share
/// a component, would pack smaller when emitted.
fn packed_as_estimated(
    prob: &Problem<'_>,
    cost: &DagCost,
    pinned: &[crate::extract::VaryingKey],
    counts: Counts,
) -> bool {
    let all: Vec<_> = cost.varyings.iter().chain(pinned).copied().collect();
    let slots = crate::extract::dag::varying_cost(prob.model, prob.consumer, &all).1;
    counts.components as u64 <= packed_components(&all) && counts.slots as u64 <= slots
}

/// Varying components whose original stores stay outside the graph: pinned ones the
/// consumer reads and read system values.
fn kept_outside(p: &Pipeline, l: &Lowered) -> usize {
    let consumer = p.consumer.stage();
    l.stored
        .iter()
        .filter(|io| {
            let sysval = matches!(
                role(io.slot, p.producer.stage(), consumer),
                Role::SysVal | Role::TessLevel
            ) && l.read.contains(io)
                && l.pins.reason(**io).is_some();
            pinned_and_needed(l, io) || sysval
        })
        .count()
}

/// A stored component lowering pinned whose stores someone reads.
fn pinned_and_needed(l: &Lowered, io: &IoSlot) -> bool {
    l.pins.reason(*io).is_some() && l.needed.contains(io)
}

/// The pinned generic varyings the consumer reads, as the slot estimate sees them:
/// they share vec4s with the graph's varyings, so a choice that changes how those
/// pack (a half made 32-bit, an interpolated value made flat) can cost a slot that
/// the graph alone does not show.
fn pinned_varyings(p: &Pipeline, l: &Lowered) -> Vec<crate::extract::VaryingKey> {
    use crate::extract::{VaryingKey, VaryingKind};
    let consumer = p.consumer.stage();
    let mut kinds: BTreeMap<IoSlot, VaryingKind> = BTreeMap::new();
    p.consumer.for_each_inst(|i| {
        let (slot, kind) = match &i.kind {
            InstKind::LoadInput { slot, .. } if slot.slot.is_patch() => (*slot, VaryingKind::Patch),
            InstKind::LoadInput { slot, .. } if consumer == Stage::Fragment => {
                (*slot, VaryingKind::Flat)
            }
            InstKind::LoadInput { slot, .. } | InstKind::LoadPerVertexInput { slot, .. } => {
                (*slot, VaryingKind::PerVertex)
            }
            InstKind::LoadInterpolatedInput { slot, mode, .. } => {
                (*slot, VaryingKind::Interp(*mode))
            }
            _ => return,
        };
        kinds.entry(slot).or_insert(kind);
    });
    l.stored
        .iter()
        .filter(|io| pinned_and_needed(l, io))
        .filter(|io| {
            !matches!(
                role(io.slot, p.producer.stage(), consumer),
                Role::SysVal | Role::TessLevel
            )
        })
        .filter_map(|io| kinds.get(io).map(|k| (io, *k)))
        .enumerate()
        .map(|(n, (io, kind))| VaryingKey {
            kind,
            // Only kinds and sizes matter to the estimate; the value just has to be
            // one per pinned component.
            value: Id::from(usize::MAX - n),
            bits: if io.half == crate::ir::Half::Full {
                crate::ir::BitSize::B32
            } else {
                crate::ir::BitSize::B16
            },
        })
        .collect()
}

/// Keeps the as-written selection unless the extracted one is cheaper without more
/// varying components than the input has (`limit`: those the graph decides about) or
/// more slots than the as-written selection (both estimated together with the
/// `pinned` varyings they share vec4s with), and on a cost tie takes the one with
/// fewer varyings. Code motion can send an expression next to its operands, which the
/// model may price a little cheaper (less consumer ALU) but which would break the
/// promise that varyings never grow. Returns the extracted selection with its cost
/// when it is kept, `None` when the as-written one is.
fn prefer_fewer_varyings(
    prob: &Problem<'_>,
    sel: Selection,
    a: &DagCost,
    limit: usize,
    pinned: &[crate::extract::VaryingKey],
) -> Option<(Selection, DagCost)> {
    let b = dag_cost(prob, &sel);
    // Components as packed: two 16-bit halves share one, as in `count_varyings`.
    let components = |c: &crate::extract::DagCost| packed_components(&c.varyings) as usize;
    let slots = |c: &crate::extract::DagCost| {
        let all: Vec<_> = c.varyings.iter().chain(pinned).copied().collect();
        crate::extract::dag::varying_cost(prob.model, prob.consumer, &all).1
    };
    let grows = components(&b) > limit.max(components(a)) || slots(&b) > slots(a);
    let rank = |c: &crate::extract::DagCost| (c.total, components(c), c.slots);
    (!grows && rank(&b) < rank(a)).then_some((sel, b))
}

/// The as-written selection `seed` with every class the analysis folded to a constant
/// taking that constant. Where the seed stands (the extracted selection would grow
/// the varyings, or is no cheaper), it still propagates what is free, and a value it
/// propagates can be arithmetic on constants in the producer (an unrolled loop's
/// `iadd 3 3`): emitted as written, the consumer would compute it. Every class with a
/// constant holds that constant's node (`VAnalysis::modify`), it reads no varying,
/// and it costs nothing, so the folded seed transfers no more than the seed does.
fn with_constants_folded(g: &crate::egraph::VGraph, mut seed: Selection) -> Selection {
    for ((class, _), node) in seed.choice.iter_mut() {
        let data = &g[*class].data;
        if let (Some(value), Some(bits)) = (data.konst, data.bits) {
            *node = crate::egraph::VNode::Const { bits, value };
        }
    }
    seed
}
