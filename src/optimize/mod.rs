//! The optimizer. [`optimize`] validates the pair, applies the SSA pre-pass, and runs
//! rounds of the stage pipeline below (retrying when a round would grow the varyings,
//! and once more on its own output so that optimizing the result again changes
//! nothing). One round, [`run`], is the list of stages, each a function from the
//! previous stage's typed output to its own:
//!
//! ```text
//! Pipeline -prepass-> Prepared -lowering-> LoweredPair -saturation-> Saturated
//!   -selection-> Chosen -slots-> SlotMap -emission-> Emitted (+ fates: Account)
//!   -packing-> Packed -> Report
//! ```
//!
//! Stages import only lower layers (`ir`, `egraph`, `extract`, `pack`, `validate`), the
//! report types, and earlier stages' output types; nothing below this file imports it.

pub(crate) mod assign;
pub(crate) mod count;
mod emission;
pub(crate) mod emit;
mod fates;
pub(crate) mod instance;
mod lowering;
pub(crate) mod moves;
mod options;
mod packing;
pub(crate) mod prepass;
pub(crate) mod renumber;
pub mod report;
mod saturation;
mod selection;
pub(crate) mod simplify;
mod slots;

use std::time::{Duration, Instant};

use crate::egraph::analysis::VAnalysis;
use crate::egraph::saturate::Stop;
use crate::egraph::VNode;
use crate::error::Error;
use crate::ir::Pipeline;

pub use count::{count_live_varyings, count_varyings};
pub use options::Options;
pub use report::{Counts, Fate, Outcome, Report, Timings, VaryingReport};
// The types of the options' knobs, so that configuring a run needs no internal path.
pub use crate::egraph::{Budgets, Matching, RuleSet, Scheduler};
pub use crate::extract::{Cost, CostModel, Extraction};
pub use crate::pack::PackOptions;

/// Optimizes the varyings of `p`.
pub fn optimize(p: &Pipeline, opts: &Options) -> Result<Outcome, Error> {
    let start = Instant::now();
    crate::validate::validate(p)?;
    // Lowering and emission follow the nesting one stack frame per level: bound it.
    for shader in [&p.producer, &p.consumer] {
        if crate::ir::too_deep(&shader.body).is_some() {
            return Err(Error::Limit(format!(
                "ifs and loops nest more than {} deep",
                crate::ir::MAX_NESTING
            )));
        }
    }
    let rewrites = opts.rules.rewrites()?;
    let visible;
    let p = if opts.assume_visible && p.visibility != Default::default() {
        visible = Pipeline {
            visibility: Default::default(),
            ..p.clone()
        };
        &visible
    } else {
        p
    };
    let input = p;
    let specialized = crate::specialize::specialize_for(input, &opts.known)?;
    let prepared = prepass::prepare(specialized.as_ref().map_or(input, |s| &s.pipeline));
    let p = &prepared.pipeline;
    // One time budget for the whole run: every round, and every stage in it, works
    // towards the same deadline (a limit too large to add is no limit).
    let base = Round {
        deadline: start.checked_add(opts.budgets.time),
        hard_deadline: start.checked_add(opts.budgets.time.mul_f64(1.0 + GRACE)),
        ..Round::default()
    };
    // A round that replaces an earlier one; the report counts both rounds' time.
    let redo = |earlier: &Outcome, round: Round| -> Result<Outcome, Error> {
        let mut out = run(p, opts, &rewrites, round)?;
        out.report.timings = out.report.timings + earlier.report.timings;
        out.report
            .budget_stops
            .splice(0..0, earlier.report.budget_stops.iter().cloned());
        Ok(out)
    };
    let mut out = run(p, opts, &rewrites, base)?;
    if out.report.after.slots > out.report.before.slots {
        // A read xfb output got a varying of its own next to its kept xfb store;
        // letting one store serve both keeps the slot count.
        out = match base.past_deadline() {
            true => unchanged(out, p, "the time limit ended before the xfb round"),
            false => redo(
                &out,
                Round {
                    pin_xfb_reads: true,
                    ..base
                },
            )?,
        };
    }
    if grew(&out.report) {
        // Extraction's estimate of how the varyings pack missed (pinned components
        // keep their vec4s): varyings never grow, so keep the selection as written.
        out = match base.past_deadline() {
            true => unchanged(out, p, "the time limit ended before the as-written round"),
            false => redo(
                &out,
                Round {
                    as_written: true,
                    ..base
                },
            )?,
        };
        if grew(&out.report) {
            out = unchanged(out, p, "the optimized varyings would not pack smaller");
        }
    }
    for _ in 0..2 {
        // Under a budget the graph was cut short: a second run meets the same budget,
        // and the report already says why the result may not be a fixed point.
        let saturated = out.report.stop_reason == Stop::Saturated.to_string();
        if out.report.fallback.is_some() || !saturated {
            break;
        }
        if base.past_deadline() {
            let why = "fixed-point round: time-limit, skipped";
            out.report.budget_stops.push(why.into());
            break;
        }
        // The clean-ups may find more on the output (an `if` whose condition became a
        // propagated constant); their fates show in the composed report as removals.
        let mut next = out.pipeline.clone();
        simplify::simplify(&mut next);
        // An unchanged pair would only repeat the first (deterministic) run, whose
        // result was either taken or already beaten by a repair round. A round that
        // changed no varying count and left nothing for the clean-ups has met no
        // opportunity a second run could build on.
        let still = out.report.after == out.report.before && next == out.pipeline;
        if next == *p || still {
            break;
        }
        let again = run(&next, opts, &rewrites, base)?;
        let (a, b) = (out.report.after, again.report.after);
        let better = b.slots <= a.slots && (b.components, b.slots) < (a.components, a.slots);
        if !better || again.report.fallback.is_some() {
            break;
        }
        out = Outcome {
            pipeline: again.pipeline,
            report: report::compose::compose(out.report, again.report),
        };
    }
    if p != input {
        account_prepass(&mut out.report, input, opts, prepared.fates, base);
    }
    if let Some(s) = specialized {
        crate::specialize::account(&mut out.report, input, s.report);
    }
    out.report.time = start.elapsed();
    Ok(out)
}

