//! Stage 5, emission: both shaders rebuilt from the selection (`emit`), dead code
//! removed, values renumbered, the SSA clean-ups run on the result, the pair
//! validated. Each step first checks the run's
//! hard deadline; past it emission stops and the input stands.

use std::time::Instant;

use super::emit::{emit_consumer, emit_producer, remove_dead_code, EmitInput};
use super::lowering::LoweredPair;
use super::renumber::renumber;
use super::saturation::Saturated;
use super::selection::Chosen;
use super::simplify::Cleaned;
use super::slots::SlotMap;
use crate::error::Error;
use crate::ir::Pipeline;

/// The emitted pair, or the input with the reason emission failed.
pub(crate) struct Emitted {
    /// The new pair (the input itself when emission failed).
    pub pipeline: Pipeline,
    /// Why emission failed, if it did.
    pub failure: Option<String>,
    /// Whether it stopped at the deadline (then `pipeline` is the input).
    pub out_of_time: bool,
    /// Whether the SSA clean-ups folded something in the emitted shaders that the
    /// e-graph chose without seeing ([`Cleaned::folded`]).
    pub folded: bool,
}

/// Emits both shaders from the selection; a failure falls back to the input.
pub(crate) fn emit(
    p: &Pipeline,
    lowered: &LoweredPair,
    saturated: &Saturated,
    chosen: &Chosen<'_>,
    slots: &SlotMap,
    deadline: Option<Instant>,
) -> Emitted {
    let input = EmitInput {
        lowered: &lowered.lowered,
        egraph: &saturated.egraph,
        selection: &chosen.selection,
        slots,
    };
    let late = || deadline.is_some_and(|d| Instant::now() >= d);
    match emit_pair(p, &input, &late) {
        Ok(Some((pipeline, folded))) => Emitted {
            pipeline,
            failure: None,
            out_of_time: false,
            folded,
        },
        Ok(None) => Emitted {
            pipeline: p.clone(),
            failure: Some("the time limit ended during emission".into()),
            out_of_time: true,
            folded: false,
        },
        Err(e) => Emitted {
            pipeline: p.clone(),
            failure: Some(e.to_string()),
            out_of_time: false,
            folded: false,
        },
    }
}

/// The emitted pair and whether its clean-ups folded something; `None` when `late()`
/// says the deadline passed between steps.
fn emit_pair(
    p: &Pipeline,
    input: &EmitInput<'_>,
    late: &dyn Fn() -> bool,
) -> Result<Option<(Pipeline, bool)>, Error> {
    if late() {
        return Ok(None);
    }
    let mut producer = emit_producer(p, input)?;
    if late() {
        return Ok(None);
    }
    let mut consumer = emit_consumer(p, input)?;
    let mut folded = false;
    for shader in [&mut producer, &mut consumer] {
        if late() {
            return Ok(None);
        }
        remove_dead_code(shader);
        renumber(shader);
        folded |= clean(shader).folded;
    }
    if late() {
        return Ok(None);
    }
    // Only the declarations are copied: `..p.clone()` copied both input shaders too,
    // to drop them at once (12 MB at 100k instructions, at the emission peak).
    let out = p.with_shaders(producer, consumer);
    crate::validate::validate(&out)?;
    Ok(Some((out, folded)))
}

/// Runs the SSA clean-ups on an emitted, renumbered shader. The e-graph leaves what
/// it does not see folded: a product with a constant zero that propagation put
/// outside the region, an integer chain in the e-graph's operand order rather than
/// the canonical one (`reassociate`). Cleaning here makes the result a fixed point of
/// the clean-ups. What they fold there the e-graph did not see when it chose (a
/// varying read only by a product that folds to zero is still kept), so a fold sends
/// the result to the fixed-point round (`rounds::worth_another_round`). Renumbering
/// first puts the values in definition order, so the chains rebuilt here keep their
/// order through the second renumbering and a later clean-up finds them canonical.
fn clean(shader: &mut crate::ir::Shader) -> Cleaned {
    let cleaned = super::simplify::clean_shader(shader);
    if cleaned.any() {
        remove_dead_code(shader);
        renumber(shader);
    }
    cleaned
}
