//! Specialization constants: `OpSpecConstant*` take their default value unless the
//! caller sets their `SpecId` (`--spec ID=VALUE`), and `OpSpecConstantOp` is folded
//! at import (the integer, logical and composite-extract operations shaders use).

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::Op;

use super::module::{id_at, lit_at, ConstDef, Module, Ty};
use crate::Error;

/// Width and signedness of a scalar constant type (`None` for other types).
fn scalar(m: &Module, ty: u32) -> Option<(u32, bool)> {
    match m.types.get(&ty)? {
        Ty::Bool => Some((1, false)),
        Ty::Int { width, signed } if *width <= 32 => Some((*width, *signed)),
        _ => None,
    }
}

fn mask(width: u32) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1 << width) - 1
    }
}

fn sext(v: u32, width: u32) -> i64 {
    let shift = 64 - width.clamp(1, 32);
    ((v as i64) << shift) >> shift
}

impl Module {
    /// The value of a scalar constant and its type's width and signedness.
    fn scalar_const(&self, inst: &Instruction, id: u32) -> Result<(u32, u32, bool), Error> {
        match self.consts.get(&id) {
            Some((ty, ConstDef::Scalar(v))) => match scalar(self, *ty) {
                Some((w, s)) => Ok((*v, w, s)),
                None => Err(self.err(inst, format!("operand %{id} is not an integer or bool"))),
            },
            _ => Err(self.err(inst, format!("operand %{id} is not a scalar constant"))),
        }
    }

    /// Folds an `OpSpecConstantOp` of result type `rty`.
    pub(super) fn fold_spec_op(&self, inst: &Instruction, rty: u32) -> Result<ConstDef, Error> {
        let op = match inst.operands.first() {
            Some(Operand::LiteralSpecConstantOpInteger(op)) => *op,
            _ => return Err(self.err(inst, "OpSpecConstantOp without an operation")),
        };
        if op == Op::CompositeExtract {
            return self.extract(inst);
        }
        let (width, _) = scalar(self, rty)
            .ok_or_else(|| self.err(inst, "OpSpecConstantOp on vectors is not supported"))?;
        let mut args = vec![];
        for i in 1..inst.operands.len() {
            let id = id_at(inst, i).ok_or_else(|| self.err(inst, "operand is not an id"))?;
            args.push(self.scalar_const(inst, id)?);
        }
        let v = fold(op, &args)
            .ok_or_else(|| self.err(inst, format!("OpSpecConstantOp {op:?} cannot be folded")))?;
        Ok(ConstDef::Scalar(v & mask(width)))
    }

    fn extract(&self, inst: &Instruction) -> Result<ConstDef, Error> {
        let mut id = id_at(inst, 1).ok_or_else(|| self.err(inst, "composite is not an id"))?;
        for i in 2..inst.operands.len() {
            let k = lit_at(inst, i).ok_or_else(|| self.err(inst, "index is not a literal"))?;
            id = match self.consts.get(&id) {
                Some((_, ConstDef::Composite(parts))) => *parts
                    .get(k as usize)
                    .ok_or_else(|| self.err(inst, "index out of range"))?,
                _ => return Err(self.err(inst, "extracts from a non-composite constant")),
            };
        }
        match self.consts.get(&id) {
            Some((_, def)) => Ok(def.clone()),
            None => Err(self.err(inst, "extracts from an unknown constant")),
        }
    }
}

/// Folds one operation on (value, width, signed) operands; `None` for division by zero.
fn fold(op: Op, a: &[(u32, u32, bool)]) -> Option<u32> {
    use Op::*;
    let u = |i: usize| a[i].0 as u64;
    let s = |i: usize| sext(a[i].0, a[i].1);
    let b = |x: bool| x as u32;
    Some(match op {
        SConvert => s(0) as u32,
        UConvert => a[0].0,
        SNegate => (-s(0)) as u32,
        Not => !a[0].0,
        LogicalNot => b(a[0].0 == 0),
        IAdd => (u(0) + u(1)) as u32,
        ISub => u(0).wrapping_sub(u(1)) as u32,
        IMul => u(0).wrapping_mul(u(1)) as u32,
        UDiv => u(0).checked_div(u(1))? as u32,
        SDiv => s(0).checked_div(s(1))? as u32,
        UMod => u(0).checked_rem(u(1))? as u32,
        SRem => s(0).checked_rem(s(1))? as u32,
        SMod => {
            let r = s(0).checked_rem(s(1))?;
            (if r != 0 && (r < 0) != (s(1) < 0) {
                r + s(1)
            } else {
                r
            }) as u32
        }
        ShiftRightLogical => (u(0) & mask(a[0].1) as u64).checked_shr(a[1].0)? as u32,
        ShiftRightArithmetic => s(0).checked_shr(a[1].0)? as u32,
        ShiftLeftLogical => u(0).checked_shl(a[1].0)? as u32,
        BitwiseOr => a[0].0 | a[1].0,
        BitwiseXor => a[0].0 ^ a[1].0,
        BitwiseAnd => a[0].0 & a[1].0,
        LogicalOr => b(a[0].0 != 0 || a[1].0 != 0),
        LogicalAnd => b(a[0].0 != 0 && a[1].0 != 0),
        LogicalEqual => b((a[0].0 != 0) == (a[1].0 != 0)),
        LogicalNotEqual => b((a[0].0 != 0) != (a[1].0 != 0)),
        IEqual => b(a[0].0 == a[1].0),
        INotEqual => b(a[0].0 != a[1].0),
        ULessThan => b(u(0) < u(1)),
        SLessThan => b(s(0) < s(1)),
        UGreaterThan => b(u(0) > u(1)),
        SGreaterThan => b(s(0) > s(1)),
        ULessThanEqual => b(u(0) <= u(1)),
        SLessThanEqual => b(s(0) <= s(1)),
        UGreaterThanEqual => b(u(0) >= u(1)),
        SGreaterThanEqual => b(s(0) >= s(1)),
        Select => {
            if a[0].0 != 0 {
                a[1].0
            } else {
                a[2].0
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        let i = |v: i32| (v as u32, 32, true);
        assert_eq!(fold(Op::IAdd, &[i(2), i(3)]), Some(5));
        assert_eq!(fold(Op::SDiv, &[i(-7), i(2)]), Some(-3i32 as u32));
        assert_eq!(fold(Op::SMod, &[i(-7), i(2)]), Some(1));
        assert_eq!(fold(Op::SDiv, &[i(1), i(0)]), None);
        assert_eq!(fold(Op::SLessThan, &[i(-1), i(0)]), Some(1));
        assert_eq!(fold(Op::ULessThan, &[i(-1), i(0)]), Some(0));
        assert_eq!(fold(Op::Select, &[(1, 1, false), i(4), i(5)]), Some(4));
    }
}
