//! Stage 1, lowering: the pair into one e-graph (`egraph::lower`), with the model cost
//! of the input as written, which the report and the selection compare against.

use std::collections::BTreeMap;
use std::time::Instant;

use egg::Id;

use super::options::Options;
use crate::egraph::analysis::VAnalysis;
use crate::egraph::lower::{lower_for_pricing_within, lower_within, Lowered};
use crate::egraph::recompute::ForwardBound;
use crate::egraph::VGraph;
use crate::extract::dag::{dag_cost, seed_from, vertices};
use crate::extract::{Cost, Ctx, Problem, Selection};
use crate::ir::{IoSlot, Pipeline, Stage, StageInfo};

/// The lowered pair and the model cost of the input as written.
pub(crate) struct LoweredPair {
    /// The pair as one e-graph, with its roots, loads, pins and slots.
    pub lowered: Lowered,
    /// The model cost of the input as written.
    pub cost_before: Cost,
}

/// Lowers `p` (pinning reads of outputs exported anyway when asked) and prices it as
/// written unless its price is `known`, giving up at `deadline` (`None`: it passed
/// first). Both the graph construction and the pricing of the input as written check
/// it.
pub(crate) fn lower_pair_within(
    p: &Pipeline,
    opts: &Options,
    pin_exported_reads: bool,
    deadline: Option<Instant>,
    known: Option<Cost>,
) -> Option<LoweredPair> {
    let lowered = lower_within(p, analysis_for(p, opts), pin_exported_reads, deadline)?;
    let cost_before = match known {
        Some(cost) => before(deadline).then_some(cost)?,
        None => priced_before(&lowered, p, opts, deadline)?,
    };
    Some(LoweredPair {
        lowered,
        cost_before,
    })
}

/// The model cost of `p` as written, from a graph built only to be priced
/// (`lower_for_pricing_within`: not compacted to the region); `None` past `deadline`.
pub(crate) fn price_within(
    p: &Pipeline,
    opts: &Options,
    deadline: Option<Instant>,
) -> Option<Cost> {
    // Pricing reads no forward-motion fact: without the gate, `make` computes neither
    // `sharing_below` nor `recompute` for a graph that is never saturated.
    let analysis = VAnalysis {
        forward_gate: false,
        forward_bound: None,
        ..analysis_for(p, opts)
    };
    let lowered = lower_for_pricing_within(p, analysis, deadline)?;
    priced_before(&lowered, p, opts, deadline)
}

/// [`cost_as_written`], started and finished before `deadline`.
fn priced_before(
    l: &Lowered,
    p: &Pipeline,
    opts: &Options,
    deadline: Option<Instant>,
) -> Option<Cost> {
    before(deadline).then_some(())?;
    let cost = cost_as_written(l, p, opts);
    before(deadline).then_some(cost)
}

/// Whether `deadline` (if any) has not passed yet.
fn before(deadline: Option<Instant>) -> bool {
    deadline.is_none_or(|d| Instant::now() < d)
}

/// The e-class analysis parameters of a pair under `opts`.
pub(crate) fn analysis_for(p: &Pipeline, opts: &Options) -> VAnalysis {
    let gated = gated(p, opts);
    VAnalysis {
        propagation_limit: opts.cost.propagation_limit(&p.consumer.info),
        wide_opaque_cost: Some(u32::try_from(opts.cost.wide_op).unwrap_or(u32::MAX)),
        wide_op_costs: opts
            .cost
            .wide_ops
            .iter()
            .map(|(n, c)| (n.clone(), u32::try_from(*c).unwrap_or(u32::MAX)))
            .collect(),
        producer_is_gs: p.producer.stage() == Stage::Geometry,
        // The premises of the sharing gate's argument (`egraph::sharing`).
        forward_gate: gated,
        forward_bound: gated
            .then(|| forward_bound(p, opts))
            .filter(ForwardBound::can_refuse),
        visibility: if opts.assume_visible {
            Default::default()
        } else {
            p.visibility.clone()
        },
        ..Default::default()
    }
}

/// Whether forward motion is gated (`egraph::sharing`): never for a GS producer, and
/// only when the profile weighs consumer work at least as much as producer work.
fn gated(p: &Pipeline, opts: &Options) -> bool {
    p.producer.stage() != Stage::Geometry
        && opts.cost.consumer_weight(p.consumer.stage()) >= opts.cost.weight_producer
}

