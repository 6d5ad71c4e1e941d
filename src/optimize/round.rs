//! One optimization round: the stages in order (lowering, saturation, selection, slot
//! assignment, emission with its fates, packing), each timed, all working towards the
//! run's one deadline. The driver in `mod.rs` decides how many rounds run and which
//! result stands.

use std::time::{Duration, Instant};

use super::count::count_varyings;
use super::options::Options;
use super::report::{Outcome, Report, Timings};
use super::{emission, fates, lowering, packing, saturation, selection, slots};
use crate::egraph::saturate::{SaturationStats, Stop};
use crate::egraph::Budgets;
use crate::egraph::Compiled;
use crate::error::Error;
use crate::extract::Cost;
use crate::ir::Pipeline;

/// How one optimization round chooses.
#[derive(Clone, Copy, Default)]
pub(super) struct Round {
    /// Pin consumer reads of outputs that stay exported anyway (captured by transform
    /// feedback, or beside a pinned clip- or cull-distance read).
    pub(super) pin_exported_reads: bool,
    /// Keep the as-written selection instead of the extracted one.
    pub(super) as_written: bool,
    /// A round wanted only for new varyings (the fixed-point round): when the
    /// selection transfers what the input as written does, the round ends before
    /// emission with its input, which is all emitting it could give back. Emission,
    /// fates and packing are about a third of a round on small pairs.
    pub(super) new_varyings_only: bool,
    /// The model cost of the round's input when an earlier round priced it already
    /// (the fixed-point round's input is the last round's result): lowering then does
    /// not price it again. The report is all that reads it.
    pub(super) input_cost: Option<Cost>,
    /// When the whole run's time budget ends (`None`: no time budget): lowering,
    /// saturation and extraction's search stop here.
    pub(super) deadline: Option<Instant>,
    /// The latest a round may still be working (the deadline plus a grace of
    /// `GRACE` of the budget): extraction's preparation, emission and packing check
    /// it between steps and give the input back unchanged past it.
    pub(super) hard_deadline: Option<Instant>,
}

/// The share of the time budget the stages after the deadline may still use to
/// finish what extraction chose (the target is the whole run within 1.2 × T).
pub(super) const GRACE: f64 = 0.1;

/// Extraction, emission and packing take about twice as long as lowering on large
/// pairs (docs/performance.md); saturation stops this many lowering times before
/// the deadline so that they fit.
const AFTER_SATURATION_PER_LOWERING: u32 = 3;

/// Emission takes about as long as lowering on large pairs: extraction's search
/// stops this many lowering times before the deadline.
const AFTER_EXTRACTION_PER_LOWERING: u32 = 1;

impl Round {
    /// The first round of a run that started at `start` under the time budget `time`
    /// (a deadline too far to represent is no deadline).
    pub(super) fn starting(start: Instant, time: Duration) -> Round {
        let hard = time.checked_add(time.mul_f64(GRACE));
        Round {
            deadline: start.checked_add(time),
            hard_deadline: hard.and_then(|h| start.checked_add(h)),
            ..Round::default()
        }
    }

