//! Specialization of a pair on known uniform values (uniform inlining), the stage that
//! runs before the varying optimizer: loads of known uniform words become constants in
//! both stages and the conditions, branches and select chains that then become
//! constant are folded ([`specialize`]), so that varyings only a dead branch or an
//! unselected operand used die, and varyings that became constant are propagated, by
//! the ordinary optimization that follows. [`find_inlinable`] lists the words worth
//! knowing. `docs/specialize.md` states the criterion and the semantics.

mod detect;
mod flags;
mod fold;
mod report;

pub use detect::find_inlinable;
pub use flags::{known_from_flags, parse_ubo_flag, parse_uniform_flag, parse_value};
pub use report::{
    ConditionKind, FoldedCondition, Inlinable, InlinableCondition, InlinableWord, SpecializeReport,
    StageFolds, StageInlinable,
};

use crate::error::{Diagnostic, Error};
use crate::ir::{KnownUniforms, Pipeline};

/// A pair specialized on known uniform words, and what was done to it.
#[derive(Clone, Debug)]
pub struct Specialized {
    /// The pair with the words inlined and the conditions they decide folded.
    pub pipeline: Pipeline,
    /// What was inlined and folded.
    pub report: SpecializeReport,
}

/// Fails when a known word lies outside the pair's declared uniform storage (loads
/// there are undefined, so no value can be bound to them).
pub fn check_known(p: &Pipeline, known: &KnownUniforms) -> Result<(), Error> {
    let problems: Vec<Diagnostic> = known
        .iter()
        .filter_map(|(w, _)| KnownUniforms::out_of_range(p, w))
        .map(|m| Diagnostic::new(p.source.as_deref(), None, format!("known {m}")))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(problems))
    }
}

/// Inlines `known` into both stages of `p` and folds the constants, selects and
/// branches that result. Running the result equals running `p` with the known
/// words bound to their values (`RunConfig::known`).
pub fn specialize(p: &Pipeline, known: &KnownUniforms) -> Result<Specialized, Error> {
    check_known(p, known)?;
    let mut pipeline = p.clone();
    let producer = fold::fold_shader(&mut pipeline.producer, known);
    let consumer = fold::fold_shader(&mut pipeline.consumer, known);
    Ok(Specialized {
        pipeline,
        report: SpecializeReport {
            known: known.iter().collect(),
            stages: vec![producer, consumer],
        },
    })
}

/// [`specialize`] when some word is known, for the optimizer's driver.
pub(crate) fn specialize_for(
    p: &Pipeline,
    known: &KnownUniforms,
) -> Result<Option<Specialized>, Error> {
    if known.is_empty() {
        return Ok(None);
    }
    specialize(p, known).map(Some)
}

/// Adds what specialization did to an optimization report about the original pair:
/// the inlining itself, and a fate for every original varying that folding removed
/// outright (stored or read only where the known values never lead), which the
/// optimizer never saw.
pub(crate) fn account(report: &mut crate::Report, original: &Pipeline, s: SpecializeReport) {
    use crate::optimize::{Fate, VaryingReport};
    let reported: std::collections::BTreeSet<_> = report.varyings.iter().map(|v| v.slot).collect();
    for slot in varying_slots(original) {
        if !reported.contains(&slot) {
            let why = "only used where the known uniform values never lead".to_string();
            report.varyings.push(VaryingReport {
                slot,
                fate: Fate::Removed(why),
            });
        }
    }
    report.varyings.sort_by_key(|v| v.slot);
    report.specialization = Some(s);
}

/// Every varying address the producer stores or the consumer reads.
fn varying_slots(p: &Pipeline) -> std::collections::BTreeSet<crate::ir::IoSlot> {
    use crate::egraph::lower::{role, Role};
    use crate::ir::InstKind;
    let consumer = p.consumer.stage();
    let mut out = std::collections::BTreeSet::new();
    p.producer.for_each_inst(|i| {
        if let Some((io, _)) = crate::emit::is_store(&i.kind) {
            out.insert(io);
        }
    });
    p.consumer.for_each_inst(|i| match &i.kind {
        InstKind::LoadInput { slot, .. }
        | InstKind::LoadInterpolatedInput { slot, .. }
        | InstKind::LoadPerVertexInput { slot, .. } => {
            out.insert(*slot);
        }
        _ => {}
    });
    out.retain(|io| role(io.slot, p.producer.stage(), consumer) != Role::NotVarying);
    out
}
