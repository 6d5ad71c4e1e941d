//! The optimizer. [`optimize`] is the driver: it checks the input, specializes known
//! uniforms, applies the SSA pre-pass, and runs rounds of the stage pipeline below
//! (`rounds`: repairs when a round would grow the varyings, then a fixed-point round
//! on its own output). One round (`round`) is the list of stages, each a function from
//! the previous stage's typed output to its own:
//!
//! ```text
//! Pipeline -prepass-> Prepared -lowering-> LoweredPair -saturation-> Saturated
//!   -selection-> Chosen -slots-> SlotMap -emission-> Emitted (+ fates: Account)
//!   -packing-> Packed -> Report
//! ```
//!
//! Stages import only lower layers (`ir`, `egraph`, `extract`, `pack`, `validate`), the
//! report types, and earlier stages' output types; nothing below `round` and `rounds`
//! imports them, and nothing imports this file's driver.

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
mod reassociate;
pub(crate) mod renumber;
pub mod report;
mod round;
mod rounds;
mod saturation;
mod selection;
pub(crate) mod simplify;
mod slots;
mod tcs_merge;
mod unroll;

use std::borrow::Cow;
use std::time::Instant;

use crate::error::Error;
use crate::ir::{InstKind, Pipeline};
use prepass::Prepared;
use round::Round;
use rounds::Rounds;

pub use count::{count_live_varyings, count_varyings};
pub use options::Options;
pub use report::{Counts, Fate, Outcome, Report, Timings, VaryingReport};
// The types of the options' knobs, so that configuring a run needs no internal path.
pub use crate::egraph::{Budgets, Matching, RuleSet, Scheduler};
pub use crate::extract::{Cost, CostModel, Extraction};
pub use crate::pack::PackOptions;

/// Optimizes the varyings of `p`.
pub fn optimize(p: &Pipeline, opts: &Options) -> Result<Outcome, Error> {
    // egg's clock without its calibration, which alone can outlast the run
    // (`egraph::clock`).
    crate::egraph::clock::uncalibrated(|| optimize_on_mocked_clock(p, opts))
}

/// [`optimize`], every e-graph step on egg's mocked clock.
fn optimize_on_mocked_clock(p: &Pipeline, opts: &Options) -> Result<Outcome, Error> {
    let start = Instant::now();
    check_input(p)?;
    let rules = opts.rules.compiled()?;
    let input = visible_input(p, opts);
    let specialized = crate::specialize::specialize_for(&input, &opts.known)?;
    // The input with its counted output loops unrolled: what the pre-pass starts from
    // and what the input is priced as (`account_prepass`), made once for both. A copy
    // only when there is such a loop (a pair of at most `unroll::MAX_UNROLLED_INSTS`
    // more instructions per loop).
    let unrolled = simplify::with_loops_unrolled(&input);
    let prepared = prepass::prepare(specialized.as_ref().map_or(&*unrolled, |s| &s.pipeline));
    // One time budget for the whole run: every round, and every stage in it, works
    // towards the same deadline.
    let base = Round::starting(start, opts.budgets.time);
    let rounds = Rounds {
        p: &prepared.pipeline,
        opts,
        rules,
        base,
    };
    let out = rounds.first()?;
    let mut out = rounds.to_fixed_point(out)?;
    // The rounds are done with the pre-passed and specialized copies: dropping them
    // before the input is lowered once more for its price keeps one copy of the pair
    // (two with an unrolled loop) live there, not three (docs/performance.md, "memory
    // at 100k").
    let Prepared {
        pipeline,
        fates,
        dead_computations_only,
    } = prepared;
    // What the pre-pass started from: the unrolled input unless specialization ran.
    let from_unrolled = specialized.is_none();
    let specialized = specialized.map(|s| s.report);
    if pipeline != *input {
        // A pre-pass that only unrolled counted loops left a pair the rounds priced
        // as the input is priced (`account_prepass`), and with nothing to report; one
        // that also dropped dead computations, a pair priced as the input is without
        // them, which is what the report's cost before means.
        let unrolled_only = *unrolled == pipeline || (from_unrolled && dead_computations_only);
        let priced_alike = fates.is_empty() && unrolled_only && !has_xfb(&pipeline);
        drop(pipeline);
        if !priced_alike {
            account_prepass(&mut out.report, &input, &unrolled, opts, fates, base);
        }
    }
    if let Some(s) = specialized {
        crate::specialize::account(&mut out.report, &input, s);
    }
    out.report.time = start.elapsed();
    report_late_finish(&mut out.report, opts.budgets.time);
    Ok(out)
}

/// Whether `p`'s producer captures outputs for transform feedback: a repair round
/// then lowers it with its read captures pinned, and prices it so.
fn has_xfb(p: &Pipeline) -> bool {
    let mut xfb = false;
    p.producer.for_each_inst(|inst| {
        xfb |= matches!(&inst.kind, InstKind::StoreOutput { xfb: Some(_), .. });
    });
    xfb
}

/// A run that ended past its time budget without any stage stopping early spent the
/// difference in work that does not poll the deadline once started (packing, the
/// report's accounting); the report says so rather than staying silent.
fn report_late_finish(report: &mut Report, budget: std::time::Duration) {
    if report.time > budget && report.budget_stops.is_empty() {
        let late = (report.time - budget).as_secs_f64() * 1000.0;
        let limit = crate::egraph::saturate::Stop::TimeLimit(budget);
        report.budget_stops.push(format!(
            "run: {limit} passed {late:.1} ms before the run ended (stages past their \
             last deadline check finished their work)"
        ));
    }
}

/// Validates `p` and bounds its nesting: lowering and emission follow the nesting one
/// stack frame per level.
fn check_input(p: &Pipeline) -> Result<(), Error> {
    crate::validate::validate(p)?;
    for shader in [&p.producer, &p.consumer] {
        if crate::ir::too_deep(&shader.body).is_some() {
            return Err(Error::Limit(format!(
                "ifs and loops nest more than {} deep",
                crate::ir::MAX_NESTING
            )));
        }
    }
    Ok(())
}

/// `p` as the optimizer sees it: with every resource visible to both stages under
/// `assume_visible`.
fn visible_input<'a>(p: &'a Pipeline, opts: &Options) -> Cow<'a, Pipeline> {
    if opts.assume_visible && p.visibility != Default::default() {
        Cow::Owned(Pipeline {
            visibility: Default::default(),
            ..p.clone()
        })
    } else {
        Cow::Borrowed(p)
    }
}

/// Reports the pre-pass: counts and cost of the real input, the merged colours' fates,
/// pointing at wherever their surviving twin ended up, and the propagated constant
/// outputs (replacing the "not read" fate the run gave their producer stores).
///
/// Pricing the input takes one more lowering, of `unrolled`, the input with its
/// counted output loops unrolled (`simplify::with_loops_unrolled`: as written,
/// lowering would see none of their work); past the time budget it is skipped (or
/// abandoned at the hard deadline) and the pre-passed pair's cost stands.
fn account_prepass(
    report: &mut Report,
    input: &Pipeline,
    unrolled: &Pipeline,
    opts: &Options,
    fates: Vec<VaryingReport>,
    round: Round,
) {
    report.before = count_varyings(input);
    let priced = match round.past_deadline() {
        true => None,
        false => lowering::price_within(unrolled, opts, round.hard_deadline),
    };
    match priced {
        Some(cost) => report.cost_before = cost,
        None => report.budget_stops.push(
            "report: time-limit, the cost before is that of the pair after the pre-pass".into(),
        ),
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
