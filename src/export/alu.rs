//! ALU instructions: each NIR-named op as a core SPIR-V instruction or a
//! `GLSL.std.450` function, with its operands bitcast from the carried unsigned
//! bit patterns to the float type the op reads, and its result back.

use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, Op};

use super::body::Body;
use crate::ir::{AluOp, BitSize, Value};
use crate::Error;

/// How an op is written in SPIR-V.
enum Form {
    /// A core instruction.
    Core(Op),
    /// A `GLSL.std.450` instruction.
    Ext(u32),
}

/// Float ops: the SPIR-V form.
fn float_form(op: AluOp) -> Option<Form> {
    use AluOp::*;
    use Form::{Core, Ext};
    Some(match op {
        FNeg => Core(Op::FNegate),
        FAdd => Core(Op::FAdd),
        FSub => Core(Op::FSub),
        FMul => Core(Op::FMul),
        FDiv => Core(Op::FDiv),
        // NIR's fmod and SPIR-V's OpFMod: x - y * floor(x / y), the divisor's sign.
        FMod => Core(Op::FMod),
        FAbs => Ext(4),
        FSign => Ext(6),
        FFloor => Ext(8),
        FCeil => Ext(9),
        FFract => Ext(10),
        FSin => Ext(13),
        FCos => Ext(14),
        FPow => Ext(26),
        FExp2 => Ext(29),
        FLog2 => Ext(30),
        FSqrt => Ext(31),
        FRsq => Ext(32),
        FMin => Ext(37),
        FMax => Ext(40),
        FLrp => Ext(46),
        FFma => Ext(50),
        FLt => Core(Op::FOrdLessThan),
        FGe => Core(Op::FOrdGreaterThanEqual),
        FEq => Core(Op::FOrdEqual),
        FNeu => Core(Op::FUnordNotEqual),
        _ => return None,
    })
}

/// Integer ops on the carried unsigned values: the SPIR-V form.
fn int_form(op: AluOp) -> Option<Form> {
    use AluOp::*;
    use Form::{Core, Ext};
    Some(match op {
        INeg => Core(Op::SNegate),
        IAbs => Ext(5),
        IAdd => Core(Op::IAdd),
        ISub => Core(Op::ISub),
        IMul => Core(Op::IMul),
        IDiv => Core(Op::SDiv),
        UDiv => Core(Op::UDiv),
        IRem => Core(Op::SRem),
        UMod => Core(Op::UMod),
        IMin => Ext(39),
        IMax => Ext(42),
        UMin => Ext(38),
        UMax => Ext(41),
        ILt => Core(Op::SLessThan),
        IGe => Core(Op::SGreaterThanEqual),
        IEq => Core(Op::IEqual),
        INe => Core(Op::INotEqual),
        ULt => Core(Op::ULessThan),
        UGe => Core(Op::UGreaterThanEqual),
        _ => return None,
    })
}

fn bitwise_op(op: AluOp, boolean: bool) -> Option<Op> {
    use AluOp::*;
    Some(match (op, boolean) {
        (INot, true) => Op::LogicalNot,
        (IAnd, true) => Op::LogicalAnd,
        (IOr, true) => Op::LogicalOr,
        (IXor, true) => Op::LogicalNotEqual,
        (INot, false) => Op::Not,
        (IAnd, false) => Op::BitwiseAnd,
        (IOr, false) => Op::BitwiseOr,
        (IXor, false) => Op::BitwiseXor,
        _ => return None,
    })
}

impl Body<'_, '_> {
    fn form(&mut self, form: Form, ty: u32, args: &[u32]) -> u32 {
        match form {
            Form::Core(op) => self.op(op, ty, args.iter().map(|a| Operand::IdRef(*a)).collect()),
            Form::Ext(code) => {
                let ext = self.g.glsl_std();
                let mut ops = vec![Operand::IdRef(ext), Operand::LiteralExtInstInteger(code)];
                ops.extend(args.iter().map(|a| Operand::IdRef(*a)));
                self.op(Op::ExtInst, ty, ops)
            }
        }
    }

