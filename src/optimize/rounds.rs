//! Which rounds run and which result stands: the first round; the repair rounds when
//! its result would grow the varyings (reads of outputs exported anyway pinned, then
//! the selection as written, then the input unchanged); and a fixed-point round on the
//! result, so that optimizing the output again changes nothing more. That round is
//! skipped where one round is known to be final (a plain 32-bit interface from a
//! producer other than a TCS: `known_final`; a result whose TCS only copies its own
//! vertex's inputs and stores uniform expressions: `pass_through_tcs`) unless the
//! clean-ups folded something the e-graph did not see, and after a round that changed
//! no count unless it made inputs flat. Every round works towards the same deadline
//! ([`Round`]); past it, the remaining rounds are skipped and the report says so.

use super::options::Options;
use super::report::{compose, Outcome, Report};
use super::round::{run, Ran, Round};
use super::simplify;
use crate::egraph::saturate::Stop;
use crate::egraph::Compiled;
use crate::error::Error;
use std::collections::BTreeSet;

use crate::ir::{Half, InstKind, Pipeline, SlotClass, Stage, Stmt, SystemValue};

/// The fixed parts of every round of one `optimize` call.
pub(super) struct Rounds<'a> {
    /// The pre-passed pair every round starts from.
    pub p: &'a Pipeline,
    pub opts: &'a Options,
    pub rules: &'a Compiled,
    /// The first round's settings, carrying the run's deadlines.
    pub base: Round,
}

/// How many extra rounds may run on a result that is not yet a fixed point.
const FIXED_POINT_ROUNDS: usize = 2;

impl Rounds<'_> {
    /// The first round, repaired where its result would grow the varyings.
    pub fn first(&self) -> Result<Ran, Error> {
        let mut out = run(self.p, self.opts, self.rules, self.base)?;
        if out.outcome.report.after.slots > out.outcome.report.before.slots {
            // A read output got a varying of its own next to a store that stays
            // exported anyway (an xfb capture, a clip-distance vec4 with a pinned
            // read); letting that store serve the read keeps the slot count.
            let exported = Round {
                pin_exported_reads: true,
                ..self.base
            };
            out = self.redo(
                out,
                exported,
                "the time limit ended before the exported-reads round",
            )?;
        }
        if grew(&out.outcome.report) {
            // Extraction's estimate of how the varyings pack missed (pinned components
            // keep their vec4s): varyings never grow, so keep the selection as written.
            let as_written = Round {
                as_written: true,
                ..self.base
            };
            let why = "the time limit ended before the as-written round";
            out = self.redo(out, as_written, why)?;
            if grew(&out.outcome.report) {
                let why = "the optimized varyings would not pack smaller";
                out = unchanged(out.outcome, self.p, why).into();
            }
        }
        Ok(out)
    }

    /// A round that replaces `earlier`, counting both rounds' time and budget stops;
    /// past the deadline, the input unchanged (saying `late`).
    fn redo(&self, earlier: Ran, round: Round, late: &str) -> Result<Ran, Error> {
        let earlier = earlier.outcome;
        if self.base.past_deadline() {
            return Ok(unchanged(earlier, self.p, late).into());
        }
        let mut out = run(self.p, self.opts, self.rules, round)?;
        let report = &mut out.outcome.report;
        report.timings = report.timings + earlier.report.timings;
        let stops = earlier.report.budget_stops.iter().cloned();
        report.budget_stops.splice(0..0, stops);
        Ok(out)
    }

    /// Runs more rounds on `ran`'s own result while they find fewer varyings.
    pub fn to_fixed_point(&self, ran: Ran) -> Result<Outcome, Error> {
        let (mut out, mut folded) = (ran.outcome, ran.folded);
        for _ in 0..FIXED_POINT_ROUNDS {
            // Under a budget the graph was cut short: a second run meets the same
            // budget, and the report already says why the result may not be a fixed
            // point.
            let saturated = out.report.stop_reason == Stop::Saturated.to_string();
            if out.report.fallback.is_some() || !saturated {
                break;
            }
            if self.base.past_deadline() {
                let why = "fixed-point round: time-limit, skipped";
                out.report.budget_stops.push(why.into());
                break;
            }
            let Some(next) = self.worth_another_round(&out, folded) else {
                break;
            };
            let Ran {
                outcome: again,
                folded: again_folded,
            } = run(&next, self.opts, self.rules, self.fixed_point(&out))?;
            let (a, b) = (out.report.after, again.report.after);
            let better = b.slots <= a.slots && (b.components, b.slots) < (a.components, a.slots);
            if !better || again.report.fallback.is_some() {
                break;
            }
            out = Outcome {
                pipeline: again.pipeline,
                report: compose::compose(out.report, again.report),
            };
            folded = again_folded;
        }
        Ok(out)
    }

    /// The settings of a fixed-point round on `out`'s result: wanted only for new
    /// varyings, its input priced as `out` was (the composed report keeps the first
    /// round's price of the input, so this one is never shown).
    fn fixed_point(&self, out: &Outcome) -> Round {
        Round {
            new_varyings_only: true,
            input_cost: Some(out.report.cost_after),
            ..self.base
        }
    }

    /// The input of one more round on `out`'s result, or `None` when it could only
    /// repeat what the last round did. `folded`: the last round's emission folded
    /// something its e-graph did not see.
    fn worth_another_round(&self, out: &Outcome, folded: bool) -> Option<Pipeline> {
        // The clean-ups may find more on the output (an `if` whose condition became a
        // propagated constant); their fates show in the composed report as removals.
        // Emission ran them already: what they folded there (a product with a
        // propagated zero) the graph chose without, so a varying only that product
        // read is still there to remove. Either way the result is not known final.
        let mut next = out.pipeline.clone();
        simplify::simplify(&mut next);
        let unseen = folded || next != out.pipeline;
        if !unseen && known_final(self.p) && known_final(&out.pipeline) {
            return None;
        }
        if !unseen && pass_through_tcs(&out.pipeline) {
            return None;
        }
        // An unchanged pair would only repeat the first (deterministic) run, whose
        // result was either taken or already beaten by a repair round. A round that
        // changed no varying count and left nothing for the clean-ups has met no
        // opportunity a second run could build on.
        // Except when it made interpolated inputs flat: the next lowering applies the
        // flat motion laws to them (tests/opt/fixed_point_round_made_flat.pair).
        let still =
            out.report.after == out.report.before && !unseen && !made_flat(self.p, &out.pipeline);
        (next != *self.p && !still).then_some(next)
    }
}