/// Whether a round left more varying components or slots than its input had.
fn grew(r: &Report) -> bool {
    r.after.components > r.before.components || r.after.slots > r.before.slots
}

/// Reports the pre-pass: counts and cost of the real input, the merged colours' fates,
/// pointing at wherever their surviving twin ended up, and the propagated constant
/// outputs (replacing the "not read" fate the run gave their producer stores).
///
/// Pricing the input takes one more lowering; past the time budget it is skipped
/// (or abandoned at the hard deadline) and the pre-passed pair's cost stands.
fn account_prepass(
    report: &mut Report,
    input: &Pipeline,
    opts: &Options,
    fates: Vec<VaryingReport>,
    round: Round,
) {
    report.before = count_varyings(input);
    if !round.past_deadline() {
        let priced = lowering::lower_pair_within(input, opts, false, round.hard_deadline);
        if let Some(l) = priced {
            report.cost_before = l.cost_before;
        }
    }
    for mut merged in fates {
        if let Fate::MergedInto { slot, with } = &mut merged.fate {
            let now = report.varyings.iter().find(|v| v.slot == *with);
            match now.map(|v| &v.fate) {
                Some(Fate::Kept(s)) | Some(Fate::MergedInto { slot: s, .. }) => *slot = *s,
                _ => {}
            }
        }
        match report.varyings.iter_mut().find(|v| v.slot == merged.slot) {
            Some(existing) => *existing = merged,
            None => report.varyings.push(merged),
        }
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
    /// When the whole run's time budget ends (`None`: no time budget): lowering,
    /// saturation and extraction's search stop here.
    deadline: Option<Instant>,
    /// The latest a round may still be working (the deadline plus a grace of
    /// `GRACE` of the budget): extraction's preparation, emission and packing check
    /// it between steps and give the input back unchanged past it.
    hard_deadline: Option<Instant>,
}

/// The share of the time budget the stages after the deadline may still use to
/// finish what extraction chose (the target is the whole run within 1.2 × T).
const GRACE: f64 = 0.1;

/// Extraction, emission and packing take about twice as long as lowering on large
/// pairs (docs/performance.md); saturation stops this many lowering times before
/// the deadline so that they fit.
const AFTER_SATURATION_PER_LOWERING: u32 = 3;

/// Emission takes about as long as lowering on large pairs: extraction's search
/// stops this many lowering times before the deadline.
const AFTER_EXTRACTION_PER_LOWERING: u32 = 1;

impl Round {
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn past_hard_deadline(&self) -> bool {
        self.hard_deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Saturation's budgets: the run's, with the time left until the deadline minus
    /// what extraction and emission are expected to need (`reserve`).
    fn saturation_budgets(&self, budgets: &Budgets, reserve: Duration) -> Budgets {
        let time = match self.deadline {
            Some(d) => d.checked_sub(reserve).map_or(Duration::ZERO, |s| {
                s.saturating_duration_since(Instant::now())
            }),
            None => budgets.time,
        };
        Budgets { time, ..*budgets }
    }
}

/// One round: the stages in order, each timed.
fn run(
    p: &Pipeline,
    opts: &Options,
    rewrites: &[egg::Rewrite<VNode, VAnalysis>],
    round: Round,
) -> Result<Outcome, Error> {
    let mut timings = Timings::default();
    let mut clock = Instant::now();
    let mut lap = || {
        let now = Instant::now();
        let d = now - clock;
        clock = now;
        d
    };
    let lowered = lowering::lower_pair_within(p, opts, round.pin_xfb_reads, round.deadline);
    timings.lower = lap();
    let Some(lowered) = lowered else {
        let why = "lowering: {limit}, the input was returned unchanged";
        return Ok(out_of_time(p, opts, timings, why));
    };
    let reserve = timings.lower * AFTER_SATURATION_PER_LOWERING;
    if round
        .hard_deadline
        .is_some_and(|h| Instant::now() + reserve >= h)
    {
        // What lowering took says extraction and emission would end past the budget.
        let why = "saturation: {limit}, not started: extraction and emission of a graph \
                   this large would not fit; the input was returned unchanged";
        return Ok(out_of_time(p, opts, timings, why));
    }
    let budgets = round.saturation_budgets(&opts.budgets, reserve);
    let mut saturated = saturation::saturate_pair(&lowered, rewrites, &budgets);
    timings.saturate = lap();
    let mut budget_stops = vec![];
    if let Stop::TimeLimit(_) = saturated.stats.stop {
        // Named by the budget the user set, not by what was left of it.
        saturated.stats.stop = Stop::TimeLimit(opts.budgets.time);
    }
    if saturated.stats.stop != Stop::Saturated {
        budget_stops.push(format!("saturation: {}", saturated.stats.stop));
    }
    let emission_reserve = timings.lower * AFTER_EXTRACTION_PER_LOWERING;
    let chosen = selection::select(
        p,
        opts,
        &lowered,
        &saturated,
        round.as_written,
        round
            .deadline
            .map(|d| d.checked_sub(emission_reserve).unwrap_or(d)),
    );
    if chosen.deadline_hit {
        budget_stops.push(format!(
            "extraction: time-limit ({:.3}s), the best selection found by then was used",
            opts.budgets.time.as_secs_f64()
        ));
    }
    timings.extract = lap();
    let slots = slots::assign(p, &lowered, &saturated, &chosen)?;
    let emitted = emission::emit(
        p,
        &lowered,
        &saturated,
        &chosen,
        &slots,
        round.hard_deadline,
    );
    if emitted.out_of_time || round.past_hard_deadline() {
        timings.emit = lap();
        let why = "emission: {limit}, the input was returned unchanged";
        return Ok(out_of_time(p, opts, timings, why));
    }
    let account = match emitted.failure {
        None => fates::account(p, &lowered, &saturated, &chosen, &slots),
        Some(_) => fates::Account::default(),
    };
    timings.emit = lap();
    let packed = packing::pack(emitted, account, opts, &saturated, &chosen, &slots)?;
    timings.pack = lap();
    let mut out = outcome(p, opts, lowered, &saturated, chosen, packed, timings);
    out.report.budget_stops = budget_stops;
    Ok(out)
}

/// The round's result and report, from every stage's output.
fn outcome(
    p: &Pipeline,
    opts: &Options,
    lowered: lowering::LoweredPair,
    saturated: &saturation::Saturated,
    chosen: selection::Chosen<'_>,
    packed: packing::Packed,
    timings: Timings,
) -> Outcome {
    let stats = &saturated.stats;
    let report = Report {
        varyings: packed.account.varyings,
        before: count_varyings(p),
        after: packed.after,
        cost_before: lowered.cost_before,
        cost_after: match packed.fallback {
            None => chosen.cost.total,
            Some(_) => lowered.cost_before,
        },
        profile: opts.cost.name.clone(),
        egraph_nodes: stats.nodes,
        egraph_classes: stats.classes,
        iterations: stats.iterations,
        stop_reason: stats.stop.to_string(),
        time: Duration::ZERO,
        timings,
        rule_firings: stats.applied.clone(),
        extraction: opts.extraction.name(),
        proved_optimal: chosen.proved_optimal,
        fallback: packed.fallback,
        moves: packed.account.moves,
        specialization: None,
        budget_stops: vec![],
    };
    Outcome {
        pipeline: packed.pipeline,
        report,
    }
}

/// `out` with the (pre-passed) input `p` instead of its pipeline, saying `why`.
fn unchanged(mut out: Outcome, p: &Pipeline, why: &str) -> Outcome {
    let r = &mut out.report;
    r.fallback = Some(why.into());
    r.after = r.before;
    r.cost_after = r.cost_before;
    r.moves.clear();
    r.varyings.clear();
    out.pipeline = p.clone();
    out
}

/// The input unchanged when the time budget ended in a stage (`why`, where `{limit}`
/// names the budget): nothing after that stage runs, and no cost is computed (the
/// report's costs are 0).
fn out_of_time(p: &Pipeline, opts: &Options, timings: Timings, why: &str) -> Outcome {
    let counts = count_varyings(p);
    let limit = Stop::TimeLimit(opts.budgets.time);
    let stage = why.split(':').next().unwrap_or("a stage");
    let report = Report {
        varyings: vec![],
        before: counts,
        after: counts,
        cost_before: Default::default(),
        cost_after: Default::default(),
        profile: opts.cost.name.clone(),
        egraph_nodes: 0,
        egraph_classes: 0,
        iterations: 0,
        stop_reason: limit.to_string(),
        time: Duration::ZERO,
        timings,
        rule_firings: Default::default(),
        extraction: opts.extraction.name(),
        proved_optimal: None,
        fallback: Some(format!("the time limit ended during {stage}")),
        moves: vec![],
        specialization: None,
        budget_stops: vec![why.replace("{limit}", &limit.to_string())],
    };
    Outcome {
        pipeline: p.clone(),
        report,
    }
}