    fn as_float(&mut self, v: Value) -> Result<u32, Error> {
        let id = self.val(v)?;
        let f = self.g.float(self.bits_of(v).bits());
        Ok(self.op(Op::Bitcast, f, vec![Operand::IdRef(id)]))
    }

    fn float_bits(&mut self, id: u32, bits: u32) -> u32 {
        let u = self.g.uint(bits);
        self.op(Op::Bitcast, u, vec![Operand::IdRef(id)])
    }

    /// Emits an ALU op defining `dst`.
    pub fn alu(
        &mut self,
        op: AluOp,
        exact: bool,
        srcs: &[Value],
        dst: Value,
    ) -> Result<u32, Error> {
        let dbits = self.bits_of(dst);
        if op == AluOp::Mov {
            return self.val(srcs[0]);
        }
        if let Some(form) = float_form(op) {
            let sb = self.bits_of(srcs[0]).bits();
            let args = srcs
                .iter()
                .map(|s| self.as_float(*s))
                .collect::<Result<Vec<_>, _>>()?;
            let cmp = dbits == BitSize::B1;
            let ty = if cmp {
                self.g.boolean()
            } else {
                self.g.float(sb)
            };
            let r = self.form(form, ty, &args);
            if exact {
                self.g.decorate(r, Decoration::NoContraction, &[]);
            }
            return Ok(if cmp { r } else { self.float_bits(r, sb) });
        }
        match op {
            AluOp::FSat => {
                let sb = self.bits_of(srcs[0]).bits();
                let f = self.g.float(sb);
                let x = self.as_float(srcs[0])?;
                let (zero, one) = (self.g.constant(f, 0), self.g.constant(f, one_bits(sb)));
                let r = self.form(Form::Ext(43), f, &[x, zero, one]);
                return Ok(self.float_bits(r, sb));
            }
            AluOp::FMulz | AluOp::Sge => {
                let sb = self.bits_of(srcs[0]).bits();
                let f = self.g.float(sb);
                let (x, y) = (self.as_float(srcs[0])?, self.as_float(srcs[1])?);
                let b = self.g.boolean();
                let zero = self.g.constant(f, 0);
                let r = if op == AluOp::FMulz {
                    // D3D9 semantics: zero times anything (Inf, NaN) is +0.
                    let p = self.op(Op::FMul, f, vec![Operand::IdRef(x), Operand::IdRef(y)]);
                    if exact {
                        self.g.decorate(p, Decoration::NoContraction, &[]);
                    }
                    let zx = self.op(
                        Op::FOrdEqual,
                        b,
                        vec![Operand::IdRef(x), Operand::IdRef(zero)],
                    );
                    let zy = self.op(
                        Op::FOrdEqual,
                        b,
                        vec![Operand::IdRef(y), Operand::IdRef(zero)],
                    );
                    let z = self.op(
                        Op::LogicalOr,
                        b,
                        vec![Operand::IdRef(zx), Operand::IdRef(zy)],
                    );
                    self.op(
                        Op::Select,
                        f,
                        vec![Operand::IdRef(z), Operand::IdRef(zero), Operand::IdRef(p)],
                    )
                } else {
                    // 1.0 when x >= y, else 0.0 (also for NaN operands).
                    let one = self.g.constant(f, one_bits(sb));
                    let c = self.op(
                        Op::FOrdGreaterThanEqual,
                        b,
                        vec![Operand::IdRef(x), Operand::IdRef(y)],
                    );
                    self.op(
                        Op::Select,
                        f,
                        vec![Operand::IdRef(c), Operand::IdRef(one), Operand::IdRef(zero)],
                    )
                };
                return Ok(self.float_bits(r, sb));
            }
            AluOp::FRcp => {
                let sb = self.bits_of(srcs[0]).bits();
                let f = self.g.float(sb);
                let x = self.as_float(srcs[0])?;
                let one = self.g.constant(f, one_bits(sb));
                let r = self.op(Op::FDiv, f, vec![Operand::IdRef(one), Operand::IdRef(x)]);
                return Ok(self.float_bits(r, sb));
            }
            _ => {}
        }
        let args = srcs
            .iter()
            .map(|s| self.val(*s))
            .collect::<Result<Vec<_>, _>>()?;
        let ty = self.g.carrier(dbits);
        if let Some(form) = int_form(op) {
            return Ok(self.form(form, ty, &args));
        }
        let sbits = self.bits_of(srcs[0]);
        if let Some(o) = bitwise_op(op, sbits == BitSize::B1) {
            return Ok(self.form(Form::Core(o), ty, &args));
        }
        match op {
            AluOp::IShl | AluOp::IShr | AluOp::UShr => self.shift(op, srcs, &args, ty),
            AluOp::BCsel => Ok(self.form(Form::Core(Op::Select), ty, &args)),
            _ => self.convert(op, srcs, args[0], dbits),
        }
    }