/// Whether one round on `p` is known to reach the fixed point, so that the
/// fixed-point round may be skipped: a producer other than a TCS, without
/// transform-feedback captures, 16-bit halves or colour outputs, and with no varying
/// indexed dynamically. Random pairs found the first round short of the fixed point
/// only outside this class: TCS producers (patch copies of per-vertex values, re-read
/// by the TES), captured outputs and 16-bit halves (which the packer places
/// differently once re-located), colour outputs next to equal generic ones, and a
/// value that sat only in a pinned, dynamically indexed array until the first round
/// re-located a copy of it (tests/opt/fixed_point_round_indirect.pair). Inside it, no generated pair changes when the
/// round is skipped (32,000 VS/FS pairs over eight seeds, 48,000 of every stage pair
/// over twelve), nor does any of the 315 real pairs (docs/performance.md). Zero
/// products and constant conditions left by propagation are caught separately, by
/// the clean-ups changing the output, at emission or on it
/// (tests/opt/fixed_point_round_folded_at_emission.pair).
fn known_final(p: &Pipeline) -> bool {
    if p.producer.stage() == Stage::TessCtrl {
        return false;
    }
    let mut plain = true;
    p.producer.for_each_inst(|inst| {
        if let InstKind::StoreOutput { slot, xfb, .. } = &inst.kind {
            let colour = slot.slot.class() == SlotClass::Color;
            plain &= xfb.is_none() && slot.half == Half::Full && !colour;
        }
        plain &= inst.kind.indirect().is_none();
    });
    p.consumer
        .for_each_inst(|inst| plain &= inst.kind.indirect().is_none());
    plain
}

