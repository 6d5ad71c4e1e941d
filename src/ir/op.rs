//! ALU opcodes: their names, typing rules, algebraic properties and the default
//! instruction cost Mesa uses when deciding how much code may move between stages.

use std::fmt;
use std::str::FromStr;

use super::BitSize;

/// How an op's sources and result are typed. Values are typeless bit patterns; the
/// class says how the op reads them and which bit sizes it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Float sources of one size (16/32), result the same size.
    Float,
    /// Float sources of one size, 1-bit boolean result.
    FloatCmp,
    /// Integer sources of one size (16/32), result the same size.
    Int,
    /// Integer sources of one size, 1-bit boolean result.
    IntCmp,
    /// Bitwise ops: any size including 1-bit booleans.
    Bitwise,
    /// `bcsel`: 1-bit condition, two sources of one size, result that size.
    Select,
    /// A conversion from one of `from` sizes to the `to` size.
    Convert {
        /// Accepted source sizes.
        from: &'static [BitSize],
        /// Result size.
        to: BitSize,
    },
    /// `mov`: any size, result the same.
    Move,
}

macro_rules! alu_ops {
    ($( $variant:ident $name:literal $arity:literal $class:expr; )*) => {
        /// An ALU opcode (NIR naming).
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum AluOp { $( $variant, )* }

        impl AluOp {
            /// Every opcode.
            pub const ALL: &'static [AluOp] = &[ $( AluOp::$variant, )* ];

            /// The NIR name, as written in `.pair` files.
            pub fn name(self) -> &'static str {
                match self { $( AluOp::$variant => $name, )* }
            }

            /// Number of sources.
            pub fn arity(self) -> usize {
                match self { $( AluOp::$variant => $arity, )* }
            }

            /// The typing class.
            pub fn class(self) -> OpClass {
                match self { $( AluOp::$variant => $class, )* }
            }
        }

        impl FromStr for AluOp {
            type Err = String;
            fn from_str(s: &str) -> Result<AluOp, String> {
                match s {
                    $( $name => Ok(AluOp::$variant), )*
                    _ => Err(format!("unknown ALU op `{s}`")),
                }
            }
        }
    };
}

use BitSize::{B1, B16, B32};
const F16_32: &[BitSize] = &[B16, B32];
const B1_ONLY: &[BitSize] = &[B1];
const B16_ONLY: &[BitSize] = &[B16];
const B32_ONLY: &[BitSize] = &[B32];

