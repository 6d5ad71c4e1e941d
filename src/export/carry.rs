//! What an exported stage keeps of its original module: capabilities, extensions,
//! ext-inst imports, memory model, execution modes, debug strings and names, the
//! types and constants, vertex attributes, fragment outputs, samplers and images
//! with their decorations. Function bodies and the varying interface are dropped
//! (they are regenerated from the IR), and so are the buffer variables, which are
//! re-declared as word views of the same descriptors.

use std::collections::BTreeSet;

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, StorageClass};

use super::globals::Globals;
use crate::import::module::Module;

/// Whether an I/O variable is a user (located, not built-in) variable.
pub(crate) fn is_user_io(m: &Module, id: u32) -> bool {
    m.deco(id).builtin.is_none() && !has_builtin_member(m, id)
}

/// Whether an original global survives export untouched: the stage's side away
/// from the pair (producer inputs, consumer outputs) and all but buffers.
fn kept(m: &Module, id: u32, class: StorageClass, producer: bool) -> bool {
    match class {
        StorageClass::Input => producer && is_user_io(m, id),
        StorageClass::Output => !producer && is_user_io(m, id),
        StorageClass::Uniform | StorageClass::PushConstant | StorageClass::StorageBuffer => false,
        _ => true,
    }
}

fn has_builtin_member(m: &Module, var: u32) -> bool {
    let Some(g) = m.vars.get(&var) else {
        return false;
    };
    let mut ty = g.ty;
    if let Some(crate::import::module::Ty::Array { elem, .. }) = m.types.get(&ty) {
        ty = *elem;
    }
    (0..64).any(|i| m.member_deco(ty, i).builtin.is_some())
}

/// The target of a debug or annotation instruction.
fn target(inst: &Instruction) -> Option<u32> {
    match inst.operands.first() {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

/// The original module without functions, entry point, dropped variables and
/// anything that named or decorated them.
pub(crate) fn start(m: &Module, producer: bool) -> Globals {
    let mut raw = m.raw.clone();
    let bound = raw.header.as_ref().map(|h| h.bound).unwrap_or(1);
    let dropped: BTreeSet<u32> = m
        .vars
        .iter()
        .filter(|(id, g)| !kept(m, **id, g.class, producer))
        .map(|(id, _)| *id)
        .collect();
    let non_semantic: BTreeSet<u32> = raw
        .ext_inst_imports
        .iter()
        .filter(|i| {
            matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s.starts_with("NonSemantic."))
        })
        .filter_map(|i| i.result_id)
        .collect();
    raw.ext_inst_imports
        .retain(|i| !i.result_id.is_some_and(|id| non_semantic.contains(&id)));
    raw.extensions.retain(|i| {
        !matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "SPV_KHR_non_semantic_info")
    });
    raw.types_global_values.retain(|i| {
        let gone = i.result_id.is_some_and(|id| dropped.contains(&id));
        !gone && i.class.opcode != Op::ExtInst && i.class.opcode != Op::Line
    });
    let global: BTreeSet<u32> = raw
        .types_global_values
        .iter()
        .chain(&raw.ext_inst_imports)
        .filter_map(|i| i.result_id)
        .collect();
    let live = |i: &Instruction| target(i).is_some_and(|t| global.contains(&t));
    raw.debug_names.retain(live);
    raw.annotations.retain(|i| match i.class.opcode {
        Op::GroupDecorate | Op::GroupMemberDecorate | Op::DecorationGroup => false,
        _ => live(i),
    });
    raw.functions.clear();
    raw.entry_points.clear();
    Globals::new(raw, bound)
}

/// Finishes the module: entry point (same model and name, new function and
/// interface), execution modes re-targeted, bound set; returns the words.
pub(crate) fn finish(mut g: Globals, m: &Module, entry_fn: u32, interface: &[u32]) -> Vec<u32> {
    let ep = &m.raw.entry_points[0];
    let mut ops = vec![ep.operands[0].clone(), Operand::IdRef(entry_fn)];
    ops.push(ep.operands[2].clone());
    let (major, minor) = g.version();
    let all_globals = (major, minor) >= (1, 4);
    let classes: Vec<(u32, StorageClass)> =
        g.m.types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter_map(|i| match (i.result_id, i.operands.first()) {
                (Some(id), Some(Operand::StorageClass(c))) => Some((id, *c)),
                _ => None,
            })
            .collect();
    let mut listed: Vec<u32> = interface
        .iter()
        .copied()
        .filter(|id| {
            classes.iter().any(|(v, c)| {
                v == id && (all_globals || matches!(c, StorageClass::Input | StorageClass::Output))
            })
        })
        .collect();
    listed.sort_unstable();
    listed.dedup();
    ops.extend(listed.into_iter().map(Operand::IdRef));
    g.m.entry_points
        .push(Instruction::new(Op::EntryPoint, None, None, ops));
    for mode in &mut g.m.execution_modes {
        if let Some(first) = mode.operands.first_mut() {
            *first = Operand::IdRef(entry_fn);
        }
    }
    let bound = g.bound();
    if let Some(h) = g.m.header.as_mut() {
        h.bound = bound;
    }
    g.m.assemble()
}