/// Whether `p` is a TCS that hands the TES only copies of its own vertex's inputs and
/// uniform expressions: straight-line code, every per-vertex store a copy of an input
/// loaded at `invocation_id` into the same vertex, every other store a uniform
/// expression, no read-backs, no 16-bit halves, and no varying indexed dynamically
/// in either stage. What a TCS round leaves for a second one (patch copies of
/// per-vertex values, off-vertex stores, backward motion that fuses patch outputs
/// once their neighbours went) needs TCS code this shape does not have, so the
/// fixed-point round is skipped on such a result as on `known_final` ones. Generated
/// TCS/TES pairs whose first round ends in this shape do not change on a second run
/// (docs/performance.md, "Seventeenth 2026-11-29 session").
fn pass_through_tcs(p: &Pipeline) -> bool {
    let tcs = &p.producer;
    if tcs.stage() != Stage::TessCtrl || !tcs.body.iter().all(|s| matches!(s, Stmt::Inst(_))) {
        return false;
    }
    let uniform = super::prepass::uniform_values(tcs);
    let mut invocation = BTreeSet::new();
    let mut own_inputs = BTreeSet::new();
    let mut plain = true;
    tcs.for_each_inst(|inst| {
        plain &= match &inst.kind {
            InstKind::LoadSystemValue(SystemValue::InvocationId) => {
                invocation.extend(inst.result);
                true
            }
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect: None,
            } if slot.half == Half::Full && invocation.contains(vertex) => {
                own_inputs.extend(inst.result);
                true
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect: None,
            } => {
                slot.half == Half::Full && own_inputs.contains(value) && invocation.contains(vertex)
            }
            InstKind::StoreOutput {
                slot,
                value,
                indirect: None,
                xfb: None,
                ..
            } => slot.half == Half::Full && uniform.contains(value),
            InstKind::LoadSystemValue(_) | InstKind::Barrier | InstKind::Undef => true,
            _ => inst.result.is_some_and(|r| uniform.contains(&r)),
        };
    });
    p.consumer
        .for_each_inst(|inst| plain &= inst.kind.indirect().is_none());
    plain
}

/// Whether a round made interpolated inputs flat (promoted convergent values): the
/// flat motion laws, which lowering its result applies to them, may then fuse what
/// the round could not.
fn made_flat(before: &Pipeline, after: &Pipeline) -> bool {
    interpolated_loads(after) < interpolated_loads(before)
}

/// The consumer's interpolated loads.
fn interpolated_loads(p: &Pipeline) -> usize {
    let mut n = 0;
    p.consumer.for_each_inst(|i| {
        n += usize::from(matches!(i.kind, InstKind::LoadInterpolatedInput { .. }));
    });
    n
}