alu_ops! {
    Mov "mov" 1 OpClass::Move;
    FNeg "fneg" 1 OpClass::Float;
    FAbs "fabs" 1 OpClass::Float;
    FSat "fsat" 1 OpClass::Float;
    FRcp "frcp" 1 OpClass::Float;
    FRsq "frsq" 1 OpClass::Float;
    FSqrt "fsqrt" 1 OpClass::Float;
    FExp2 "fexp2" 1 OpClass::Float;
    FLog2 "flog2" 1 OpClass::Float;
    FSin "fsin" 1 OpClass::Float;
    FCos "fcos" 1 OpClass::Float;
    FFloor "ffloor" 1 OpClass::Float;
    FCeil "fceil" 1 OpClass::Float;
    FFract "ffract" 1 OpClass::Float;
    FSign "fsign" 1 OpClass::Float;
    FAdd "fadd" 2 OpClass::Float;
    FSub "fsub" 2 OpClass::Float;
    FMul "fmul" 2 OpClass::Float;
    FDiv "fdiv" 2 OpClass::Float;
    FMin "fmin" 2 OpClass::Float;
    FMax "fmax" 2 OpClass::Float;
    FPow "fpow" 2 OpClass::Float;
    FMod "fmod" 2 OpClass::Float;
    FMulz "fmulz" 2 OpClass::Float;
    Sge "sge" 2 OpClass::Float;
    FFma "ffma" 3 OpClass::Float;
    FLrp "flrp" 3 OpClass::Float;
    FLt "flt" 2 OpClass::FloatCmp;
    FGe "fge" 2 OpClass::FloatCmp;
    FEq "feq" 2 OpClass::FloatCmp;
    FNeu "fneu" 2 OpClass::FloatCmp;
    INeg "ineg" 1 OpClass::Int;
    IAbs "iabs" 1 OpClass::Int;
    IAdd "iadd" 2 OpClass::Int;
    ISub "isub" 2 OpClass::Int;
    IMul "imul" 2 OpClass::Int;
    IDiv "idiv" 2 OpClass::Int;
    UDiv "udiv" 2 OpClass::Int;
    IRem "irem" 2 OpClass::Int;
    UMod "umod" 2 OpClass::Int;
    IMin "imin" 2 OpClass::Int;
    IMax "imax" 2 OpClass::Int;
    UMin "umin" 2 OpClass::Int;
    UMax "umax" 2 OpClass::Int;
    IShl "ishl" 2 OpClass::Int;
    IShr "ishr" 2 OpClass::Int;
    UShr "ushr" 2 OpClass::Int;
    ILt "ilt" 2 OpClass::IntCmp;
    IGe "ige" 2 OpClass::IntCmp;
    IEq "ieq" 2 OpClass::IntCmp;
    INe "ine" 2 OpClass::IntCmp;
    ULt "ult" 2 OpClass::IntCmp;
    UGe "uge" 2 OpClass::IntCmp;
    INot "inot" 1 OpClass::Bitwise;
    IAnd "iand" 2 OpClass::Bitwise;
    IOr "ior" 2 OpClass::Bitwise;
    IXor "ixor" 2 OpClass::Bitwise;
    BCsel "bcsel" 3 OpClass::Select;
    F2F16 "f2f16" 1 OpClass::Convert { from: B32_ONLY, to: B16 };
    F2F32 "f2f32" 1 OpClass::Convert { from: B16_ONLY, to: B32 };
    F2I32 "f2i32" 1 OpClass::Convert { from: F16_32, to: B32 };
    F2U32 "f2u32" 1 OpClass::Convert { from: F16_32, to: B32 };
    I2F32 "i2f32" 1 OpClass::Convert { from: F16_32, to: B32 };
    U2F32 "u2f32" 1 OpClass::Convert { from: F16_32, to: B32 };
    I2F16 "i2f16" 1 OpClass::Convert { from: F16_32, to: B16 };
    I2I32 "i2i32" 1 OpClass::Convert { from: B16_ONLY, to: B32 };
    U2U32 "u2u32" 1 OpClass::Convert { from: B16_ONLY, to: B32 };
    I2I16 "i2i16" 1 OpClass::Convert { from: B32_ONLY, to: B16 };
    B2F32 "b2f32" 1 OpClass::Convert { from: B1_ONLY, to: B32 };
    B2F16 "b2f16" 1 OpClass::Convert { from: B1_ONLY, to: B16 };
    B2I32 "b2i32" 1 OpClass::Convert { from: B1_ONLY, to: B32 };
}

impl AluOp {
    /// Result size given the (already checked) source sizes, or a message saying
    /// what was expected. `srcs` must have `arity()` entries.
    pub fn result_bits(self, srcs: &[BitSize]) -> Result<BitSize, String> {
        if srcs.len() != self.arity() {
            return Err(format!(
                "`{}` takes {} source(s), found {}",
                self.name(),
                self.arity(),
                srcs.len()
            ));
        }
        let same = |allowed: &[BitSize], operands: &[BitSize]| -> Result<BitSize, String> {
            let first = operands[0];
            if !allowed.contains(&first) {
                return Err(format!(
                    "`{}` takes {} sources, found a {}-bit source",
                    self.name(),
                    sizes(allowed),
                    first.bits()
                ));
            }
            match operands.iter().find(|b| **b != first) {
                Some(other) => Err(format!(
                    "`{}` sources must have one bit size, found {} and {}",
                    self.name(),
                    first.bits(),
                    other.bits()
                )),
                None => Ok(first),
            }
        };
        match self.class() {
            OpClass::Float | OpClass::Int => same(F16_32, srcs),
            OpClass::FloatCmp | OpClass::IntCmp => same(F16_32, srcs).map(|_| B1),
            OpClass::Bitwise | OpClass::Move => same(&[B1, B16, B32], srcs),
            OpClass::Select => {
                if srcs[0] != B1 {
                    return Err(format!(
                        "`bcsel` condition must be 1-bit, found {}-bit",
                        srcs[0].bits()
                    ));
                }
                same(&[B1, B16, B32], &srcs[1..])
            }
            OpClass::Convert { from, to } => same(from, srcs).map(|_| to),
        }
    }