    /// Shifts: NIR masks the amount to the bit size; SPIR-V leaves an out-of-range
    /// amount undefined, so the mask is explicit unless the amount is a constant.
    fn shift(&mut self, op: AluOp, srcs: &[Value], args: &[u32], ty: u32) -> Result<u32, Error> {
        let bits = self.bits_of(srcs[0]).bits();
        let core = match op {
            AluOp::IShl => Op::ShiftLeftLogical,
            AluOp::IShr => Op::ShiftRightArithmetic,
            _ => Op::ShiftRightLogical,
        };
        let amount = match self.const_of(srcs[1]) {
            Some(k) => {
                let aty = self.carrier_of(srcs[1]);
                self.g.constant(aty, k & (bits - 1))
            }
            None => {
                let aty = self.carrier_of(srcs[1]);
                let m = self.g.constant(aty, bits - 1);
                self.op(
                    Op::BitwiseAnd,
                    aty,
                    vec![Operand::IdRef(args[1]), Operand::IdRef(m)],
                )
            }
        };
        Ok(self.op(
            core,
            ty,
            vec![Operand::IdRef(args[0]), Operand::IdRef(amount)],
        ))
    }

    fn convert(&mut self, op: AluOp, srcs: &[Value], x: u32, dbits: BitSize) -> Result<u32, Error> {
        use AluOp::*;
        let db = dbits.bits();
        let sb = self.bits_of(srcs[0]).bits();
        let uty = self.g.carrier(dbits);
        match op {
            F2F16 | F2F32 => {
                let xf = self.as_float(srcs[0])?;
                let f = self.g.float(db);
                let r = self.op(Op::FConvert, f, vec![Operand::IdRef(xf)]);
                Ok(self.float_bits(r, db))
            }
            F2I32 | F2U32 => {
                let xf = self.as_float(srcs[0])?;
                let core = if op == F2I32 {
                    Op::ConvertFToS
                } else {
                    Op::ConvertFToU
                };
                Ok(self.op(core, uty, vec![Operand::IdRef(xf)]))
            }
            I2F32 | U2F32 | I2F16 => {
                let f = self.g.float(db);
                let core = if op == U2F32 {
                    Op::ConvertUToF
                } else {
                    Op::ConvertSToF
                };
                let r = self.op(core, f, vec![Operand::IdRef(x)]);
                Ok(self.float_bits(r, db))
            }
            I2I32 | I2I16 => Ok(self.op(Op::SConvert, uty, vec![Operand::IdRef(x)])),
            U2U32 => Ok(self.op(Op::UConvert, uty, vec![Operand::IdRef(x)])),
            B2F32 | B2F16 | B2I32 => {
                let one = if op == B2I32 { 1 } else { one_bits(db) };
                let (t, f) = (self.g.constant(uty, one), self.g.constant(uty, 0));
                Ok(self.op(
                    Op::Select,
                    uty,
                    vec![Operand::IdRef(x), Operand::IdRef(t), Operand::IdRef(f)],
                ))
            }
            other => Err(super::context::fail(format!(
                "`{}` ({sb}-bit) has no SPIR-V form",
                other.name()
            ))),
        }
    }
}

/// The bit pattern of 1.0 at a float width.
fn one_bits(bits: u32) -> u32 {
    if bits == 16 {
        0x3c00
    } else {
        0x3f80_0000
    }
}