/// The prices of the ALU bound on forward motion (`egraph::recompute`) under the
/// pair's profile: what dropping one varying saves at most, and what a new one costs
/// at least.
fn forward_bound(p: &Pipeline, opts: &Options) -> ForwardBound {
    let m = &opts.cost;
    let clamp = |c: u64| u32::try_from(c).unwrap_or(u32::MAX);
    let op_weight = clamp(
        m.consumer_weight(p.consumer.stage())
            .saturating_sub(m.weight_producer),
    );
    match &p.consumer.info {
        StageInfo::Fragment { .. } => ForwardBound {
            op_weight,
            budget: clamp(
                m.interp_component
                    .max(m.flat_component)
                    .saturating_add(m.fs_slot)
                    .saturating_add(m.extra_barycentric),
            ),
            convergent_price: clamp(m.interp_component.min(m.flat_component)),
            varying_price: clamp(m.interp_component),
        },
        info => ForwardBound {
            op_weight,
            budget: clamp(
                m.stage_slot_per_vertex
                    .saturating_mul(vertices(info))
                    .max(m.patch_component),
            ),
            convergent_price: 0,
            varying_price: 0,
        },
    }
}

/// The extraction problem over `g` for the pair's consumer roots.
pub(crate) fn problem<'a>(
    g: &'a VGraph,
    l: &Lowered,
    p: &'a Pipeline,
    opts: &'a Options,
    seed: Option<Selection>,
) -> Problem<'a> {
    Problem {
        egraph: g,
        roots: l.roots.values().map(|r| g.find(*r)).collect(),
        model: &opts.cost,
        consumer: &p.consumer.info,
        seed,
        gs_emits: l.gs_emits,
        deadline: None,
    }
}

/// The model cost of the input as written: its ALU work (identical pure expressions
/// counted once, as hash-consing does) plus one varying per original slot the consumer
/// reads — not per e-class, which would already deduplicate.
fn cost_as_written(l: &Lowered, p: &Pipeline, opts: &Options) -> Cost {
    let g = &l.egraph;
    let seed = seed_from(g, &l.original);
    let alu = {
        let prob = problem(g, l, p, opts, None);
        let c = dag_cost(&prob, &seed);
        c.producer_alu + c.consumer_alu
    };
    let mut per_slot: BTreeMap<(IoSlot, crate::extract::VaryingKind), crate::extract::VaryingKey> =
        BTreeMap::new();
    for ld in &l.loads {
        let node = seed.choice.get(&(g.find(ld.class), Ctx::C));
        if let Some(k) = node.and_then(|n| crate::extract::dag::varying_key(g, n)) {
            let unique = Id::from(per_slot.len());
            per_slot
                .entry((ld.slot, k.kind))
                .or_insert(crate::extract::VaryingKey { value: unique, ..k });
        }
    }
    let vars: Vec<_> = per_slot.into_values().collect();
    alu + crate::extract::dag::varying_cost(&opts.cost, &p.consumer.info, &vars).0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A VS/FS pair with a POS cone outside the region and a varying the FS reads,
    /// and every generator sample pair: the graph priced whole and the graph cut to
    /// the region price the input alike, since pricing walks from the region's starts.
    #[test]
    fn pricing_the_whole_graph_prices_the_region() {
        let region = crate::text::parse(
            "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%q = fmul %p %p)
    (%r = fadd %q %p)
    (%r2 = fmul %r %q)
    (%r3 = fadd %r2 %r)
    (store_output POS.x %r3)
    (%a = load_input ATTR1.x)
    (%b = fmul %a %p)
    (store_output VAR0.x %b))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%one = const 32 1.0)
    (%s = fadd %x %one)
    (store_output DATA0.x %s)))",
            Some("price.pair"),
        )
        .unwrap();
        let opts = Options::new();
        // Four of its eleven classes (the POS ops) lie outside the region: cut.
        let cut = lower_within(&region, analysis_for(&region, &opts), false, None).unwrap();
        assert_eq!(cut.egraph.number_of_classes(), 7);
        for p in std::iter::once(region).chain(crate::gen::sample_pairs()) {
            let kept = lower_pair_within(&p, &opts, false, None, None).unwrap();
            assert_eq!(price_within(&p, &opts, None), Some(kept.cost_before));
        }
    }
}
