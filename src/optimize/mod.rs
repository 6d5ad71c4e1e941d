//! `optimize`: validate, lower, saturate, extract, assign slots, emit — and the report
//! of what happened to every original varying.

pub mod assign;
pub(crate) mod compose;
pub mod emit;
pub mod moves;
pub(crate) mod prepass;
pub mod renumber;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, Instant};

use egg::Id;

use crate::egraph::analysis::VAnalysis;
use crate::egraph::lower::{lower, role, Lowered, Role};
use crate::egraph::saturate::{saturate, Stop};
use crate::egraph::{Budgets, RuleSet, Scheduler, VGraph, VNode};
use crate::emit::{emit_consumer, emit_producer, is_store, remove_dead_code, EmitInput};
use crate::error::Error;
use crate::extract::dag::{dag_cost, packed_components, reachable, seed_from};
use crate::extract::{Cost, CostModel, Ctx, Extraction, Problem, Selection};
use crate::ir::{InstKind, IoSlot, Pipeline, Slot, Stage};
use crate::pack::PackOptions;

/// Options of one optimization run (builder-style).
#[derive(Clone, Debug)]
pub struct Options {
    /// The rules to saturate with.
    pub rules: RuleSet,
    /// The cost model.
    pub cost: CostModel,
    /// Saturation budgets.
    pub budgets: Budgets,
    /// The final vec4 packing (`None` keeps the emitter's provisional slots).
    pub packing: Option<PackOptions>,
    /// Which extractor picks the terms (fast global search or exact).
    pub extraction: Extraction,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rules: RuleSet::default_set(),
            cost: CostModel::default(),
            budgets: Budgets::default(),
            packing: Some(PackOptions::default()),
            extraction: Extraction::Fast,
        }
    }
}

impl Options {
    /// Sets the final packing options (`None`: keep the emitter's provisional slots).
    pub fn packing(mut self, packing: Option<PackOptions>) -> Options {
        self.packing = packing;
        self
    }

    /// Sets the extraction mode.
    pub fn extraction(mut self, extraction: Extraction) -> Options {
        self.extraction = extraction;
        self
    }

    /// The defaults: shipped rules, `amd-gfx10`, default budgets, AMD packing.
    pub fn new() -> Options {
        Options::default()
    }

    /// Replaces the rule set.
    pub fn rules(mut self, rules: RuleSet) -> Options {
        self.rules = rules;
        self
    }

    /// Adds the rules of a file to the current set (duplicate names are an error).
    pub fn extra_rules(mut self, file: &str, text: &str) -> Result<Options, Error> {
        self.rules.extend_from_text(file, text)?;
        Ok(self)
    }

    /// Sets the cost model.
    pub fn cost(mut self, cost: CostModel) -> Options {
        self.cost = cost;
        self
    }

    /// Sets all budgets.
    pub fn budgets(mut self, budgets: Budgets) -> Options {
        self.budgets = budgets;
        self
    }

    /// Sets the e-node limit.
    pub fn node_limit(mut self, n: usize) -> Options {
        self.budgets.nodes = n;
        self
    }

    /// Sets the iteration limit.
    pub fn iter_limit(mut self, n: usize) -> Options {
        self.budgets.iterations = n;
        self
    }

    /// Sets the time limit.
    pub fn time_limit(mut self, t: Duration) -> Options {
        self.budgets.time = t;
        self
    }

    /// Sets the scheduler.
    pub fn scheduler(mut self, s: Scheduler) -> Options {
        self.budgets.scheduler = s;
        self
    }
}

/// What happened to one original varying component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Still a varying, now in this slot.
    Kept(IoSlot),
    /// Shares the varying of `with` (an original slot), now in `slot`.
    MergedInto {
        /// The new slot.
        slot: IoSlot,
        /// The original varying it was merged with.
        with: IoSlot,
    },
    /// The consumer now computes it itself.
    Propagated(String),
    /// Gone.
    Removed(String),
    /// Left exactly as written (pinned).
    Pinned(String),
    /// Store kept for fixed function / xfb only, with `no_varying`.
    NoVarying(String),
    /// Replaced by a cross-stage code motion (see [`Report::moves`]).
    Moved(crate::moves::Direction),
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::Kept(s) => write!(f, "kept as {s}"),
            Fate::MergedInto { slot, with } => write!(f, "merged into {slot} (with {with})"),
            Fate::Propagated(e) => write!(f, "propagated as {e}"),
            Fate::Removed(r) => write!(f, "removed ({r})"),
            Fate::Pinned(r) => write!(f, "kept unchanged ({r})"),
            Fate::NoVarying(r) => write!(f, "kept with no_varying ({r})"),
            Fate::Moved(crate::moves::Direction::Backward) => {
                write!(f, "moved: the producer computes its use")
            }
            Fate::Moved(crate::moves::Direction::Forward) => {
                write!(f, "moved: the consumer recomputes it")
            }
        }
    }
}

