//! Stage 1, lowering: the pair into one e-graph (`egraph::lower`), with the model cost
//! of the input as written, which the report and the selection compare against.

use std::collections::BTreeMap;
use std::time::Instant;

use egg::Id;

use super::options::Options;
use crate::egraph::analysis::VAnalysis;
use crate::egraph::lower::{lower_within, Lowered};
use crate::egraph::VGraph;
use crate::extract::dag::{dag_cost, seed_from};
use crate::extract::{Cost, Ctx, Problem, Selection};
use crate::ir::{IoSlot, Pipeline, Stage};

/// The lowered pair and the model cost of the input as written.
pub(crate) struct LoweredPair {
    /// The pair as one e-graph, with its roots, loads, pins and slots.
    pub lowered: Lowered,
    /// The model cost of the input as written.
    pub cost_before: Cost,
}

/// Lowers `p` (pinning read xfb outputs when asked) and prices it as written unless
/// its price is `known`, giving up at `deadline` (`None`: it passed first). Both the
/// graph construction and the pricing of the input as written check it.
pub(crate) fn lower_pair_within(
    p: &Pipeline,
    opts: &Options,
    pin_xfb_reads: bool,
    deadline: Option<Instant>,
    known: Option<Cost>,
) -> Option<LoweredPair> {
    let lowered = lower_within(p, analysis_for(p, opts), pin_xfb_reads, deadline)?;
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return None;
    }
    let cost_before = known.unwrap_or_else(|| cost_as_written(&lowered, p, opts));
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return None;
    }
    Some(LoweredPair {
        lowered,
        cost_before,
    })
}

/// The e-class analysis parameters of a pair under `opts`.
pub(crate) fn analysis_for(p: &Pipeline, opts: &Options) -> VAnalysis {
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
        forward_gate: p.producer.stage() != Stage::Geometry
            && opts.cost.consumer_weight(p.consumer.stage()) >= opts.cost.weight_producer,
        visibility: if opts.assume_visible {
            Default::default()
        } else {
            p.visibility.clone()
        },
        ..Default::default()
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