    pub(super) fn past_deadline(&self) -> bool {
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

/// A round's outcome, with what tells whether another round may find more.
pub(super) struct Ran {
    /// The result and its report.
    pub outcome: Outcome,
    /// Whether the SSA clean-ups folded something in the emitted result
    /// ([`emission::Emitted::folded`]): the e-graph chose without seeing it.
    pub folded: bool,
}

impl From<Outcome> for Ran {
    /// A round that emitted nothing of its own (it stopped at the time limit).
    fn from(outcome: Outcome) -> Ran {
        Ran {
            outcome,
            folded: false,
        }
    }
}

/// One round: the stages in order, each timed.
pub(super) fn run(
    p: &Pipeline,
    opts: &Options,
    rules: &Compiled,
    round: Round,
) -> Result<Ran, Error> {
    let mut timings = Timings::default();
    let mut clock = Instant::now();
    let mut lap = || {
        let now = Instant::now();
        let d = now - clock;
        clock = now;
        d
    };
    let lowered = lowering::lower_pair_within(
        p,
        opts,
        round.pin_exported_reads,
        round.deadline,
        round.input_cost,
    );
    timings.lower = lap();
    let Some(lowered) = lowered else {
        let why = "lowering: {limit}, the input was returned unchanged";
        return Ok(out_of_time(p, opts, timings, None, why).into());
    };
    let reserve = timings.lower * AFTER_SATURATION_PER_LOWERING;
    if round
        .hard_deadline
        .is_some_and(|h| Instant::now() + reserve >= h)
    {
        // What lowering took says extraction and emission would end past the budget.
        let why = "saturation: {limit}, not started: extraction and emission of a graph \
                   this large would not fit; the input was returned unchanged";
        return Ok(out_of_time(p, opts, timings, Some(lowered.cost_before), why).into());
    }
    let budgets = round.saturation_budgets(&opts.budgets, reserve);
    let mut saturated = saturation::saturate_pair(&lowered, rules, &budgets);
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
    if round.new_varyings_only && chosen.transfers_as_written {
        let kept = nothing_new(p, opts, timings, lowered.cost_before, &saturated.stats);
        return Ok(kept.into());
    }
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
        return Ok(out_of_time(p, opts, timings, Some(lowered.cost_before), why).into());
    }
    let account = match emitted.failure {
        None => fates::account(p, &lowered, &saturated, &chosen, &slots),
        Some(_) => fates::Account::default(),
    };
    timings.emit = lap();
    let folded = emitted.folded;
    let packed = packing::pack(emitted, account, opts, &saturated, &chosen, &slots)?;
    timings.pack = lap();
    let mut out = outcome(p, opts, lowered, &saturated, chosen, packed, timings);
    out.report.budget_stops = budget_stops;
    Ok(Ran {
        outcome: out,
        folded,
    })
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
        cost_priced: true,
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

/// The input unchanged, as a round wanted only for new varyings ends when its
/// selection transfers what the input does (priced at `cost`, in a graph that
/// `stats` describes); the report says why.
fn nothing_new(
    p: &Pipeline,
    opts: &Options,
    timings: Timings,
    cost: Cost,
    stats: &SaturationStats,
) -> Outcome {
    let why = "the selection transfers what the input does";
    let mut out = input_as_result(p, opts, timings, Some(cost), why.into());
    let r = &mut out.report;
    (r.egraph_nodes, r.egraph_classes) = (stats.nodes, stats.classes);
    r.iterations = stats.iterations;
    r.stop_reason = stats.stop.to_string();
    r.rule_firings = stats.applied.clone();
    out
}

/// The input unchanged when the time budget ended in a stage (`why`, where `{limit}`
/// names the budget): nothing after that stage runs. `priced` is the input's model
/// cost when lowering finished; without it the report says the cost is unknown
/// (`cost_priced` false) rather than showing zeros as if they were measured.
fn out_of_time(
    p: &Pipeline,
    opts: &Options,
    timings: Timings,
    priced: Option<Cost>,
    why: &str,
) -> Outcome {
    let limit = Stop::TimeLimit(opts.budgets.time);
    let stage = why.split(':').next().unwrap_or("a stage");
    let fallback = format!("the time limit ended during {stage}");
    let mut out = input_as_result(p, opts, timings, priced, fallback);
    out.report.stop_reason = limit.to_string();
    out.report.budget_stops = vec![why.replace("{limit}", &limit.to_string())];
    out
}

/// `p` as a round's result, for the reason `fallback`, with an empty e-graph.
fn input_as_result(
    p: &Pipeline,
    opts: &Options,
    timings: Timings,
    priced: Option<Cost>,
    fallback: String,
) -> Outcome {
    let counts = count_varyings(p);
    let report = Report {
        varyings: vec![],
        before: counts,
        after: counts,
        cost_before: priced.unwrap_or_default(),
        cost_after: priced.unwrap_or_default(),
        cost_priced: priced.is_some(),
        profile: opts.cost.name.clone(),
        egraph_nodes: 0,
        egraph_classes: 0,
        iterations: 0,
        stop_reason: String::new(),
        time: Duration::ZERO,
        timings,
        rule_firings: Default::default(),
        extraction: opts.extraction.name(),
        proved_optimal: None,
        fallback: Some(fallback),
        moves: vec![],
        specialization: None,
        budget_stops: vec![],
    };
    Outcome {
        pipeline: p.clone(),
        report,
    }
}
