//! The IR: scalar SSA shaders close to NIR after I/O lowering and scalarization.
//! Values are typeless bit patterns of 1, 16 or 32 bits; ops give them meaning.

mod builder;
mod eval;
mod inst;
mod known;
mod op;
mod opaque;
mod pipeline;
mod shader;
mod slot;
mod stage;
mod walk;

pub use builder::{half_bits, ShaderBuilder};
pub use eval::{eval_alu, from_f32, to_f32, to_i32, unsign_zero_operands, zero_sign_matters};
pub use inst::{Indirect, InstKind, Interp, InterpLoc, InterpMode, SystemValue, Xfb};
pub use known::{KnownUniforms, UniformWord};
pub use op::{AluOp, OpClass};
pub use opaque::{
    parse_result as parse_opaque_result, OpaqueCode, OpaqueOp, OpaqueTy, Purity, Resource, ScalarTy,
};
pub use pipeline::{Pipeline, Reader, UboDecl, Visibility};
pub use shader::{Block, Inst, LoopPhi, Phi, Shader, SrcLoc, Stmt, Value, ValueInfo, Values};
pub use slot::{Half, IoSlot, Slot, SlotClass};
pub use stage::{Primitive, ProvokingVertex, Stage, StageInfo};
pub use walk::{
    for_each_block_mut, for_each_inst_mut, for_each_stmt_mut, insts, too_deep, walk, Visit, Walk,
    MAX_NESTING,
};

/// Width of a value in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BitSize {
    /// A boolean.
    B1,
    /// Half precision / 16-bit integer.
    B16,
    /// Single precision / 32-bit integer.
    B32,
}

impl BitSize {
    /// The number of bits.
    pub fn bits(self) -> u32 {
        match self {
            BitSize::B1 => 1,
            BitSize::B16 => 16,
            BitSize::B32 => 32,
        }
    }

    /// The size with this many bits.
    pub fn from_bits(bits: u32) -> Option<BitSize> {
        match bits {
            1 => Some(BitSize::B1),
            16 => Some(BitSize::B16),
            32 => Some(BitSize::B32),
            _ => None,
        }
    }

    /// Mask of the valid bits.
    pub fn mask(self) -> u32 {
        match self {
            BitSize::B1 => 1,
            BitSize::B16 => 0xffff,
            BitSize::B32 => u32::MAX,
        }
    }
}