    /// Whether the op reads its sources as floats (float arithmetic and compares).
    pub fn is_float(self) -> bool {
        matches!(self.class(), OpClass::Float | OpClass::FloatCmp)
            || matches!(
                self,
                AluOp::F2F16 | AluOp::F2F32 | AluOp::F2I32 | AluOp::F2U32
            )
    }

    /// Whether the result is a float (float arithmetic, and conversions to a
    /// float); compares and integer ops are not. The exporter computes such a
    /// result in a float type and declares outputs storing only these as floats.
    pub fn yields_float(self) -> bool {
        use AluOp::*;
        matches!(self.class(), OpClass::Float)
            || matches!(self, F2F16 | F2F32 | I2F32 | U2F32 | I2F16 | B2F32 | B2F16)
    }

    /// Whether the op reads its (data) sources as floats: float arithmetic and
    /// compares, and conversions from a float.
    pub fn reads_float(self) -> bool {
        use AluOp::*;
        matches!(self.class(), OpClass::Float | OpClass::FloatCmp)
            || matches!(self, F2F16 | F2F32 | F2I32 | F2U32)
    }

    /// Whether `op(a, b) == op(b, a)` bit for bit.
    pub fn is_commutative(self) -> bool {
        use AluOp::*;
        matches!(
            self,
            FAdd | FMul
                | FMin
                | FMax
                | FEq
                | FNeu
                | IAdd
                | IMul
                | IMin
                | IMax
                | UMin
                | UMax
                | IEq
                | INe
                | IAnd
                | IOr
                | IXor
        )
    }

    /// Mesa's default instruction cost (used to bound code moved between stages):
    /// transcendental 4, fpow 9, fdiv 5, integer division 40, imul 4, free modifiers 0,
    /// everything else 1.
    pub fn default_cost(self) -> u32 {
        use AluOp::*;
        match self {
            FExp2 | FLog2 | FRcp | FRsq | FSqrt | FSin | FCos => 4,
            FPow => 9,
            FDiv => 5,
            IDiv | UDiv | IRem | UMod => 40,
            IMul => 4,
            FAbs | FNeg | FSat | Mov => 0,
            _ => 1,
        }
    }
}

fn sizes(list: &[BitSize]) -> String {
    let v: Vec<String> = list.iter().map(|b| format!("{}-bit", b.bits())).collect();
    v.join(" or ")
}

impl fmt::Display for AluOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for op in AluOp::ALL {
            assert_eq!(op.name().parse::<AluOp>(), Ok(*op));
        }
    }

    #[test]
    fn typing() {
        assert_eq!(AluOp::FAdd.result_bits(&[B32, B32]), Ok(B32));
        assert_eq!(AluOp::FLt.result_bits(&[B16, B16]), Ok(B1));
        assert!(AluOp::FAdd.result_bits(&[B32, B16]).is_err());
        assert!(AluOp::FAdd.result_bits(&[B1, B1]).is_err());
        assert_eq!(AluOp::BCsel.result_bits(&[B1, B16, B16]), Ok(B16));
        assert!(AluOp::BCsel.result_bits(&[B32, B16, B16]).is_err());
        assert_eq!(AluOp::F2F16.result_bits(&[B32]), Ok(B16));
        assert!(AluOp::F2F16.result_bits(&[B16]).is_err());
        assert!(AluOp::FAdd.result_bits(&[B32]).is_err());
    }
}
