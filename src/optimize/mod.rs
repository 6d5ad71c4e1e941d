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

pub mod assign;
pub(crate) mod count;
mod emission;
pub mod emit;
mod fates;
mod instance;
mod lowering;
pub mod moves;
mod options;
mod packing;
pub(crate) mod prepass;
pub mod renumber;
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
pub use instance::Instance;
pub use options::Options;
pub use report::{Counts, Fate, Outcome, Report, Timings, VaryingReport};

/// Optimizes the varyings of `p`.
pub fn optimize(p: &Pipeline, opts: &Options) -> Result<Outcome, Error> {
    let start = Instant::now();
    crate::validate::validate(p)?;
    let rewrites = opts.rules.rewrites()?;
    let input = p;
    let specialized = crate::specialize::specialize_for(input, &opts.known)?;
    let prepared = prepass::prepare(specialized.as_ref().map_or(input, |s| &s.pipeline));
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
        // The clean-ups may find more on the output (an `if` whose condition became a
        // propagated constant); their fates show in the composed report as removals.
        let mut next = out.pipeline.clone();
        simplify::simplify(&mut next);
        // An unchanged pair would only repeat the first (deterministic) run, whose
        // result was either taken or already beaten by a repair round.
        if next == *p {
            break;
        }
        let again = run(&next, opts, &rewrites, Round::default())?;
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
        account_prepass(&mut out.report, input, opts, prepared.fates);
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
fn account_prepass(
    report: &mut Report,
    input: &Pipeline,
    opts: &Options,
    fates: Vec<VaryingReport>,
) {
    report.before = count_varyings(input);
    report.cost_before = lowering::lower_pair(input, opts, false).cost_before;
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
    let lowered = lowering::lower_pair(p, opts, round.pin_xfb_reads);
    timings.lower = lap();
    let saturated = saturation::saturate_pair(&lowered, rewrites, &opts.budgets);
    timings.saturate = lap();
    let chosen = selection::select(p, opts, &lowered, &saturated, round.as_written);
    timings.extract = lap();
    let slots = slots::assign(p, &lowered, &saturated, &chosen)?;
    let emitted = emission::emit(p, &lowered, &saturated, &chosen, &slots);
    let account = match emitted.failure {
        None => fates::account(p, &lowered, &saturated, &chosen, &slots),
        Some(_) => fates::Account::default(),
    };
    timings.emit = lap();
    let packed = packing::pack(emitted, account, opts, &saturated, &chosen, &slots)?;
    timings.pack = lap();
    Ok(outcome(
        p, opts, lowered, &saturated, chosen, packed, timings,
    ))
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
    };
    Outcome {
        pipeline: packed.pipeline,
        report,
    }
}
