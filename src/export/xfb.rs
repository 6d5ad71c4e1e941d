//! Transform feedback of an exported producer: which stored components are
//! captured at which buffer and byte offset, the stride of each buffer, the
//! decorations that say so, and the `Xfb` execution mode.
//!
//! The IR captures single components (`(xfb BUF OFFSET)` on a store: the byte
//! offset of the stored value, 2 bytes wide for a 16-bit one) while
//! SPIR-V captures whole variables. The pair's own varyings are one scalar
//! variable per component, so each is decorated where it is declared; a
//! built-in (`Position` is one `vec4`) would be captured whole, so a captured
//! component of a built-in slot is also stored to an output variable of its own
//! that carries the capture (at a location after the pair's, which the consumer
//! does not declare).
//!
//! A consumer's outputs go to a stage outside the pair: the IR does not mark
//! their captures (it observes every consumer output), the kept user variables
//! keep their decorations, and a regenerated built-in output variable takes the
//! capture the original module gave that built-in (`consumer_builtins`).

use std::collections::BTreeMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{BuiltIn, Capability, Decoration, ExecutionMode, Op, StorageClass};

use super::context::fail;
use super::globals::Globals;
use crate::import::module::{Module, Ty};
use crate::ir::{BitSize, InstKind, IoSlot, Shader, Xfb};
use crate::Error;

/// The captures of the producer's stores.
#[derive(Default)]
pub(crate) struct Captures {
    by_slot: BTreeMap<IoSlot, Xfb>,
    strides: BTreeMap<u8, u32>,
}

impl Captures {
    /// The captures `producer` stores; a buffer's stride is the original
    /// module's `XfbStride` where it declared one (the record may end in padding
    /// or in components the optimizer removed), else the end of its last capture.
    pub fn new(producer: &Shader, original: &Module) -> Result<Captures, Error> {
        let mut by_slot: BTreeMap<IoSlot, Xfb> = BTreeMap::new();
        let mut ends: BTreeMap<u8, u32> = BTreeMap::new();
        let mut uncaptured = vec![];
        let mut err = None;
        producer.for_each_inst(|i| {
            if let InstKind::StoreOutput {
                slot, xfb, value, ..
            } = &i.kind
            {
                match xfb {
                    None => uncaptured.push(*slot),
                    Some(x) => {
                        // A 16-bit value writes its 2 bytes at the offset.
                        let size = match producer.bits(*value) {
                            BitSize::B16 => 2,
                            _ => 4,
                        };
                        let end = ends.entry(x.buffer).or_insert(0);
                        *end = (*end).max(u32::from(x.offset) + size);
                        match by_slot.insert(*slot, *x) {
                            Some(old) if old != *x => {
                                err.get_or_insert(format!(
                                    "{slot} is captured by transform feedback at two places"
                                ));
                            }
                            _ => {}
                        }
                    }
                }
            }
        });
        if let Some(s) = uncaptured.iter().find(|s| by_slot.contains_key(s)) {
            err.get_or_insert(format!(
                "{s} is stored both with and without transform feedback capture"
            ));
        }
        if let Some(e) = err {
            return Err(fail(e));
        }
        // A record ending in a 16-bit capture is padded to a whole word.
        let mut strides: BTreeMap<u8, u32> = ends
            .into_iter()
            .map(|(b, e)| (b, e.div_ceil(4) * 4))
            .collect();
        for d in original
            .decos
            .values()
            .chain(original.member_decos.values())
        {
            if let (Some(b), Some(st)) = (d.xfb_buffer, d.xfb_stride) {
                if let Some(s) = u8::try_from(b).ok().and_then(|b| strides.get_mut(&b)) {
                    *s = (*s).max(st);
                }
            }
        }
        Ok(Captures { by_slot, strides })
    }

    /// Whether anything is captured.
    pub fn any(&self) -> bool {
        !self.by_slot.is_empty()
    }

    /// The capture of a stored component, if any.
    pub fn of(&self, slot: IoSlot) -> Option<Xfb> {
        self.by_slot.get(&slot).copied()
    }

    /// The captured components, in order.
    pub fn slots(&self) -> impl Iterator<Item = IoSlot> + '_ {
        self.by_slot.keys().copied()
    }

    /// Decorates `var` as the capture of `slot` (nothing when it is not captured).
    pub fn decorate(&self, g: &mut Globals, var: u32, slot: IoSlot) {
        let Some(x) = self.of(slot) else {
            return;
        };
        let stride = self.strides.get(&x.buffer).copied().unwrap_or(0);
        g.decorate(var, Decoration::XfbBuffer, &[x.buffer as u32]);
        g.decorate(var, Decoration::XfbStride, &[stride]);
        g.decorate(var, Decoration::Offset, &[x.offset as u32]);
    }

    /// Declares the capability and the `Xfb` execution mode when anything is
    /// captured (an original module that captured declares them already).
    pub fn finish(&self, g: &mut Globals) {
        if !self.any() {
            return;
        }
        g.capability(Capability::TransformFeedback);
        let has_mode = g.m.execution_modes.iter().any(|i| {
            matches!(
                i.operands.get(1),
                Some(Operand::ExecutionMode(ExecutionMode::Xfb))
            )
        });
        if !has_mode {
            // The entry id is re-targeted when the module is finished.
            g.m.execution_modes.push(Instruction::new(
                Op::ExecutionMode,
                None,
                None,
                vec![
                    Operand::IdRef(0),
                    Operand::ExecutionMode(ExecutionMode::Xfb),
                ],
            ));
        }
    }
}

/// A built-in output's capture in an original module: buffer, offset, stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BuiltinCapture {
    buffer: u32,
    offset: u32,
    stride: u32,
}

impl BuiltinCapture {
    /// Decorates `var`, the regenerated variable of the built-in, as captured.
    pub fn decorate(&self, g: &mut Globals, var: u32) {
        g.decorate(var, Decoration::XfbBuffer, &[self.buffer]);
        g.decorate(var, Decoration::XfbStride, &[self.stride]);
        g.decorate(var, Decoration::Offset, &[self.offset]);
    }
}

/// The built-in outputs an original module captures (`XfbBuffer` on the
/// variable, `Offset` on it or on the block member that is the built-in), with
/// the buffer's stride as any variable of the module declares it.
pub(crate) fn consumer_builtins(m: &Module) -> BTreeMap<BuiltIn, BuiltinCapture> {
    let mut strides: BTreeMap<u32, u32> = BTreeMap::new();
    for d in m.decos.values() {
        if let (Some(b), Some(s)) = (d.xfb_buffer, d.xfb_stride) {
            strides.entry(b).or_insert(s);
        }
    }
    let mut out = BTreeMap::new();
    for (var, g) in m
        .vars
        .iter()
        .filter(|(_, g)| g.class == StorageClass::Output)
    {
        let d = m.deco(*var);
        let Some(buffer) = d.xfb_buffer else {
            continue;
        };
        let stride = strides.get(&buffer).copied().unwrap_or(0);
        let mut add = |b: Option<BuiltIn>, offset: Option<u32>| {
            if let (Some(b), Some(offset)) = (b, offset) {
                out.insert(
                    b,
                    BuiltinCapture {
                        buffer,
                        offset,
                        stride,
                    },
                );
            }
        };
        add(d.builtin, d.offset);
        if let Some(Ty::Struct { members }) = m.types.get(&g.ty) {
            for i in 0..members.len() as u32 {
                let md = m.member_deco(g.ty, i);
                add(md.builtin, md.offset);
            }
        }
    }
    out
}
