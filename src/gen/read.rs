//! How the consumer reads one varying: its address, type, qualifier and vertex choice,
//! and the load instruction that follows from them for each consumer stage.

use super::pool::{Gen, PTy, Pv};
use super::recipe::{AtRead, Qual, Ty};
use crate::ir::{BitSize, Indirect, InstKind, InterpLoc, InterpMode, IoSlot, Slot, Stage, Value};

/// One varying as the consumer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Read {
    /// Address (the base slot for arrays).
    pub io: IoSlot,
    /// Value type.
    pub ty: Ty,
    /// FS qualifier (flat for every non-FS consumer).
    pub qual: Qual,
    /// Per-vertex consumers: vertex choice (see `Gen::vertex_index`).
    pub vertex: u8,
    /// Per-vertex consumers: read exactly vertex `vertex`, whatever the read's
    /// variant (an output stored at one vertex only is undefined at the others).
    pub fixed_vertex: bool,
    /// A per-patch varying (TES reads it with `load_input`).
    pub patch: bool,
    /// Extra FS read at an offset or sample.
    pub at: AtRead,
    /// Array length when the varying is read through a dynamic slot index.
    pub array: Option<u8>,
}

impl Ty {
    /// The generator pool holding values of this type.
    pub(crate) fn pty(self) -> PTy {
        match self {
            Ty::F32 => PTy::F32,
            Ty::F16 => PTy::F16,
            Ty::I32 => PTy::I32,
        }
    }

    /// Bit size of the values.
    pub fn bits(self) -> BitSize {
        match self {
            Ty::F16 => BitSize::B16,
            _ => BitSize::B32,
        }
    }
}

impl Read {
    /// A read of `io` at vertex 0, not pinned to it, not per patch, with no extra
    /// FS read and no dynamic index.
    pub(crate) fn plain(io: IoSlot, ty: Ty, qual: Qual) -> Read {
        Read {
            io,
            ty,
            qual,
            vertex: 0,
            fixed_vertex: false,
            patch: false,
            at: AtRead::None,
            array: None,
        }
    }

    /// Emits a load of this varying; `variant` varies the vertex and slot index of
    /// repeated reads.
    pub fn load(&self, g: &mut Gen, variant: u16) -> Pv {
        let indirect = self.array.map(|len| Indirect {
            index: g.slot_index(len, variant),
            len,
        });
        let slot = self.io;
        let fixed = |v: Value| Pv { v, inv: false };
        // Two-sided colour: the FS reads a back colour through its front colour.
        let slot = match slot.slot {
            Slot::Bfc(n) if g.stage == Stage::Fragment => IoSlot {
                slot: Slot::Col(n),
                ..slot
            },
            _ => slot,
        };
        match g.stage {
            Stage::Fragment => match self.qual {
                Qual::Flat => {
                    fixed(g.b.inst(InstKind::LoadInput { slot, indirect }, self.ty.bits()))
                }
                Qual::Interp(mode) => {
                    // A colour drawn noperspective is read the shade-model way
                    // instead (`color`, Mesa's INTERP_MODE_NONE): no new draw, so
                    // the cases drawn for everything else stay as they were.
                    let mode = match self.io.slot {
                        Slot::Col(_) if mode.interp == crate::ir::Interp::Linear => InterpMode {
                            interp: crate::ir::Interp::Color,
                            ..mode
                        },
                        _ => mode,
                    };
                    fixed(self.interpolated(g, mode, vec![], indirect))
                }
            },
            _ if self.patch => {
                fixed(g.b.inst(InstKind::LoadInput { slot, indirect }, self.ty.bits()))
            }
            _ => {
                let vertex = if self.fixed_vertex {
                    Pv {
                        v: g.konst(BitSize::B32, u32::from(self.vertex)),
                        inv: false,
                    }
                } else {
                    g.vertex_index(self.vertex.wrapping_add((variant % 5) as u8))
                };
                let kind = InstKind::LoadPerVertexInput {
                    slot,
                    vertex: vertex.v,
                    indirect,
                };
                Pv {
                    v: g.b.inst(kind, self.ty.bits()),
                    inv: vertex.inv,
                }
            }
        }
    }

    /// The extra FS read at an offset or sample position, if any.
    pub fn load_at(&self, g: &mut Gen, variant: u16) -> Option<Pv> {
        let Qual::Interp(mode) = self.qual else {
            return None;
        };
        if g.stage != Stage::Fragment || self.array.is_some() {
            return None;
        }
        let (loc, operands) = match self.at {
            AtRead::None => return None,
            AtRead::Offset => {
                let dx = g.f32c(OFFSETS[variant as usize % OFFSETS.len()]);
                let dy = g.f32c(OFFSETS[(variant as usize + 1) % OFFSETS.len()]);
                (InterpLoc::AtOffset, vec![dx, dy])
            }
            AtRead::Sample => {
                let index = if variant.is_multiple_of(2) {
                    g.konst(BitSize::B32, u32::from(variant % 4))
                } else {
                    g.b.system_value(crate::ir::SystemValue::SampleId)
                };
                (InterpLoc::AtSample, vec![index])
            }
        };
        let mode = InterpMode {
            interp: mode.interp,
            loc,
        };
        Some(Pv {
            v: self.interpolated(g, mode, operands, None),
            inv: false,
        })
    }

    fn interpolated(
        &self,
        g: &mut Gen,
        mode: InterpMode,
        operands: Vec<Value>,
        indirect: Option<Indirect>,
    ) -> Value {
        let kind = InstKind::LoadInterpolatedInput {
            slot: self.io,
            mode,
            operands,
            indirect,
        };
        g.b.inst(kind, self.ty.bits())
    }
}

/// Pixel offsets for `at_offset` reads (inside the pixel, as GLSL requires).
const OFFSETS: [f32; 4] = [0.25, -0.125, 0.375, -0.5];
