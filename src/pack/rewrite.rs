//! Applies a slot assignment to both shaders: producer stores and TCS read-backs move
//! to their new addresses, consumer loads follow (convergent ones may change their
//! interpolation), stores nobody observes are deleted and loads of addresses nobody
//! stores become undef.

use std::collections::{BTreeMap, BTreeSet};

use super::LoadRewrite;
use crate::ir::{for_each_block_mut, Block, Inst, InstKind, IoSlot, Pipeline, Shader, Stmt};

/// Everything the rewrite changes, keyed by the old direct address.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    /// New address of producer stores and read-backs.
    pub outputs: BTreeMap<IoSlot, IoSlot>,
    /// Producer stores to delete.
    pub dead: BTreeSet<IoSlot>,
    /// Producer read-backs of never-stored outputs (become undef).
    pub undef_readbacks: BTreeSet<IoSlot>,
    /// New address and load form of consumer loads.
    pub inputs: BTreeMap<IoSlot, (IoSlot, LoadRewrite)>,
    /// Consumer loads of addresses no store reaches (become undef).
    pub undef_loads: BTreeSet<IoSlot>,
}

/// The pair with the plan applied.
pub(crate) fn apply(p: &Pipeline, plan: &Plan) -> Pipeline {
    let mut out = p.clone();
    remove_dead(&mut out.producer.body, plan);
    out.producer.for_each_inst_mut(|i| producer_inst(i, plan));
    out.consumer.for_each_inst_mut(|i| consumer_inst(i, plan));
    out
}

fn is_dead_store(stmt: &Stmt, plan: &Plan) -> bool {
    match stmt {
        Stmt::Inst(Inst {
            kind:
                InstKind::StoreOutput {
                    slot,
                    indirect: None,
                    ..
                }
                | InstKind::StorePerVertexOutput {
                    slot,
                    indirect: None,
                    ..
                },
            ..
        }) => plan.dead.contains(slot),
        _ => false,
    }
}

fn remove_dead(block: &mut Block, plan: &Plan) {
    for_each_block_mut(block, |b| b.retain(|s| !is_dead_store(s, plan)));
}

fn producer_inst(inst: &mut Inst, plan: &Plan) {
    match &mut inst.kind {
        InstKind::StoreOutput {
            slot,
            indirect: None,
            ..
        }
        | InstKind::StorePerVertexOutput {
            slot,
            indirect: None,
            ..
        } => {
            if let Some(new) = plan.outputs.get(slot) {
                *slot = *new;
            }
        }
        InstKind::LoadOutput {
            slot,
            indirect: None,
            ..
        } => {
            if plan.undef_readbacks.contains(slot) {
                inst.kind = InstKind::Undef;
            } else if let Some(new) = plan.outputs.get(slot) {
                *slot = *new;
            }
        }
        _ => {}
    }
}

fn consumer_inst(inst: &mut Inst, plan: &Plan) {
    let old = match inst.kind.direct_input_slot() {
        Some(slot) => slot,
        None => return,
    };
    if plan.undef_loads.contains(&old) {
        inst.kind = InstKind::Undef;
        return;
    }
    let Some((new, form)) = plan.inputs.get(&old) else {
        return;
    };
    inst.kind = relocated(&inst.kind, *new, *form);
}

/// The load moved to `new`, with its interpolation changed as `form` says.
fn relocated(kind: &InstKind, new: IoSlot, form: LoadRewrite) -> InstKind {
    let mut k = kind.clone();
    match (&mut k, form) {
        (InstKind::LoadInterpolatedInput { .. }, LoadRewrite::Flat) => InstKind::LoadInput {
            slot: new,
            indirect: None,
        },
        (
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                ..
            },
            LoadRewrite::Interp(m),
        ) => {
            *slot = new;
            *mode = m;
            operands.clear();
            k
        }
        (InstKind::LoadInput { .. }, LoadRewrite::Interp(m)) => interp(new, m),
        (InstKind::LoadInput { .. }, LoadRewrite::KeepInterp) => {
            interp(new, crate::ir::InterpMode::PERSP_CENTER)
        }
        (
            InstKind::LoadInput { slot, .. }
            | InstKind::LoadInterpolatedInput { slot, .. }
            | InstKind::LoadPerVertexInput { slot, .. },
            _,
        ) => {
            *slot = new;
            k
        }
        _ => k,
    }
}

fn interp(slot: IoSlot, mode: crate::ir::InterpMode) -> InstKind {
    InstKind::LoadInterpolatedInput {
        slot,
        mode,
        operands: vec![],
        indirect: None,
    }
}

/// Distinct varying vec4 slots a shader reads as inputs (direct or through arrays).
pub(crate) fn input_slots(s: &Shader) -> BTreeSet<crate::ir::Slot> {
    let mut out = BTreeSet::new();
    s.for_each_inst(|i| {
        let (slot, ind) = match &i.kind {
            InstKind::LoadInput { slot, indirect }
            | InstKind::LoadInterpolatedInput { slot, indirect, .. }
            | InstKind::LoadPerVertexInput { slot, indirect, .. } => (*slot, indirect),
            _ => return,
        };
        if !slot.slot.is_varying() {
            return;
        }
        let len = ind.map_or(1, |i| u32::from(i.len));
        out.extend((0..len).filter_map(|n| slot.slot.offset(n)));
    });
    out
}
