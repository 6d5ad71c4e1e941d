//! What an exported module says about transform feedback, read back from its
//! words for the export tests.

use std::collections::{BTreeMap, BTreeSet};

use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, ExecutionMode, Op};

/// The captures of a module: (buffer, byte offset, stride) of every variable
/// decorated for transform feedback that the entry function stores to (directly
/// or through an access chain), and
/// whether the module declares the `Xfb` execution mode.
pub fn captures(words: &[u32]) -> (BTreeSet<(u32, u32, u32)>, bool) {
    let m = rspirv::dr::load_words(words).expect("the module parses");
    let mut decos: BTreeMap<u32, [Option<u32>; 3]> = BTreeMap::new();
    for a in m
        .annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate)
    {
        let (Some(Operand::IdRef(id)), Some(Operand::Decoration(d))) =
            (a.operands.first(), a.operands.get(1))
        else {
            continue;
        };
        let at = match d {
            Decoration::XfbBuffer => 0,
            Decoration::Offset => 1,
            Decoration::XfbStride => 2,
            _ => continue,
        };
        if let Some(Operand::LiteralBit32(v)) = a.operands.get(2) {
            decos.entry(*id).or_default()[at] = Some(*v);
        }
    }
    let insts = || {
        m.functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
    };
    // A store through an access chain stores to the chain's base variable.
    let base: BTreeMap<u32, u32> = insts()
        .filter(|i| i.class.opcode == Op::AccessChain)
        .filter_map(|i| match (i.result_id, i.operands.first()) {
            (Some(r), Some(Operand::IdRef(v))) => Some((r, *v)),
            _ => None,
        })
        .collect();
    let stored: BTreeSet<u32> = insts()
        .filter(|i| i.class.opcode == Op::Store)
        .filter_map(|i| match i.operands.first() {
            Some(Operand::IdRef(p)) => Some(base.get(p).copied().unwrap_or(*p)),
            _ => None,
        })
        .collect();
    let caps = decos
        .iter()
        .filter(|(id, _)| stored.contains(id))
        .filter_map(|(_, d)| match d {
            [Some(b), Some(o), Some(s)] => Some((*b, *o, *s)),
            _ => None,
        })
        .collect();
    let mode = m.execution_modes.iter().any(|i| {
        matches!(
            i.operands.get(1),
            Some(Operand::ExecutionMode(ExecutionMode::Xfb))
        )
    });
    (caps, mode)
}

/// The number of `OpAccessChain`s into an array variable whose last index is
/// not a constant (a dynamically indexed varying array).
pub fn dynamic_access_chains(words: &[u32]) -> usize {
    let m = rspirv::dr::load_words(words).expect("the module parses");
    let constants: BTreeSet<u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode != Op::Variable)
        .filter_map(|i| i.result_id)
        .collect();
    m.functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
        .filter(|i| i.class.opcode == Op::AccessChain)
        .filter(
            |i| matches!(i.operands.last(), Some(Operand::IdRef(id)) if !constants.contains(id)),
        )
        .count()
}