impl Fate {
    fn tag(&self) -> &'static str {
        match self {
            Fate::Kept(_) => "kept",
            Fate::MergedInto { .. } => "merged",
            Fate::Propagated(_) => "propagated",
            Fate::Removed(_) => "removed",
            Fate::Pinned(_) => "pinned",
            Fate::NoVarying(_) => "no_varying",
            Fate::Moved(_) => "moved",
        }
    }
}

/// One original varying component and its fate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VaryingReport {
    /// The original slot.
    pub slot: IoSlot,
    /// What happened.
    pub fate: Fate,
}

/// Varying components and vec4 slots crossing between the stages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Scalar components (two 16-bit halves of one component count once).
    pub components: usize,
    /// vec4 slots.
    pub slots: usize,
}

/// Wall time of each phase of a run (summed over both runs when the xfb retry ran).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Lowering the pair into the e-graph (and costing the input as written).
    pub lower: Duration,
    /// Equality saturation.
    pub saturate: Duration,
    /// DAG extraction.
    pub extract: Duration,
    /// Slot choice, emission, dead-code removal and validation of the result.
    pub emit: Duration,
    /// The final vec4 packing.
    pub pack: Duration,
}

impl std::ops::Add for Timings {
    type Output = Timings;
    fn add(self, o: Timings) -> Timings {
        Timings {
            lower: self.lower + o.lower,
            saturate: self.saturate + o.saturate,
            extract: self.extract + o.extract,
            emit: self.emit + o.emit,
            pack: self.pack + o.pack,
        }
    }
}

/// What an optimization run did.
#[derive(Clone, Debug)]
pub struct Report {
    /// Per original varying component, sorted by slot.
    pub varyings: Vec<VaryingReport>,
    /// Before.
    pub before: Counts,
    /// After.
    pub after: Counts,
    /// Model cost of the input.
    pub cost_before: Cost,
    /// Model cost of the output.
    pub cost_after: Cost,
    /// Cost profile used.
    pub profile: String,
    /// E-nodes after saturation.
    pub egraph_nodes: usize,
    /// E-classes after saturation.
    pub egraph_classes: usize,
    /// Saturation iterations.
    pub iterations: usize,
    /// Why saturation stopped.
    pub stop_reason: String,
    /// Wall time of the whole run.
    pub time: Duration,
    /// Wall time per phase.
    pub timings: Timings,
    /// Successful applications per rewrite during saturation (see
    /// [`crate::egraph::saturate::SaturationStats::applied`]).
    pub rule_firings: BTreeMap<String, usize>,
    /// Extraction mode used (`fast` or `exact`).
    pub extraction: &'static str,
    /// Exact mode only: whether the extraction was proved optimal within its limit.
    pub proved_optimal: Option<bool>,
    /// Set when emission failed and the input was returned unchanged.
    pub fallback: Option<String>,
    /// Cross-stage code motions the result makes.
    pub moves: Vec<crate::moves::Move>,
}

/// The optimized pair and its report.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The optimized pipeline.
    pub pipeline: Pipeline,
    /// What happened.
    pub report: Report,
}

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
/// levels only when the consumer reads them.
fn varying_components(p: &Pipeline, read: &BTreeSet<(Slot, u8)>) -> BTreeSet<(Slot, u8)> {
    let consumer = p.consumer.stage();
    let mut comps = BTreeSet::new();
    p.producer.for_each_inst(|i| {
        let Some((io, no_varying)) = is_store(&i.kind) else {
            return;
        };
        let counts = match role(io.slot, consumer) {
            Role::NotVarying => false,
            Role::SysVal | Role::TessLevel => read.contains(&(io.slot, io.comp)),
            _ => true,
        };
        if counts && !no_varying {
            comps.insert((io.slot, io.comp));
        }
    });
    comps
}

fn analysis_for(p: &Pipeline, opts: &Options) -> VAnalysis {
    VAnalysis {
        propagation_limit: opts.cost.propagation_limit(&p.consumer.info),
        producer_is_gs: p.producer.stage() == Stage::Geometry,
    }
}