/// Whether a round left more varying components or slots than its input had.
fn grew(r: &Report) -> bool {
    r.after.components > r.before.components || r.after.slots > r.before.slots
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    /// A VS/FS pair whose VS stores `store` (one line) and whose FS reads `VAR0.x`.
    fn vs_fs(store: &str) -> crate::ir::Pipeline {
        let src = format!(
            "(pair (producer vs (topology triangles) (%0 = load_input ATTR0.x) \
             (%1 = f2f16 %0) {store} (store_output VAR0.x %0)) \
             (consumer fs (%0 = load_interpolated_input VAR0.x persp center) \
             (store_output DATA0.x %0)))"
        );
        parse(&src, None).expect("test pair parses")
    }

    #[test]
    fn a_plain_32_bit_fs_interface_is_known_final() {
        assert!(known_final(&vs_fs("(store_output VAR1.y %0)")));
    }

    #[test]
    fn captures_halves_and_colours_get_the_round() {
        for store in [
            "(store_output VAR1.y %0 (xfb 0 0))",
            "(store_output VAR1.y.lo %1)",
            "(store_output COL0.x %0)",
        ] {
            assert!(!known_final(&vs_fs(store)), "{store}");
        }
    }

    #[test]
    fn dynamically_indexed_varyings_get_the_round() {
        let src = "(pair (uniforms 1) (producer vs (topology points) \
                   (%0 = load_input ATTR0.x) (store_output VAR0.x %0) \
                   (store_output VAR1.x %0)) (consumer fs (%0 = load_uniform 0) \
                   (%1 = load_input VAR0.x (indirect %0 2)) (store_output DATA0.x %1)))";
        assert!(!known_final(&parse(src, None).expect("test pair parses")));
    }

    #[test]
    fn tcs_producers_get_the_round() {
        let src = "(pair (producer tcs (input_vertices 3) (output_vertices 3) \
                   (%0 = load_system_value invocation_id) \
                   (%1 = load_per_vertex_input VAR0.x %0) \
                   (store_per_vertex_output VAR0.x %1 %0)) \
                   (consumer tes (domain triangles) (%0 = const 32 0) \
                   (%1 = load_per_vertex_input VAR0.x %0) (store_output POS.x %1)))";
        assert!(!known_final(&parse(src, None).expect("test pair parses")));
    }

    #[test]
    fn a_plain_interface_into_a_gs_is_known_final() {
        let src = "(pair (producer vs (topology points) (%0 = load_input ATTR0.x) \
                   (store_output VAR0.x %0)) (consumer gs (input points) (output points) \
                   (max_vertices 1) (%0 = const 32 0) \
                   (%1 = load_per_vertex_input VAR0.x %0) (store_output VAR0.x %1) \
                   (emit_vertex)))";
        assert!(known_final(&parse(src, None).expect("test pair parses")));
    }

    /// A TCS/TES pair whose TCS runs `body` (after `%id = invocation_id` and
    /// `%in = VAR0.x` of its own vertex, with one uniform) and whose TES reads
    /// `VAR0.x` of vertex 1 and `PATCH0.x`.
    fn tcs_tes(body: &str) -> crate::ir::Pipeline {
        let src = format!(
            "(pair (uniforms 1) (producer tcs (input_vertices 3) (output_vertices 3) \
             (%id = load_system_value invocation_id) \
             (%in = load_per_vertex_input VAR0.x %id) (%u = load_uniform 0) \
             (%k1 = const 32 1.0) (%w = fadd %u %k1) {body}) \
             (consumer tes (domain triangles) (%0 = const 32 1) \
             (%1 = load_per_vertex_input VAR0.x %0) (%2 = load_input PATCH0.x) \
             (%3 = fadd %1 %2) (store_output POS.x %3)))"
        );
        parse(&src, None).expect("test pair parses")
    }

    #[test]
    fn a_tcs_passing_its_own_vertex_and_uniform_expressions_is_settled() {
        let copies = "(store_per_vertex_output VAR0.x %in %id) (store_output PATCH0.x %w) \
                      (store_output TESS_LEVEL_OUTER.x %k1 no_varying) (barrier)";
        assert!(pass_through_tcs(&tcs_tes(copies)));
    }

    #[test]
    fn a_tcs_computing_reading_back_or_branching_gets_the_round() {
        for body in [
            // A computed per-vertex value: backward motion may change it.
            "(%n = fneg %in) (store_per_vertex_output VAR0.x %n %id) (store_output PATCH0.x %w)",
            // A per-vertex value in a patch output.
            "(store_per_vertex_output VAR0.x %in %id) (store_output PATCH0.x %in)",
            // A store into another invocation's vertex.
            "(%k0 = const 32 0) (store_per_vertex_output VAR0.x %in %k0) \
             (store_output PATCH0.x %w)",
            // Another vertex's input.
            "(%k0 = const 32 0) (%o = load_per_vertex_input VAR0.x %k0) \
             (store_per_vertex_output VAR0.x %o %id) (store_output PATCH0.x %w)",
            // A read-back.
            "(store_per_vertex_output VAR0.x %in %id) (%r = load_output VAR0.x %id) \
             (store_output PATCH0.x %r)",
            // A 16-bit half.
            "(store_per_vertex_output VAR0.x %in %id) (%h = f2f16 %w) \
             (store_output PATCH0.x.lo %h)",
            // Control flow.
            "(store_per_vertex_output VAR0.x %in %id) (%c = flt %u %k1) \
             (if %c (then (store_output PATCH0.x %w)) (else (store_output PATCH0.x %u)))",
        ] {
            assert!(!pass_through_tcs(&tcs_tes(body)), "{body}");
        }
        // Not a TCS at all.
        assert!(!pass_through_tcs(&vs_fs("(store_output VAR1.y %0)")));
    }
}
