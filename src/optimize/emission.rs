//! Stage 5, emission: both shaders rebuilt from the selection (`emit`), dead code
//! removed, values renumbered, the pair validated.

use super::emit::{emit_consumer, emit_producer, remove_dead_code, EmitInput};
use super::lowering::LoweredPair;
use super::renumber::renumber;
use super::saturation::Saturated;
use super::selection::Chosen;
use super::slots::SlotMap;
use crate::error::Error;
use crate::ir::Pipeline;

/// The emitted pair, or the input with the reason emission failed.
pub(crate) struct Emitted {
    /// The new pair (the input itself when emission failed).
    pub pipeline: Pipeline,
    /// Why emission failed, if it did.
    pub failure: Option<String>,
}

/// Emits both shaders from the selection; a failure falls back to the input.
pub(crate) fn emit(
    p: &Pipeline,
    lowered: &LoweredPair,
    saturated: &Saturated,
    chosen: &Chosen<'_>,
    slots: &SlotMap,
) -> Emitted {
    let input = EmitInput {
        lowered: &lowered.lowered,
        egraph: &saturated.egraph,
        selection: &chosen.selection,
        slots,
    };
    match emit_pair(p, &input) {
        Ok(pipeline) => Emitted {
            pipeline,
            failure: None,
        },
        Err(e) => Emitted {
            pipeline: p.clone(),
            failure: Some(e.to_string()),
        },
    }
}

fn emit_pair(p: &Pipeline, input: &EmitInput<'_>) -> Result<Pipeline, Error> {
    let mut producer = emit_producer(p, input)?;
    let mut consumer = emit_consumer(p, input)?;
    for shader in [&mut producer, &mut consumer] {
        remove_dead_code(shader);
        renumber(shader);
    }
    let out = Pipeline {
        producer,
        consumer,
        ..p.clone()
    };
    crate::validate::validate(&out)?;
    Ok(out)
}