fn problem<'a>(
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

/// Optimizes the varyings of `p`.
pub fn optimize(p: &Pipeline, opts: &Options) -> Result<Outcome, Error> {
    let start = Instant::now();
    crate::validate::validate(p)?;
    let rewrites = opts.rules.rewrites()?;
    let input = p;
    let prepared = crate::prepass::prepare(input);
    let p = &prepared.pipeline;
    // A round that replaces an earlier one; the report counts both rounds' time.
    let redo = |earlier: &Outcome, round: Round| -> Result<Outcome, Error> {
        let mut out = run(p, opts, &rewrites, round)?;
        out.report.timings = out.report.timings + earlier.report.timings;
        Ok(out)
    };
    let mut out = run(p, opts, &rewrites, Round::default())?;
    if out.report.after.slots > out.report.before.slots {
        // A read xfb output got a varying of its own next to its kept xfb store;
        // letting one store serve both keeps the slot count.
        let round = Round {
            pin_xfb_reads: true,
            ..Round::default()
        };
        out = redo(&out, round)?;
    }
    if grew(&out.report) {
        // Extraction's estimate of how the varyings pack missed (pinned components
        // keep their vec4s): varyings never grow, so keep the selection as written.
        let round = Round {
            as_written: true,
            ..Round::default()
        };
        out = redo(&out, round)?;
        if grew(&out.report) {
            let r = &mut out.report;
            r.fallback = Some("the optimized varyings would not pack smaller".into());
            r.after = r.before;
            r.cost_after = r.cost_before;
            r.moves.clear();
            r.varyings.clear();
            out.pipeline = p.clone();
        }
    }
    // Equal-cost choices (a move that only saves a component inside a vec4 that stays)
    // can leave work that a run on the output finds; take it now, so that optimizing
    // the result again changes nothing more.
    for _ in 0..2 {
        // Under a budget the graph was cut short: a second run meets the same budget,
        // and the report already says why the result may not be a fixed point.
        let saturated = out.report.stop_reason == Stop::Saturated.to_string();
        if out.report.fallback.is_some() || !saturated {
            break;
        }
        let again = run(&out.pipeline, opts, &rewrites, Round::default())?;
        let (a, b) = (out.report.after, again.report.after);
        let better = b.slots <= a.slots && (b.components, b.slots) < (a.components, a.slots);
        if !better || again.report.fallback.is_some() {
            break;
        }
        out = Outcome {
            pipeline: again.pipeline,
            report: crate::compose::compose(out.report, again.report),
        };
    }
    if p != input {
        account_prepass(&mut out.report, input, opts, prepared.fates);
    }
    out.report.time = start.elapsed();
    Ok(out)
}

/// Whether a round left more varying components or slots than its input had.
fn grew(r: &Report) -> bool {
    r.after.components > r.before.components || r.after.slots > r.before.slots
}

/// Reports the pre-pass: counts and cost of the real input, and the merged colours'
/// fates, pointing at wherever their surviving twin ended up.
fn account_prepass(
    report: &mut Report,
    input: &Pipeline,
    opts: &Options,
    fates: Vec<VaryingReport>,
) {
    report.before = count_varyings(input);
    let lowered = lower(input, analysis_for(input, opts), false);
    report.cost_before = cost_as_written(&lowered, input, opts);
    for mut merged in fates {
        if let Fate::MergedInto { slot, with } = &mut merged.fate {
            let now = report.varyings.iter().find(|v| v.slot == *with);
            match now.map(|v| &v.fate) {
                Some(Fate::Kept(s)) | Some(Fate::MergedInto { slot: s, .. }) => *slot = *s,
                _ => {}
            }
        }
        report.varyings.push(merged);
    }
    report.varyings.sort_by_key(|v| v.slot);
}

/// How one optimization round chooses.
#[derive(Clone, Copy, Default)]
struct Round {
    /// Pin outputs that transform feedback captures and the consumer reads.
    pin_xfb_reads: bool,
    /// Keep the as-written selection instead of the extracted one.
    as_written: bool,
}

fn run(
    p: &Pipeline,
    opts: &Options,
    rewrites: &[egg::Rewrite<VNode, VAnalysis>],
    round: Round,
) -> Result<Outcome, Error> {
    let pin_xfb_reads = round.pin_xfb_reads;
    let mut timings = Timings::default();
    let mut clock = Instant::now();
    let mut lap = || {
        let now = Instant::now();
        let d = now - clock;
        clock = now;
        d
    };
    let lowered = lower(p, analysis_for(p, opts), pin_xfb_reads);
    let cost_before = cost_as_written(&lowered, p, opts);
    timings.lower = lap();
    let (g, stats) = saturate(lowered.egraph.clone(), rewrites, &opts.budgets);
    timings.saturate = lap();
    let seed = seed_from(&g, &lowered.original);
    let prob = problem(&g, &lowered, p, opts, Some(seed.clone()));
    let extracted = opts.extraction.run(&prob);
    let limit = count_varyings(p)
        .components
        .saturating_sub(kept_outside(p, &lowered));
    let pinned = pinned_varyings(p, &lowered);
    let sel = if round.as_written {
        seed
    } else {
        prefer_fewer_varyings(&prob, extracted.selection.clone(), seed, limit, &pinned)
    };
    let chosen = dag_cost(&prob, &sel);
    timings.extract = lap();
    let occupied = occupied_slots(p, &lowered);
    let mut report = Report {
        varyings: vec![],
        before: count_varyings(p),
        after: Counts::default(),
        cost_before,
        cost_after: chosen.total,
        profile: opts.cost.name.clone(),
        egraph_nodes: stats.nodes,
        egraph_classes: stats.classes,
        iterations: stats.iterations,
        stop_reason: stats.stop.to_string(),
        time: Duration::ZERO,
        timings: Timings::default(),
        rule_firings: stats.applied,
        extraction: opts.extraction.name(),
        proved_optimal: extracted.proved_optimal,
        fallback: None,
        moves: vec![],
    };
    let hints = slot_hints(&lowered, &g, &sel);
    let slots = choose_slots(&lowered, &chosen.varyings, &occupied, &hints)?;
    let input = EmitInput {
        lowered: &lowered,
        egraph: &g,
        selection: &sel,
        slots: &slots,
    };
    let pipeline = match emit_pair(p, &input) {
        Ok(out) => {
            report.varyings = fates(p, &lowered, &g, &sel, &prob, &slots);
            let input = crate::moves::MoveInput {
                lowered: &lowered,
                egraph: &g,
                selection: &sel,
                problem: &prob,
                slots: &slots,
            };
            report.moves = crate::moves::find_moves(&input, &chosen.varyings);
            mark_moved(&mut report);
            out
        }
        Err(e) => {
            report.fallback = Some(e.to_string());
            report.cost_after = cost_before;
            p.clone()
        }
    };
    timings.emit = lap();
    let convergent = convergent_slots(&g, &chosen.varyings, &slots, p.producer.stage());
    let pipeline = match (&opts.packing, report.fallback.is_none()) {
        (Some(packing), true) => pack_last(pipeline, packing, &convergent, &mut report)?,
        _ => pipeline,
    };
    report.after = count_varyings(&pipeline);
    timings.pack = lap();
    report.timings = timings;
    Ok(Outcome { pipeline, report })
}

/// Varying components whose original stores stay outside the graph: pinned ones the
/// consumer reads and read system values.
fn kept_outside(p: &Pipeline, l: &Lowered) -> usize {
    let consumer = p.consumer.stage();
    l.stored
        .iter()
        .filter(|io| {
            let sysval = matches!(role(io.slot, consumer), Role::SysVal | Role::TessLevel)
                && l.read.contains(io);
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
        .filter(|io| !matches!(role(io.slot, consumer), Role::SysVal | Role::TessLevel))
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
/// promise that varyings never grow.
fn prefer_fewer_varyings(
    prob: &Problem<'_>,
    sel: Selection,
    seed: Selection,
    limit: usize,
    pinned: &[crate::extract::VaryingKey],
) -> Selection {
    let (a, b) = (dag_cost(prob, &seed), dag_cost(prob, &sel));
    // Components as packed: two 16-bit halves share one, as in `count_varyings`.
    let components = |c: &crate::extract::DagCost| packed_components(&c.varyings) as usize;
    let slots = |c: &crate::extract::DagCost| {
        let all: Vec<_> = c.varyings.iter().chain(pinned).copied().collect();
        crate::extract::dag::varying_cost(prob.model, prob.consumer, &all).1
    };
    let grows = components(&b) > limit.max(components(&a)) || slots(&b) > slots(&a);
    let rank = |c: &crate::extract::DagCost| (c.total, components(c), c.slots);
    if grows || rank(&a) <= rank(&b) {
        seed
    } else {
        sel
    }
}

/// Compacts the surviving varyings into vec4 slots (reference/000 §7) and moves the
/// report's slots along. The emitter's provisional layout is kept when it already
/// needs fewer vec4s (it never moves pinned slots, which the packer's rules may).
fn pack_last(
    pipeline: Pipeline,
    packing: &PackOptions,
    convergent: &BTreeSet<IoSlot>,
    report: &mut Report,
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
    let (packed, layout) = crate::pack::pack(&pipeline, &packing)?;
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

/// Varyings a move replaced are reported as moved rather than unused / propagated.
fn mark_moved(report: &mut Report) {
    for v in &mut report.varyings {
        let by = report.moves.iter().find(|m| m.replaced.contains(&v.slot));
        let replaceable = matches!(v.fate, Fate::Removed(_) | Fate::Propagated(_));
        if let (Some(m), true) = (by, replaceable) {
            v.fate = Fate::Moved(m.direction);
        }
    }
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

fn emit_pair(p: &Pipeline, input: &EmitInput<'_>) -> Result<Pipeline, Error> {
    let mut producer = emit_producer(p, input)?;
    let mut consumer = emit_consumer(p, input)?;
    for shader in [&mut producer, &mut consumer] {
        remove_dead_code(shader);
        crate::renumber::renumber(shader);
    }
    let out = Pipeline {
        producer,
        consumer,
        ..p.clone()
    };
    crate::validate::validate(&out)?;
    Ok(out)
}

/// Dense packing, unless keeping the original slots touches fewer vec4s (so the slot
/// count never grows around pinned slots or inputs that mixed qualifiers in a vec4).
fn choose_slots(
    l: &Lowered,
    varyings: &[crate::extract::VaryingKey],
    occupied: &BTreeSet<Slot>,
    hints: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
) -> Result<BTreeMap<crate::extract::VaryingKey, IoSlot>, Error> {
    use crate::assign::{assign_slots, keep_original_slots, vec4_count};
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
            || matches!(role(io.slot, consumer), Role::SysVal | Role::TessLevel);
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

/// The extracted term of a class as text (depth-limited).
pub fn term_text(g: &VGraph, sel: &Selection, id: Id, ctx: Ctx, depth: usize) -> String {
    let Some(node) = sel.choice.get(&(g.find(id), ctx)) else {
        return "?".into();
    };
    let kids = egg::Language::children(node);
    if kids.is_empty() {
        return node.to_string();
    }
    if depth == 0 {
        return format!("({node} ...)");
    }
    let parts: Vec<String> = kids
        .iter()
        .enumerate()
        .map(|(i, c)| match (node, g[*c].data.konst) {
            // The emit a per-emit node names, not the bit pattern's float reading.
            (VNode::PerEmit(_), Some(at)) if i == 0 => format!("{at}i32"),
            _ => term_text(
                g,
                sel,
                *c,
                crate::extract::dag::child_ctx(node, ctx, i),
                depth - 1,
            ),
        })
        .collect();
    format!("({node} {})", parts.join(" "))
}

fn fates(
    p: &Pipeline,
    l: &Lowered,
    g: &VGraph,
    sel: &Selection,
    prob: &Problem<'_>,
    slots: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
) -> Vec<VaryingReport> {
    let consumer = p.consumer.stage();
    let live: BTreeSet<(Id, Ctx)> = reachable(prob, sel).into_iter().collect();
    let mut owners: BTreeMap<IoSlot, IoSlot> = BTreeMap::new();
    let all: BTreeSet<IoSlot> = l.stored.iter().chain(l.read.iter()).copied().collect();
    let mut out = vec![];
    for io in all {
        let r = role(io.slot, consumer);
        if r == Role::NotVarying {
            continue;
        }
        let fate = if matches!(r, Role::SysVal | Role::TessLevel)
            && l.stored.contains(&io)
            && !l.read.contains(&io)
        {
            Fate::NoVarying("not read by the consumer".into())
        } else if l.stored.contains(&io) && !l.needed.contains(&io) {
            if l.xfb.contains(&io) {
                Fate::NoVarying("transform feedback only".into())
            } else {
                Fate::Removed("not read by the consumer".into())
            }
        } else if let Some(why) = l.pins.reason(io) {
            Fate::Pinned(why.to_string())
        } else {
            load_fate(l, g, sel, &live, slots, &mut owners, io)
        };
        out.push(VaryingReport { slot: io, fate });
    }
    out
}

fn load_fate(
    l: &Lowered,
    g: &VGraph,
    sel: &Selection,
    live: &BTreeSet<(Id, Ctx)>,
    slots: &BTreeMap<crate::extract::VaryingKey, IoSlot>,
    owners: &mut BTreeMap<IoSlot, IoSlot>,
    io: IoSlot,
) -> Fate {
    let mut best: Option<Fate> = None;
    for load in l.loads.iter().filter(|ld| ld.slot == io) {
        let key = (g.find(load.class), Ctx::C);
        let fate = match sel.choice.get(&key) {
            _ if !live.contains(&key) => Fate::Removed("its value is not used".into()),
            Some(node @ VNode::Xfer(_)) => {
                match crate::extract::dag::varying_key(g, node).and_then(|k| slots.get(&k)) {
                    Some(new) => {
                        let owner = *owners.entry(*new).or_insert(io);
                        if owner == io {
                            Fate::Kept(*new)
                        } else {
                            Fate::MergedInto {
                                slot: *new,
                                with: owner,
                            }
                        }
                    }
                    None => Fate::Removed("no slot".into()),
                }
            }
            _ if !l.stored.contains(&io) => Fate::Propagated(format!(
                "{} (never written)",
                term_text(g, sel, load.class, Ctx::C, 3)
            )),
            _ => Fate::Propagated(term_text(g, sel, load.class, Ctx::C, 3)),
        };
        let rank = |f: &Fate| match f {
            Fate::Kept(_) | Fate::MergedInto { .. } => 0,
            Fate::Propagated(_) => 1,
            _ => 2,
        };
        if best.as_ref().is_none_or(|b| rank(&fate) < rank(b)) {
            best = Some(fate);
        }
    }
    best.unwrap_or_else(|| Fate::Removed("not read by the consumer".into()))
}

impl Report {
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let varyings: Vec<serde_json::Value> = self
            .varyings
            .iter()
            .map(|v| {
                let mut o = serde_json::json!({
                    "slot": v.slot.to_string(),
                    "fate": v.fate.tag(),
                    "detail": v.fate.to_string(),
                });
                match &v.fate {
                    Fate::Kept(s) => o["new_slot"] = s.to_string().into(),
                    Fate::MergedInto { slot, with } => {
                        o["new_slot"] = slot.to_string().into();
                        o["merged_with"] = with.to_string().into();
                    }
                    Fate::Propagated(e) => o["expr"] = e.clone().into(),
                    _ => {}
                }
                o
            })
            .collect();
        serde_json::json!({
            "before": { "components": self.before.components, "slots": self.before.slots },
            "after": { "components": self.after.components, "slots": self.after.slots },
            "cost": { "before": self.cost_before.0, "after": self.cost_after.0, "profile": self.profile },
            "egraph": { "nodes": self.egraph_nodes, "classes": self.egraph_classes, "iterations": self.iterations },
            "stop_reason": self.stop_reason,
            "rules_applied": self.rule_firings,
            "extraction": { "mode": self.extraction, "proved_optimal": self.proved_optimal },
            "time_ms": self.time.as_secs_f64() * 1000.0,
            "fallback": self.fallback,
            "varyings": varyings,
            "moves": self.moves.iter().map(crate::moves::Move::to_json).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "varyings: {} components in {} slots -> {} components in {} slots",
            self.before.components, self.before.slots, self.after.components, self.after.slots
        )?;
        writeln!(
            f,
            "cost ({}): {} -> {}",
            self.profile, self.cost_before, self.cost_after
        )?;
        writeln!(
            f,
            "e-graph: {} nodes, {} classes, {} iterations, stopped: {}; {:.1} ms",
            self.egraph_nodes,
            self.egraph_classes,
            self.iterations,
            self.stop_reason,
            self.time.as_secs_f64() * 1000.0
        )?;
        if let Some(proved) = self.proved_optimal {
            let how = if proved {
                "proved optimal"
            } else {
                "time limit hit"
            };
            writeln!(f, "extraction: {}, {how}", self.extraction)?;
        }
        if let Some(why) = &self.fallback {
            writeln!(f, "input returned unchanged: {why}")?;
        }
        for v in &self.varyings {
            writeln!(f, "  {}: {}", v.slot, v.fate)?;
        }
        for m in &self.moves {
            writeln!(f, "  {m}")?;
        }
        Ok(())
    }
}
